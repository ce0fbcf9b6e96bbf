"""SQLite: the database file opened read-only and immutable (opener.py), so submitted SQL cannot change it.

The timeout is a progress handler that aborts the running statement inside SQLite itself.  A worker keeps
its last few connections open (`_OpenConnections`): RL rewards send thousands of short queries to a few
databases, and opening a file per query (schema read, a cold page cache) costs a good part of each.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import OrderedDict
from pathlib import Path

from evaluators.execution import priority
from evaluators.execution.backends import base
from evaluators.execution.backends.base import Backend, Outcome, QueryFailed, Request
from evaluators.execution.backends.settings import SQLiteSettings
from evaluators.execution.memory import fetch_rows, limit_of
from evaluators.execution.opener import file_identity, open_sqlite, set_heap_limit
from evaluators.execution.sqlite_readonly import WRITE_REFUSED, read_only_authorizer

_PROGRESS_EVERY = 10_000  # virtual-machine instructions between deadline checks (well under a millisecond)


class SQLiteBackend(Backend):
    name = "sqlite"
    kill_grace_s = 1.0

    def run(self, request: Request, notify) -> Outcome:
        if request.db_ref is None:
            raise QueryFailed("no_database", "a SQLite instance needs a database file (--db-dir)")
        key = _key(request)  # taken before the file is opened: a file changed after it is a new key next time
        con = _connections.take(key, request)
        try:
            outcome = _execute(con, request, notify)
        except QueryFailed:
            _connections.give_back(key, con)  # the statement failed or was interrupted; the connection is sound
            raise
        except BaseException:  # MemoryError or a driver bug: the connection's state is not known
            con.close()
            raise
        _connections.give_back(key, con)
        return outcome


class _OpenConnections:
    """The worker's last `KEPT` read-only connections, one per (file, its identity, memory cap, decoding).

    A connection is handed to one request at a time (a worker serves one query at once) and given back
    only with no transaction open.  Each request sets its own progress handler (the timeout) and authorizer
    (read-only) on it, and the heap cap is set again, as it is the process's, so nothing of one query carries
    to the next: the SQL can change no setting (PRAGMA assignments, ATTACH and temporary objects are refused).
    A file that changes is a new key (an immutable connection would not see the change): its identity is
    `opener.file_identity` (inode and ctime too: a file swapped in place keeping its size and mtime)."""

    KEPT = 4

    def __init__(self) -> None:
        self._open: OrderedDict[tuple, sqlite3.Connection] = OrderedDict()

    def take(self, key: tuple, request: Request) -> sqlite3.Connection:
        con = self._open.pop(key, None) if key else None
        if con is None:
            return connect(request)
        try:
            # The last request's guard refuses this PRAGMA (an assignment) and its deadline has passed: both
            # go before it, and _execute sets this request's own.  Left on, every kept connection was refused
            # here, closed and opened again, for every query.
            con.set_authorizer(None)
            con.set_progress_handler(None, 0)
            set_heap_limit(con, request.setting("memory_limit_mb"))
        except sqlite3.Error:
            con.close()
            return connect(request)
        return con

    def give_back(self, key: tuple, con: sqlite3.Connection) -> None:
        if con.in_transaction or not key or key in self._open:
            con.close()
            return
        self._open[key] = con
        while len(self._open) > self.KEPT:
            self._open.popitem(last=False)[1].close()


def _key(request: Request) -> tuple:
    path = str(request.db_ref)
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    settings = (request.setting("memory_limit_mb"), SQLiteSettings.of(request).decode_errors)
    return (path, *file_identity(stat), *settings)


_connections = _OpenConnections()


def connect(request: Request) -> sqlite3.Connection:
    """The read-only, immutable connection (opener.py)."""
    path = str(request.db_ref)
    try:
        return open_sqlite(path, request.setting("memory_limit_mb"), SQLiteSettings.of(request).decode_errors)
    except sqlite3.Error as exc:
        raise QueryFailed("no_database", f"cannot open {Path(path).name}: {base.first_line(exc)}") from None


def _say_long(notify) -> None:
    try:
        notify({"event": "long"})
    except (MemoryError, OSError):  # a hint only: the query goes on without it
        pass


def _execute(con: sqlite3.Connection, request: Request, notify) -> Outcome:
    deadline = time.monotonic() + request.timeout_s
    expired = []
    watch = priority.LongWatch(lambda: _say_long(notify))  # a long query yields the CPU, and says so

    def past_deadline() -> int:
        now = time.monotonic()
        watch.check(now)
        if now > deadline:
            expired.append(True)
            return 1  # non-zero makes SQLite abort the statement with "interrupted"
        return 0

    con.set_progress_handler(past_deadline, _PROGRESS_EVERY)
    refused = _guard(con)
    notify({"event": "started"})
    cursor = con.cursor()
    try:
        started = time.perf_counter()
        cursor.execute(request.sql)
        columns = [d[0] for d in cursor.description] if cursor.description else None
        rows = fetch_rows(cursor, limit_of(request.settings)) if columns is not None else []
        seconds = time.perf_counter() - started
    except sqlite3.Error as exc:
        if expired:
            raise QueryFailed("timeout", f"interrupted after {request.timeout_s:g} s") from None
        if refused:
            raise QueryFailed("exec_error", f"{WRITE_REFUSED} (readonly database): {', '.join(refused)}") from None
        raise QueryFailed("exec_error", base.first_line(exc)) from None
    finally:
        watch.done()
        cursor.close()  # a statement stopped part-way (result_too_large) does not stay open on a kept connection
    # The frame as pandas.read_sql_query builds it (Spider2-lite's scorer reads SQLite this way).
    return base.keep_result(request, lambda: base.records_frame(rows, columns), columns, rows, query_seconds=seconds)


def _guard(con: sqlite3.Connection) -> list:
    """Refuse every statement that would write, even where mode=ro would not notice (readonly.py)."""
    refused: list = []
    con.set_authorizer(read_only_authorizer(refused))
    return refused


def official_pair(request: Request, gold_sql: str, notify) -> dict:
    """BIRD's own sequence on a private copy: the prediction, then the gold, on one writable connection, never
    committed; both results inline.  `request.out_csv` names the copy (in the work folder), removed after."""
    from evaluators.execution.opener import sqlite_private_copy
    from evaluators.execution.row_files import encode

    copy = Path(request.out_csv)
    copy.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = sqlite_private_copy(str(request.db_ref), str(copy), limit_of(request.settings))
        deadline = time.monotonic() + request.timeout_s
        con.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_EVERY)
        notify({"event": "started"})
        try:
            cursor = con.cursor()
            outcome = {}
            for label, sql in (("pred", request.sql), ("gold", gold_sql)):
                try:
                    cursor.execute(sql)
                    rows = fetch_rows(cursor, limit_of(request.settings)) if cursor.description else []
                    outcome[label] = [[encode(v) for v in row] for row in rows]
                except QueryFailed as exc:
                    raise QueryFailed(exc.reason, f"{label}: {exc.detail}") from None
                except (sqlite3.Error, sqlite3.Warning, ValueError) as exc:
                    reason = "timeout" if time.monotonic() > deadline else _copy_reason(exc)
                    raise QueryFailed(reason, f"{label}: {base.first_line(exc)}") from None
            return outcome
        finally:
            con.rollback()
            con.close()
    finally:
        for leftover in (
            copy,
            copy.with_name(copy.name + "-journal"),
            copy.with_name(copy.name + "-wal"),
            copy.with_name(copy.name + "-shm"),
        ):
            leftover.unlink(missing_ok=True)


def _copy_reason(exc: Exception) -> str:
    """The private copy reached its page cap (`sqlite_private_copy`): a disk limit, not an SQL error."""
    return "disk_limit" if "database or disk is full" in str(exc).lower() else "exec_error"


def time_pair(request: Request, gold_sql: str, iterations: int, notify) -> dict:
    """Execute-and-fetch times of the prediction then the gold, `iterations` times each, alternating as the
    BIRD VES scripts do, on one read-only connection (opening it is not timed)."""
    con = connect(request)
    deadline = time.monotonic() + request.timeout_s
    con.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_EVERY)
    notify({"event": "started"})
    pred_times: list[float] = []
    gold_times: list[float] = []
    try:
        for _ in range(iterations):
            for sql, sink in ((request.sql, pred_times), (gold_sql, gold_times)):
                started = time.perf_counter()
                con.execute(sql).fetchall()
                sink.append(time.perf_counter() - started)
    except sqlite3.Error as exc:
        raise QueryFailed("timeout" if time.monotonic() > deadline else "exec_error", base.first_line(exc)) from None
    finally:
        con.close()
    return {"pred_times": pred_times, "gold_times": gold_times}
