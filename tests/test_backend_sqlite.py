"""SQLite backend: real SQLite files in tmp_path, opened read-only by a real worker process."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest

from evaluators.errors import Location
from evaluators.execution import worker
from evaluators.execution.executor import ExecConfig, Executor, run_sql
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
    (idle,) = worker.pool().idle  # the same worker answers at once: the statement is gone
    started = time.monotonic()
    assert run_sql("sqlite", "school", "SELECT 5", config, config.output_dir / "next.csv").first_cell == 5
    assert time.monotonic() - started < 30
    assert worker.pool().idle[0].pid == idle.pid
