"""The execution API: backend choice, database files, temporal golds and their cache, redaction, fences."""

from __future__ import annotations

import json
import pickle
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from endless import DUCKDB_ENDLESS

from evaluators.errors import InstanceError, Location
from evaluators.execution.backends.base import REDACTED, redact, secret_values
from evaluators.execution.executor import ExecConfig, ExecResult, Executor, GoldResult, resolve_database, total_bytes
from evaluators.reporting.report import REASONS
from evaluators.specs import GoldInstance, Spec
from evaluators.sqltext import read_only_problem, read_sql_file, split_statements, unwrap_fences

PRIVATE_KEY = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
    "q3x9Zk2bW1yVh5uN0qk7aQ4lq0m8Xr3t6y1Jp2dE\n-----END PRIVATE KEY-----\n"
)


def gold(instance_id="ex1", **metadata):
    metadata.setdefault("type", "DuckDB")
    spec = Spec("table_match", {"gold": "result.csv"}, temporal=True)
    return GoldInstance(instance_id, (spec,), metadata, Location("spider2_eval.jsonl", 1))


@pytest.fixture
def db_dir(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    con = duckdb.connect(str(folder / "sales.duckdb"))
    con.execute("CREATE TABLE sales AS SELECT * FROM (VALUES ('north', 10), ('south', 32)) v(region, amount)")
    con.close()
    return folder


@pytest.fixture
def config(tmp_path, db_dir):
    return ExecConfig(output_dir=tmp_path / "out", db_dir=db_dir, timeout_s=5)


# ------------------------------------------------------------------ backend and database choice


@pytest.mark.parametrize(
    "type_, expected",
    [
        ("Bigquery", "bigquery"),
        ("Snowflake", "snowflake"),
        ("DuckDB", "duckdb"),
        ("SQLite", "sqlite"),
        ("sqlite", "sqlite"),
        (None, "duckdb"),
    ],
)
def test_backend_comes_from_the_gold_type_in_any_case(tmp_path, type_, expected):
    instance = GoldInstance("x", (), {"type": type_, "db": "d"} if type_ else {"db": "d"}, Location("g", 1))
    assert Executor(ExecConfig(tmp_path)).backend_for(instance) == (expected, "d")


def test_overrides_win_over_the_gold(tmp_path):
    config = ExecConfig(tmp_path, backend_override="SQLite", db_override="other")
    assert Executor(config).backend_for(gold(db="sales")) == ("sqlite", "other")


def test_db_id_is_read_when_db_is_absent(tmp_path):
    assert Executor(ExecConfig(tmp_path)).backend_for(gold(db_id="GA4.PUBLIC", type="Snowflake")) == (
        "snowflake",
        "GA4.PUBLIC",
    )


def test_a_type_that_names_no_backend_is_no_database(config):
    with pytest.raises(InstanceError) as caught:
        Executor(config).backend_for(gold(type="answer"))
    assert caught.value.reason == "no_database"
    result = Executor(config).run_prediction(gold(type="answer"), "SELECT 1")
    assert result.reason == "no_database" and not result.ok


def test_database_files_are_found_by_name_and_suffix(tmp_path):
    (tmp_path / "a.sqlite").write_bytes(b"")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "b.sqlite").write_bytes(b"")
    (tmp_path / "c.db").write_bytes(b"")
    assert resolve_database("sqlite", "a", tmp_path) == str((tmp_path / "a.sqlite").resolve())
    assert resolve_database("sqlite", "b", tmp_path) == str((tmp_path / "b" / "b.sqlite").resolve())
    assert resolve_database("duckdb", "c", tmp_path) == str((tmp_path / "c.db").resolve())
    assert resolve_database("bigquery", "p.d", None) == "p.d"
    with pytest.raises(InstanceError, match="needs --db-dir"):
        resolve_database("sqlite", "a", None)
    with pytest.raises(InstanceError, match="no database file"):
        resolve_database("duckdb", "zzz", tmp_path)


