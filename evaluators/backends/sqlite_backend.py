"""SQLite: the database file opened read-only, so submitted SQL cannot change it.

`mode=ro` refuses writes to the file; no attached databases are allowed, which also
stops `ATTACH` and `VACUUM INTO` from creating files elsewhere.  The timeout is a
progress handler that aborts the running statement inside SQLite itself.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from .readonly import WRITE_REFUSED, read_only_authorizer
from .base import Backend, Outcome, QueryFailed, Request, first_line, keep_result, records_frame

_PROGRESS_EVERY = 10_000  # virtual-machine instructions between deadline checks (well under a millisecond)


class SQLiteBackend(Backend):
    name = "sqlite"
    kill_grace_s = 1.0

    def run(self, request: Request, notify) -> Outcome:
        if request.db_ref is None:
            raise QueryFailed("no_database", "a SQLite instance needs a database file (--db-dir)")
        con = _connect(request.db_ref)
        try:
            return _execute(con, request, notify)
        finally:
            con.close()


def _connect(path: str) -> sqlite3.Connection:
    try:
        con = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()  # fails here if it is not a database
    except sqlite3.Error as exc:
        raise QueryFailed("no_database", f"cannot open {Path(path).name}: {first_line(exc)}") from None
    con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    return con


def _guard(con: sqlite3.Connection) -> list:
    """Refuse every statement that would write (readonly.py); the refused actions are listed."""
    refused: list = []
    con.set_authorizer(read_only_authorizer(refused))
    return refused


def _execute(con: sqlite3.Connection, request: Request, notify) -> Outcome:
    deadline = time.monotonic() + request.timeout_s
    expired = []

    def past_deadline() -> int:
        if time.monotonic() > deadline:
            expired.append(True)
            return 1  # non-zero makes SQLite abort the statement with "interrupted"
        return 0

    con.set_progress_handler(past_deadline, _PROGRESS_EVERY)
    refused = _guard(con)
    notify({"event": "started"})
    try:
        started = time.perf_counter()
        cursor = con.execute(request.sql)
        columns = [d[0] for d in cursor.description] if cursor.description else None
        rows = cursor.fetchall() if columns is not None else []
        seconds = time.perf_counter() - started
    except sqlite3.Error as exc:
        if expired:
            raise QueryFailed("timeout", f"interrupted after {request.timeout_s:g} s") from None
        if refused:
            raise QueryFailed("exec_error", f"{WRITE_REFUSED}: {', '.join(refused)}") from None
        raise QueryFailed("exec_error", first_line(exc)) from None
    # The frame as pandas.read_sql_query builds it (Spider2-lite's scorer reads SQLite this way).
    return keep_result(request, lambda: records_frame(rows, columns), columns, rows, query_seconds=seconds)
