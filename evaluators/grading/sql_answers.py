"""The parts of grading that run SQL: `.sql` answers and temporal gold specs.

Both go through `execution.Executor`; without one (the Python API's default) they are
reported as `needs_execution`, never scored silently.  What ran, where the gold came
from and how many bytes it cost are collected in `info` for the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the execution layer loads only when SQL runs
    from evaluators.execution.executor import Executor

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.loading import checks
from evaluators.matching import registry
from evaluators.specs import GoldInstance
from evaluators.sqltext import unwrap_fences


@dataclass
class SqlContext:
    gold: GoldInstance
    gold_root: Path  # the gold folder (holding <instance_id>/gold.sql)
    executor: Executor | None
    max_file_bytes: int
    info: dict = field(default_factory=dict)
    # Kept for the instance's last steps, never reported as such:
    pred_sql: str | None = None  # the predicted SQL once read, fences removed
    llmetric_inputs: dict | None = None  # rows and gold SQL for LLMetric-Q (execution_match.add_llmetric_q)
    timing: object | None = None  # execution_match.TimingJob: what VES times, for an execution_match answer


def temporal_params(spec, params: dict, ctx: SqlContext) -> dict:
    """The spec's parameters with the gold replaced by what gold.sql returns now (or its cache)."""
    if not spec.temporal:
        return params
    becomes = registry.lookup(spec.func).temporal
    if becomes is None:
        raise InstanceError(
            "invalid_spec", f"a temporal spec needs {', '.join(registry.TEMPORAL_FUNCS)}, not {spec.func}"
        )
    if ctx.executor is None:
        raise InstanceError("needs_execution", f"{spec.func} spec is temporal: its gold comes from running gold.sql")
    stored = params.get("gold") if becomes == "table" else None
    result = ctx.executor.temporal_gold(ctx.gold, ctx.gold_root, stored)
    if not result.ok:
        raise result.instance_error()
    ctx.info.update(
        backend=result.backend,
        gold_source=result.source,
        gold_cached_at=result.cached_at,
        gold_drifted=result.drifted,
        gold_bytes_processed=result.bytes_processed,
    )
    if becomes == "table":
        cols = params.get("condition_cols")
        if isinstance(params.get("gold"), list) and isinstance(cols, list) and cols and isinstance(cols[0], list):
            cols = cols[0]  # the live result stands for the first stored variant
        return {**params, "gold": str(result.csv_path), "condition_cols": cols}
    if result.first_cell is None:
        raise InstanceError("unreadable_gold", "gold.sql returned no rows: no first cell to compare with")
    value = result.first_cell
    return {**params, "gold": [str(value)] if becomes == "text" or isinstance(value, str) else [value]}


def run_answer_sql(
    path: Path, ctx: SqlContext, collect: str = "csv", gold: GoldInstance | None = None, gold_sql: str | None = None
):
    """Run a predicted `.sql` file; returns the ExecResult (its CSV lives in the output folder).

    First its validity is checked on the instance's local database (explain.py), and with the gold
    query given, both plan costs are read.  `gold` stands in for ctx.gold when a spec names another
    database; `collect` is passed to the executor (execution.run_sql)."""
    from evaluators.execution.explain import inspect_sql

    sql = checks.read_sql_file(path, ctx.max_file_bytes)
    if ctx.executor is None:
        raise InstanceError("needs_execution", f"{path.name} is SQL: grading it needs a SQL backend")
    target = gold or ctx.gold
    ctx.pred_sql = unwrap_fences(sql)
    plans = {"pred": ctx.pred_sql, "gold": unwrap_fences(gold_sql)} if gold_sql else None
    ctx.info.update(inspect_sql(ctx.executor, target, ctx.pred_sql, plans))
    result = ctx.executor.run_prediction(target, sql, collect)
    ctx.info.update(
        backend=result.backend,
        bytes_processed=result.bytes_processed,
        seconds=result.seconds,
        prediction_csv=str(result.csv_path) if result.csv_path else None,
    )
    _add_similarity(ctx.pred_sql, ctx, gold_sql)
    if not result.ok:
        raise result.instance_error()
    return result


@contextmanager
def unreadable_sql_is_invalid(ctx: SqlContext):
    """A .sql answer whose SQL cannot be read (no file, unsafe path, not UTF-8) is not a valid query."""
    try:
        yield
    except InstanceError as exc:
        if ctx.executor is not None and ctx.pred_sql is None and "validity" not in ctx.info:
            ctx.info["validity"] = {"valid": False, "reason": "invalid", "message": f"no SQL to check: {exc.detail}"}
        raise


def read_gold_sql_text(ctx: SqlContext) -> str | None:
    """The instance's gold.sql, or None when there is none (or it cannot be read)."""
    path = ctx.gold_root / ctx.gold.instance_id / "gold.sql"
    try:
        return path.read_text(encoding="utf-8-sig") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def _add_similarity(pred_sql: str, ctx: SqlContext, gold_sql: str | None = None) -> None:
    """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard against the gold query (gold.sql unless given):
    supporting figures, never the score."""
    gold_path = ctx.gold_root / ctx.gold.instance_id / "gold.sql"
    if gold_sql is None and not gold_path.is_file():
        return
    try:
        from evaluators.metrics.similarity import query_similarity

        gold_text = gold_sql if gold_sql is not None else gold_path.read_text(encoding="utf-8-sig")
        ctx.info["similarity"] = query_similarity(pred_sql, unwrap_fences(gold_text))
    except ImportError as exc:
        ctx.info["similarity"] = {
            "error": str(exc) if "pip install" in str(exc) else f"{exc} (pip install '.[rewards]')"
        }
    except (OSError, UnicodeDecodeError) as exc:
        ctx.info["similarity"] = {"error": f"gold.sql unreadable: {exc}"}
