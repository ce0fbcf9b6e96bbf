"""SQLite backend: real SQLite files in tmp_path, opened read-only by a real worker process."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from evaluators.errors import Location
from evaluators.execution import priority, worker
from evaluators.execution.executor import ExecConfig, Executor, run_sql
from evaluators.execution.row_files import decode_rows, encode_rows
from evaluators.specs import GoldInstance, Spec

COUNT_TO_A_BILLION = (
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 1000000000) SELECT count(*) FROM r"
)
TIMEOUT_S = 2.0


def gold(instance_id="sq1", db="school"):
    return GoldInstance(
        instance_id,
        (Spec("table_match", {"gold": "result.csv"}),),
        {"type": "SQLite", "db": db},
        Location("spider2_eval.jsonl", 1),
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def db_dir(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    con = sqlite3.connect(folder / "school.sqlite")
    con.execute("CREATE TABLE pupils (id INTEGER, name TEXT, grade REAL)")
    con.executemany("INSERT INTO pupils VALUES (?, ?, ?)", [(1, "ann", 5.5), (2, "bob", None), (3, "cy", 4.0)])
    con.commit()
    con.close()
    return folder


@pytest.fixture
def config(tmp_path, db_dir):
    return ExecConfig(output_dir=tmp_path / "out", db_dir=db_dir, timeout_s=TIMEOUT_S)


def test_predicted_sql_runs_on_the_sqlite_file(config):
    result = Executor(config).run_prediction(gold(), "```sqlite\nSELECT name, grade FROM pupils ORDER BY id\n```")
    assert result.ok and result.backend == "sqlite", result.detail
    frame = pd.read_csv(result.csv_path)
    assert frame["name"].tolist() == ["ann", "bob", "cy"]
    assert frame["grade"].isna().tolist() == [False, True, False]
    assert result.first_cell == "ann"


def test_the_spider1_layout_db_folder_is_found(config, db_dir):
    nested = db_dir / "club"
    nested.mkdir()
    sqlite3.connect(nested / "club.sqlite").execute("CREATE TABLE t AS SELECT 42 AS x").connection.commit()
    assert Executor(config).run_prediction(gold(db="club"), "SELECT x FROM t").first_cell == 42


def test_drop_table_cannot_harm_the_file(config, db_dir):
    before = sha256(db_dir / "school.sqlite")
    result = Executor(config).run_prediction(gold(), "DROP TABLE pupils")
    assert result.reason == "exec_error" and "readonly" in result.detail
    assert sha256(db_dir / "school.sqlite") == before
    assert Executor(config).run_prediction(gold(), "SELECT count(*) FROM pupils").first_cell == 3


@pytest.mark.parametrize("sql", ["ATTACH '{target}' AS other", "VACUUM INTO '{target}'"])
def test_no_new_files_can_be_written(config, tmp_path, sql):
    target = tmp_path / "copy.sqlite"
    result = run_sql("sqlite", "school", sql.format(target=target), config, tmp_path / "r.csv")
    assert result.reason == "exec_error"
    assert not target.exists()


def test_missing_database_is_no_database(config):
    result = Executor(config).run_prediction(gold(db="absent"), "SELECT 1")
    assert result.reason == "no_database" and "absent" in result.detail


def test_timeout_aborts_the_statement_inside_sqlite(config):
    worker.pool().shutdown()
    assert run_sql("sqlite", "school", "SELECT 1", config, config.output_dir / "warm.csv").ok
    started = time.monotonic()
    result = run_sql("sqlite", "school", COUNT_TO_A_BILLION, config, config.output_dir / "long.csv")
    elapsed = time.monotonic() - started
    assert result.reason == "timeout" and "interrupted" in result.detail
    assert TIMEOUT_S <= elapsed < TIMEOUT_S + 30  # stopped, not run to the end
    # Stopped by SQLite ("interrupted"), not by a kill: the worker, whose query thread lowered its priority
    # for the long query (execution/priority.py), stays and answers at once.
    assert len(worker.pool().idle) == 1 and not worker.pool().busy
    started = time.monotonic()
    assert run_sql("sqlite", "school", "SELECT 5", config, config.output_dir / "next.csv").first_cell == 5
    assert time.monotonic() - started < 30


def inline(config, sql: str):
    return run_sql("sqlite", "school", sql, config, config.output_dir / "inline.csv", collect="inline")


def test_a_kept_connection_leaves_nothing_to_the_next_query(config):
    """The worker keeps its connection open between queries: a refused write, a PRAGMA assignment, a
    result too large or a timeout on it change nothing that the next query on the same worker sees."""
    worker.pool().shutdown()
    assert inline(config, "SELECT count(*) FROM pupils").rows() == (["count(*)"], [(3,)])
    (kept,) = worker.pool().idle
    for sql in ("CREATE TEMP TABLE t(x)", "PRAGMA query_only = 0", "PRAGMA cache_size = 0", "BEGIN"):
        refused = inline(config, sql)
        assert refused.reason == "exec_error" and "refused" in refused.detail, (sql, refused.detail)
    tight = replace(config, timeout_s=priority.YIELD_AFTER_S * 2)  # it yields, on a thread the worker then replaces
    assert inline(tight, COUNT_TO_A_BILLION).reason == "timeout"
    too_big = replace(config, memory_limit_mb=1)  # the result's budget, far below a billion-row result
    assert inline(
        too_big, "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i, 'xxxxxxxx' FROM r"
    ).reason in (
        "result_too_large",
        "memory_limit",
    )
    assert inline(config, "SELECT name FROM pupils ORDER BY id").rows() == (["name"], [("ann",), ("bob",), ("cy",)])
    assert inline(config, "SELECT count(*) FROM temp.sqlite_master").rows()[1] == [(0,)]
    assert [w.pid for w in worker.pool().idle] == [kept.pid]  # all of it on the one worker


def test_a_kept_connection_serves_the_next_query(config, db_dir):
    """The connection kept after one query is the one the next query on the file runs on (the last query's
    read-only guard once refused the next one's heap-cap PRAGMA, so every query opened the file again), and
    the guard still refuses a write on it."""
    from evaluators.execution.backends import sqlite_backend
    from evaluators.execution.backends.base import Request

    backend = sqlite_backend.SQLiteBackend()
    path = str(db_dir / "school.sqlite")

    def request(sql: str) -> Request:
        return Request("sqlite", sql, str(config.output_dir / "x.csv"), path, config.settings("sqlite"), {}, "inline")

    backend.run(request("SELECT count(*) FROM pupils"), lambda event: None)
    key = sqlite_backend._key(request(""))
    first = sqlite_backend._connections._open[key]
    assert backend.run(request("SELECT name FROM pupils WHERE id = 2"), lambda event: None).first_cell == "bob"
    assert sqlite_backend._connections._open[key] is first
    with pytest.raises(sqlite_backend.QueryFailed, match="refused"):
        backend.run(request("PRAGMA query_only = 0"), lambda event: None)
    assert sqlite_backend._connections._open[key] is first


def test_a_changed_database_file_is_opened_again(config, db_dir):
    """A kept connection is immutable (it would not notice a change): a file that changed is opened anew."""
    worker.pool().shutdown()
    assert inline(config, "SELECT count(*) FROM pupils").rows()[1] == [(3,)]
    con = sqlite3.connect(db_dir / "school.sqlite")
    con.executemany("INSERT INTO pupils VALUES (?, ?, ?)", [(4, "di", 3.0), (5, "ed", 2.0)])
    con.commit()
    con.close()
    assert inline(config, "SELECT count(*) FROM pupils").rows()[1] == [(5,)]


def test_inline_rows_keep_their_types():
    rows = [(1, "a", None, True, 2.5), (float("inf"), b"\x00", Decimal("1.10"), float("nan"), -0.0)]
    encoded, tagged = encode_rows(rows)
    assert tagged and encoded[0] == rows[0]  # a plain row goes as it is
    back = decode_rows(json.loads(json.dumps(encoded)), tagged)
    assert back[0] == rows[0] and back[1][:3] == rows[1][:3] and math.isnan(back[1][3])
    plain, tagged = encode_rows([(1, "x")])
    assert not tagged and decode_rows(json.loads(json.dumps(plain)), tagged) == [(1, "x")]


def test_the_frames_library_is_imported_before_the_query_starts(tmp_path):
    """The answer's timeout counts from its query's start: what the worker needs afterwards to keep the result
    (pandas, a second to import on a loaded machine) is imported before, or a fast answer can time out."""
    import subprocess
    import sys

    db = tmp_path / "one.sqlite"
    sqlite3.connect(db).close()
    code = f"""
import sys
from evaluators.execution.backends.base import Request
from evaluators.execution.executor import scratch_config
from evaluators.execution.worker import serve
assert "pandas" not in sys.modules, "imported already: this test proves nothing"
seen = {{}}
def send(event):
    seen.setdefault(event["event"], "pandas" in sys.modules)
request = Request("sqlite", "SELECT 1", {str(tmp_path / "out.csv")!r}, {str(db)!r}, scratch_config().settings())
result = serve({{"request": request.to_dict()}}, send)
print(result["reason"], seen.get("started"))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", "True"]
