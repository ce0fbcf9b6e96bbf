"""What counts as a long query, and what a SQLite query that is long does (execution/long_mark.py,
execution/priority.py): the real SQLite engine, on a thread of the test's own (a lowered priority is a
thread's own and cannot be raised again)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evaluators.execution import long_mark, priority
from evaluators.execution.backends import get_backend
from evaluators.execution.backends.base import Request
from evaluators.execution.config import ExecConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_worker_zygote import SLOW  # noqa: E402


def test_the_mark_is_a_few_times_the_typical_duration_within_its_bounds():
    mark = long_mark.LongMark(0.05)
    assert mark.seconds == 0.05 and mark.typical is None  # nothing ended yet: the caller's own mark
    for _ in range(9):
        mark.add(0.0005)
    assert mark.typical == 0.0005 and mark.seconds == long_mark.LEAST_S  # 4 x 0.5 ms is under the least
    for _ in range(long_mark.WINDOW):
        mark.add(0.002)
    assert mark.seconds == pytest.approx(long_mark.TIMES * 0.002)
    for _ in range(long_mark.WINDOW):
        mark.add(1.0)
    assert mark.seconds == 0.05  # long queries do not push the mark past the caller's most


def test_the_typical_duration_is_the_median_so_one_timeout_does_not_move_it():
    typical = long_mark.Typical()
    for seconds in [0.001] * 20 + [30.0]:
        typical.add(seconds)
    for _ in range(long_mark.Typical.EVERY):
        typical.add(0.001)
    assert typical.typical == 0.001


@pytest.fixture
def query_history(monkeypatch):
    """A fresh history of this process's query times; the wall mark out of reach unless a test lowers it."""
    fresh = long_mark.LongMark(float("inf"))
    monkeypatch.setattr(priority, "_QUERY_CPU", fresh)
    monkeypatch.setattr(priority, "YIELD_AFTER_S", 60.0)
    return fresh


def _run_on_a_thread(sql: str, database: str, tmp_path, timeout_s: float) -> tuple[object, list, bool]:
    """(the outcome or the QueryFailed, the events sent, whether the thread lowered its priority)."""
    settings = ExecConfig(tmp_path / "work", timeout_s=timeout_s).settings("sqlite")
    request = Request("sqlite", sql, str(tmp_path / "out.csv"), database, settings, collect="inline")
    events: list = []
    found: dict = {}

    def run():
        try:
            found["outcome"] = get_backend("sqlite").run(request, events.append)
        except Exception as exc:  # the timeout
            found["outcome"] = exc
        found["lowered"] = priority.lowered()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    return found["outcome"], [e["event"] for e in events], found["lowered"]


def test_among_short_queries_a_query_past_their_cpu_mark_is_long_at_once(query_history, ten_rows_db, tmp_path):
    """Queries of a fraction of a millisecond make a mark of 5 ms of CPU: a query running into its timeout
    says it is long and yields long before the wall mark (here out of reach)."""
    for _ in range(10):
        outcome, events, lowered = _run_on_a_thread("SELECT count(*) FROM t", ten_rows_db, tmp_path, 10.0)
        assert "long" not in events and not lowered
    assert query_history.seconds <= priority.EARLY_MOST_S
    outcome, events, lowered = _run_on_a_thread(SLOW, ten_rows_db, tmp_path, 1.0)
    assert getattr(outcome, "reason", None) == "timeout"  # the same timeout: being long ends nothing sooner
    assert events.count("long") == 1 and lowered


def test_without_short_queries_before_it_only_the_wall_mark_makes_a_query_long(query_history, ten_rows_db, tmp_path):
    """No history (a fresh worker), or queries whose typical CPU time puts the mark past EARLY_MOST_S (larger
    databases): the CPU mark is off, and a query is long at YIELD_AFTER_S of wall time only."""
    outcome, events, lowered = _run_on_a_thread(SLOW, ten_rows_db, tmp_path, 0.3)
    assert getattr(outcome, "reason", None) == "timeout" and "long" not in events and not lowered
    for _ in range(long_mark.WINDOW):
        query_history.add(priority.EARLY_MOST_S)
    assert query_history.seconds > priority.EARLY_MOST_S
    outcome, events, lowered = _run_on_a_thread(SLOW, ten_rows_db, tmp_path, 0.3)
    assert "long" not in events and not lowered


def test_the_wall_mark_still_makes_a_query_long(query_history, ten_rows_db, tmp_path, monkeypatch):
    monkeypatch.setattr(priority, "YIELD_AFTER_S", 0.05)
    outcome, events, lowered = _run_on_a_thread(SLOW, ten_rows_db, tmp_path, 0.5)
    assert getattr(outcome, "reason", None) == "timeout" and events.count("long") == 1 and lowered


HEAP_SCRIPT = """
import sqlite3
from evaluators.execution import opener
con = sqlite3.connect(":memory:")
sent = []
con.set_trace_callback(sent.append)
for mb in (300, 300, 300, 200, 200, 300, 100):
    opener.set_heap_limit(con, mb)
    print(con.execute("PRAGMA hard_heap_limit").fetchone()[0] // 2**20, end=" ")
print(sum("hard_heap_limit =" in statement for statement in sent))
"""


def test_the_heap_cap_is_sent_only_below_the_one_in_force():
    """The PRAGMA sets the whole process's cap and only ever lowers it: sent for a lower cap, not once per
    query (in a process of its own: the cap it leaves stays with the process)."""
    done = subprocess.run([sys.executable, "-c", HEAP_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["300", "300", "300", "200", "200", "200", "100", "3"], done.stderr
