"""PostgreSQL through psycopg 3 (the `postgres` extra).

Read-only and stoppable: every request runs in a transaction begun `READ ONLY` (so writes fail on the
server) with `statement_timeout` set to the request's timeout (so the server stops the query itself), and is
rolled back; the backend pid goes to the parent first, so a worker that is killed has its query cancelled
from a fresh connection (`pg_cancel_backend`, then `pg_terminate_backend`).  Nothing is committed.

Predictions run as a login role of their worker's own (`worker_role`): a session may signal (cancel,
terminate) the sessions of roles it has the privileges of, so answers that shared the grader's role could
kill one another's queries, and the gold's.  The grader's role (the DSN's) creates `<role>_a_<random>` the
first time a worker runs a prediction on a server, a member of `<role>_answers` (what answers may read) and
of nothing else, at most one connection, with a random password valid for the timeout plus ten minutes,
and makes itself a member of it (to cancel it).  No two workers share a role, so no answer reaches another
worker's session or the gold's.  The role is dropped when the worker ends (`drop_worker_roles`, at its
exit), by the parent when it kills the worker (a timeout, Ctrl-C: `stop`), and replaced before its
password would lapse.  `evaluate.py db prepare` sets the roles up (`execution/pg_roles.py`) and drops
those of a grader killed outright; gold queries run as the grader's role itself.

A worker keeps its session open between requests (`_sessions`: one per server, database and login), so a
question costs no connection: after each request the session is rolled back and `DISCARD ALL` resets
everything an answer could leave in it outside its transaction (session settings, prepared statements,
cursors WITH HOLD, session advisory locks, LISTEN, temporary tables, SET ROLE); a session that fails to
reset is closed.  A login with scram-sha-256 costs a key derivation on both sides: the official scorer
pays it for every question.
"""

from __future__ import annotations

import atexit
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from evaluators.execution import pg_values
from evaluators.execution.backends import base
from evaluators.execution.backends.base import QueryFailed, Request, first_line
from evaluators.execution.backends.server_base import ServerBackend
from evaluators.execution.backends.servers import PG_VARIABLES, pg_no_room, when_room
from evaluators.execution.backends.settings import PostgresSettings
from evaluators.execution.memory import fetch_rows, limit_of
from evaluators.execution.pg_roles import ANSWERS_SUFFIX, ROLE_GRACE_S, drop_role, make_answer_role

_TIMEOUT_STATE = "57014"  # query_canceled: statement_timeout or a cancel
# Refusals of an answer's text that its official reading may change: syntax_error (several statements, to the
# extended protocol), read_only_sql_transaction (writes, and FOR UPDATE, which the official reading cuts), and
# the driver's own (no SQLSTATE: COPY, which breaks a pipeline).
_READING_STATES = ("42601", "25006", None)
_RENEW_MARGIN_S = 60  # a role whose password lapses within the timeout plus this is replaced first
_HINT = "prepare it once with `evaluate.py db prepare --engine postgres` (docs/backends.md)"


