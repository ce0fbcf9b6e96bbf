"""Grading one instance: choose the specs that fit the answer, run them, keep the verdicts.

Every problem with one instance (a missing file, a bad spec, an unknown func)
becomes that instance's reason; nothing here stops the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the execution layer loads only when SQL runs
    from evaluators.execution.executor import Executor

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluators import signals
from evaluators.errors import InstanceError, MissingExtra
from evaluators.grading import execution_match
from evaluators.grading.sql_answers import run_sql_answer
from evaluators.grading.sql_context import SqlContext
from evaluators.loading import checks
from evaluators.loading.paths import answer_path
from evaluators.loading.specs import MAX_JSON_DEPTH, too_deep
from evaluators.matching import registry, table_match
from evaluators.matching.semantics import PRESETS, Preset
from evaluators.matching.verdicts import same_for_all
from evaluators.specs import GoldInstance, SubmissionLine
from evaluators.tables.read import DEFAULT_MAX_BYTES, TableReader
from evaluators.tables.spill import SpillPlan

ALL_PRESETS: tuple[Preset, ...] = tuple(PRESETS.values())
NAMES = tuple(PRESETS)


@dataclass(frozen=True)
class Options:
    max_file_bytes: int = DEFAULT_MAX_BYTES
    layout: str = (
        "nested"  # or "flat": Spider2-lite's <id>.csv / <id>.sql beside each other (see loading/submissions.py)
    )
    attempt_score: str = "last"  # with `attempts`: the instance's score is its last attempt, or its "best"
    executor: Executor | None = None  # None: `grade` makes the CLI's default one
    execute_sql: bool = True  # False: SQL answers and temporal golds are not run (needs_execution)
    ves_iterations: int = 10  # execution_match: alternating timing runs per correct answer (BIRD: 100); 0: no VES


@dataclass(frozen=True)
class Graded:
    """Verdicts of one instance under every semantics, and the funcs that produced them."""

    verdicts: dict  # semantics name -> Verdict
    funcs: tuple[str, ...]
    attempts: tuple = ()  # one verdicts dict per attempt, first try through last refinement
    info: dict = field(default_factory=dict)  # what SQL ran: backend, gold source, bytes, similarity, EX, VES
    attempt_info: tuple = ()  # one info dict per attempt (validity, LLMetric-Q of each)
    timing: object | None = None  # execution_match.TimingJob: what VES would time (not reported)


def grade_instance(
    gold: GoldInstance, line: SubmissionLine | None, result_dir: Path, gold_dir: Path, options: Options = Options()
) -> Graded:
    if line is None or not line.attempts:
        one = _grade_one(gold, line, result_dir, gold_dir, options)
        return replace(one, info=_instance_info([one], 0, options), timing=None)
    runs = [
        _grade_one(gold, replace(line, answer=answer, attempts=None), result_dir, gold_dir, options)
        for answer in line.attempts
    ]
    if options.attempt_score == "best":
        final = {name: max((r.verdicts[name] for r in runs), key=lambda v: v.score) for name in NAMES}
        # The execution info (and VES) follow the first attempt with the best official score.
        chosen = max(range(len(runs)), key=lambda k: runs[k].verdicts[NAMES[0]].score)
    else:
        final, chosen = runs[-1].verdicts, len(runs) - 1
    return Graded(
        final,
        runs[-1].funcs,
        tuple(r.verdicts for r in runs),
        _instance_info(runs, chosen, options),
        tuple(r.info for r in runs),
    )


def _instance_info(runs: list, chosen: int, options: Options) -> dict:
    """The scored attempt's execution info, its VES timing, and LLMetric-Q of the first attempt."""
    info = dict(runs[chosen].info)
    ves = execution_match.time_efficiency(runs[chosen].timing, options.ves_iterations, options.executor)
    if ves is not None:
        info["ves"] = ves
    if len(runs) > 1:  # LLMetric-Q's Pass@1 and Valid are of the first attempt, and so is the whole figure
        for key in ("llmetric_q", "llmetric_q_note"):
            info.pop(key, None)
            if key in runs[0].info:
                info[key] = runs[0].info[key]
    return info