def test_duckdb_without_a_database_runs_in_memory(tmp_path):
    result = Executor(ExecConfig(tmp_path / "out")).run_prediction(gold(), "SELECT 6 * 7 AS answer")
    assert result.ok and result.first_cell == 42


# ------------------------------------------------------------------ predictions


def test_prediction_csv_is_written_under_output_dir_only(config, tmp_path):
    submission = tmp_path / "submission" / "ex1"
    submission.mkdir(parents=True)
    result = Executor(config).run_prediction(gold(db="sales"), "SELECT * FROM sales ORDER BY region")
    assert result.ok
    assert result.csv_path.parent == (config.output_dir / "predictions").resolve()
    assert list(submission.iterdir()) == []
    assert result.csv_path.read_text().splitlines() == ["region,amount", "north,10", "south,32"]


def test_a_failed_run_leaves_no_stale_csv(config):
    executor = Executor(config)
    assert executor.run_prediction(gold(db="sales"), "SELECT 1").ok
    failed = executor.run_prediction(gold(db="sales"), "SELECT * FROM nowhere")
    assert failed.reason == "exec_error" and failed.csv_path is None
    assert not (config.output_dir / "predictions" / "ex1.csv").exists()


def test_instances_run_in_parallel_and_fail_alone(config):
    items = [(gold(f"p{i}", db="sales"), f"SELECT {i} AS n") for i in range(4)]
    items.insert(2, (gold("bad", db="sales"), "SELECT * FROM nowhere"))
    results = Executor(config).run_predictions(items, jobs=3)
    assert [r.reason for r in results] == ["ok", "ok", "exec_error", "ok", "ok"]
    assert [r.first_cell for r in results if r.ok] == [0, 1, 2, 3]


def _run_in_child(args):
    config, instance, sql = args
    return Executor(config).run_prediction(instance, sql)


def test_executor_and_results_cross_process_boundaries(config):
    executor = pickle.loads(pickle.dumps(Executor(config)))
    assert executor.config == config
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run_in_child, [(config, gold(f"c{i}", db="sales"), f"SELECT {i}") for i in range(2)]))
    assert [r.first_cell for r in results] == [0, 1]
    assert pickle.loads(pickle.dumps(results[0])) == results[0]


def test_exec_results_convert_to_instance_errors_and_add_up_bytes():
    failed = ExecResult(False, None, None, "timeout", "interrupted after 2 s", "duckdb")
    error = failed.instance_error()
    assert (error.reason, error.detail) == ("timeout", "interrupted after 2 s")
    results = [
        ExecResult(True, None, 1, "ok", "", "bigquery", bytes_processed=100),
        ExecResult(True, None, 1, "ok", "", "bigquery", bytes_processed=None),
        ExecResult(True, None, 1, "ok", "", "bigquery", bytes_processed=23),
    ]
    assert total_bytes(results) == 123
    assert set(REASONS) >= {
        "exec_error",
        "timeout",
        "cost_limit",
        "credentials_missing",
        "missing_extra",
        "no_database",
    }


# ------------------------------------------------------------------ temporal golds


def write_gold(gold_dir: Path, instance_id: str, sql: str, stored: str | None = None) -> None:
    folder = gold_dir / instance_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gold.sql").write_text(sql)
    if stored is not None:
        (folder / "result.csv").write_text(stored)


