"""DuckDB backend: real DuckDB files in tmp_path, queries run in real worker processes."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from endless import DUCKDB_ENDLESS as LONG_QUERY

from evaluators.errors import Location
from evaluators.execution import worker
from evaluators.execution.executor import ExecConfig, Executor, run_sql
from evaluators.specs import GoldInstance, Spec

TIMEOUT_S = 2.0


def gold(instance_id="dq1", type_="DuckDB", db="shop"):
    return GoldInstance(
        instance_id,
        (Spec("table_match", {"gold": "result.csv"}),),
        {"type": type_, "db": db},
        Location("spider2_eval.jsonl", 1),
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db_dir(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    con = duckdb.connect(str(folder / "shop.duckdb"))
    con.execute(
        "CREATE TABLE orders AS SELECT * FROM (VALUES (1, 'ann', 9.5), (2, 'bob', 3.25), (3, NULL, 1.0))"
        " v(id, name, amount)"
    )
    con.close()
    return folder


@pytest.fixture
def config(tmp_path, db_dir):
    return ExecConfig(output_dir=tmp_path / "out", db_dir=db_dir, timeout_s=TIMEOUT_S)


def test_predicted_sql_runs_and_its_csv_goes_to_the_output_folder(config):
    result = Executor(config).run_prediction(gold(), "SELECT id, name, amount FROM orders ORDER BY id")
    assert result.ok and result.reason == "ok" and result.backend == "duckdb"
    assert result.csv_path == (config.output_dir / "predictions" / "dq1.csv").resolve()
    frame = pd.read_csv(result.csv_path)
    assert list(frame.columns) == ["id", "name", "amount"]
    assert frame["amount"].tolist() == [9.5, 3.25, 1.0]
    assert result.first_cell == 1


def test_markdown_fenced_sql_is_unwrapped(config):
    text = "Here is my query:\n\n```sql\nSELECT max(amount) AS top FROM orders\n```\nIt finds the top amount."
    result = Executor(config).run_prediction(gold(), text)
    assert result.ok, result.detail
    assert result.first_cell == 9.5


def test_engine_error_is_the_first_line_of_the_message(config):
    result = Executor(config).run_prediction(gold(), "SELECT nope FROM orders")
    assert not result.ok and result.reason == "exec_error"
    assert "nope" in result.detail and "\n" not in result.detail


def test_drop_table_is_refused_and_leaves_the_file_unchanged(config, db_dir):
    before = sha256(db_dir / "shop.duckdb")
    result = Executor(config).run_prediction(gold(), "DROP TABLE orders")
    assert result.reason == "exec_error" and "read-only" in result.detail
    assert sha256(db_dir / "shop.duckdb") == before
    assert Executor(config).run_prediction(gold(), "SELECT count(*) FROM orders").first_cell == 3


@pytest.mark.parametrize(
    "sql, words",
    [
        ("COPY (SELECT 1) TO '{target}'", "disabled by configuration"),
        ("SELECT * FROM read_csv('{secret}')", "disabled by configuration"),
        ("ATTACH '{target}' AS other", "disabled by configuration"),
        ("SET enable_external_access = true", "locked"),
    ],
)
def test_files_and_settings_are_out_of_reach(config, tmp_path, sql, words):
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nabc\n")
    target = tmp_path / "written.out"
    result = run_sql("duckdb", "shop", sql.format(target=target, secret=secret), config, tmp_path / "r.csv")
    assert result.reason == "exec_error" and words in result.detail
    assert not target.exists()


def test_missing_database_file_is_no_database(config):
    result = Executor(config).run_prediction(gold(db="absent"), "SELECT 1")
    assert result.reason == "no_database" and "absent" in result.detail


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_timeout_interrupts_the_query(config):
    worker.pool().shutdown()
    assert run_sql("duckdb", "shop", "SELECT 1", config, config.output_dir / "warm.csv").ok  # start-up not timed
    started = time.monotonic()
    result = run_sql("duckdb", "shop", LONG_QUERY, config, config.output_dir / "long.csv")
    elapsed = time.monotonic() - started
    assert result.reason == "timeout" and "interrupted" in result.detail
    assert TIMEOUT_S <= elapsed < TIMEOUT_S + 30  # stopped, not run to the end (speed belongs in bench/)
    # The interrupted worker went back to the pool; it must be idle, not still counting.
    (idle,) = worker.pool().idle
    before = _cpu_ticks(idle.pid)
    time.sleep(0.5)
    assert _cpu_ticks(idle.pid) - before <= 2


def test_a_worker_that_cannot_stop_itself_is_killed(config):
    """SIGSTOP freezes the worker, so its own interrupt never fires; the parent must kill it."""
    workers = worker.pool()
    workers.shutdown()
    assert run_sql("duckdb", "shop", "SELECT 1", config, config.output_dir / "warm.csv").ok
    (warm,) = workers.idle  # one started worker, whose pid we know
    pid = warm.pid
    threading.Timer(0.5, os.kill, (pid, signal.SIGSTOP)).start()  # during the query
    started = time.monotonic()
    result = run_sql("duckdb", "shop", LONG_QUERY, config, config.output_dir / "long.csv")
    elapsed = time.monotonic() - started
    assert result.reason == "timeout" and "killed" in result.detail
    assert TIMEOUT_S + 1.0 <= elapsed < TIMEOUT_S + 30  # timeout + kill grace, then killed
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert workers.idle == []
    assert run_sql("duckdb", "shop", "SELECT 7", config, config.output_dir / "after.csv").first_cell == 7
