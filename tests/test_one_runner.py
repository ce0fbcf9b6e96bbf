"""The one runner: every command's items go through `grading/benchmark.run_benchmark`, in threads or in
forked processes, with the same reports either way."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report, run_benchmark
from evaluators.matching.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[1] / "evaluators"


class Squares(Benchmark):
    """A toy benchmark: item n passes when n is even; 7 breaks its rule."""

    names = ("official", "strict")

    def __init__(self, processes: bool):
        self.processes = processes

    def read(self) -> Inputs:
        return Inputs(list(range(20)), 20)

    def grade(self, item):
        if item == 7:
            raise ValueError("seven")
        verdict = Verdict(float(item % 2 == 0), "ok" if item % 2 == 0 else "wrong", f"item {item}")
        return item_report(
            self.names, str(item), every(self.names, verdict), funcs=(), answer_type=None, metadata={"pid": os.getpid()}
        )

    def broken(self, item, words: str):
        verdicts = every(self.names, Verdict(0.0, "internal_error", words))
        return item_report(self.names, str(item), verdicts, funcs=(), answer_type=None)


def _rows(report) -> list:
    return [(i.instance_id, i.score, i.reason, i.detail) for i in report.instances]


@pytest.mark.parametrize("jobs", [1, 3])
def test_threads_and_processes_give_the_same_report_a_broken_item_included(jobs):
    in_threads = run_benchmark(Squares(processes=False), jobs)
    in_processes = run_benchmark(Squares(processes=True), jobs)
    assert _rows(in_threads) == _rows(in_processes)
    assert [i.instance_id for i in in_processes.instances] == [str(n) for n in range(20)]
    broken = in_processes.instances[7]
    assert broken.reason == "internal_error" and "ValueError: seven" in broken.detail
    assert in_processes.summary.score == pytest.approx(10 / 20)
    graders = {i.metadata["pid"] for i in in_processes.instances if i.metadata}
    assert (os.getpid() in graders) == (jobs == 1)  # processes: the rule ran in the pool's, not here


class Batched(Squares):
    """Squares graded in runs of three, each run seen by `prepare` first (a failing run: 9, 10, 11)."""

    batch = 3

    def __init__(self):
        super().__init__(processes=False)
        self.prepared: list = []

    def prepare(self, items):
        if 10 in items:
            raise RuntimeError("a run that cannot be prepared is graded item by item")
        self.prepared.append(list(items))


class Counting:
    def __init__(self):
        self.steps, self.total, self.closed = 0, None, False

    def __call__(self, total):
        self.total = total
        return self

    def step(self, n=1):
        self.steps += n

    def close(self):
        self.closed = True


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_batched_benchmark_gives_the_same_report_and_counts_items(jobs):
    batched, bar = Batched(), Counting()
    report = run_benchmark(batched, jobs, bar)
    assert _rows(report) == _rows(run_benchmark(Squares(processes=False), jobs))
    runs = sorted(batched.prepared)
    assert all(2 <= len(run) <= 3 and run == list(range(run[0], run[0] + len(run))) for run in runs)
    seen = [n for run in runs for n in run]
    assert len(seen) == len(set(seen)) and 10 not in seen  # each run once; the failing one graded item by item
    if jobs == 1:
        assert runs == [[n, n + 1, n + 2] for n in range(0, 18, 3) if n != 9] + [[18, 19]]
    assert (bar.total, bar.steps, bar.closed) == (20, 20, True)


def test_runs_get_shorter_near_the_end():
    """A thread takes `batch` items at most, and fewer as the run ends, so that no thread is left working
    through a run of slow items while the others have none (guided, as OpenMP calls it)."""
    from evaluators.grading import parallel

    runs: list = []
    out = parallel.run_each(lambda n: n * n, list(range(200)), 4, batch=8, prepare=lambda items: runs.append(items))
    assert out == [n * n for n in range(200)]
    runs.sort()
    assert all(run == list(range(run[0], run[0] + len(run))) for run in runs)
    assert all(a[-1] < b[0] for a, b in zip(runs, runs[1:], strict=False))
    sizes = [len(run) for run in runs]
    assert sizes[0] == 8 and sizes == sorted(sizes, reverse=True) and sizes[-1] <= 2  # a run of one needs none


def test_runs_of_short_items_grow_to_the_batch_and_runs_of_slow_ones_stay_at_the_fewest():
    """A run takes about RUN_S of the items' typical time: up to `batch` when they are short (fewer round
    trips to a worker), FEWEST when they are not (no thread left with a long run near the end)."""
    import time

    from evaluators.grading import parallel

    def sizes(item_s: float, count: int) -> list[int]:
        runs: list = []
        parallel.run_each(lambda n: time.sleep(item_s), list(range(count)), 2, batch=32, prepare=runs.append)
        return [len(run) for run in sorted(runs)]

    short = sizes(0.0, 400)
    assert short[0] == parallel.FEWEST and max(short) == 32
    slow = sizes(parallel.RUN_S, 40)  # each item alone takes a whole run's time
    assert max(slow) == parallel.FEWEST


def test_a_runs_work_is_begun_before_the_run_before_it_is_graded():
    """When `prepare` returns a function to wait for the work it began (BIRD's batch written to a worker), the
    thread begins the next run's before it grades the last one; each run is waited for before any of its
    items is graded, and every item is graded once, in its place."""
    import threading

    from evaluators.grading import parallel

    log: list = []

    def prepare(items):
        log.append((threading.current_thread().name, "begin", items[0]))
        return lambda: log.append((threading.current_thread().name, "wait", items[0]))

    def grade(n):
        log.append((threading.current_thread().name, "grade", n))
        return n * n

    out = parallel.run_each(grade, list(range(64)), 2, batch=4, prepare=prepare)
    assert out == [n * n for n in range(64)]
    for thread in {name for name, _, _ in log}:
        steps = [(step, n) for name, step, n in log if name == thread]
        runs = [n for step, n in steps if step == "begin"]
        for first, second in zip(runs, runs[1:], strict=False):
            assert steps.index(("begin", second)) < steps.index(("grade", first))
        for first in runs:
            assert steps.index(("wait", first)) < steps.index(("grade", first))
    assert sorted(n for _, step, n in log if step == "grade") == list(range(64))


def test_threads_grow_beside_slow_items_only():
    """A run starts one thread a core; an item running past STUCK_S gets a thread beside it, up to `jobs`."""
    import threading
    import time

    from evaluators.grading import parallel

    def name_of(seconds):
        time.sleep(seconds)
        return threading.current_thread().name

    fast = set(parallel.run_each(name_of, [0.0] * 200, 16))
    assert len(fast) <= parallel.FIRST_THREADS
    slow = set(parallel.run_each(name_of, [parallel.STUCK_S * 3] * 6, 16))
    assert len(slow) > parallel.FIRST_THREADS and len(slow) <= 6


def test_an_item_whose_query_says_it_runs_long_gets_a_thread_beside_it_at_once(monkeypatch):
    """A worker's "long" event (execution/priority.py) adds a thread without waiting out STUCK_S: here STUCK_S
    is a minute and one thread starts, so the other items could only run beside the long one through it."""
    import threading

    from evaluators.execution import priority
    from evaluators.grading import parallel

    monkeypatch.setattr(parallel, "STUCK_S", 60.0)
    monkeypatch.setattr(parallel, "FIRST_THREADS", 1)
    others_done = threading.Event()
    count = 5

    def item(number):
        if number == 0:
            priority.went_long()  # as worker.execute does on the event
            return others_done.wait(30)  # released only by items run on other threads meanwhile
        if number == count - 1:
            others_done.set()
        return threading.current_thread().name

    out = parallel.run_each(item, list(range(count)), 4)
    assert out[0] is True
    assert len(set(out[1:])) >= 1 and all(name != "grading-0" for name in out[1:])


def test_no_command_runs_its_items_outside_the_one_runner():
    callers = sorted(
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if re.search(r"\brun_each\(", path.read_text()) and path.name != "parallel.py"
    )
    assert callers == ["grading/benchmark.py"]


def test_grade_is_a_benchmark_of_the_runner():
    from evaluators.grading.run import SubmissionFolder

    assert issubclass(SubmissionFolder, Benchmark) and SubmissionFolder.processes


def test_a_signal_in_a_run_in_turn_has_its_leftovers_removed_too():
    """A Ctrl-C may land before a store's `with` began, so no `close()` removes its files: `on_abort` does, in a
    run in turn (`--jobs 1`) as in a run whose processes were killed."""
    from evaluators import signals
    from evaluators.grading.parallel import run_each

    called = []

    def interrupted(item):
        raise signals.Interrupted(2)

    with pytest.raises(signals.Interrupted):
        run_each(interrupted, [1, 2, 3], 1, on_abort=lambda: called.append(1))
    assert called == [1]


def test_meanwhile_runs_once_on_the_calling_thread_while_the_last_items_finish():
    """`meanwhile` (the report's imports, grading/benchmark.py) runs when every item is taken and the calling
    thread only waits: once, there, before the run returns."""
    import threading
    import time

    from evaluators.grading import parallel

    finished: list = []
    calls: list = []

    def slow(n):
        time.sleep(0.2 if n == 9 else 0.0)
        finished.append(n)
        return n

    out = parallel.run_each(
        slow, list(range(10)), 4, meanwhile=lambda: calls.append((threading.current_thread().name, len(finished)))
    )
    assert out == list(range(10))
    assert calls == [(threading.current_thread().name, calls[0][1])] and calls[0][1] < 10  # the slow one still ran
