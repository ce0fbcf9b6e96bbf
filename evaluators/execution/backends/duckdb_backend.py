"""DuckDB, the embedded default: the database file opened read-only, no file or network access.

Submitted SQL must not read or write files on the grading machine, load extensions
or reach the network, so external access is switched off and the configuration
locked before the SQL runs.  The timeout interrupts the query from a timer thread
(`con.interrupt()`); the parent kills the worker if that ever fails.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import replace
from pathlib import Path

from evaluators.execution.backends import base
from evaluators.execution.backends.base import Backend, Outcome, QueryFailed, Request
from evaluators.execution.memory import fetch_rows, limit_of
from evaluators.execution.opener import open_duckdb


class DuckDBBackend(Backend):
    name = "duckdb"
    kill_grace_s = 1.0

    def run(self, request: Request, notify) -> Outcome:
        duckdb = base.import_driver("duckdb", "duckdb", "duckdb")
        if not request.trusted:  # DuckDB runs every statement of a script; a prediction is one query
            problem = base.one_statement_problem(request.sql, "duckdb")
            if problem:
                raise QueryFailed("exec_error", f"not run: {problem}; one query is graded")
        con = connect(duckdb, request)
        try:
            return _execute(duckdb, con, request, notify)
        finally:
            con.close()


def connect(duckdb, request: Request):
    """The locked-down connection (opener.py); no database named: SQL over literals only, in memory."""
    try:
        return open_duckdb(request.db_ref, request.setting("temp_dir"), request.setting("memory_limit_mb"))
    except duckdb.Error as exc:
        raise QueryFailed(
            "no_database", f"cannot open {Path(str(request.db_ref)).name}: {base.first_line(exc)}"
        ) from None


class _Step:
    doing = ""  # what is under way, for the timeout's words


@contextlib.contextmanager
def _under_timeout(duckdb, con, request: Request, notify, doing: str = ""):
    """The block runs under the request's timeout (a timer interrupts the connection); DuckDB's errors become
    `timeout` (with what was under way) or `exec_error`."""
    step = _Step()
    step.doing = doing
    timer = threading.Timer(request.timeout_s, con.interrupt)
    timer.daemon = True
    notify({"event": "started"})
    timer.start()
    try:
        yield step
    except duckdb.InterruptException:
        words = f"interrupted after {request.timeout_s:g} s"
        raise QueryFailed("timeout", f"{step.doing} {words}" if step.doing else words) from None
    except duckdb.Error as exc:
        raise QueryFailed("exec_error", base.first_line(exc)) from None
    finally:
        timer.cancel()


def _execute(duckdb, con, request: Request, notify) -> Outcome:
    with _under_timeout(duckdb, con, request, notify):
        started = time.perf_counter()
        con.execute(request.sql)
        if request.collect == "csv":  # the frame DuckDB builds itself, as the table matchers expect
            frame = con.fetch_df() if con.description else base.empty_frame()
            return replace(base.save_frame(frame, request.out_csv), query_seconds=time.perf_counter() - started)
        # Rows and timings: the Python values fetchall() would give (as BIRD's evaluator fetches them), in
        # batches under the fetch budget (memory.py).
        columns = [d[0] for d in con.description] if con.description else None
        rows = fetch_rows(con, limit_of(request.settings)) if columns is not None else []
        seconds = time.perf_counter() - started
    return base.keep_result(request, lambda: base.records_frame(rows, columns), columns, rows, query_seconds=seconds)


def read_tables(request: Request, tables: list[str] | None, notify) -> dict:
    """Every named table (all tables and views when None) of a DuckDB file, pickled into the folder
    `request.out_csv`, under the request's timeout: reading a submitted view is running a query."""
    duckdb = base.import_driver("duckdb", "duckdb", "duckdb")
    con = connect(duckdb, request)
    folder = Path(request.out_csv)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with _under_timeout(duckdb, con, request, notify, "listing tables") as step:
            names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
            files, errors = {}, {}
            for number, table in enumerate(names if tables is None else tables):
                step.doing = f"reading table {table!r}"
                quoted = '"' + table.replace('"', '""') + '"'
                try:
                    frame = con.execute(f"SELECT * FROM {quoted}").fetchdf()
                except duckdb.InterruptException:
                    raise  # the timeout: _under_timeout says so
                except duckdb.Error as exc:
                    errors[table] = base.first_line(exc)  # one unreadable table is that table's error
                    continue
                path = folder / f"{number}.pkl"
                frame.to_pickle(path)
                files[table] = str(path)
            return {"tables": names, "files": files, "errors": errors}
    finally:
        con.close()
