"""DuckDB, the embedded default: the database file opened read-only, no file or network access.

Submitted SQL must not read or write files on the grading machine, load extensions
or reach the network, so external access is switched off and the configuration
locked before the SQL runs.  The timeout interrupts the query from a timer thread
(`con.interrupt()`); the parent kills the worker if that ever fails.
"""
from __future__ import annotations

import threading
import time
from dataclasses import replace

from .base import (Backend, Outcome, QueryFailed, Request, empty_frame, first_line, import_driver, keep_result,
                   records_frame, save_frame)

# Order matters: everything is switched off first, and locking comes last.
_LOCKDOWN = (
    "SET enable_external_access = false",
    "SET autoinstall_known_extensions = false",
    "SET autoload_known_extensions = false",
    "SET lock_configuration = true",
)


class DuckDBBackend(Backend):
    name = "duckdb"
    kill_grace_s = 1.0

    def run(self, request: Request, notify) -> Outcome:
        duckdb = import_driver("duckdb", "duckdb", "duckdb")
        con = _connect(duckdb, request.db_ref)
        try:
            for statement in _LOCKDOWN:
                con.execute(statement)
            return _execute(duckdb, con, request, notify)
        finally:
            con.close()


def _connect(duckdb, db_ref: str | None):
    try:
        if db_ref is None:  # no database named: SQL over literals only, in memory
            return duckdb.connect(":memory:")
        return duckdb.connect(db_ref, read_only=True)
    except duckdb.Error as exc:
        raise QueryFailed("no_database", f"cannot open {db_ref}: {first_line(exc)}") from None


def _execute(duckdb, con, request: Request, notify) -> Outcome:
    timer = threading.Timer(request.timeout_s, con.interrupt)
    timer.daemon = True
    notify({"event": "started"})
    timer.start()
    try:
        started = time.perf_counter()
        con.execute(request.sql)
        if request.collect == "csv":  # the frame DuckDB builds itself, as the table matchers expect
            frame = con.fetch_df() if con.description else empty_frame()
            return replace(save_frame(frame, request.out_csv), query_seconds=time.perf_counter() - started)
        # Rows and timings: the Python values of fetchall(), as BIRD's evaluator fetches them.
        columns = [d[0] for d in con.description] if con.description else None
        rows = con.fetchall() if columns is not None else []
        seconds = time.perf_counter() - started
    except duckdb.InterruptException:
        raise QueryFailed("timeout", f"interrupted after {request.timeout_s:g} s") from None
    except duckdb.Error as exc:
        raise QueryFailed("exec_error", first_line(exc)) from None
    finally:
        timer.cancel()
    return keep_result(request, lambda: records_frame(rows, columns), columns, rows, query_seconds=seconds)
