"""A coarse, engine-estimated ``plan_cost`` per query, read from EXPLAIN output
without running the query.  Costs compare queries on the same database and
engine only; SQLite and DuckDB costs are on different scales.

SQLite (``EXPLAIN QUERY PLAN``), per plan row:
  * detail starts with ``SCAN`` (full table/index/subquery scan): +100,
    except ``SCAN CONSTANT ROW`` (a FROM-less SELECT reads no table): +0;
  * detail contains ``USE TEMP B-TREE`` (sort/distinct/group-by spill): +50;
  * ``SEARCH`` (index lookup) and everything else: +0.
DuckDB (``EXPLAIN``, physical plan as rendered text): the sum of every
operator's estimated output cardinality, i.e. every ``~N rows`` figure (and the
``EC: N`` figures printed by older DuckDB versions).  Operators printed without
an estimate add 0.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluators.execution.probes.validity import DUCKDB_ENGINES, SQLITE_ENGINES, open_read_only

__all__ = [
    "PlanCost",
    "sqlite_cost_from_details",
    "duckdb_cost_from_explain",
    "sqlite_plan_cost",
    "duckdb_plan_cost",
    "plan_cost",
]

SCAN_COST = 100
TEMP_BTREE_COST = 50
_CARDINALITY = re.compile(r"~\s*([\d,]+)\s+rows?\b|\bEC:\s*([\d,]+)")


@dataclass(frozen=True)
class PlanCost:
    engine: str
    cost: int | None  # None when the engine could not plan the query
    plan: tuple[str, ...] = ()  # the plan lines the cost was read from
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sqlite_cost_from_details(details: Iterable[str]) -> int:
    """Cost of a SQLite plan given the ``detail`` column of EXPLAIN QUERY PLAN."""
    cost = 0
    for detail in details:
        text = detail.strip().upper()
        if text.startswith("SCAN") and not text.startswith("SCAN CONSTANT ROW"):
            cost += SCAN_COST
        if "USE TEMP B-TREE" in text:
            cost += TEMP_BTREE_COST
    return cost


def duckdb_cost_from_explain(text: str) -> int:
    """Sum of estimated cardinalities (``~N rows`` / ``EC: N``) in DuckDB EXPLAIN text."""
    return sum(int((tilde or ec).replace(",", "")) for tilde, ec in _CARDINALITY.findall(text))


def _no_sql(engine: str, sql: str | None) -> PlanCost | None:
    if sql is None or not sql.strip():
        return PlanCost(engine, None, error="empty SQL")
    return None


def sqlite_plan_cost(con: sqlite3.Connection, sql: str | None) -> PlanCost:
    if (empty := _no_sql("sqlite", sql)) or sql is None:
        return empty or PlanCost("sqlite", None, error="empty SQL")
    try:
        rows = con.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    except (sqlite3.Error, sqlite3.Warning) as exc:
        return PlanCost("sqlite", None, error=str(exc))
    details = tuple(str(row[-1]) for row in rows)  # (id, parent, notused, detail)
    return PlanCost("sqlite", sqlite_cost_from_details(details), details)


def duckdb_plan_cost(con: Any, sql: str | None) -> PlanCost:
    import duckdb  # local: SQLite-only runs need not load DuckDB

    if (empty := _no_sql("duckdb", sql)) or sql is None:
        return empty or PlanCost("duckdb", None, error="empty SQL")
    try:
        rows = con.execute("EXPLAIN " + sql).fetchall()
    except duckdb.Error as exc:
        return PlanCost("duckdb", None, error=str(exc))
    # Rows are (explain_key, explain_value); only the physical plan is summed
    # even if the explain_output setting adds logical plans.
    text = "\n".join(str(value) for key, value in rows if key == "physical_plan")
    return PlanCost("duckdb", duckdb_cost_from_explain(text), tuple(text.splitlines()))


def plan_cost(sql: str | None, db_path: str | Path, engine: str) -> PlanCost:
    """Plan cost of ``sql`` on a SQLite or DuckDB file opened read-only."""
    engine = engine.lower()
    if engine in SQLITE_ENGINES:
        with open_read_only(db_path, engine) as con:
            return sqlite_plan_cost(con, sql)
    if engine in DUCKDB_ENGINES:
        with open_read_only(db_path, engine) as con:
            return duckdb_plan_cost(con, sql)
    raise ValueError(f"plan_cost is not supported for engine {engine!r}")
