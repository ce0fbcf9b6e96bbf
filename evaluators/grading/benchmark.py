"""One runner for every benchmark read from its own files (`bird`, `test-suite`, `livesql`, ...).

How a benchmark plugs in: subclass `Benchmark` and supply

- `semantics` and `names`: the official verdict's name (the report's `semantics`) and every verdict's
  (`(semantics, "strict")`);
- `read()`: its reader, the inputs to `Inputs` (one item per gold instance, in the gold's order, with the
  problems found, the count submitted, the unknown ids and the gold files provenance hashes).  A setup
  error (no database at all, a server no answer can reach) raises `UsageError` here, before anything runs;
- `grade(item)`: its one-item rule, an `InstanceReport` with the official and the strict verdict.  It runs
  in a thread of the run's pool: its queries must run in worker processes (`execution/worker.py`);
- `broken(item, words)`: the report of an item whose rule raised (reason `internal_error`, `words` says
  what): one broken item never stops the run;
- optionally `processes = True` (the rule computes in Python: items graded in forked processes, by chunks,
  not in threads; the benchmark is pickled to them, and `close()` also runs at each chunk's end there) with
  `aborted()` (after a signal killed them: their leftovers to remove), `grade_all` (another way to run
  the items, e.g. on Ray), `complete(instances)` (fields that need the whole run, e.g. test-suite's
  interactions), `figures(instances)` (the official figures, into `summary.execution_metrics`),
  `official_lines(report)` (the official script's tables, as it prints them), `official_files(report)`
  (its report files), `warnings(report)` (said on stderr), `close()` (called once the items ran), `facts()` and `summary_args()` (more provenance, the summary's options) and
  `finished(report)` (the report once built).

`run_benchmark` owns the rest: the parallel run (`grading/parallel.py`, the pool `grade` uses, signals
included), crash handling, progress, the summary, provenance; the CLI tail (`cli/options.py`) prints the
report and the official lines and writes the report files once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from evaluators.grading.jobs import resolve_jobs
from evaluators.grading.parallel import run_each
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report, build_summary


@dataclass(frozen=True)
class Inputs:
    """What a benchmark's reader hands the runner."""

    items: list  # one per gold instance, in the gold's order: what `grade` takes
    submitted: int  # predictions read (the report's `submitted`)
    problems: tuple = ()  # `Problem`s of the inputs, said at the top of the report
    unknown: tuple = ()  # submitted ids no gold instance has
    gold: tuple | Path = ()  # gold files and folders, or the gold folder: hashed into the report's provenance


class Benchmark:
    """A benchmark's reader, one-item rule and official figures (see the module's docstring)."""

    semantics: str = "official"
    names: tuple = ("official", "strict")
    processes: bool = False

    def read(self) -> Inputs:
        raise NotImplementedError

    def grade(self, item) -> InstanceReport:
        raise NotImplementedError

    def broken(self, item, words: str) -> InstanceReport:
        raise NotImplementedError

    def grade_all(self, items: list, jobs: int, progress) -> list[InstanceReport]:
        """Every item's report, in the items' order, `jobs` at a time (`grading/parallel.py`).  A benchmark
        with `batch` > 1 gets each run of that many items in `prepare` first, on the thread that grades them."""
        chunked = partial(_chunk_of, self) if self.processes else None
        return run_each(
            partial(_guarded, self),
            items,
            jobs,
            progress,
            chunked=chunked,
            on_abort=self.aborted,
            batch=self.batch,
            prepare=self.prepare,
            meanwhile=_import_report_modules,
        )

    batch = 1

    def prepare(self, items: list):
        """Work for several items at once before each is graded (`batch`); what it cannot do, `grade` does.
        It may only begin the work and return a function that waits for it: the runner then begins the next
        run's before it grades these (`parallel._ThreadRun._work`), calling that function first."""

    def aborted(self) -> None:
        pass

    def complete(self, instances: list[InstanceReport]) -> list[InstanceReport]:
        return instances

    def figures(self, instances: list[InstanceReport]) -> dict:
        return {}

    def official_lines(self, report: Report) -> str:
        return ""

    def official_files(self, report: Report) -> dict:
        """The official script's own report files, name -> text, written beside `--output` as
        `<output stem>.<name>` (never beside the submission, where the official script writes them)."""
        return {}

    def scorers(self) -> dict:
        """The official scorer each verdict reproduces (repository, file, commit), for the provenance."""
        return {}

    def warnings(self, report: Report) -> list[str]:
        return []

    def close(self) -> None:
        pass

    def facts(self) -> dict:
        """What the provenance says beyond the run's inputs (the scorers reproduced, ...)."""
        scorers = self.scorers()
        return {"scorers": scorers} if scorers else {}

    def summary_args(self) -> dict:
        return {}

    def finished(self, report: Report) -> Report:
        return report


