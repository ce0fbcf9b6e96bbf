"""Validity and plan cost of SQL on the instance's local database, by EXPLAIN, without running it.

Both come from `execution/probes/` (validity, plan cost), computed in a worker
process on the one opener's connection (`execution/inspect.py`), under the
executor's timeout: a submitted text is never compiled in the grading process.
This module only finds the database the way the executor does
(`execution.resolve_database`).  Cloud backends are `not_checked`: compiling there
costs a round trip and, on BigQuery, a dry run per attempt.
"""

from __future__ import annotations

from evaluators.errors import InstanceError
from evaluators.execution.backends import LOCAL
from evaluators.execution.backends.base import Request
from evaluators.execution.executor import resolve_database
from evaluators.metrics.validity import ValidityResult


def inspect_sql(executor, gold, sql: str, plan_queries: dict | None = None) -> dict:
    """{"validity": {valid, reason, message}} for `sql`, and with `plan_queries` ({label: sql})
    {"plan_cost": {"engine": .., label: cost, ...}} on local engines."""
    from evaluators.execution import worker

    if _engine(executor, gold) == "cypher":
        return graph_validity(executor, gold, sql)
    try:
        engine, database = local_database(executor, gold)
    except _NotLocal as exc:
        return {"validity": ValidityResult(None, "not_checked", str(exc)).to_dict()}
    if engine == "sqlite" and database is None:
        return {"validity": ValidityResult(None, "not_checked", "a SQLite instance needs a database file").to_dict()}
    request = Request(engine, sql or "", "", database, executor.config.settings(engine), {}, "csv")
    event = worker.execute(request, "inspect", plan_queries=plan_queries)
    if event.get("reason") != "ok":
        detail = f"{event.get('reason')}: {event.get('detail', '')}"
        return {"validity": ValidityResult(None, "not_checked", detail).to_dict()}
    return {key: event[key] for key in ("validity", "plan_cost") if key in event}


def graph_validity(executor, gold, query: str) -> dict:
    """KG Valid of a Cypher query on the instance's graph (execution/probes/kg_validity.py), checked in a worker:
    {"validity": {valid, reason, message}, "kg_valid": bool, "kg_validity": every score and note}."""
    from evaluators.execution import worker
    from evaluators.execution.executor import graph_ref
    from evaluators.execution.probes.kg_validity import kg_verdict

    try:
        _, db_ref = executor.backend_for(gold)
        ref = graph_ref(db_ref, executor.config)
    except InstanceError as exc:
        return {"validity": ValidityResult(None, "not_checked", f"{exc.reason}: {exc.detail}").to_dict()}
    event = worker.execute(
        Request("cypher", query or "", "", ref, executor.config.settings("cypher"), {}, "csv"), "kg_valid"
    )
    if event.get("reason") != "ok":
        detail = f"{event.get('reason')}: {event.get('detail', '')}"
        return {"validity": ValidityResult(None, "not_checked", detail).to_dict()}
    verdict = kg_verdict(event, query or "")
    validity = {"valid": verdict["valid"], "reason": verdict["reason"], "message": verdict["message"]}
    return {"validity": validity, "kg_valid": verdict["valid"], "kg_validity": verdict}


def _engine(executor, gold) -> str | None:
    try:
        return executor.backend_for(gold)[0]
    except InstanceError:
        return None


class _NotLocal(Exception):
    """No local database to compile on: a cloud backend, or none could be found."""


def local_database(executor, gold) -> tuple[str, str | None]:
    """(engine, database file or None for DuckDB in memory), as the executor would run the instance."""
    try:
        engine, db_ref = executor.backend_for(gold)
        if engine not in LOCAL:
            raise _NotLocal(f"validity is checked on local DuckDB/SQLite databases only, not on {engine}")
        return engine, resolve_database(engine, db_ref, executor.config.db_dir)
    except InstanceError as exc:
        raise _NotLocal(f"{exc.reason}: {exc.detail}") from None
