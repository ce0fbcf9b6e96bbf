"""MySQL and MariaDB through PyMySQL (the `mysql` extra).

Read-only and stoppable: every query runs in `START TRANSACTION READ ONLY` and is rolled back, so writes
to tables fail on the server; the server stops a query itself at the timeout (`max_statement_time` on
MariaDB, `max_execution_time` on MySQL, whichever the server knows); the connection id goes to the
parent first, so a worker that is killed has its query stopped from a fresh connection (`KILL QUERY`).
A statement that ran past the timeout is a timeout whatever the server answered: MariaDB stops
`BENCHMARK(10000000000, ...)` at `max_statement_time` and returns 0 as a result, without an error.
"""

from __future__ import annotations

import time
from pathlib import Path

from evaluators.execution.backends.base import QueryFailed, Request, first_line
from evaluators.execution.backends.server_base import ServerBackend
from evaluators.execution.backends.servers import MYSQL_VARIABLES, mysql_no_room, url_parts, when_room
from evaluators.execution.backends.settings import MySQLSettings
from evaluators.execution.memory import fetch_rows

_TIMEOUT_ERRORS = {1969, 3024, 1317}  # MariaDB max_statement_time, MySQL max_execution_time, query interrupted


class MySQLBackend(ServerBackend):
    name = "mysql"  # also the dialect: SELECT ... INTO OUTFILE, procedures are never a prediction
    driver = ("pymysql", "PyMySQL", "mysql")
    settings_class = MySQLSettings
    password_variable = "MYSQL_PWD"

    def connect(self, pymysql, request: Request, login: dict):
        return _connect(pymysql, request)

    def handle(self, con, login: dict) -> dict:
        return {"connection_id": con.thread_id()}

    def begin(self, pymysql, con, request: Request) -> None:
        cursor = con.cursor()
        try:
            cursor.execute(f"SET SESSION max_statement_time = {max(0.001, request.timeout_s):.3f}")  # MariaDB, s
        except pymysql.MySQLError:
            cursor.execute(f"SET SESSION max_execution_time = {max(1, int(request.timeout_s * 1000))}")  # MySQL, ms
        cursor.execute("START TRANSACTION READ ONLY")

    def last_rows(self, pymysql, con, request: Request, statement: str, limit_mb: int) -> tuple[list | None, list]:
        """Through an unbuffered cursor, in batches under the fetch budget: the default cursor would read the
        whole result into memory first."""
        started = time.monotonic()
        unbuffered = con.cursor(pymysql.cursors.SSCursor)
        unbuffered.execute(statement)
        columns = [d[0] for d in unbuffered.description] if unbuffered.description else None
        rows = [tuple(r) for r in fetch_rows(unbuffered, limit_mb)] if columns is not None else []
        if time.monotonic() - started > request.timeout_s:  # stopped and answered as if it had finished
            raise QueryFailed("timeout", f"stopped by the server after {request.timeout_s:g} s")
        return columns, rows

    def driver_error(self, pymysql) -> type[Exception]:
        return pymysql.MySQLError

    def timed_out(self, exc: Exception) -> bool:
        return bool(exc.args) and exc.args[0] in _TIMEOUT_ERRORS

    def error_text(self, exc: Exception) -> object:
        return exc.args[1] if len(exc.args) > 1 else exc

    def stop(self, pymysql, con, handle: dict) -> str:
        con.cursor().execute(f"KILL QUERY {int(handle['connection_id'])}")
        return f"killed the query of connection {handle['connection_id']}"


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
    parts = url_parts(MySQLSettings.of(request).dsn)
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
        return when_room(
            lambda: pymysql.connect(connect_timeout=10, autocommit=False, charset="utf8mb4", **options), mysql_no_room
        )
    except pymysql.MySQLError as exc:
        raise QueryFailed("no_database", f"cannot connect to MySQL: {first_line(exc)}") from None