def run_benchmark(benchmark: Benchmark, jobs: int | str = 1, progress=None) -> Report:
    """Read, grade every item (`jobs` at a time, or "auto": see `resolve_jobs`), and build the report with
    its provenance."""
    inputs = benchmark.read()
    items = list(inputs.items)
    try:
        instances = benchmark.grade_all(items, max(1, resolve_jobs(jobs, len(items))), progress)
    finally:
        benchmark.close()
    instances = benchmark.complete(instances)
    figures = benchmark.figures(instances)
    gold = inputs.gold if isinstance(inputs.gold, str | Path) else [Path(g) for g in inputs.gold]
    report = report_of(
        benchmark.semantics,
        benchmark.names,
        instances,
        inputs,
        gold,
        figures,
        benchmark.facts(),
        **benchmark.summary_args(),
    )
    return benchmark.finished(report)


def report_of(
    semantics: str, names, instances: list, inputs: Inputs, gold, figures: dict, facts: dict, **summary_args
) -> Report:
    """A run's report, the same for `grade` and every benchmark: the summary of its instances (figures added
    to its execution metrics) and where it came from (`gold`: a folder, or the gold's files; `facts`: the
    scorers reproduced, the instances a gold revision excludes)."""
    summary = build_summary(
        semantics, instances, inputs.submitted, list(inputs.unknown), list(inputs.problems), names, **summary_args
    )
    if figures:
        summary = replace(summary, execution_metrics={**(summary.execution_metrics or {}), **figures})
    from evaluators.reporting.provenance import provenance  # at the report, not before the grading starts

    summary = replace(summary, provenance={**provenance(gold), **facts})
    return Report(summary, tuple(instances))


def every(names: tuple, verdict: Verdict) -> dict:
    """One verdict for every semantics (an item that no rule could compare: missing, broken, no database)."""
    return {name: verdict for name in names}


def item_report(names: tuple, instance_id: str, verdicts: dict, **fields) -> InstanceReport:
    """An item's report from its verdicts by name (`names[0]` the official one, `strict` beside it)."""
    chosen, strict = verdicts[names[0]], verdicts["strict"]
    scores = {name: verdicts[name].score for name in names}
    return InstanceReport.from_verdicts(instance_id, chosen, strict, scores, **fields)


def _chunk_of(benchmark: Benchmark, chunk: list) -> list[InstanceReport]:
    """A chunk's reports in a forked process of the pool (a pool's process ends without atexit handlers)."""
    try:
        return [_guarded(benchmark, item) for item in chunk]
    finally:
        benchmark.close()


# What building a run's report imports (`report_of`), imported while the run's last items finish: a run whose
# last query waits out its timeout no longer adds them after it.
REPORT_MODULES = (
    "evaluators.reporting.provenance",
    "evaluators.metrics.attempts",
    "evaluators.metrics.ves",
    "evaluators.reporting.figures",
)


def _import_report_modules() -> None:
    import importlib

    for module in REPORT_MODULES:
        importlib.import_module(module)


def _guarded(benchmark: Benchmark, item) -> InstanceReport:
    """One broken item never stops the run: a bug while grading it becomes its reason."""
    try:
        return benchmark.grade(item)
    except Exception as exc:  # a signal (KeyboardInterrupt) still stops the run
        return benchmark.broken(item, f"{type(exc).__name__}: {exc}")
