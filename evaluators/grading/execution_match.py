"""`execution_match`: run the predicted `.sql` and the gold query on one database, compare the results.

    {"func": "execution_match", "parameters": {"gold_sql": "gold.sql", "db": "california_schools"}}

Two verdicts, both reported:

- the official presets score **BIRD EX**: the drivers' rows (`ExecResult.rows()`, typed
  Python values) are equal as sets of row tuples; order and duplicates are ignored,
  column order matters, values compare with Python `==` (metrics.bird);
- the strict preset scores the **strict table rule** on the two result CSVs, with row
  order honoured when the gold query's outermost query has ORDER BY.

An instance whose answer is BIRD-correct is then timed for VES (`time_efficiency`),
and its LLMetric-Q is computed from the first attempt (`add_llmetric_q`).
See docs/execution-metrics.md, "In the report".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.grading.sql_context import SqlContext
from evaluators.matching.semantics import PRESETS, STRICT_TOL
from evaluators.matching.strict import rule as strict
from evaluators.matching.verdicts import Verdict
from evaluators.specs import GoldInstance
from evaluators.sqltext import unwrap_fences

# Failures of the prediction's own run; after one of them the gold still runs, for LLMetric-Q's rows.
PREDICTION_FAILURES = ("exec_error", "timeout", "cost_limit")
# Failures of the environment, not of the gold query: reported as they are, not as unreadable_gold.
ENVIRONMENT_FAILURES = ("no_database", "credentials_missing", "network_error", "missing_extra")
TIMED = "executing and fetching every row, timed inside the worker"


@dataclass(frozen=True)
class TimingJob:
    """What VES needs to time an instance again: both queries, where they run, and the EX verdict."""

    gold: GoldInstance  # with the spec's database
    gold_sql: str
    pred_sql: str
    correct: bool  # BIRD EX


def grade(params: dict, path: Path, job, ctx: SqlContext) -> dict:
    """Verdicts of one execution_match spec for the .sql answer at `path`."""
    target = with_database(ctx.gold, params.get("db"))
    gold_sql = ctx.read_gold_sql(params.get("gold_query") or params.get("gold_sql") or "gold.sql")
    try:
        pred = ctx.run_answer(path, collect="rows", gold=target, gold_sql=gold_sql)
    except InstanceError as exc:
        if ctx.pred_sql is not None and exc.reason in PREDICTION_FAILURES:
            _note_failed_answer(ctx)
            _keep_rows_after_failure(ctx, target, gold_sql)
        raise
    gold = _run_gold(ctx, target, gold_sql)
    (_, pred_rows), (_, gold_rows) = pred.rows(), gold.rows()
    keep_llmetric_inputs(ctx, pred_rows, gold_rows, gold_sql)
    if pred.backend == "cypher":
        return _graph_verdicts(ctx, pred_rows, gold_rows, gold_sql)
    from evaluators.metrics.bird import bird_ex, outermost_has_order_by  # metrics load only when SQL runs

    bird = bird_ex(pred_rows, gold_rows)
    ordered = outermost_has_order_by(gold_sql, **_lexing(pred.backend))
    strict_verdict = strict.compare(
        job.strict_csv(job.pred_reader, pred.csv_path),
        job.strict_csv(job.gold_reader, gold.csv_path),
        ignore_order=not ordered,
        tol=STRICT_TOL,
    )
    ctx.info.update(
        ex_bird=bird,
        ex_strict=strict_verdict.passed,
        gold_order_by=ordered,
        gold_query_csv=str(gold.csv_path),
        gold_query_seconds=gold.query_seconds,
    )
    ctx.timing = TimingJob(target, unwrap_fences(gold_sql), ctx.pred_sql or "", bird)
    return _verdicts(_bird_verdict(bird, pred_rows, gold_rows), _with_order_words(strict_verdict, ordered))


def _graph_verdicts(ctx: SqlContext, pred_rows: list, gold_rows: list, gold_query: str) -> dict:
    """Cypher EX (docs/cypher.md): the strict typed-rows rule, nodes and relationships by id, row order only
    when the gold's final RETURN has ORDER BY.  There is no official Cypher scorer to reproduce, so every
    preset reports this one verdict."""
    from evaluators.matching.typed_rows import strict_rows
    from evaluators.sqltext import cypher_return_ordered

    ordered = cypher_return_ordered(gold_query)
    verdict = strict_rows(gold_rows, pred_rows, ordered)
    verdict = replace(verdict, detail="Cypher EX: " + verdict.detail)
    ctx.info.update(ex_strict=verdict.passed, gold_order_by=ordered)
    return {name: verdict for name in PRESETS}


def with_database(gold: GoldInstance, db: str | None) -> GoldInstance:
    """The gold instance run on the spec's database (the executor's --db still wins over both)."""
    return gold if not db else replace(gold, metadata={**gold.metadata, "db": db})


def _executor(ctx: SqlContext):
    if ctx.executor is None:  # grade() checked this before any SQL ran
        raise InstanceError("needs_execution", "execution_match runs SQL: grade with an executor")
    return ctx.executor


def _run_gold(ctx: SqlContext, target: GoldInstance, gold_sql: str):
    result = _executor(ctx).run_gold_query(target, gold_sql)
    if result.ok:
        return result
    if result.reason in ENVIRONMENT_FAILURES:
        raise result.instance_error()
    raise InstanceError(
        "unreadable_gold", f"the gold query failed on {result.backend} ({result.reason}): {result.detail}"
    )


def _note_failed_answer(ctx: SqlContext) -> None:
    """An answer that errored or timed out is a failure under every verdict: strict (SQL and Cypher alike)
    and, for SQL, BIRD EX (the official scripts score an error 0)."""
    ctx.info["ex_strict"] = False
    if ctx.info.get("backend") != "cypher":
        ctx.info["ex_bird"] = False


def _keep_rows_after_failure(ctx: SqlContext, target: GoldInstance, gold_sql: str) -> None:
    """A prediction that failed to run returned no rows; the gold's rows still make LLMetric-Q's Jaccard."""
    gold = _executor(ctx).run_gold_query(target, gold_sql)
    if gold.ok:
        keep_llmetric_inputs(ctx, [], gold.rows()[1], gold_sql)


def _lexing(backend: str) -> dict:
    """BigQuery strings take backslash escapes and `#` starts a comment; elsewhere neither."""
    return {"backslash_escapes": backend == "bigquery", "hash_comments": backend == "bigquery"}


def _verdicts(bird: Verdict, strict_verdict: Verdict) -> dict:
    return {name: (bird if preset.official else strict_verdict) for name, preset in PRESETS.items()}


def _bird_verdict(equal: bool, pred_rows: list, gold_rows: list) -> Verdict:
    head = "BIRD EX (the official presets' rule for execution_match): "
    if equal:
        return Verdict(1.0, "match", head + f"equal as sets of rows ({len(set(map(_frozen, gold_rows)))} distinct)")
    return Verdict(0.0, "value_mismatch", head + _set_difference(pred_rows, gold_rows))


def _set_difference(pred_rows: list, gold_rows: list) -> str:
    pred, gold = set(map(_frozen, pred_rows)), set(map(_frozen, gold_rows))

    def width(rows: list) -> int:
        return len(rows[0]) if rows else 0

    text = (
        f"gold has {len(gold)} distinct row(s) of {width(gold_rows)} column(s), the prediction "
        f"{len(pred)} of {width(pred_rows)}"
    )
    missing = next(iter(gold - pred), None)
    if missing is not None:
        text += f"; gold row {_short(missing)} is not among the predicted rows"
    elif pred - gold:
        text += f"; predicted row {_short(next(iter(pred - gold)))} is not in the gold"
    return text


def _with_order_words(verdict, ordered: bool) -> Verdict:
    order = "rows compared in order (the gold query's outermost query has ORDER BY)" if ordered else "row order ignored"
    return Verdict(float(verdict.passed), verdict.reason, f"strict table rule, {order}: {verdict.detail}")


def _short(row) -> str:
    text = repr(row)
    return text if len(text) <= 120 else text[:117] + "..."


def _frozen(value):
    """Rows hold lists and dicts on DuckDB (LIST, STRUCT); sets need them hashable."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    return value