class PostgresBackend(ServerBackend):
    name = "postgres"  # also the dialect: COPY ... TO PROGRAM, DO blocks are never a prediction
    driver = ("psycopg", "psycopg[binary]", "postgres")
    settings_class = PostgresSettings
    password_variable = "PGPASSWORD"

    def login(self, psycopg, request: Request):
        return contextlib.nullcontext({}) if request.trusted else _answer_login(psycopg, request)

    def connect(self, psycopg, request: Request, login: dict):
        """The worker's open session for this server, database and login (lent out while it runs), or a new one,
        with the request's read-only transaction begun: that proves a kept session still alive (the server
        may have ended it meanwhile: restarted, idle_session_timeout), else a new one takes its place."""
        kept = _sessions.pop(_session_key(request, login), None)
        if kept is not None:
            try:
                _begin(kept, request)
                return kept
            except psycopg.OperationalError:
                kept.close()
        con = _connect(psycopg, request, login=login)
        _begin(con, request)
        return con

    def release(self, psycopg, con, request: Request, login: dict) -> None:
        """Kept for the worker's next request once nothing of this one is left in it: rolled back, then
        `DISCARD ALL` (what survives a rollback: session advisory locks, prepared statements, cursors WITH
        HOLD, settings and the role set outside the transaction, temporary tables); closed if that fails."""
        try:
            con.rollback()
            con.execute("DISCARD ALL")
        except Exception:
            con.close()
            return
        _sessions[_session_key(request, login)] = con

    def admin_connect(self, psycopg, request: Request):
        return _connect(psycopg, request)

    def handle(self, con, login: dict) -> dict:
        return {"backend_pid": con.info.backend_pid, "role": login.get("user")}

    def begin(self, psycopg, con, request: Request) -> None:
        """Begun by `connect` already."""

    def statements(self, request: Request) -> list[str] | None:
        if request.trusted or not PostgresSettings.of(request).official_statements:
            return super().statements(request)
        return None  # BIRD's answers: as_given

    def as_given(self, psycopg, con, request: Request) -> tuple[list | None, list]:
        """A BIRD answer's text sent as it is, as one statement of the extended protocol (a pipeline: psycopg
        sends a text without parameters by the simple protocol otherwise), in the read-only transaction: the
        server itself refuses several statements (so no answer can end the transaction and write after it),
        writes, and what its role may not do.  Where the server's refusal is one the official driver's reading
        of the text may change (several statements, the last one's rows counting; `FOR UPDATE`, cut; a syntax
        error; a statement with no result; an empty text; COPY), that reading decides, as it did for every
        answer before (`official_statements.plan`, parsed by sqlglot): refused in its words, or its statements
        run in a new transaction.  Rows are fetched as a client cursor's, as before, under the fetch budget."""
        cursor = con.cursor()
        try:
            with con.pipeline():
                cursor.execute(request.sql)
        except psycopg.Error as exc:
            if getattr(exc, "sqlstate", None) not in _READING_STATES:
                raise
        else:
            if cursor.description is not None:
                return [d.name for d in cursor.description], fetch_rows(cursor, limit_of(request.settings))
        finally:
            _undo_prepared(con)
        statements = base.statements_to_run(request, self.name)  # QueryFailed: refused
        con.rollback()
        _begin(con, request)
        return self._run_statements(psycopg, con, request, statements)

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
        """The killed worker's query cancelled, then its session ended, then its role dropped (the worker
        that held it is gone); a handle without a backend pid (a worker that died idle) only drops the role."""
        words = []
        if handle.get("backend_pid") is not None:
            pid = int(handle["backend_pid"])
            with con.cursor() as cursor:
                cursor.execute("SELECT pg_cancel_backend(%s)", (pid,))
                time.sleep(0.2)
                cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
            words.append(f"cancelled backend {pid}")
        if isinstance(handle.get("role"), str):
            drop_role(psycopg, con, handle["role"])
            words.append(f"dropped the role {handle['role']}")
        return " and ".join(words) or "nothing to stop"


@contextlib.contextmanager
def _answer_login(psycopg, request: Request):
    yield worker_role(psycopg, request)


@dataclass
class _HeldRole:
    name: str
    password: str
    lapses_at: float  # time.monotonic() by which its password is no longer valid
    request: Request  # how to reach its server again, to drop it


_held: dict[tuple, _HeldRole] = {}  # this worker's answer role per server and database (one request at a time)
_sessions: dict[tuple, Any] = {}  # this worker's idle sessions: _session_key -> an open connection


def _session_key(request: Request, login: dict) -> tuple:
    settings = PostgresSettings.of(request)
    where = (settings.dsn, request.db_ref, tuple(sorted(request.environment.items())))
    return (*where, settings.psycopg2_values, login.get("user"))  # the values it loads are set at connect


def _close_sessions(user: str | None) -> None:
    """The idle sessions logged in as `user` (None: every one) closed, before their role is dropped."""
    for key in [key for key in _sessions if user is None or key[-1] == user]:
        _sessions.pop(key).close()


def _release_sessions() -> None:
    """Every idle session closed: a worker keeps up to two (the gold's and its answer role's, where the official
    loop holds one connection a process at a time), which hold server slots another worker may be waiting for."""
    _close_sessions(None)


base.IDLE_RELEASES.append(_release_sessions)


