"""MySQL and MariaDB through PyMySQL (the `mysql` extra).

Read-only and stoppable: every query runs in `START TRANSACTION READ ONLY` and is rolled back, so writes
to tables fail on the server; the server stops a query itself at the timeout (`max_statement_time` on
MariaDB, `max_execution_time` on MySQL, whichever the server knows); the connection id goes to the
parent first, so a worker that is killed has its query stopped from a fresh connection (`KILL QUERY`).
"""

from __future__ import annotations

import time
from pathlib import Path

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
from evaluators.execution.backends.servers import MYSQL_VARIABLES, server_secrets, url_parts
from evaluators.execution.memory import fetch_rows, limit_of

_TIMEOUT_ERRORS = {1969, 3024, 1317}  # MariaDB max_statement_time, MySQL max_execution_time, query interrupted


class MySQLBackend(Backend):
    name = "mysql"
    kill_grace_s = 2.0
    cancels_on_kill = True

    def secrets(self, request: Request) -> list[str]:
        return server_secrets(request, "mysql_dsn", "MYSQL_PWD")

    def run(self, request: Request, notify) -> Outcome:
        pymysql = import_driver("pymysql", "PyMySQL", "mysql")
        statements = statements_to_run(request, "mysql")  # SELECT ... INTO OUTFILE, procedures: never a prediction
        con = _connect(pymysql, request)
        try:
            notify({"event": "handle", "connection_id": con.thread_id()})
            cursor = con.cursor()
            _set_timeout(pymysql, cursor, request.timeout_s)
            cursor.execute("START TRANSACTION READ ONLY")
            notify({"event": "started"})
            started = time.perf_counter()
            try:
                columns, rows = _run_statements(pymysql, con, cursor, statements, limit_of(request.settings))
            except pymysql.MySQLError as exc:
                code = exc.args[0] if exc.args else None
                if code in _TIMEOUT_ERRORS:
                    raise QueryFailed("timeout", f"stopped by the server after {request.timeout_s:g} s") from None
                raise QueryFailed("exec_error", first_line(exc.args[1] if len(exc.args) > 1 else exc)) from None
            seconds = time.perf_counter() - started
            con.rollback()
            return keep_result(request, lambda: records_frame(rows, columns), columns, rows, query_seconds=seconds)
        finally:
            con.close()

    def cancel(self, request: Request, handle: dict) -> str:
        pymysql = import_driver("pymysql", "PyMySQL", "mysql")
        con = _connect(pymysql, request)
        try:
            con.cursor().execute(f"KILL QUERY {int(handle['connection_id'])}")
            return f"killed the query of connection {handle['connection_id']}"
        finally:
            con.close()


def _run_statements(pymysql, con, cursor, statements: list[str], limit_mb: int) -> tuple[list | None, list]:
    """The last statement's columns and rows (none for a text of comments only); the rows through an
    unbuffered cursor, in batches under the fetch budget (memory.py): the default cursor would read the
    whole result into memory first."""
    for statement in statements[:-1]:  # SET @x = ...: what the official drivers run first
        cursor.execute(statement)
    if not statements:
        return None, []
    unbuffered = con.cursor(pymysql.cursors.SSCursor)
    unbuffered.execute(statements[-1])
    columns = [d[0] for d in unbuffered.description] if unbuffered.description else None
    return columns, ([tuple(r) for r in fetch_rows(unbuffered, limit_mb)] if columns is not None else [])


def _set_timeout(pymysql, cursor, timeout_s: float) -> None:
    try:
        cursor.execute(f"SET SESSION max_statement_time = {max(0.001, timeout_s):.3f}")  # MariaDB, seconds
    except pymysql.MySQLError:
        cursor.execute(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")  # MySQL, ms


def _connect(pymysql, request: Request):
    """A connection from the URL DSN, the MYSQL_* variables and the client option file (~/.my.cnf)."""
    env = {k: v for k, v in request.environment.items() if k in MYSQL_VARIABLES and v}
    options: dict = {
        "host": env.get("MYSQL_HOST"),
        "user": env.get("MYSQL_USER"),
        "password": env.get("MYSQL_PWD"),
        "unix_socket": env.get("MYSQL_UNIX_PORT"),
    }
    if env.get("MYSQL_TCP_PORT"):
        options["port"] = int(env["MYSQL_TCP_PORT"])
    parts = url_parts(request.setting("mysql_dsn"))
    options.update({k: parts[k] for k in ("host", "port", "user", "password", "database") if k in parts})
    if parts.get("unix_socket"):
        options["unix_socket"] = parts["unix_socket"]
    if request.db_ref:
        options["database"] = request.db_ref
    option_file = Path.home() / ".my.cnf"
    if option_file.is_file():
        options["read_default_file"] = str(option_file)
    options = {k: v for k, v in options.items() if v is not None}
    try:
        return pymysql.connect(connect_timeout=10, autocommit=False, charset="utf8mb4", **options)
    except pymysql.MySQLError as exc:
        raise QueryFailed("no_database", f"cannot connect to MySQL: {first_line(exc)}") from None
