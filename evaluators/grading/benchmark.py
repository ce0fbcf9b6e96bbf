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
- optionally `complete(instances)` (fields that need the whole run, e.g. test-suite's interactions),
  `figures(instances)` (the official figures, into `summary.execution_metrics`), `official_lines(report)`
  (the official script's tables, as it prints them), `warnings(report)` (said on stderr) and `close()`
  (called once the items ran).

`run_benchmark` owns the rest: the parallel run (`grading/parallel.py`, the pool `grade` uses, signals
included), crash handling, progress, the summary, provenance; the CLI tail (`cli/options.py`) prints the
report and the official lines and writes the report files once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.grading.parallel import run_each
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.provenance import provenance
from evaluators.reporting.report import InstanceReport, Report, build_summary


@dataclass(frozen=True)
class Inputs:
    """What a benchmark's reader hands the runner."""

    items: list  # one per gold instance, in the gold's order: what `grade` takes
    submitted: int  # predictions read (the report's `submitted`)
    problems: tuple = ()  # `Problem`s of the inputs, said at the top of the report
    unknown: tuple = ()  # submitted ids no gold instance has
    gold: tuple = ()  # gold files and folders, hashed into the report's provenance


class Benchmark:
    """A benchmark's reader, one-item rule and official figures (see the module's docstring)."""

    semantics: str = "official"
    names: tuple = ("official", "strict")

    def read(self) -> Inputs:
        raise NotImplementedError

    def grade(self, item) -> InstanceReport:
        raise NotImplementedError

    def broken(self, item, words: str) -> InstanceReport:
        raise NotImplementedError

    def complete(self, instances: list[InstanceReport]) -> list[InstanceReport]:
        return instances

    def figures(self, instances: list[InstanceReport]) -> dict:
        return {}

    def official_lines(self, report: Report) -> str:
        return ""

    def warnings(self, report: Report) -> list[str]:
        return []

    def close(self) -> None:
        pass


def run_benchmark(benchmark: Benchmark, jobs: int = 1, progress=None) -> Report:
    """Read, grade every item (`jobs` at a time, in threads), and build the report with its provenance."""
    inputs = benchmark.read()
    try:
        instances = run_each(lambda item: _guarded(benchmark, item), list(inputs.items), max(1, jobs), progress)
    finally:
        benchmark.close()
    instances = benchmark.complete(instances)
    figures = benchmark.figures(instances)
    gold = [Path(g) for g in inputs.gold]
    return report_of(benchmark.semantics, benchmark.names, instances, inputs, gold, figures)


def report_of(semantics: str, names, instances: list, inputs: Inputs, gold, figures: dict, **summary_args) -> Report:
    """A run's report, the same for `grade` and every benchmark: the summary of its instances (figures added
    to its execution metrics) and where it came from (`gold`: a folder, or the gold's files)."""
    summary = build_summary(
        semantics, instances, inputs.submitted, list(inputs.unknown), list(inputs.problems), names, **summary_args
    )
    if figures:
        summary = replace(summary, execution_metrics={**(summary.execution_metrics or {}), **figures})
    summary = replace(summary, provenance=provenance(gold))
    return Report(summary, tuple(instances))


def every(names: tuple, verdict: Verdict) -> dict:
    """One verdict for every semantics (an item that no rule could compare: missing, broken, no database)."""
    return {name: verdict for name in names}


def item_report(names: tuple, instance_id: str, verdicts: dict, **fields) -> InstanceReport:
    """An item's report from its verdicts by name (`names[0]` the official one, `strict` beside it)."""
    chosen, strict = verdicts[names[0]], verdicts["strict"]
    scores = {name: verdicts[name].score for name in names}
    return InstanceReport.from_verdicts(instance_id, chosen, strict, scores, **fields)


def _guarded(benchmark: Benchmark, item) -> InstanceReport:
    """One broken item never stops the run: a bug while grading it becomes its reason."""
    try:
        return benchmark.grade(item)
    except Exception as exc:  # a signal (KeyboardInterrupt) still stops the run
        return benchmark.broken(item, f"{type(exc).__name__}: {exc}")
