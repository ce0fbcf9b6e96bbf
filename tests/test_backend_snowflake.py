"""Snowflake backend against the local emulator (fakesnow server mode), through the official connector.

What the emulator cannot do (tests/emulators/README.md): STATEMENT_TIMEOUT_IN_SECONDS is
ignored, execute_async blocks until the query ends, and nothing cancels a query.  So the
timeout test shows the worker is killed at timeout + grace and that a new session answers
at once; then it restarts the emulator, the only thing that stops its runaway query.
fakesnow also runs every statement it is sent (no read-only role), so write statements are
refused by the harness before they reach it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest
from hostile import HOSTILE

from evaluators.errors import Location
from evaluators.execution import worker
from evaluators.execution.backends.settings import SnowflakeSettings
from evaluators.execution.executor import ExecConfig, Executor, run_sql
from evaluators.specs import GoldInstance, Spec

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 2.0
LONG_QUERY = "SELECT SUM(MOD(a.range * b.range, 7)) AS s FROM range(1000000) a CROSS JOIN range(1000000) b"
PASSWORD = "Sn0wy-pa55word-for-tests"


def gold(instance_id, db, temporal=False):
    spec = Spec("table_match", {"gold": "result.csv"}, temporal=temporal)
    return GoldInstance(instance_id, (spec,), {"type": "Snowflake", "db": db}, Location("spider2_eval.jsonl", 1))


@pytest.fixture
def snowflake_env(monkeypatch, snowflake_emulator):
    for name in list(os.environ):
        if name.startswith("SNOWFLAKE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SNOWFLAKE_USER", snowflake_emulator.user)
    monkeypatch.setenv("SNOWFLAKE_PASSWORD", PASSWORD)  # fakesnow accepts any password
    monkeypatch.setenv("SNOWFLAKE_ACCOUNT", snowflake_emulator.account)


@pytest.fixture
def database(snowflake_emulator):
    """A fresh DATABASE.SCHEMA with a small table; the emulator is shared by the whole session."""
    name = f"GRADING_{uuid.uuid4().hex[:8].upper()}"
    con = snowflake_emulator.connect()
    cursor = con.cursor()
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"CREATE SCHEMA {name}.PUBLIC")
    cursor.execute(f"CREATE TABLE {name}.PUBLIC.ORDERS (ID INT, NAME VARCHAR, AMOUNT FLOAT)")
    cursor.execute(f"INSERT INTO {name}.PUBLIC.ORDERS VALUES (1, 'ann', 9.5), (2, 'bob', 3.25)")
    con.close()
    return f"{name}.PUBLIC"


def make_config(tmp_path, emulator, **overrides):
    values = dict(
        output_dir=tmp_path / "out",
        credentials_dir=tmp_path / "no-credentials",
        timeout_s=TIMEOUT_S,
        snowflake=SnowflakeSettings(emulator.host, emulator.port, "http"),
    )
    return ExecConfig(**{**values, **overrides})


def count_rows(emulator, database) -> int:
    con = emulator.connect()
    try:
        return con.cursor().execute(f"SELECT count(*) FROM {database}.ORDERS").fetchone()[0]
    finally:
        con.close()


def test_predicted_sql_runs_on_the_emulator(tmp_path, snowflake_emulator, database, snowflake_env):
    result = Executor(make_config(tmp_path, snowflake_emulator)).run_prediction(
        gold("sf1", database), "```sql\nSELECT ID, NAME, AMOUNT FROM ORDERS ORDER BY ID\n```"
    )
    assert result.ok and result.backend == "snowflake", result.detail
    assert pd.read_csv(result.csv_path).to_dict("list") == {"ID": [1, 2], "NAME": ["ann", "bob"], "AMOUNT": [9.5, 3.25]}
    assert result.first_cell == 1


def test_credentials_file_is_used_when_present(tmp_path, snowflake_emulator, database, monkeypatch):
    for name in list(os.environ):
        if name.startswith("SNOWFLAKE_"):
            monkeypatch.delenv(name)
    creds = tmp_path / "credentials"
    creds.mkdir()
    (creds / "snowflake_credential.json").write_text(
        json.dumps({"user": "grader", "password": PASSWORD, "account": "fakesnow"})
    )
    config = make_config(tmp_path, snowflake_emulator, credentials_dir=creds)
    result = Executor(config).run_prediction(gold("sf2", database), "SELECT count(*) FROM ORDERS")
    assert result.ok and result.first_cell == 2, result.detail


def test_engine_errors_are_one_line_and_never_show_the_password(tmp_path, snowflake_emulator, database, snowflake_env):
    config = make_config(tmp_path, snowflake_emulator)
    result = Executor(config).run_prediction(gold("sf3", database), f'SELECT * FROM "{PASSWORD}"')
    assert result.reason == "exec_error" and "\n" not in result.detail
    assert PASSWORD not in result.detail and "[redacted]" in result.detail


def test_temporal_gold_is_cached_and_refreshed(tmp_path, snowflake_emulator, database, snowflake_env):
    gold_dir = tmp_path / "gold"
    (gold_dir / "sft").mkdir(parents=True)
    (gold_dir / "sft" / "gold.sql").write_text("SELECT ID, NAME FROM ORDERS ORDER BY ID")
    (gold_dir / "sft" / "result.csv").write_text("ID,NAME\n1,ann\n2,bob\n")
    instance = gold("sft", database, temporal=True)
    config = make_config(tmp_path, snowflake_emulator)

    live = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert (live.ok, live.source, live.drifted) == (True, "live", False), live.detail

    con = snowflake_emulator.connect()
    con.cursor().execute(f"INSERT INTO {database}.ORDERS VALUES (3, 'cy', 1.0)")
    con.close()
    cached = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert cached.source == "cached" and cached.cached_at and cached.drifted is False  # nothing ran

    refreshed = Executor(make_config(tmp_path, snowflake_emulator, refresh_gold=True)).temporal_gold(
        instance, gold_dir, "result.csv"
    )
    assert refreshed.source == "live" and refreshed.drifted is True
    assert pd.read_csv(refreshed.csv_path)["NAME"].tolist() == ["ann", "bob", "cy"]


def test_write_statements_are_refused(tmp_path, snowflake_emulator, database, snowflake_env):
    config = make_config(tmp_path, snowflake_emulator)
    for sql in (
        "DROP TABLE ORDERS",
        "SELECT 1; DROP TABLE ORDERS",
        "DELETE FROM ORDERS",
        *(h.format(t="ORDERS") for h in HOSTILE),
    ):
        result = Executor(config).run_prediction(gold("sfw", database), sql)
        assert result.reason == "exec_error" and "only one read-only query" in result.detail
    assert count_rows(snowflake_emulator, database) == 2


def test_missing_credentials_fail_only_that_instance(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("SNOWFLAKE_"):
            monkeypatch.delenv(name)
    config = ExecConfig(output_dir=tmp_path / "out", credentials_dir=tmp_path / "empty", timeout_s=TIMEOUT_S)
    local = GoldInstance("local", (), {"type": "DuckDB"}, Location("g", 2))
    results = Executor(config).run_predictions([(gold("cloud", "DB.SCHEMA"), "SELECT 1"), (local, "SELECT 1")], jobs=2)
    assert [r.reason for r in results] == ["credentials_missing", "ok"]
    assert "SNOWFLAKE_USER" in results[0].detail


def test_missing_extra_names_the_pip_command(tmp_path):
    """A sitecustomize hides snowflake.connector from the grader and its workers alike."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.modules['snowflake.connector'] = None\n")
    script = (
        "from pathlib import Path\nfrom evaluators.execution.executor import ExecConfig, run_sql\n"
        f"r = run_sql('snowflake', 'DB.S', 'SELECT 1', ExecConfig(Path({str(tmp_path / 'out')!r})), "
        f"Path({str(tmp_path / 'r.csv')!r}))\nprint(r.reason)\nprint(r.detail)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    reason, detail = done.stdout.strip().splitlines()
    assert reason == "missing_extra"
    assert detail == "snowflake-connector-python is not installed (hint: pip install '.[snowflake]')"


def test_timeout_kills_the_worker_and_other_sessions_go_on(tmp_path, snowflake_emulator, database, snowflake_env):
    config = make_config(tmp_path, snowflake_emulator)
    workers = worker.pool()
    workers.shutdown()
    assert Executor(config).run_prediction(gold("warm", database), "SELECT 1").ok  # start-up not timed
    (warm,) = workers.idle
    started = time.monotonic()
    result = Executor(config).run_prediction(gold("sflong", database), LONG_QUERY)
    elapsed = time.monotonic() - started
    try:
        assert result.reason == "timeout" and "worker killed" in result.detail
        assert TIMEOUT_S <= elapsed < TIMEOUT_S + 60  # timeout + kill grace, then killed
        with pytest.raises(ProcessLookupError):
            os.kill(warm.pid, 0)
        # fakesnow serves other sessions while the runaway query (hours of work) goes on.  The runaway
        # keeps every core busy, so this session gets a generous timeout of its own: a server that
        # waited for the runaway would still miss it.
        patient = make_config(tmp_path, snowflake_emulator, timeout_s=15.0)
        after = run_sql("snowflake", database, "SELECT 5", patient, tmp_path / "after.csv")
        assert after.ok and after.first_cell == 5, after.detail
    finally:
        snowflake_emulator.restart()  # nothing else stops the runaway query on the emulator
