"""The one parallel run of the project's commands: every item in order, `jobs` at a time, a bar stepped as
items end, and a signal stopping the run at once (`signals.check` every quarter second while waiting).

Two kinds of pool: threads, for work whose every query already runs in a killable worker process of its own
(the benchmarks of `grading/benchmark.py`: a thread only waits), and forked processes for work that
computes in Python (`grade`'s instances, in chunks).
"""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from evaluators import signals
from evaluators.execution import priority
from evaluators.execution.long_mark import Typical

POLL_S = 0.25  # how often a waiting run looks for a signal whose raise was lost


def run_each(
    function: Callable,
    items: list,
    jobs: int,
    progress=None,
    *,
    chunked=None,
    on_abort=None,
    batch=1,
    prepare=None,
    meanwhile=None,
) -> list:
    """`function(item)` for each item, in the items' order.

    `progress`: a factory `progress(total)` of a bar with `step(n)` and `close()` (the CLI's), or None.
    `chunked`: a picklable `chunked(chunk) -> list` grades chunks in forked processes instead of threads.
    `on_abort`: called when a signal stopped the run, after its processes were killed (leftovers to remove).
    `batch`, `prepare`: a thread takes up to `batch` items at once (as many as take about RUN_S by their
    typical time, FEWEST at least: `_ThreadRun.take`) and calls `prepare(those items)` before
    `function` on each of them, on the same thread (a failing `prepare` is ignored: `function` does the
    work).  Fewer near the end (`_ThreadRun.take`), so that no thread is left with a run of slow items while
    the others have none.
    `meanwhile`: called once on the calling thread when every item is taken and it only waits for the last
    ones (what the caller will need next, imported while they finish)."""
    bar = progress(len(items)) if callable(progress) else Silent()
    prepared = _Prepared(prepare, batch)
    if jobs <= 1 or len(items) < 2:
        out = _in_turn(function, items, bar, on_abort, prepared)
    elif chunked is None:
        out = _in_threads(function, items, jobs, bar, prepared, meanwhile)
    else:
        out = _in_processes(chunked, items, jobs, bar, on_abort)
    bar.close()
    return out


class _Prepared:
    """`prepare` of `run_each`, called with each run of items a thread takes (nothing when there is none)."""

    def __init__(self, prepare: Callable | None, batch: int):
        self.batch = max(1, batch) if prepare is not None else 1
        self.prepare = prepare

    def __call__(self, items: list) -> None:
        self.finish(self.start(items))

    def start(self, items: list) -> Callable[[], None] | None:
        """`prepare(items)`, and what it returned when that is a function waiting for the work it began."""
        if self.prepare is None or len(items) <= 1:
            return None
        try:
            answered = self.prepare(items)
        except Exception:  # each item is then done alone, and a bug says itself there, as its result
            return None
        return answered if callable(answered) else None

    @staticmethod
    def finish(answered: Callable[[], None] | None) -> None:
        if answered is not None:
            try:
                answered()
            except Exception:  # as a failing `prepare`: each item is then done alone
                pass


def _in_turn(function: Callable, items: list, bar, on_abort, prepared: _Prepared) -> list:
    out = []
    try:
        for start in range(0, len(items), prepared.batch):
            run = items[start : start + prepared.batch]
            prepared(run)
            for item in run:
                signals.check()
                out.append(function(item))
                bar.step()
    except BaseException:  # a signal may land before a store's `with` began: no `close()` removes its files
        if on_abort is not None:
            on_abort()
        raise
    return out


# Threads at the start: one per core (three or four only handed the few workers that keep up to each other,
# measured).  A thread whose item runs past STUCK_S (a slow query, a timeout) gets a new thread beside it, up
# to `jobs`: slow queries still wait out their timeouts side by side, while a run of fast ones is not spread
# over sixteen threads handing workers to each other (a tenth of a 1,000-question BIRD run).  A thread whose
# query says it runs long (a "long" event: execution/priority.py) gets its thread beside it at once; STUCK_S
# is for the queries that say nothing (the servers').
FIRST_THREADS = os.cpu_count() or 1
STUCK_S = 0.05
# A run of items a thread takes at once (with `batch` > 1): as many as take about RUN_S, at least FEWEST.  On
# BIRD's SQLite sets, runs of 16 questions of half a millisecond made 1,000 of them 3-5 % quicker than runs of
# 8 (fewer round trips to the worker), while on larger databases (a tenth of a second a question) runs of 16
# were 3 % slower and runs of 2 no quicker than 8 (29 Nov 2026, bench/bird.py, alternating runs).
RUN_S = 0.012
FEWEST = 8


def _in_threads(function: Callable, items: list, jobs: int, bar, prepared: _Prepared, meanwhile=None) -> list:
    run = _ThreadRun(function, items, jobs, prepared)
    try:
        run.grow(FIRST_THREADS)
        left = len(items)
        while left:
            done = _ended(run.ended, min(POLL_S, STUCK_S))
            left -= done
            bar.step(done)
            signals.check()
            run.grow(FIRST_THREADS + run.stuck() - run.threads)
            if meanwhile is not None and left and run.taken == len(items):
                meanwhile, then = None, meanwhile
                then()
    except BaseException:  # a signal: queued items never start, running ones end with their killed workers
        run.stop()
        raise
    return run.results()


@dataclass
class _Begun:
    """A run of items whose `prepare` was called: what waits for its work, or the signal that stopped it."""

    taken: range
    answered: Callable[[], None] | None
    stopped: tuple | None
    started: float = field(default_factory=time.monotonic)


