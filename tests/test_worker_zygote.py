"""Workers forked from the run's zygote (execution/zygote.py), and a long query's lowered priority
(execution/priority.py): what a user relies on, read from the processes themselves (/proc)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluators.execution import priority, worker
from evaluators.execution.executor import ExecConfig, run_sql

SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"


@pytest.fixture
def database(ten_rows_db) -> str:
    return ten_rows_db


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


def _thread_nices(pid: int) -> list[int]:
    """The nice value of each thread of process `pid` (Linux keeps one per thread)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found.append(int(Path(f"/proc/{pid}/task/{task}/stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return found


def test_a_long_query_lowers_its_threads_priority_and_the_worker_goes_on_at_the_normal_one(
    fresh_pool, database, tmp_path
):
    base, seen, done = _nice(os.getpid()), set(), threading.Event()

    def watch() -> None:
        while not done.is_set():
            for busy in list(fresh_pool.busy):
                try:
                    seen.update(_thread_nices(busy.pid))
                except FileNotFoundError:
                    pass
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = _run(SLOW, database, tmp_path, timeout_s=priority.YIELD_AFTER_S + 0.5)
    finally:
        done.set()
        watcher.join()
    assert result.reason == "timeout"  # the same timeout: a lowered priority does not end a query sooner
    assert min(base + priority.YIELD_NICE, 19) in seen  # the query's thread yielded while it ran
    (kept,) = fresh_pool.idle  # the worker goes on, its connection kept
    assert _run("SELECT count(*) FROM t", database, tmp_path).ok  # on a new thread, the same connection
    assert fresh_pool.idle == [kept] and set(_thread_nices(kept.pid)) == {base}  # none left at the low one


def test_a_long_query_says_so_to_the_pool_and_to_the_thread_waiting_on_it(fresh_pool, database, tmp_path):
    """Its "long" event (priority.py): the waiting thread's callback runs (the runner adds a thread there)
    and the pool no longer counts the worker as coming back soon; a short query says nothing."""
    said: list[bool] = []
    priority.when_long(lambda: said.append(True))
    try:
        assert _run("SELECT count(*) FROM t", database, tmp_path).ok
        assert not said
        assert _run(SLOW, database, tmp_path, timeout_s=priority.YIELD_AFTER_S + 0.5).reason == "timeout"
    finally:
        priority.when_long(None)
    assert said == [True]  # once, however many times SQLite looked at the clock after the mark
    (kept,) = fresh_pool.idle
    assert kept.long_query  # until it is lent again
    assert _run("SELECT count(*) FROM t", database, tmp_path).ok and not kept.long_query


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


KINDS_SCRIPT = """
import json, os, sys, time
from pathlib import Path
from evaluators.execution import worker, zygote
from evaluators.execution.executor import ExecConfig, run_sql

def parent_of(pid):
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])

worker.prestart(("evaluators.execution.backends.sqlite_backend",), fork=sys.argv[1] == "forked")
config = ExecConfig(output_dir=Path(sys.argv[3]), timeout_s=0.5)
answers = []
for sql in sys.argv[4:]:
    result = run_sql("sqlite", sys.argv[2], sql, config, Path(sys.argv[3]) / "out.csv", collect="rows")
    answers.append([result.ok, result.reason, [list(row) for row in (result.rows() if result.ok else [])]])
last = run_sql("sqlite", sys.argv[2], "SELECT 1", config, Path(sys.argv[3]) / "one.csv")
assert last.ok, (last.reason, last.detail)
(one,) = worker.pool().idle  # a worker that has answered (and so made its own process group)
z = zygote._zygote.proc.pid
print(json.dumps({
    "answers": answers,
    "worker_of_zygote": parent_of(one.pid) == z,
    "own_group": os.getpgid(one.pid) == one.pid,
    "our_session": os.getsid(one.pid) == os.getsid(0),
    "sqlite_warm": "_sqlite3" in Path(f"/proc/{one.pid}/maps").read_text(),
    "zygote_group": os.getpgid(z) == z,
    "zygote_is_this_python_forked": parent_of(z) == os.getpid()
    and Path(f"/proc/{z}/cmdline").read_bytes() == Path("/proc/self/cmdline").read_bytes(),
}))
"""


def test_a_forked_and_a_spawned_zygote_give_the_same_workers_and_answers(database, tmp_path):
    """The two ways a zygote starts (`Zygote.forked` at the command line's start, `Zygote.spawned` later):
    the same answers (rows, an error, a timeout) from workers made alike, each in a fresh process."""
    queries = ["SELECT x, x * 2 FROM t ORDER BY x", "SELECT nope FROM t", SLOW]
    seen = {}
    for kind in ("forked", "spawned"):
        done = subprocess.run(
            [sys.executable, "-c", KINDS_SCRIPT, kind, database, str(tmp_path / kind), *queries],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        seen[kind] = json.loads(done.stdout.splitlines()[-1])
    forked, spawned = seen["forked"], seen["spawned"]
    assert forked.pop("zygote_is_this_python_forked") and not spawned.pop("zygote_is_this_python_forked")
    assert forked == spawned
    assert [a[1] for a in forked["answers"]] == ["ok", "exec_error", "timeout"]
    assert all(v for k, v in forked.items() if k != "answers"), forked


@pytest.mark.parametrize(
    "args, starts",
    [
        (["bird", "--db_root_path", "dbs/"], True),
        (["bird", "--sql_dialect", "sqlite"], True),
        (["bird", "--sql_dialect", "PostgreSQL"], False),
        (["bird", "--sql-dialect=MySQL"], False),
        (["bird", "--help"], False),
        (["grade", "--result_dir", "sub"], False),
        ([], False),
    ],
)
def test_bird_on_sqlite_starts_its_zygote_before_the_command_line_is_imported(fresh_pool, args, starts):
    from evaluators import entry
    from evaluators.execution import zygote

    try:
        entry.start_workers_early(args)
        assert (zygote._zygote is not None) == starts
    finally:
        zygote.shutdown()


def _lines(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_quick_querys_start_is_never_sent_and_a_long_ones_is_sent_with_its_start():
    """The worker's events (`worker._Outbox`): a start is held until its query has run START_SENT_AFTER_S, then
    sent with the worker's clock, so the grader's timeout still counts from the query's real start."""
    out = io.StringIO()
    box = worker._Outbox(out)
    box.send({"event": "started", "phase": "gold"})
    box.send({"event": "result", "reason": "ok"})
    assert [e["event"] for e in _lines(out)] == ["result"]
    before = time.monotonic()
    box.send({"event": "started", "phase": "pred"})
    after = time.monotonic()
    waited = time.monotonic() + 10
    while len(_lines(out)) < 2 and time.monotonic() < waited:
        time.sleep(0.005)
    late = _lines(out)[1]
    assert late["event"] == "started" and late["phase"] == "pred" and before <= late["at"] <= after
    box.send({"event": "started"})
    box.send({"event": "handle", "job": 7})  # what a running query says goes after its start
    assert [e["event"] for e in _lines(out)[2:]] == ["started", "handle"]