def _grade_one(
    gold: GoldInstance, line: SubmissionLine | None, result_dir: Path, gold_dir: Path, options: Options
) -> Graded:
    funcs = tuple(s.func for s in gold.specs)
    ctx = SqlContext(gold, Path(gold_dir), options.executor, options.max_file_bytes)
    try:
        if gold.problem:
            raise InstanceError("invalid_gold", f"{gold.location}: {gold.problem}")
        if line is None:
            raise InstanceError("missing_prediction", _missing_words(gold.instance_id, options.layout))
        specs = _checked_specs(gold)
        if line.answer_type == "answer":
            verdicts = _grade_answer(_with_trajectory(line, Path(result_dir), options), specs, ctx)
        else:
            verdicts = _grade_files(line, specs, Path(result_dir), ctx, options)
    except InstanceError as exc:
        verdicts = same_for_all(NAMES, 0.0, exc.reason, exc.detail)
    except MissingExtra as exc:  # the operator's environment, not the answer: said with the pip command
        verdicts = same_for_all(NAMES, 0.0, "missing_extra", str(exc))
    except Exception as exc:  # a bug of ours must not stop the run; it is reported, never hidden
        verdicts = same_for_all(NAMES, 0.0, "internal_error", f"{type(exc).__name__}: {exc} (please report this)")
    # An engine in this process may turn Ctrl-C into its own error (DuckDB out of core: "Query interrupted"),
    # which the lines above would make this instance's verdict: a signal that came stops the run instead.
    signals.check()
    execution_match.add_llmetric_q(ctx, verdicts["strict"])  # a failed run still has a validity and a text score
    return Graded(verdicts, funcs, info=ctx.info, timing=ctx.timing)


def _missing_words(instance_id: str, layout: str) -> str:
    """What is missing, said in the layout the user chose."""
    if layout == "flat":
        return f"no {instance_id}.csv or {instance_id}.sql in the submission folder"
    return "no line for this instance in results_metadata.jsonl"


def _checked_specs(gold: GoldInstance) -> list:
    checked, problems = [], []
    for index, spec in enumerate(gold.specs):
        try:
            checked.append((spec, registry.check_parameters(spec.func, spec.parameters)))
        except ValueError as exc:
            problems.append(f"spec {index + 1}: {exc}")
    if problems:
        reason = "unknown_func" if any("unknown func" in p for p in problems) else "invalid_spec"
        raise InstanceError(reason, f"{gold.location}: " + "; ".join(problems))
    return checked


_TOO_DEEP = object()  # what a trajectory nested past json's recursion decodes to


