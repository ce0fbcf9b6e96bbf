"""Workers start as they are needed: past one per core on short work, a caller waits for one to come back;
behind workers on long queries it starts another."""

from __future__ import annotations

import threading
import time

import pytest

from evaluators.execution import worker


@pytest.fixture
def workers():
    pool = worker._Pool()
    yield pool
    pool.kill_all()


def _acquire_in_thread(pool) -> tuple[threading.Thread, list]:
    got: list = []
    thread = threading.Thread(target=lambda: got.append(pool.acquire()))
    thread.start()
    return thread, got


def test_a_caller_behind_busy_short_work_gets_a_returned_worker(workers, monkeypatch):
    """Sixteen threads of millisecond queries on two cores once started sixteen Pythons for them."""
    monkeypatch.setattr(
        worker, "LONG_QUERY_S", 60.0, raising=False
    )  # the held workers stay 'short' however slow the machine
    held = [workers.acquire() for _ in range(getattr(worker, "FREE_STARTS", 2))]
    thread, got = _acquire_in_thread(workers)
    time.sleep(0.3)  # the thread is waiting by now (it started no worker: none is starting)
    assert not got and workers.starting == 0
    workers.release(held[0])
    thread.join(10)
    assert got == [held[0]]
    for each in [*held[1:], *got]:
        workers.release(each)


def test_a_caller_behind_long_queries_starts_another(workers, monkeypatch):
    monkeypatch.setattr(worker, "LONG_QUERY_S", 0.2, raising=False)
    held = [workers.acquire() for _ in range(getattr(worker, "FREE_STARTS", 2))]
    thread, got = _acquire_in_thread(workers)
    thread.join(30)
    assert got and got[0] not in held and got[0].alive()
    for each in [*held, *got]:
        workers.release(each)


def test_a_caller_behind_workers_still_getting_ready_waits_for_them(workers, monkeypatch):
    """A fresh worker's first request spends a second importing PostgreSQL's driver before its query starts:
    counted as a long query, it made every waiting caller start one more worker (16 on two cores)."""
    monkeypatch.setattr(worker, "LONG_QUERY_S", 0.2, raising=False)
    monkeypatch.setattr(worker, "PREPARING_S", 60.0, raising=False)
    held = [workers.acquire() for _ in range(getattr(worker, "FREE_STARTS", 2))]
    thread, got = _acquire_in_thread(workers)
    time.sleep(0.6)  # three times LONG_QUERY_S: the held workers have not said their queries started
    assert not got and workers.starting == 0
    for each in held:
        each.query_began = time.monotonic() - 1.0  # as the "started" event sets it: now on long queries
    thread.join(30)
    assert got and got[0] not in held
    for each in [*held, *got]:
        workers.release(each)


def test_a_caller_behind_workers_that_said_their_queries_run_long_starts_another(workers, monkeypatch):
    """A worker's "long" event (execution/priority.py) is the pool's sign too: it does not wait LONG_QUERY_S
    after the query began, nor for a "started" event that comes late."""
    monkeypatch.setattr(worker, "LONG_QUERY_S", 60.0, raising=False)
    monkeypatch.setattr(worker, "PREPARING_S", 60.0, raising=False)
    held = [workers.acquire() for _ in range(getattr(worker, "FREE_STARTS", 2))]
    thread, got = _acquire_in_thread(workers)
    time.sleep(0.3)
    assert not got  # behind workers still 'coming back soon'
    for each in held:
        workers.went_long(each)  # as worker.execute does on the event
    thread.join(5)  # woken by it, not by LONG_QUERY_S / 4
    assert got and got[0] not in held
    for each in [*held, *got]:
        workers.release(each)
