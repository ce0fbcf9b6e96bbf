"""Workers forked from the run's zygote (execution/zygote.py), and a long query's lowered priority
(execution/priority.py): what a user relies on, read from the processes themselves (/proc)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from evaluators.execution import priority, worker
from evaluators.execution.executor import ExecConfig, run_sql

SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"


@pytest.fixture
def database(tmp_path) -> str:
    path = tmp_path / "db.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    con.commit()
    con.close()
    return str(path)


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _run(sql: str, database: str, tmp_path, timeout_s: float = 10.0):
    config = ExecConfig(output_dir=tmp_path / "work", timeout_s=timeout_s)
    return run_sql("sqlite", database, sql, config, tmp_path / "out.csv", collect="inline")


def test_a_worker_is_its_own_process_group_in_the_graders_session(fresh_pool, database, tmp_path):
    assert _run("SELECT count(*) FROM t", database, tmp_path).ok
    (started,) = fresh_pool.idle
    assert os.getpgid(started.pid) == started.pid  # a timeout kills its group, and only it
    assert os.getsid(started.pid) == os.getsid(0)  # one scheduling group with the grader (priority.py)
    assert _nice(started.pid) == _nice(os.getpid())


def test_a_long_query_lowers_its_workers_priority_and_the_worker_ends_after_it(fresh_pool, database, tmp_path):
    result = _run(SLOW, database, tmp_path, timeout_s=priority.YIELD_AFTER_S + 0.5)
    assert result.reason == "timeout"  # the same timeout: a lowered priority does not end a query sooner
    assert not fresh_pool.idle and not fresh_pool.busy  # it retired: no later query runs at its priority
    assert _run("SELECT count(*) FROM t", database, tmp_path).ok
    (fresh,) = fresh_pool.idle
    assert _nice(fresh.pid) == _nice(os.getpid())


def test_a_short_query_keeps_its_worker(fresh_pool, database, tmp_path):
    for _ in range(3):
        assert _run("SELECT count(*) FROM t", database, tmp_path).ok
    assert len(fresh_pool.idle) == 1


def test_workers_start_from_the_zygote_not_a_new_python(fresh_pool, database, tmp_path):
    """A forked worker has the zygote for its parent and already holds the SQLite backend the zygote loaded."""
    worker.prestart(("evaluators.execution.backends.sqlite_backend",))
    assert not fresh_pool.idle  # the zygote starts; the first worker is forked when a query needs one
    started = fresh_pool.acquire()
    fresh_pool.release(started)
    parent = int(Path(f"/proc/{started.pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert parent != os.getpid() and "fork_server" in Path(f"/proc/{parent}/cmdline").read_text()
    assert "_sqlite3" in Path(f"/proc/{started.pid}/maps").read_text()
