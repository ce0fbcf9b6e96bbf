"""Grading a whole submission folder: load both jsonl files, grade each gold instance, build the report."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from evaluators.cwd import absolute
from evaluators.grading.benchmark import Inputs, report_of
from evaluators.grading.instance import NAMES, Graded, Options, grade_instance, spill_plan
from evaluators.grading.jobs import resolve_jobs
from evaluators.grading.parallel import Silent, run_each
from evaluators.grading.warm import prepare
from evaluators.matching.semantics import PRESETS, get_preset
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
    result_dir, gold_dir = absolute(result_dir), absolute(gold_dir)
    inputs = loaded or prepare(result_dir, gold_dir, options.layout, jobs, ray_address, options.max_file_bytes)
    gold, submission, work = inputs.gold, inputs.submission, inputs.work
    if options.executor is None and options.execute_sql:  # the API grades what the CLI grades, SQL included
        from evaluators.execution.executor import default_executor

        options = replace(options, executor=default_executor(gold_dir))
    if ray_address is not None:
        graded = _grade_on_ray(work, result_dir, gold_dir, options, ray_address, progress)
    else:
        jobs = resolve_jobs(jobs, len(work))
        try:
            graded = _grade_all(work, result_dir, gold_dir, options, jobs, progress)
        finally:
            _stop_graph_servers()
    instances = [_instance_report(g, line, result, semantics) for (g, line), result in zip(work, graded, strict=True)]
    unknown = tuple(sorted(set(submission.records) - set(gold.records)))
    problems = tuple(str(p) for p in gold.problems + submission.problems)
    report = report_of(
        semantics,
        list(PRESETS),
        instances,
        Inputs(work, len(submission.records), problems, unknown),
        gold_dir,
        {},
        ves_iterations=options.ves_iterations if options.executor is not None else 0,
    )
    gold_errors = report.summary.gold_errors + tuple(str(p) for p in gold.problems)
    return replace(report, summary=replace(report.summary, gold_errors=gold_errors))


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


def _grade_all(work, result_dir, gold_dir, options, jobs: int, progress) -> list[Graded]:
    def one(pair) -> Graded:
        return grade_instance(pair[0], pair[1], result_dir, gold_dir, options)

    def abort() -> None:
        plan = spill_plan(options)
        if plan is not None:
            remove_spilled(plan)  # the killed processes' out-of-core tables

    chunked = partial(_chunk_with, (result_dir, gold_dir, options))
    return run_each(one, work, jobs, progress, chunked=chunked, on_abort=abort)


def _chunk_with(context: tuple, chunk: list) -> list[Graded]:
    return grade_chunk((chunk, *context))


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
