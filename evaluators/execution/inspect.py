"""Validity and plan cost by EXPLAIN, inside a worker (the `inspect` action of worker.py).

EXPLAIN binds names without running the query, but it is still the engine at work
on a submitted text: DuckDB runs every statement of `SELECT 1; <heavy>` and some of
its functions ignore an interrupt, so only killing the process stops them.  So it
runs here, on the one opener's connection, and a text must be exactly one statement
(sqlglot's tokenizer counts them) before the engine sees it.
"""

from __future__ import annotations

import threading
import time

from evaluators.execution.backends.base import Request, first_line, one_statement_problem


def inspect(request: Request, plan_queries: dict | None, notify) -> dict:
    from evaluators.metrics.validity import ValidityResult

    con = _connect(request)
    stop = _guard(request, con)
    notify({"event": "started"})
    try:
        problem = one_statement_problem(request.sql, request.backend)
        validity = (
            ValidityResult(False, "invalid", problem) if problem else _validity(request.backend, con, request.sql)
        )
        out: dict = {"validity": validity.to_dict()}
        if plan_queries:
            out["plan_cost"] = _plan_costs(request.backend, con, plan_queries)
        return out
    finally:
        stop()
        con.close()


def _connect(request: Request):
    if request.backend == "sqlite":
        from evaluators.execution.backends.sqlite_backend import connect as sqlite_connect

        return sqlite_connect(request)
    from evaluators.execution.backends.base import import_driver
    from evaluators.execution.backends.duckdb_backend import connect as duckdb_connect

    return duckdb_connect(import_driver("duckdb", "duckdb", "duckdb"), request)


def _guard(request: Request, con):
    """Stop compiling at the timeout from inside the engine; the parent kills the worker if that fails."""
    if request.backend == "sqlite":
        deadline = time.monotonic() + request.timeout_s
        con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        return lambda: None
    timer = threading.Timer(request.timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    return timer.cancel


def _validity(engine: str, con, sql: str):
    from evaluators.execution.probes.validity import check_duckdb_validity, check_sqlite_validity

    return (check_sqlite_validity if engine == "sqlite" else check_duckdb_validity)(con, sql)


def _plan_costs(engine: str, con, queries: dict) -> dict:
    from evaluators.execution.probes.plan_cost import duckdb_plan_cost, sqlite_plan_cost

    cost_of = sqlite_plan_cost if engine == "sqlite" else duckdb_plan_cost
    out: dict = {"engine": engine}
    for label, sql in queries.items():
        problem = one_statement_problem(sql, engine)
        if problem:
            out[label], out[f"{label}_error"] = None, problem
            continue
        planned = cost_of(con, sql)
        out[label] = planned.cost
        if planned.error:
            out[f"{label}_error"] = first_line(planned.error)
    return out