class _ThreadRun:
    """The items taken in order by a growing set of daemon threads; each result (or exception) in its place."""

    def __init__(self, function: Callable, items: list, jobs: int, prepared: _Prepared):
        self.function, self.items, self.jobs, self.prepared = function, items, jobs, prepared
        self.out: list = [None] * len(items)
        self.ended: queue.SimpleQueue = queue.SimpleQueue()  # an index per item ended
        self.taken = 0  # the items before this one are taken
        self.lock = threading.Lock()
        self.busy: dict[int, float] = {}  # thread number -> when its current items began
        self.threads = 0
        self.item_s = Typical()  # an item's time, over the runs of items that ended
        self.stopped = False

    def grow(self, count: int) -> None:
        """`count` more threads (none when it is 0 or less), `jobs` at most."""
        for _ in range(min(count, self.jobs - self.threads)):
            number, self.threads = self.threads, self.threads + 1
            threading.Thread(target=self._work, args=(number,), daemon=True, name=f"grading-{number}").start()

    def stuck(self) -> int:
        """Threads on one item for more than STUCK_S."""
        now = time.monotonic()
        with self.lock:
            return sum(now - began > STUCK_S for began in self.busy.values())

    def take(self) -> range:
        """The next items for a thread: a run of RUN_S by the items' typical time, between FEWEST and `batch`,
        and no more than a share of what is left that every thread, and as many again, could get (none once
        the run stops)."""
        left = len(self.items) - self.taken
        size = 0 if self.stopped else min(left, self._run_size(), max(1, left // (2 * self.threads)))
        self.taken += size
        return range(self.taken - size, self.taken)

    def _run_size(self) -> int:
        most, typical = self.prepared.batch, self.item_s.typical
        fewest = min(most, FEWEST)
        return fewest if typical is None else max(fewest, min(most, int(RUN_S / max(typical, 1e-9))))

    def _work(self, number: int) -> None:
        """Runs of items in turn.  When a run's `prepare` began work it returns a function to wait for, the
        next run is taken and its `prepare` called before this one is graded: its worker then goes from one
        run to the next without waiting for this thread to read, grade, take and write."""
        priority.when_long(lambda: self._went_long(number))
        ahead, last_end = None, time.monotonic()
        try:
            while True:
                if ahead is None:
                    with self.lock:
                        taken = self.take()
                    if not taken:
                        return
                    ahead = self._begin(taken)
                if ahead.answered is None:  # nothing under way to wait for: graded now, the next taken after
                    last_end, ahead = self._run(number, ahead, last_end), None
                    continue
                with self.lock:
                    taken = self.take()
                begun = self._begin(taken) if taken else None
                last_end, ahead = self._run(number, ahead, last_end), begun
        finally:
            if ahead is not None:  # never graded (a bug above): its worker is waited for, not left lent
                self.prepared.finish(ahead.answered)

    def _begin(self, taken: range) -> _Begun:
        try:
            return _Begun(taken, self.prepared.start([self.items[index] for index in taken]), None)
        except BaseException as exc:  # a signal: these items end with it
            return _Begun(taken, None, (False, exc))

    def _run(self, number: int, run: _Begun, last_end: float) -> float:
        with self.lock:
            self.busy[number] = time.monotonic()
        taken, stopped = run.taken, run.stopped
        if stopped is None:
            try:
                self.prepared.finish(run.answered)
            except BaseException as exc:  # a signal: these items end with it
                stopped = (False, exc)
        for index in taken:
            if stopped is not None:
                self.out[index] = stopped
            else:
                try:
                    self.out[index] = (True, _checked(self.function, self.items[index]))
                except BaseException as exc:  # the caller raises it in the items' order, as futures did
                    self.out[index] = (False, exc)
            self.ended.put(index)
        now = time.monotonic()
        with self.lock:
            del self.busy[number]
        self.item_s.add((now - max(run.started, last_end)) / len(taken))
        return now

    def _went_long(self, number: int) -> None:
        """This thread's item is stuck from now: the waiting loop wakes (`None` in `ended`) and adds a thread."""
        with self.lock:
            if number in self.busy:
                self.busy[number] = -math.inf
        self.ended.put(None)

    def stop(self) -> None:
        with self.lock:
            self.stopped = True

    def results(self) -> list:
        for ok, value in self.out:
            if not ok:
                raise value
        return [value for _, value in self.out]


def _ended(ended, wait_s: float = POLL_S) -> int:
    """How many items ended: the first news waited for at most `wait_s`, then what is already in (0 when none;
    a `None` is a wake-up, not an item)."""
    try:
        news = [ended.get(timeout=wait_s)]
    except queue.Empty:
        return 0
    while True:
        try:
            news.append(ended.get_nowait())
        except queue.Empty:
            return len(news) - news.count(None)


def _checked(function: Callable, item):
    signals.check()  # after a signal no queued item starts a worker
    return function(item)


def _in_processes(chunked: Callable, items: list, jobs: int, bar, on_abort) -> list:
    import multiprocessing  # only parallel runs pay for importing it

    size = max(1, min(32, len(items) // (jobs * 4) or 1))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    out: list = []
    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=signals.exit_with_parent)
    try:
        for results in waiting(pool.imap(chunked, chunks)):
            out.extend(results)
            bar.step(len(results))
        pool.close()
    except BaseException:  # a signal: the processes go at once (their SQL workers follow them, see worker.py)
        pool.terminate()
        pool.join()
        if on_abort is not None:
            on_abort()
        raise
    finally:
        pool.join()
    return out


def waiting(results) -> Iterator:
    """A pool's results in order, looking every quarter second for a signal whose raise was lost."""
    import multiprocessing

    while True:
        try:
            yield results.next(timeout=POLL_S)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
            signals.check()


class Silent:
    """No progress shown (the API's default; the CLI passes a bar)."""

    def step(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass
