"""Grading a whole submission folder: load both jsonl files, grade each gold instance, build the report."""

from __future__ import annotations

from dataclasses import replace

from evaluators.cwd import absolute
from evaluators.grading.benchmark import Benchmark, Inputs, run_benchmark
from evaluators.grading.instance import NAMES, Graded, Options, grade_instance, spill_plan
from evaluators.grading.parallel import Silent
from evaluators.grading.warm import prepare
from evaluators.matching.semantics import PRESETS, get_preset, scorers
from evaluators.matching.verdicts import same_for_all
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import RunInputs
from evaluators.tables.spill import remove_spilled


def grade(
    result_dir,
    gold_dir,
    semantics: str = "spider2",
    jobs: int | str = 1,
    progress=None,
    options: Options | None = None,
    ray_address: str | None = None,
    loaded: RunInputs | None = None,
) -> Report:
    """Grade `result_dir` against `gold_dir`; returns the report (the Python API behind the CLI).

    `jobs`: processes to grade in, or "auto" (see `resolve_jobs`).
    `options.layout="flat"` grades a Spider2-lite style folder of `<id>.csv` / `<id>.sql` files.
    `loaded`: the gold and submission already read from these folders by `grading/warm.prepare` (the CLI
    reads them first, to start an engine's worker early), so they are neither read nor warmed twice.
    """
    get_preset(semantics)
    options = Options() if options is None else options
    if options.executor is None and options.execute_sql:  # the API grades what the CLI grades, SQL included
        from evaluators.execution.executor import default_executor

        options = replace(options, executor=default_executor(absolute(gold_dir)))
    folder = SubmissionFolder(absolute(result_dir), absolute(gold_dir), semantics, options, ray_address, jobs, loaded)
    return run_benchmark(folder, jobs, progress)


class SubmissionFolder(Benchmark):
    """A Spider2-style submission folder against its gold folder, as a benchmark of the one runner: the
    reader is `grading/warm.prepare`, the rule `grade_instance`; instances compute in Python, so they are
    graded in forked processes (or on Ray), every preset and strict beside the chosen semantics."""

    processes = True

    def __init__(self, result_dir, gold_dir, semantics: str, options: Options, ray_address, jobs, loaded=None):
        self.result_dir, self.gold_dir, self.semantics = result_dir, gold_dir, semantics
        self.names = tuple(PRESETS)
        self.options, self.ray_address, self.jobs = options, ray_address, jobs
        self.loaded: RunInputs | None = loaded
        self.excluded: dict[str, str] = {}
        self.gold_problems: tuple = ()

    def __getstate__(self) -> dict:  # what a forked process is handed with each chunk: not the inputs read
        return {**self.__dict__, "loaded": None}

    def read(self) -> Inputs:
        options = self.options
        inputs = self.loaded or prepare(
            self.result_dir, self.gold_dir, options.layout, self.jobs, self.ray_address, options.max_file_bytes
        )
        self.loaded = None
        gold, submission = inputs.gold, inputs.submission
        self.excluded = excluded_by_revision(gold.records.values())
        self.gold_problems = tuple(str(p) for p in gold.problems)
        work = [(g, line) for g, line in inputs.work if g.instance_id not in self.excluded]
        unknown = tuple(sorted(set(submission.records) - set(gold.records)))
        problems = tuple(f"{i}: excluded by the gold revision: {why}" for i, why in self.excluded.items())
        problems += tuple(str(p) for p in gold.problems + submission.problems)
        return Inputs(work, len(submission.records), problems, unknown, self.gold_dir)

    def grade(self, item) -> InstanceReport:
        gold, line = item
        return _instance_report(
            gold, line, grade_instance(gold, line, self.result_dir, self.gold_dir, self.options), self.semantics
        )

    def broken(self, item, words: str) -> InstanceReport:
        gold, line = item
        graded = Graded(same_for_all(NAMES, 0.0, "internal_error", words), tuple(s.func for s in gold.specs))
        return _instance_report(gold, line, graded, self.semantics)

    def grade_all(self, items: list, jobs: int, progress) -> list[InstanceReport]:
        if self.ray_address is None:
            return super().grade_all(items, jobs, progress)
        graded = _grade_on_ray(items, self.result_dir, self.gold_dir, self.options, self.ray_address, progress)
        return [
            _instance_report(g, line, result, self.semantics) for (g, line), result in zip(items, graded, strict=True)
        ]

    def aborted(self) -> None:
        plan = spill_plan(self.options)
        if plan is not None:
            remove_spilled(plan)  # the killed processes' out-of-core tables

    def close(self) -> None:
        _stop_graph_servers()

    def facts(self) -> dict:
        return {"scorers": scorers(), **({"excluded": self.excluded} if self.excluded else {})}

    def summary_args(self) -> dict:
        return {"ves_iterations": self.options.ves_iterations if self.options.executor is not None else 0}

    def finished(self, report: Report) -> Report:
        gold_errors = report.summary.gold_errors + self.gold_problems
        return replace(report, summary=replace(report.summary, gold_errors=gold_errors))