def test_temporal_gold_runs_live_then_comes_from_the_cache(config, tmp_path, db_dir):
    gold_dir = tmp_path / "gold"
    write_gold(
        gold_dir,
        "t1",
        "```sql\nSELECT region, amount FROM sales ORDER BY region\n```",
        stored="region,amount\nnorth,10\nsouth,32\n",
    )
    instance = gold("t1", db="sales")
    first = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert isinstance(first, GoldResult) and first.ok
    assert (first.source, first.cached_at, first.drifted) == ("live", None, False)
    cached_files = sorted(p.name for p in (config.output_dir / "gold_cache" / "duckdb" / "sales").iterdir())
    assert len(cached_files) == 2 and cached_files[0].endswith(".csv") and cached_files[1].endswith(".json")

    # Change the data: a cache hit still gives the old result, so nothing ran.
    con = duckdb.connect(str(db_dir / "sales.duckdb"))
    con.execute("INSERT INTO sales VALUES ('east', 5)")
    con.close()
    second = Executor(config).temporal_gold(instance, gold_dir, "result.csv")
    assert second.source == "cached" and second.cached_at and second.drifted is False
    assert len(pd.read_csv(second.csv_path)) == 2
    assert second.cached_at in second.detail

    refreshed = Executor(ExecConfig(**{**config.__dict__, "refresh_gold": True})).temporal_gold(
        instance, gold_dir, "result.csv"
    )
    assert refreshed.source == "live" and refreshed.drifted is True
    assert len(pd.read_csv(refreshed.csv_path)) == 3
    assert Executor(config).temporal_gold(instance, gold_dir, "result.csv").drifted is True  # the cache is new


def test_temporal_gold_first_cell_serves_number_specs(config, tmp_path):
    write_gold(tmp_path / "gold", "n1", "SELECT sum(amount) AS total FROM sales")
    result = Executor(config).temporal_gold(gold("n1", db="sales"), tmp_path / "gold", None)
    assert result.ok and result.first_cell == 42 and result.drifted is None


def test_the_cache_is_keyed_by_the_sql(config, tmp_path):
    gold_dir = tmp_path / "gold"
    write_gold(gold_dir, "k1", "SELECT 1 AS x")
    executor = Executor(config)
    assert executor.temporal_gold(gold("k1", db="sales"), gold_dir, None).source == "live"
    assert executor.temporal_gold(gold("k1", db="sales"), gold_dir, None).source == "cached"
    write_gold(gold_dir, "k1", "SELECT 2 AS x")
    changed = executor.temporal_gold(gold("k1", db="sales"), gold_dir, None)
    assert changed.source == "live" and changed.first_cell == 2
    meta = json.loads(next((config.output_dir / "gold_cache").rglob("*.json")).read_text())
    assert {"sha256", "backend", "db", "cached_at"} <= set(meta)


def test_stored_gold_stands_in_when_the_live_gold_cannot_run(config, tmp_path):
    gold_dir = tmp_path / "gold"
    write_gold(gold_dir, "s1", "SELECT * FROM sales", stored="region,amount\nwest,7\n")
    result = Executor(config).temporal_gold(gold("s1", db="missing_db"), gold_dir, "result.csv")
    assert result.ok and result.source == "stored"
    assert result.csv_path == gold_dir / "s1" / "result.csv" and result.first_cell == "west"
    assert "no_database" in result.detail


def test_temporal_gold_without_sql_or_stored_file_fails(config, tmp_path):
    (tmp_path / "gold" / "e1").mkdir(parents=True)
    result = Executor(config).temporal_gold(gold("e1", db="sales"), tmp_path / "gold", "result.csv")
    assert not result.ok and result.reason == "unreadable_gold" and "gold.sql" in result.detail


def test_a_failing_gold_sql_reports_the_engine_error(config, tmp_path):
    write_gold(tmp_path / "gold", "f1", "SELECT * FROM nowhere")
    result = Executor(config).temporal_gold(gold("f1", db="sales"), tmp_path / "gold", None)
    assert not result.ok and result.reason == "exec_error" and "nowhere" in result.detail


