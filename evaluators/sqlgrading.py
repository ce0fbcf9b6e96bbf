"""The parts of grading that run SQL: `.sql` answers and temporal gold specs.

Both go through `execution.Executor`; without one (the Python API's default) they are
reported as `needs_execution`, never scored silently.  What ran, where the gold came
from and how many bytes it cost are collected in `info` for the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import checks
from .errors import InstanceError
from .specs import GoldInstance

TEMPORAL_FUNCS = ("table_match", "number_match", "string_match")


@dataclass
class SqlContext:
    gold: GoldInstance
    gold_root: Path  # the gold folder (holding <instance_id>/gold.sql)
    executor: object | None  # execution.Executor
    max_file_bytes: int
    info: dict = field(default_factory=dict)


def temporal_params(spec, params: dict, ctx: SqlContext) -> dict:
    """The spec's parameters with the gold replaced by what gold.sql returns now (or its cache)."""
    if not spec.temporal:
        return params
    if spec.func not in TEMPORAL_FUNCS:
        raise InstanceError("invalid_spec", f"a temporal spec needs {', '.join(TEMPORAL_FUNCS)}, not {spec.func}")
    if ctx.executor is None:
        raise InstanceError("needs_execution", f"{spec.func} spec is temporal: its gold comes from running gold.sql")
    stored = params.get("gold") if spec.func == "table_match" else None
    result = ctx.executor.temporal_gold(ctx.gold, ctx.gold_root, stored)
    if not result.ok:
        raise result.instance_error()
    ctx.info.update(backend=result.backend, gold_source=result.source, gold_cached_at=result.cached_at,
                    gold_drifted=result.drifted, gold_bytes_processed=result.bytes_processed)
    if spec.func == "table_match":
        cols = params.get("condition_cols")
        if isinstance(params.get("gold"), list) and isinstance(cols, list) and cols and isinstance(cols[0], list):
            cols = cols[0]  # the live result stands for the first stored variant
        return {**params, "gold": str(result.csv_path), "condition_cols": cols}
    if result.first_cell is None:
        raise InstanceError("unreadable_gold", "gold.sql returned no rows: no first cell to compare with")
    value = result.first_cell
    return {**params, "gold": [str(value)] if spec.func == "string_match" or isinstance(value, str) else [value]}


def run_answer_sql(path: Path, ctx: SqlContext):
    """Run a predicted `.sql` file; returns the ExecResult (its CSV lives in the output folder)."""
    sql = checks.read_sql_file(path, ctx.max_file_bytes)
    if ctx.executor is None:
        raise InstanceError("needs_execution", f"{path.name} is SQL: grading it needs a SQL backend")
    result = ctx.executor.run_prediction(ctx.gold, sql)
    ctx.info.update(backend=result.backend, bytes_processed=result.bytes_processed, seconds=result.seconds,
                    prediction_csv=str(result.csv_path) if result.csv_path else None)
    _add_similarity(sql, ctx)
    if not result.ok:
        raise result.instance_error()
    return result


def _add_similarity(pred_sql: str, ctx: SqlContext) -> None:
    """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard against gold.sql: supporting figures, never the score."""
    gold_sql = ctx.gold_root / ctx.gold.instance_id / "gold.sql"
    if not gold_sql.is_file():
        return
    try:
        from .rewards import query_similarity
        from .sqltext import unwrap_fences

        ctx.info["similarity"] = query_similarity(unwrap_fences(pred_sql), gold_sql.read_text(encoding="utf-8-sig"))
    except ImportError as exc:
        ctx.info["similarity"] = {"error": f"{exc} (pip install '.[rewards]')"}
    except (OSError, UnicodeDecodeError) as exc:
        ctx.info["similarity"] = {"error": f"gold.sql unreadable: {exc}"}