def excluded_by_revision(golds) -> dict[str, str]:
    """id -> reason of the gold lines a gold revision excludes (`"excluded": "<reason>"`, e.g. Spider2-E's
    revoked shares): not graded, out of every denominator, each named with its reason (docs/doctor.md)."""
    return {
        g.instance_id: str(g.metadata["excluded"])
        for g in golds
        if (g.metadata or {}).get("excluded") not in (None, False, "")
    }


def _stop_graph_servers() -> None:
    """The embedded graph server lives for one run (execution/graphs.py)."""
    import sys

    graphs = sys.modules.get("evaluators.execution.graphs")  # loaded only if some Cypher ran
    if graphs is not None:
        graphs.stop_all()


def _instance_report(gold, line, result: Graded, semantics: str) -> InstanceReport:
    chosen, strict = result.verdicts[semantics], result.verdicts["strict"]
    return InstanceReport.from_verdicts(
        gold.instance_id,
        chosen,
        strict,
        {name: v.score for name, v in result.verdicts.items()},
        funcs=result.funcs,
        answer_type=line.answer_type if line else None,
        location=str(line.location) if line else None,
        metadata=gold.metadata,
        attempts=tuple(
            _attempt_entry(a, info, semantics)
            for a, info in zip(result.attempts, result.attempt_info or [{}] * len(result.attempts), strict=False)
        ),
        execution=dict(result.info),
    )


def _attempt_entry(verdicts: dict, info: dict, semantics: str) -> dict:
    entry = {
        "score": verdicts[semantics].score,
        "strict_score": verdicts["strict"].score,
        "reason": verdicts[semantics].reason,
    }
    if info.get("validity"):  # a .sql attempt: does it compile on the instance's database (Valid@k)?
        entry.update(valid=info["validity"].get("valid"), validity=info["validity"].get("reason"))
    return entry


def grade_chunk(args) -> list[Graded]:
    chunk, result_dir, gold_dir, options = args
    try:
        return [grade_instance(g, line, result_dir, gold_dir, options) for g, line in chunk]
    finally:
        _stop_graph_servers()  # a pool's process ends without running atexit handlers


def _grade_on_ray(work, result_dir, gold_dir, options, address: str, progress) -> list[Graded]:
    from evaluators.grading.ray_run import run_chunks

    bar = progress(len(work)) if callable(progress) else Silent()
    size = max(1, min(32, len(work) // 64 or 1))
    chunks = [(work[i : i + size], result_dir, gold_dir, options) for i in range(0, len(work), size)]
    folders = {"submission": result_dir, "gold": gold_dir}
    if options.executor is not None and options.executor.config.db_dir is not None:
        folders["database"] = options.executor.config.db_dir
    done: dict[int, list[Graded]] = {}
    for index, results in run_chunks(f"{__name__}:grade_chunk", chunks, folders, address, _lost):
        done[index] = results
        bar.step(len(results))
    bar.close()
    return [graded for index in range(len(chunks)) for graded in done[index]]


def _lost(chunk, words: str) -> list[Graded]:
    """A chunk no Ray actor could grade: each instance says so (the run still ends with a report)."""
    return [
        Graded(same_for_all(NAMES, 0.0, "internal_error", f"not graded: {words}"), tuple(s.func for s in g.specs))
        for g, _line in chunk[0]
    ]