# ------------------------------------------------------------------ SQL text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("SELECT 1", "SELECT 1"),
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("Answer:\n```SQL\nSELECT 2;\n```\nDone.", "SELECT 2;"),
        ("```\nSELECT 3\n```", "SELECT 3"),
        ("draft:\n```sql\nSELECT 0\n```\nfinal:\n```sql\nSELECT 4\n```", "SELECT 4"),
        ("```python\nprint(1)\n```\n```sql\nSELECT 5\n```", "SELECT 5"),
        ("~~~sql\nSELECT 6\n~~~", "SELECT 6"),
        ("```sql\nSELECT 7", "SELECT 7"),  # cut off before the closing fence
        ("SELECT '```' AS ticks", "SELECT '```' AS ticks"),
    ],
)
def test_markdown_fences_are_unwrapped(text, expected):
    assert unwrap_fences(text) == expected


def test_sql_files_are_read_and_unwrapped(tmp_path):
    path = tmp_path / "q.sql"
    path.write_bytes("\ufeff```sql\nSELECT 'é'\n```\n".encode())
    assert read_sql_file(path) == "SELECT 'é'"
    path.write_text("```sql\n```")
    with pytest.raises(InstanceError, match="no SQL"):
        read_sql_file(path)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InstanceError, match="not UTF-8"):
        read_sql_file(path)


def test_statements_split_outside_quotes_and_comments():
    sql = "SELECT ';' AS a; -- DROP TABLE x;\nSELECT \"b;c\" /* ; */ FROM t;; SELECT `x;y` FROM u"
    assert split_statements(sql, "bigquery") == [
        "SELECT ';' AS a",
        'SELECT "b;c" /* ; */ FROM t',
        "SELECT `x;y` FROM u",
    ]
    assert read_only_problem("WITH a AS (SELECT 1) SELECT * FROM a", "bigquery") is None
    assert read_only_problem("SELECT 1; DROP TABLE t", "bigquery") == "2 statements; exactly one query is graded"
    assert read_only_problem("delete from t", "snowflake") == "a DELETE statement, not a query"


# ------------------------------------------------------------------ redaction


def test_redact_hides_passwords_and_keys_in_every_spelling():
    secrets = ["hunter2-Password!", PRIVATE_KEY]
    message = (
        "login failed for hunter2-Password! with key "
        + json.dumps(PRIVATE_KEY)
        + " line q3x9Zk2bW1yVh5uN0qk7aQ4lq0m8Xr3t6y1Jp2dE and "
        + repr(PRIVATE_KEY)
    )
    cleaned = redact(message, secrets)
    assert "hunter2" not in cleaned and "MIIEvQIBAD" not in cleaned and "q3x9Zk2b" not in cleaned
    assert cleaned.count(REDACTED) >= 3
    assert redact("no secrets here", secrets) == "no secrets here"
    assert "MIIE" not in redact(PRIVATE_KEY, [])  # a PEM block is hidden even when nobody named it


def test_secret_values_picks_credential_fields():
    info = {
        "type": "service_account",
        "project_id": "p",
        "private_key": PRIVATE_KEY,
        "private_key_id": "abc123",
        "client_email": "x@p.iam",
        "token_uri": "https://oauth2.googleapis.com/token",
        "password": "pw",
        "nested": {"passcode": "123456"},
    }
    assert sorted(secret_values(info)) == sorted([PRIVATE_KEY, "abc123", "pw", "123456"])


def test_timeouts_are_measured_from_the_query_start(config):
    started = time.monotonic()
    result = Executor(ExecConfig(**{**config.__dict__, "timeout_s": 1.0})).run_prediction(
        gold(db="sales"), DUCKDB_ENDLESS
    )
    assert result.reason == "timeout"
    assert 1.0 <= result.seconds < 30
    assert time.monotonic() - started < 60  # the timeout counts from the query's start


def test_drift_is_unknown_when_the_stored_file_cannot_be_read(config, tmp_path):
    gold_dir = tmp_path / "gold"
    write_gold(gold_dir, "u1", "SELECT 1 AS x", stored='a,b\n"unclosed\n')
    result = Executor(config).temporal_gold(gold("u1", db="sales"), gold_dir, ["result.csv", "other.csv"])
    assert result.ok and result.source == "live" and result.drifted is None
    assert "drift unknown" in result.detail
