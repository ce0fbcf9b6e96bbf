"""Validity and plan cost of SQL on the instance's local database, by EXPLAIN, without running it.

Both come from `metrics.validity` and `metrics.plan_cost`; this module only finds
the database the way the executor does (`execution.resolve_database`) and opens
it the way the workers do: read-only, and for DuckDB with file, network and
extension access switched off, because EXPLAIN binds names and DuckDB reads a
file's header while binding `read_csv('...')`.  EXPLAIN never runs the query,
so it is done in this process, with the executor's timeout as a guard against a
pathological plan.  Cloud backends are `not_checked`: compiling there costs a
round trip and, on BigQuery, a dry run per attempt.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path

from .backends import LOCAL
from .errors import InstanceError
from .execution import resolve_database
from .metrics.plan_cost import duckdb_plan_cost, sqlite_plan_cost
from .metrics.validity import ValidityResult, check_duckdb_validity, check_sqlite_validity


def inspect_sql(executor, gold, sql: str, plan_queries: dict | None = None) -> dict:
    """{"validity": {valid, reason, message}} for `sql`, and with `plan_queries` ({label: sql})
    {"plan_cost": {"engine": .., label: cost, ...}} on local engines."""
    try:
        engine, database = local_database(executor, gold)
    except _NotLocal as exc:
        return {"validity": ValidityResult(None, "not_checked", str(exc)).to_dict()}
    try:
        with read_only(engine, database, executor.config.timeout_s) as con:
            out = {"validity": _validity(engine, con, sql).to_dict()}
            if plan_queries:
                out["plan_cost"] = _plan_costs(engine, con, plan_queries)
            return out
    except _open_errors() as exc:  # the database could not be opened or read
        return {"validity": ValidityResult(None, "not_checked", f"{type(exc).__name__}: {exc}").to_dict()}


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


@contextmanager
def read_only(engine: str, database: str | None, timeout_s: float):
    """A read-only connection, interrupted after `timeout_s` seconds of compiling."""
    if engine == "sqlite":
        with closing(_sqlite(database, timeout_s)) as con:
            yield con
        return
    con = _duckdb(database)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield con
    finally:
        timer.cancel()
        con.close()


def _sqlite(database: str | None, timeout_s: float) -> sqlite3.Connection:
    if database is None:
        raise OSError("a SQLite instance needs a database file")
    con = sqlite3.connect(Path(database).resolve().as_uri() + "?mode=ro", uri=True)
    con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    con.execute("PRAGMA schema_version").fetchone()  # SQLite opens lazily: fail here on a non-database
    deadline = time.monotonic() + timeout_s
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return con


def _duckdb(database: str | None):
    import duckdb

    from .backends.duckdb_backend import _LOCKDOWN

    con = duckdb.connect(database, read_only=True) if database else duckdb.connect(":memory:")
    try:
        for statement in _LOCKDOWN:  # as in the workers: submitted SQL must not reach files or the network
            con.execute(statement)
    except BaseException:
        con.close()
        raise
    return con


def _open_errors() -> tuple:
    try:
        import duckdb

        return OSError, sqlite3.Error, duckdb.Error
    except ImportError:
        return OSError, sqlite3.Error


def _validity(engine: str, con, sql: str) -> ValidityResult:
    check = check_sqlite_validity if engine == "sqlite" else check_duckdb_validity
    return check(con, sql)


def _plan_costs(engine: str, con, queries: dict) -> dict:
    cost_of = sqlite_plan_cost if engine == "sqlite" else duckdb_plan_cost
    out: dict = {"engine": engine}
    for label, sql in queries.items():
        planned = cost_of(con, sql)
        out[label] = planned.cost
        if planned.error:
            out[f"{label}_error"] = planned.error.splitlines()[0] if planned.error.strip() else planned.error
    return out
