"""The one parallel run of the project's commands: every item in order, `jobs` at a time, a bar stepped as
items end, and a signal stopping the run at once (`signals.check` every quarter second while waiting).

Two kinds of pool: threads, for work whose every query already runs in a killable worker process of its own
(the benchmarks of `grading/benchmark.py`: a thread only waits), and forked processes for work that
computes in Python (`grade`'s instances, in chunks).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator

from evaluators import signals

POLL_S = 0.25  # how often a waiting run looks for a signal whose raise was lost


def run_each(function: Callable, items: list, jobs: int, progress=None, *, chunked=None, on_abort=None) -> list:
    """`function(item)` for each item, in the items' order.

    `progress`: a factory `progress(total)` of a bar with `step(n)` and `close()` (the CLI's), or None.
    `chunked`: a picklable `chunked(chunk) -> list` grades chunks in forked processes instead of threads.
    `on_abort`: called when a signal stopped the run, after its processes were killed (leftovers to remove)."""
    bar = progress(len(items)) if callable(progress) else Silent()
    if jobs <= 1 or len(items) < 2:
        out = _in_turn(function, items, bar, on_abort)
    elif chunked is None:
        out = _in_threads(function, items, jobs, bar)
    else:
        out = _in_processes(chunked, items, jobs, bar, on_abort)
    bar.close()
    return out


def _in_turn(function: Callable, items: list, bar, on_abort) -> list:
    out = []
    try:
        for item in items:
            signals.check()
            out.append(function(item))
            bar.step()
    except BaseException:  # a signal may land before a store's `with` began: no `close()` removes its files
        if on_abort is not None:
            on_abort()
        raise
    return out


def _in_threads(function: Callable, items: list, jobs: int, bar) -> list:
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=jobs)
    ended: queue.SimpleQueue = queue.SimpleQueue()  # each future as it ends
    try:
        futures = [pool.submit(_checked, function, item) for item in items]
        for future in futures:
            future.add_done_callback(ended.put)
        left = len(futures)
        while left:  # not `wait(pending, FIRST_COMPLETED)`: it visits every pending future at each call
            done = _ended(ended)
            left -= done
            bar.step(done)
            signals.check()
        out = [future.result() for future in futures]
    except BaseException:  # a signal: queued items never start, running ones end with their killed workers
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out


def _ended(ended) -> int:
    """How many futures ended: the first waited for at most POLL_S, then those already in (0 when none)."""
    try:
        ended.get(timeout=POLL_S)
    except queue.Empty:
        return 0
    count = 1
    while True:
        try:
            ended.get_nowait()
        except queue.Empty:
            return count
        count += 1


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
