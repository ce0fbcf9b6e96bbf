"""PostgreSQL through psycopg 3 (the `postgres` extra).

Read-only and stoppable: the connection is read-only (every transaction `READ ONLY`, so writes fail on
the server), `statement_timeout` is set to the request's timeout so the server stops the query itself,
and the backend pid goes to the parent first, so a worker that is killed has its query cancelled from a
fresh connection (`pg_cancel_backend`, then `pg_terminate_backend`).  Nothing is committed.

Each prediction runs as a login role of its own (`answer_role`): a session may signal (cancel, terminate)
the sessions of roles it has the privileges of, so answers that shared the grader's role could kill one
another's queries, and the gold's.  The grader's role (the DSN's) creates `<role>_a_<random>` for one
query, a member of `<role>_answers` (what answers may read) and of nothing else, with a random password
valid for the query's time, makes itself a member of it (to cancel it), and drops it after.  `evaluate.py
db prepare` sets the roles up (`execution/pg_roles.py`); gold queries run as the grader's role itself.
"""

from __future__ import annotations

import contextlib
import time

from evaluators.execution import pg_values
from evaluators.execution.backends.base import QueryFailed, Request, first_line
from evaluators.execution.backends.server_base import ServerBackend
from evaluators.execution.backends.servers import PG_VARIABLES
from evaluators.execution.backends.settings import PostgresSettings
from evaluators.execution.memory import fetch_rows
from evaluators.execution.pg_roles import ANSWERS_SUFFIX, ROLE_GRACE_S, drop_role, make_answer_role

_TIMEOUT_STATE = "57014"  # query_canceled: statement_timeout or a cancel


class PostgresBackend(ServerBackend):
    name = "postgres"  # also the dialect: COPY ... TO PROGRAM, DO blocks are never a prediction
    driver = ("psycopg", "psycopg[binary]", "postgres")
    settings_class = PostgresSettings
    password_variable = "PGPASSWORD"

    def login(self, psycopg, request: Request):
        return contextlib.nullcontext({}) if request.trusted else _answer_login(psycopg, request)

    def connect(self, psycopg, request: Request, login: dict):
        return _connect(psycopg, request, login=login)

    def admin_connect(self, psycopg, request: Request):
        con = _connect(psycopg, request, read_only=False)
        con.autocommit = True
        return con

    def handle(self, con, login: dict) -> dict:
        return {"backend_pid": con.info.backend_pid, "role": login.get("user")}

    def begin(self, psycopg, con, request: Request) -> None:
        con.execute(f"SET statement_timeout = {max(1, int(request.timeout_s * 1000))}")  # read-only: _connect

    def last_rows(self, psycopg, con, request: Request, statement: str, limit_mb: int) -> tuple[list | None, list]:
        """A prediction that is one query runs in a server-side cursor, fetched in batches under the fetch
        budget: a client cursor would have libpq buffer the whole result first.  Gold, and the official
        drivers' other statements (SHOW, several statements), use a client cursor, still under the worker's cap."""
        server_side = not request.trusted and not PostgresSettings.of(request).official_statements
        with con.cursor(**({"name": "graded"} if server_side else {})) as cursor:
            cursor.execute(statement)
            columns = [d.name for d in cursor.description] if cursor.description else None
            return columns, fetch_rows(cursor, limit_mb) if columns is not None else []

    def driver_error(self, psycopg) -> type[Exception]:
        return psycopg.Error

    def timed_out(self, exc: Exception) -> bool:
        return getattr(exc, "sqlstate", None) == _TIMEOUT_STATE

    def stop(self, psycopg, con, handle: dict) -> str:
        pid = int(handle["backend_pid"])
        with con.cursor() as cursor:
            cursor.execute("SELECT pg_cancel_backend(%s)", (pid,))
            time.sleep(0.2)
            cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
        words = f"cancelled backend {pid}"
        if isinstance(handle.get("role"), str):
            drop_role(psycopg, con, handle["role"])
            words += f" and dropped its role {handle['role']}"
        return words


@contextlib.contextmanager
def _answer_login(psycopg, request: Request):
    with answer_role(psycopg, request) as (role, password):
        yield {"user": role, "password": password}


@contextlib.contextmanager
def answer_role(psycopg, request: Request):
    """(name, password) of a login role made for this one answer, dropped when the block ends."""
    admin = _connect(psycopg, request, read_only=False)
    admin.autocommit = True
    role = None
    try:
        hint = "prepare it once with `evaluate.py db prepare --engine postgres` (docs/backends.md)"
        role, password = make_answer_role(admin, ANSWERS_SUFFIX, int(request.timeout_s) + ROLE_GRACE_S, hint)
        yield role, password
    finally:
        try:
            if role is not None:
                drop_role(psycopg, admin, role)
        finally:
            admin.close()


def _connect(psycopg, request: Request, read_only: bool = True, login: dict | None = None):
    """A connection from the DSN and the standard PG* variables (libpq reads ~/.pgpass itself); `login`:
    another user and password on the same server and database (an answer's role)."""
    options = {k.lower()[2:]: v for k, v in request.environment.items() if k in PG_VARIABLES and v}
    options = {("dbname" if k == "database" else k): v for k, v in options.items()}
    if request.db_ref:
        options["dbname"] = request.db_ref
    options.update(login or {})
    try:
        con = psycopg.connect(PostgresSettings.of(request).dsn or "", connect_timeout=10, **options)
    except psycopg.Error as exc:
        raise QueryFailed("no_database", f"cannot connect to PostgreSQL: {first_line(exc)}") from None
    con.read_only = read_only
    if PostgresSettings.of(request).psycopg2_values:
        pg_values.load_as_psycopg2(con)
    else:
        pg_values.load_infinity(con)
    return con