# ------------------------------------------------------------------ LLMetric-Q


def keep_llmetric_inputs(ctx: SqlContext, pred_rows: list, gold_rows: list, gold_sql: str) -> None:
    ctx.llmetric_inputs = {"pred_rows": pred_rows, "gold_rows": gold_rows, "gold_sql": unwrap_fences(gold_sql)}


def add_llmetric_q(ctx: SqlContext, strict_verdict: Verdict) -> None:
    """0.3·Pass@1 + 0.4·Valid + 0.2·Jaccard(rows) + 0.1·(JW + ROUGE-L)/2 of this attempt, into info."""
    inputs, validity = ctx.llmetric_inputs, ctx.info.get("validity") or {}
    if not inputs or ctx.pred_sql is None:
        return
    if validity.get("valid") is None:
        ctx.info.update(llmetric_q=None, llmetric_q_note="not computed: the attempt's validity was not checked")
        return
    similarity = ctx.info.get("similarity") or {}
    if "rouge_l" not in similarity:  # its text part is the similarity's, computed in the worker
        note = similarity.get("error", "no query similarity")
        ctx.info.update(llmetric_q=None, llmetric_q_note=f"not computed: {note}")
        return
    try:
        from evaluators.metrics.similarity import llmetric_q_of

        ctx.info["llmetric_q"] = llmetric_q_of(
            strict_verdict.passed,
            validity["valid"],
            [_frozen(r) for r in inputs["pred_rows"]],
            [_frozen(r) for r in inputs["gold_rows"]],
            similarity,
        )
    except ValueError as exc:
        ctx.info.update(llmetric_q=None, llmetric_q_note=f"not computed: {exc}")


# ------------------------------------------------------------------ VES


def time_efficiency(job: TimingJob | None, iterations: int, executor) -> dict | None:
    """The VES figures of one instance (metrics.ves.score_instance): gold and prediction run alternately
    `iterations` times each.  A wrong answer is not timed and scores 0, as in BIRD."""
    if job is None or executor is None or iterations <= 0:
        return None
    from evaluators.metrics.ves import score_instance  # metrics load only when SQL runs

    if not job.correct:
        return {**score_instance(False).to_dict(), "iterations": 0}
    gold_times: list[float] = []
    pred_times: list[float] = []
    for _ in range(iterations):  # alternating spreads warm caches and machine load over both queries
        for run, sql, sink in (
            (executor.run_gold_query, job.gold_sql, gold_times),
            (executor.run_prediction, job.pred_sql, pred_times),
        ):
            result = run(job.gold, sql, collect="time")
            if not result.ok:
                return {
                    **score_instance(False).to_dict(),
                    "correct": True,
                    "iterations": iterations,
                    "error": f"a timing run failed, VES counts 0 ({result.reason}: {result.detail})",
                }
            sink.append(result.query_seconds if result.query_seconds is not None else result.seconds)
    timed = TIMED if result.query_seconds is not None else "the whole request in the worker, connecting included"
    return {**score_instance(True, gold_times, pred_times).to_dict(), "iterations": iterations, "timed": timed}