def worker_role(psycopg, request: Request) -> dict:
    """This worker's answer role on the request's server and database: made at its first prediction there,
    then reused; replaced when its password would lapse before this query could end."""
    key = (PostgresSettings.of(request).dsn, request.db_ref, tuple(sorted(request.environment.items())))
    held = _held.get(key)
    if held is not None and held.lapses_at - time.monotonic() < request.timeout_s + _RENEW_MARGIN_S:
        _drop_held(psycopg, _held.pop(key))
        held = None
    if held is None:
        seconds = int(request.timeout_s) + ROLE_GRACE_S
        started = time.monotonic()
        admin = _connect(psycopg, request)
        try:
            name, password = make_answer_role(admin, ANSWERS_SUFFIX, seconds, _HINT)
        finally:
            admin.close()
        if not _held:
            atexit.register(drop_worker_roles, psycopg)
        held = _held[key] = _HeldRole(name, password, started + seconds, request)
    return {"user": held.name, "password": held.password}


def drop_worker_roles(psycopg) -> None:
    """At the worker's end: every answer role it made is dropped (a killed worker's: by the parent, `stop`)."""
    _close_sessions(None)
    while _held:
        _drop_held(psycopg, _held.popitem()[1])


def _drop_held(psycopg, held: _HeldRole) -> None:
    _close_sessions(held.name)
    try:
        admin = _connect(psycopg, held.request)
    except QueryFailed:
        return  # the server is gone: `db prepare` drops what is left
    try:
        drop_role(psycopg, admin, held.name)
    finally:
        admin.close()


def _undo_prepared(con) -> None:
    """An answer that ended the transaction it ran in (`COMMIT`, `PREPARE TRANSACTION` where the server allows
    prepared transactions): what it prepared is rolled back, not left holding its locks."""
    from psycopg import pq, sql

    if con.closed or con.info.transaction_status != pq.TransactionStatus.IDLE:
        return
    found = con.execute(
        "SELECT gid FROM pg_prepared_xacts WHERE owner = session_user AND database = current_database()"
    ).fetchall()
    for (gid,) in found:
        con.execute(sql.SQL("ROLLBACK PREPARED {}").format(sql.Literal(gid)))


def _begin(con, request: Request) -> None:
    """The read-only transaction, with a snapshot taken (`SELECT`): from then on no statement can set it
    READ WRITE."""
    con.execute(f"BEGIN READ ONLY; SET LOCAL statement_timeout = {max(1, int(request.timeout_s * 1000))}; SELECT")


def _connect(psycopg, request: Request, login: dict | None = None):
    """A connection from the DSN and the standard PG* variables (libpq reads ~/.pgpass itself); `login`:
    another user and password on the same server and database (an answer's role).  In autocommit: a request
    begins its own read-only transaction (`begin`); nothing is prepared by the driver behind our back.  A server
    without room for it: this process's idle sessions go first, then it waits (`servers.when_room`)."""
    options = {k.lower()[2:]: v for k, v in request.environment.items() if k in PG_VARIABLES and v}
    options = {("dbname" if k == "database" else k): v for k, v in options.items()}
    if request.db_ref:
        options["dbname"] = request.db_ref
    options.update(login or {})
    context = _adapters(psycopg, PostgresSettings.of(request).psycopg2_values)
    dsn = PostgresSettings.of(request).dsn or ""
    try:  # a worker's next login as its role also waits out its last session's end (53300 too)
        return when_room(
            lambda: psycopg.connect(
                dsn, connect_timeout=10, context=context, autocommit=True, prepare_threshold=None, **options
            ),
            pg_no_room,
            make_room=_release_sessions,
        )
    except psycopg.Error as exc:
        raise QueryFailed("no_database", f"cannot connect to PostgreSQL: {first_line(exc)}") from None


_ADAPTERS: dict[bool, object] = {}


def _adapters(psycopg, psycopg2_values: bool):
    """The loaders every connection of this process starts from (`pg_values`: psycopg2's values for the
    official scorers, else infinity dates only), registered once: registering them on each connection cost
    5 ms of a question's CPU."""
    template = _ADAPTERS.get(psycopg2_values)
    if template is None:
        from psycopg.adapt import AdaptersMap

        template = AdaptersMap(psycopg.adapters)  # an adapting context of its own (`.adapters` is itself)
        (pg_values.load_as_psycopg2 if psycopg2_values else pg_values.load_infinity)(template)
        _ADAPTERS[psycopg2_values] = template
    return template
