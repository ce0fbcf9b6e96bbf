"""PostgreSQL databases cloned from a template for one phase, as LiveSQLBench's harness does with
`createdb --template`, and dropped after (also by name prefix, after a worker was killed).

Each clone is owned by a login role made for that phase (`answer_clone`), and everything the phase runs
(preprocess, the prediction, the test cases, clean-up: one connection, as the official harness; a test case's
helper called without one gets another, up to the harnesses' largest pool, HARNESS_POOL) runs as
that role, never as the grader's: it is a member of `<grader>_tables` (the owner of what the templates hold)
and of nothing else, with no attribute, a few connections, a capped `temp_file_limit` it cannot lift.  So an
answer cannot rename, alter or drop a template (the grader owns them), change the grader's settings or
password, signal another phase's session, read or write server files, or create databases; what it may
change on itself (its role's settings, its password, its clone's settings) is dropped with it.  The roles
are prepared by `evaluate.py db prepare --engine postgres --template ...` (execution/pg_roles.py).
"""

from __future__ import annotations

import contextlib
import time
import uuid

from evaluators.execution.backends.base import QueryFailed, Request, first_line
from evaluators.execution.backends.servers import PG_VARIABLES, pg_no_room, when_room
from evaluators.execution.backends.settings import PostgresSettings
from evaluators.execution.pg_roles import ANSWER_ROLE_INFIX, ROLE_GRACE_S, TABLES_SUFFIX, drop_role, make_answer_role

HARNESS_POOL = 10  # BIRD-CRITIC's pool of connections per database, the largest of the harnesses (LiveSQLBench: 5)

_BUSY = "55006"  # object_in_use: another session is copying or using the template at this moment
_DENIED = "42501"  # insufficient_privilege
_HINT = (
    "prepare it once with `evaluate.py db prepare --engine postgres --role ROLE --template <db>_template ...` "
    "(docs/livesql.md)"
)
_SERVER_SOURCES = ("default", "configuration file", "command line", "environment variable")


def clone_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _options(request: Request, dbname: str | None) -> dict:
    options = {k.lower()[2:]: v for k, v in request.environment.items() if k in PG_VARIABLES and v}
    options = {("dbname" if k == "database" else k): v for k, v in options.items()}
    if dbname:
        options["dbname"] = dbname
    return options


def connect(psycopg, request: Request, dbname: str | None = None, autocommit: bool = False, login=None):
    """The grader's connection (the DSN's role), or with `login` the answer role's, same server."""
    options = {**_options(request, dbname), **(login or {})}
    dsn = PostgresSettings.of(request).dsn or ""
    return when_room(lambda: psycopg.connect(dsn, connect_timeout=10, autocommit=autocommit, **options), pg_no_room)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextlib.contextmanager
def answer_clone(psycopg, request: Request, template: str, name: str):
    """A connection, as a role made for this phase, to `name`, a fresh clone of `template` it owns;
    the clone and the role are dropped when the block ends (QueryFailed `no_database`,
    `credentials_missing`)."""
    try:
        admin = connect(psycopg, request, None, autocommit=True)
    except psycopg.Error as exc:
        raise QueryFailed("no_database", f"cannot connect to PostgreSQL: {first_line(exc)}") from None
    role = None
    try:
        seconds = int(request.setting("phase_timeout_s", 60.0)) + ROLE_GRACE_S
        role, password = make_answer_role(admin, TABLES_SUFFIX, seconds, _HINT, connections=HARNESS_POOL)
        _limit_temp_files(admin, role, request.setting("disk_limit_mb"))
        try:
            _create(psycopg, admin, template, name, role)
        except psycopg.Error as exc:
            raise QueryFailed("no_database", f"cannot clone {template}: {first_line(exc)}") from None
        conn = connect(psycopg, request, name, login={"user": role, "password": password})
        try:
            yield conn
        finally:
            conn.close()
    finally:
        try:
            drop(psycopg, admin, name)  # the database first: the role owns it
        finally:
            if role is not None:
                drop_role(psycopg, admin, role)
            admin.close()


def _limit_temp_files(admin, role: str, disk_limit_mb) -> None:
    """The answer's temporary files (sorts, hashes, temporary tables spilled to disk) capped by
    `temp_file_limit` on its role: a superuser setting, so the answer cannot lift it.  Without the right to
    set it (PostgreSQL < 15 and not prepared), a server-wide cap at least as tight will do; else refused."""
    from psycopg import Error, sql

    limit_kb = int((disk_limit_mb or 1024) * 1024)
    try:
        admin.execute(sql.SQL("ALTER ROLE {} SET temp_file_limit = {}").format(sql.Identifier(role), limit_kb))
        return
    except Error as exc:
        if getattr(exc, "sqlstate", None) != _DENIED:
            raise QueryFailed(
                "exec_error", f"limiting this answer's temporary files failed: {first_line(exc)}"
            ) from None
    setting, source = admin.execute(
        "SELECT setting::bigint, source FROM pg_settings WHERE name = 'temp_file_limit'"
    ).fetchone()
    if source in _SERVER_SOURCES and 0 <= setting <= limit_kb:
        return
    words = f"the grader's role may not set temp_file_limit for this answer's role; {_HINT}"
    raise QueryFailed("credentials_missing", words)


def _create(psycopg, admin, template: str, name: str, owner: str) -> None:
    statement = f"CREATE DATABASE {_quoted(name)} TEMPLATE {_quoted(template)} OWNER {_quoted(owner)}"
    for attempt in range(20):
        try:
            admin.execute(statement)
            admin.execute(f"REVOKE CONNECT, TEMPORARY ON DATABASE {_quoted(name)} FROM PUBLIC")
            return
        except psycopg.Error as exc:
            if getattr(exc, "sqlstate", None) != _BUSY or attempt == 19:
                raise
            time.sleep(0.05 * (attempt + 1))


def drop(psycopg, admin, name: str) -> None:
    """Drop a clone, first unmarking it as a template: its owner (the answer) may have marked it, and a
    template cannot be dropped."""
    with contextlib.suppress(psycopg.Error):  # already gone
        admin.execute(f"ALTER DATABASE {_quoted(name)} IS_TEMPLATE false")
    admin.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")


def drop_prefixed(request: Request, message: dict, notify) -> dict:
    """Worker action `livesql_drop`: every clone whose name starts with the prefix (a killed worker's), and
    the answer roles that owned them."""
    import psycopg

    prefix = message["clone_prefix"]
    with connect(psycopg, request, None, autocommit=True) as con:
        found = con.execute(
            "SELECT datname, pg_get_userbyid(datdba), current_user FROM pg_database WHERE starts_with(datname, %s)",
            (prefix,),
        ).fetchall()
        for name, owner, grader in found:
            drop(psycopg, con, name)
            if owner.startswith(grader + ANSWER_ROLE_INFIX):
                drop_role(psycopg, con, owner)
    return {"dropped": [row[0] for row in found]}