def _with_trajectory(line: SubmissionLine, result_dir: Path, options: Options) -> SubmissionLine:
    """A `trajectory` named in the metadata line is a JSON message list beside the answer; load it."""
    named = line.extra.get("trajectory")
    if not isinstance(named, str):
        return line
    path = answer_path(result_dir, line.instance_id, named, options.layout == "flat")
    size = path.stat().st_size
    if size > options.max_file_bytes:
        raise InstanceError(
            "unreadable_prediction",
            f"{named}: {size:,} bytes, over the limit of {options.max_file_bytes:,} (raise it with --max-file-mb)",
        )
    try:
        messages = json.loads(path.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InstanceError("unreadable_prediction", f"trajectory {named}: not a JSON message list ({exc})") from None
    except RecursionError:  # json's decoder recurses once per level
        messages = _TOO_DEEP
    if messages is _TOO_DEEP or too_deep(messages):
        raise InstanceError(
            "unreadable_prediction", f"trajectory {named}: nested more than {MAX_JSON_DEPTH} levels deep"
        )
    if not isinstance(messages, list):
        raise InstanceError("unreadable_prediction", f"trajectory {named}: expected a list of messages")
    return replace(line, extra={**line.extra, "trajectory": messages})


def _grade_answer(line: SubmissionLine, specs: list, ctx: SqlContext) -> dict:
    usable = checks.fitting_specs(line.answer_type, specs)
    checks.answer_shape(line)
    best: dict = {}
    for spec, params in usable:
        params = ctx.temporal_params(spec, params)
        for name, verdict in _answer_verdicts(spec.func, line, params).items():
            if name not in best or verdict.score > best[name].score:
                best[name] = verdict
    return best


def _answer_verdicts(func: str, line: SubmissionLine, params: dict) -> dict:
    if registry.lookup(func).reward:
        return _reward_verdicts(func, line, params)
    official, strict = registry.grader(func)(line.answer, params)
    return {p.name: (official if p.official else strict) for p in ALL_PRESETS}


def _reward_verdicts(func: str, line: SubmissionLine, params: dict) -> dict:
    trajectory = line.extra.get("trajectory")
    try:
        score, detail = registry.grader(func)(line.answer, params, trajectory)
    except ValueError as exc:
        raise InstanceError("invalid_spec", str(exc)) from None
    return same_for_all(
        NAMES, float(score), "match" if score >= 1 else "partial" if score > 0 else "value_mismatch", detail
    )


def _duckdb_loader(options: Options):
    """DuckDB answers and golds are read in workers, under the run's timeout and in its work folder."""
    if options.executor is None:
        return None  # the reader then uses a scratch work folder and the default timeout
    from evaluators.execution.executor import duckdb_loader

    return duckdb_loader(options.executor.config)


def _grade_files(line, specs, result_dir: Path, ctx: SqlContext, options: Options) -> dict:
    job = table_match.TableJob(
        ctx.folder,
        ALL_PRESETS,
        TableReader("unreadable_prediction", options.max_file_bytes, _duckdb_loader(options)),
        spill=spill_plan(options),
    )
    try:
        return _grade_job(line, specs, result_dir, ctx, options, job)
    finally:
        job.close()  # out-of-core tables leave the work folder with the instance


def spill_plan(options: Options) -> SpillPlan | None:
    """Tables whose frames would pass --memory-limit-mb are compared in DuckDB, spilling in the work folder."""
    if options.executor is None:
        return None
    config = options.executor.config
    return SpillPlan(config.memory_limit_mb, Path(config.output_dir) / "spill")


def _grade_job(line, specs, result_dir: Path, ctx: SqlContext, options: Options, job) -> dict:
    flat = options.layout == "flat"
    if line.answer_type == "files":
        return _grade_file_list(line, checks.fitting_specs(line.answer_type, specs), result_dir, job, flat, ctx)
    sql = isinstance(line.answer, str) and line.answer.lower().endswith(checks.QUERY_SUFFIXES)
    usable = checks.fitting_specs(line.answer_type, specs, sql=sql)
    if sql:
        with ctx.unreadable_sql_is_invalid():  # an unsafe or missing path too
            path = answer_path(result_dir, line.instance_id, line.answer, flat)
        return _grade_sql_answer(line, usable, path, job, ctx)
    return _grade_table(usable, answer_path(result_dir, line.instance_id, line.answer, flat), job, ctx)


def _grade_table(usable, path: Path, job, ctx: SqlContext) -> dict:
    runs = []
    for spec, params in usable:
        if registry.gold_tables(spec.func) == "csvs":
            continue  # one gold table per answer file: a single file is not its answer
        params = ctx.temporal_params(spec, params)
        runs.append(registry.grader(spec.func)(job, path, params))
    if not runs:
        raise InstanceError("answer_type_mismatch", "a single file answer needs a table_match or duckdb_match spec")
    # The suite keeps the last applicable spec's score; strict keeps the best.
    return {
        p.name: (runs[-1][p.name] if p.official else max((r[p.name] for r in runs), key=lambda v: v.score))
        for p in ALL_PRESETS
    }


def _grade_sql_answer(line, specs, path: Path, job, ctx: SqlContext) -> dict:
    """The SQL runs once down `sql_answers`; its table or first cell comes back to be graded here like any
    table or text answer."""
    outcome = run_sql_answer(specs, path, job, ctx)
    if outcome.verdicts is not None:
        return outcome.verdicts
    if outcome.table is not None:
        return _grade_table(list(outcome.specs), outcome.table, job, ctx)
    return _grade_answer(replace(line, answer_type="answer", answer=outcome.cell), list(outcome.specs), ctx)


def _grade_file_list(line, usable, result_dir: Path, job, flat: bool, ctx: SqlContext) -> dict:
    checks.answer_shape(line)
    paths = [answer_path(result_dir, line.instance_id, p, flat) for p in line.answer]
    spec, params = usable[-1]
    if spec.temporal:
        raise InstanceError("invalid_spec", "a list of files cannot be graded against a temporal gold")
    kind = registry.gold_tables(spec.func)
    if kind == "csv":  # each file its own gold table, in order
        gold = params["gold"] if isinstance(params["gold"], list) else [params["gold"]]
        params = {"gold": gold, "condition_cols": None, "ignore_orders": [params["ignore_order"]] * len(gold)}
    elif kind != "csvs":
        raise InstanceError("answer_type_mismatch", f"a list of files is graded by tables_match, not {spec.func}")
    return table_match.tables_match(job, paths, params)
