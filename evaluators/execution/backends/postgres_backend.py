"""PostgreSQL through psycopg 3 (the `postgres` extra).

Read-only and stoppable: the connection is read-only (every transaction `READ ONLY`, so writes fail on
the server), `statement_timeout` is set to the request's timeout so the server stops the query itself,
and the backend pid goes to the parent first, so a worker that is killed has its query cancelled from a
fresh connection (`pg_cancel_backend`, then `pg_terminate_backend`).  Nothing is committed.
"""

from __future__ import annotations

import time

from evaluators.execution.backends.base import (
    Backend,
    Outcome,
    QueryFailed,
    Request,
    first_line,
    import_driver,
    keep_result,
    records_frame,
    statements_to_run,
)
from evaluators.execution.backends.servers import PG_VARIABLES, server_secrets

_TIMEOUT_STATE = "57014"  # query_canceled: statement_timeout or a cancel


class PostgresBackend(Backend):
    name = "postgres"
    kill_grace_s = 2.0
    cancels_on_kill = True

    def secrets(self, request: Request) -> list[str]:
        return server_secrets(request, "postgres_dsn", "PGPASSWORD")

    def run(self, request: Request, notify) -> Outcome:
        psycopg = import_driver("psycopg", "psycopg[binary]", "postgres")
        statements = statements_to_run(request, "postgres")  # COPY ... TO PROGRAM, DO blocks: never a prediction
        con = _connect(psycopg, request)
        try:
            notify({"event": "handle", "backend_pid": con.info.backend_pid})
            notify({"event": "started"})
            with con.cursor() as cursor:
                cursor.execute(f"SET statement_timeout = {max(1, int(request.timeout_s * 1000))}")
                started = time.perf_counter()
                try:
                    for statement in statements:  # psycopg2 returns the last statement's rows
                        cursor.execute(statement)
                    columns = [d.name for d in cursor.description] if cursor.description else None
                    rows = cursor.fetchall() if columns is not None else []
                except psycopg.Error as exc:
                    if getattr(exc, "sqlstate", None) == _TIMEOUT_STATE:
                        raise QueryFailed("timeout", f"stopped by the server after {request.timeout_s:g} s") from None
                    raise QueryFailed("exec_error", first_line(exc)) from None
                seconds = time.perf_counter() - started
            con.rollback()
            return keep_result(request, lambda: records_frame(rows, columns), columns, rows, query_seconds=seconds)
        finally:
            con.close()

    def cancel(self, request: Request, handle: dict) -> str:
        psycopg = import_driver("psycopg", "psycopg[binary]", "postgres")
        con = _connect(psycopg, request, read_only=False)
        try:
            pid = int(handle["backend_pid"])
            with con.cursor() as cursor:
                cursor.execute("SELECT pg_cancel_backend(%s)", (pid,))
                time.sleep(0.2)
                cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
            return f"cancelled backend {pid}"
        finally:
            con.close()


def _connect(psycopg, request: Request, read_only: bool = True):
    """A connection from the DSN and the standard PG* variables (libpq reads ~/.pgpass itself)."""
    options = {k.lower()[2:]: v for k, v in request.environment.items() if k in PG_VARIABLES and v}
    options = {("dbname" if k == "database" else k): v for k, v in options.items()}
    if request.db_ref:
        options["dbname"] = request.db_ref
    try:
        con = psycopg.connect(request.setting("postgres_dsn") or "", connect_timeout=10, **options)
    except psycopg.Error as exc:
        raise QueryFailed("no_database", f"cannot connect to PostgreSQL: {first_line(exc)}") from None
    con.read_only = read_only
    _psycopg2_loaders(psycopg, con, bool(request.setting("postgres_record_text")))
    return con


def _psycopg2_loaders(psycopg, con, record_text: bool) -> None:
    """Where psycopg 3 cannot load a value psycopg2 can, load it as psycopg2 does: `infinity` timestamps and
    dates as `datetime.max` / `date.max` (`-infinity` as min; psycopg 3 raises), and with `record_text` a
    record as its text `(1,a)` (psycopg 3 makes a tuple of texts).  Text format only, the cursor's default."""
    import datetime as dt

    from psycopg.types.datetime import DateLoader, TimestampLoader, TimestamptzLoader

    def infinite(base, high, low):
        class Loader(base):
            def load(self, data):
                text = bytes(data)
                if text == b"infinity":
                    return high
                if text == b"-infinity":
                    return low
                return super().load(data)

        return Loader

    utc = dt.UTC
    con.adapters.register_loader("date", infinite(DateLoader, dt.date.max, dt.date.min))
    con.adapters.register_loader("timestamp", infinite(TimestampLoader, dt.datetime.max, dt.datetime.min))
    con.adapters.register_loader(
        "timestamptz",
        infinite(TimestamptzLoader, dt.datetime.max.replace(tzinfo=utc), dt.datetime.min.replace(tzinfo=utc)),
    )
    if record_text:

        class RecordText(psycopg.adapt.Loader):
            def load(self, data):
                return bytes(data).decode(con.info.encoding if con.info.encoding != "ascii" else "utf-8")

        con.adapters.register_loader("record", RecordText)
