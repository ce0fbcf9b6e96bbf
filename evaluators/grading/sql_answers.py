"""A `.sql` (or `.cypher`) answer, run once by the spec that grades it.

`grading/instance.py` hands down the instance's `SqlContext` (`sql_context.py`); this module picks the
spec, runs the answer through the context, and hands back either execution_match's verdicts or what the
instance still grades itself: the result table (table specs) or its first cell (string/number specs).
The walk goes one way: instance -> sql_answers -> execution_match -> the context's executor.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.errors import InstanceError
from evaluators.grading import execution_match
from evaluators.grading.sql_context import SqlContext
from evaluators.matching import registry


@dataclass(frozen=True)
class SqlOutcome:
    """What running a `.sql` answer left to grade: verdicts already, or a table or a first cell."""

    verdicts: dict | None = None  # execution_match's, final
    table: Path | None = None  # the result CSV, for `specs` (table specs)
    cell: str | None = None  # the first cell as text, for `specs` (string/number specs)
    specs: tuple = ()


def run_sql_answer(specs: list, path: Path, job, ctx: SqlContext) -> SqlOutcome:
    """Run the SQL once: beside the gold query (execution_match), for its table (table specs), or for its
    first cell (string/number specs)."""
    with ctx.unreadable_sql_is_invalid():
        sql_specs = [p for s, p in specs if registry.is_sql_func(s.func)]
        if sql_specs:
            return SqlOutcome(verdicts=execution_match.grade(sql_specs[-1], path, job, ctx))
        table_specs = [(s, p) for s, p in specs if registry.gold_tables(s.func) == "csv"]
        if table_specs:
            result = run_for_table(path, table_specs[-1], job, ctx)
            return SqlOutcome(table=result.csv_path, specs=tuple(table_specs))
        result = ctx.run_answer(path)
        answer_specs = tuple((s, p) for s, p in specs if registry.is_answer_func(s.func))
        return SqlOutcome(cell="" if result.first_cell is None else str(result.first_cell), specs=answer_specs)


def run_for_table(path: Path, table_spec: tuple, job, ctx: SqlContext):
    """Run the answer for a table spec; when a gold.sql lies beside the gold, LLMetric-Q's rows are kept:
    the result CSV's and the spec's gold file's, both read as CSV by the job's table readers (no gold query
    runs for them; the table spec then finds both frames already read)."""
    gold_sql = ctx.gold_sql_text()
    try:
        result = ctx.run_answer(path)
    except InstanceError as exc:
        if gold_sql is not None and ctx.pred_sql is not None and exc.reason in execution_match.PREDICTION_FAILURES:
            _keep_table_rows(ctx, lambda: [], table_spec, job, gold_sql)
        raise
    if gold_sql is not None:
        _keep_table_rows(ctx, lambda: csv_rows(job.pred_reader, result.csv_path), table_spec, job, gold_sql)
    return result


def _keep_table_rows(ctx: SqlContext, pred_rows, table_spec: tuple[Any, dict], job, gold_sql: str) -> None:
    try:
        execution_match.keep_llmetric_inputs(ctx, pred_rows(), table_gold_rows(*table_spec, job, ctx), gold_sql)
    except (InstanceError, ValueError, OSError):
        pass  # an unreadable gold is the table spec's verdict to report; LLMetric-Q is left out


def table_gold_rows(spec, params: dict, job, ctx: SqlContext) -> list:
    """The rows of a table spec's (first) gold file, or of its live result when the spec is temporal."""
    params = ctx.temporal_params(spec, params)
    golds = params["gold"] if isinstance(params["gold"], list) else [params["gold"]]
    return csv_rows(job.gold_reader, ctx.folder / golds[0])


def csv_rows(reader, path: Path) -> list[tuple]:
    """A CSV's rows as Python values, as pandas reads them by default (`tables/read.py`, the one CSV reader);
    missing cells are None, and a file with no columns at all has no rows."""
    import pandas as pd

    try:
        frame = reader.csv(Path(path), low_memory=True)
    except InstanceError:
        if _blank(Path(path)):
            return []
        raise
    return [
        tuple(None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in row)
        for row in frame.itertuples(index=False, name=None)
    ]


def _blank(path: Path) -> bool:
    """Nothing but white space: a result of no columns (pandas' EmptyDataError), not an unreadable file."""
    try:
        return path.stat().st_size <= 65536 and not path.read_bytes().strip()
    except OSError:
        return False
