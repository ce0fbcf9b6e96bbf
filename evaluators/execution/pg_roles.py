"""`evaluate.py db prepare --engine postgres`: the roles the grader uses on a PostgreSQL server.

Made (or brought to this state) from an administrator's connection:

- `<role>` (default `grader`): LOGIN, CREATEROLE, and nothing else (no SUPERUSER, CREATEDB, REPLICATION,
  BYPASSRLS, no membership in `pg_signal_backend`).  The grader connects as it; gold queries run as it.
- `<role>_answers`: NOLOGIN; what answers may read.  With `read_all` (the default, PostgreSQL 14+) it is
  a member of `pg_read_all_data`; otherwise grant it SELECT on your databases yourself.  `<role>` holds it
  WITH ADMIN OPTION, so it can make answer roles members of it.
- per answer, made and dropped by the grader itself (execution/backends/postgres_backend.py):
  `<role>_a_<random>`, LOGIN with a random password valid for the query's time, a member of
  `<role>_answers` only.  An answer's session can signal (`pg_cancel_backend`, `pg_terminate_backend`)
  no other session: not other answers', not the gold's.  Answer roles left by a grader that was killed
  are dropped here.

With `templates` (`--template`, LiveSQLBench / BIRD-CRITIC on PostgreSQL, docs/livesql.md) also:

- `<role>` gets CREATEDB (it clones the templates) and, on PostgreSQL 15+, `SET` on `temp_file_limit` (so it
  can cap each answer role's temporary files; answers cannot set it back, it is a superuser setting).
- `<role>_tables`: NOLOGIN; owns every schema, table, view, sequence, routine and type inside each template
  (so inside a clone the answer may CREATE INDEX, ALTER, DROP them).  `<role>` holds it WITH ADMIN OPTION.
- each template: owned by `<role>` (never by `<role>_tables`, so no answer can rename, alter or drop it), a
  template (`IS_TEMPLATE`), CONNECT revoked from PUBLIC.
- per instance phase, made by the grader (livesql/pgclone.py): `<role>_a_<random>`, a member of
  `<role>_tables` only, owner of its clone and of nothing else, dropped with it.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass, field

from evaluators.execution.backends.base import QueryFailed, first_line

ANSWERS_SUFFIX = "_answers"  # the group role whose privileges every answer role has
ANSWER_ROLE_INFIX = "_a_"  # <grader role>_a_<12 hex digits>: one answer's role
ROLE_GRACE_S = 600  # an answer role's password stays valid this long past the query's timeout
TABLES_SUFFIX = "_tables"  # the NOLOGIN role owning what is inside the LiveSQL templates
_PRIVILEGE_STATES = ("42501", "42704")  # insufficient_privilege, undefined_object (a group not prepared)


@dataclass(frozen=True)
class Prepared:
    role: str
    answers_role: str
    read_all: bool
    dropped: int  # answer roles left behind by an earlier run
    templates: dict = field(default_factory=dict)  # LiveSQL template -> objects handed to <role>_tables

    def to_text(self) -> str:
        reads = "pg_read_all_data" if self.read_all else "nothing yet (GRANT SELECT on your tables to it)"
        createdb = " CREATEDB" if self.templates else ""
        text = (
            f"role {self.role!r}: LOGIN CREATEROLE{createdb}, no superuser, no pg_signal_backend (gold runs as it)\n"
            f"role {self.answers_role!r}: NOLOGIN, reads {reads}; {self.role!r} holds it WITH ADMIN OPTION\n"
            f"each answer: a role {self.role}{ANSWER_ROLE_INFIX}<random> of its own, dropped after "
            f"({self.dropped} left from earlier runs dropped)\n"
        )
        for name, count in self.templates.items():
            text += (
                f"template {name!r}: owned by {self.role!r}, no CONNECT for PUBLIC; its {count} objects owned by "
                f"{self.role + TABLES_SUFFIX!r} (each instance's answer role is a member, in its own clone)\n"
            )
        return text


def prepare_postgres(
    admin_dsn: str, role: str = "grader", password: str | None = None, read_all: bool = True, templates=()
):
    """Make (or bring to this state) the roles of the module's docstring; ValueError for a superuser `role`."""
    import psycopg

    answers = role + ANSWERS_SUFFIX
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as con:
        _grader_role(con, role, password, bool(templates))
        _answers_role(con, role, answers, read_all)
        dropped = _drop_left_answer_roles(con, role)
        handed = {}
        if templates:
            _tables_role(con, role)
            for name in templates:
                _template(con, role, name)
                with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10, dbname=name) as inside:
                    handed[name] = _hand_objects(inside, role + TABLES_SUFFIX)
    return Prepared(role, answers, read_all, dropped, handed)


def _grader_role(con, role: str, password: str | None, createdb: bool = False) -> None:
    from psycopg import sql

    found = con.execute(
        "SELECT rolsuper, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = %s", (role,)
    ).fetchone()
    if found and found[0]:
        raise ValueError(f"role {role!r} is a superuser: grade as another role (--role), never as a superuser")
    # Naming SUPERUSER, REPLICATION or BYPASSRLS in ALTER ROLE takes a superuser, even to say NO: an existing
    # role gets the NO... of those it holds (the administrator must then be a superuser), a new one all.
    held = dict(zip(("REPLICATION", "BYPASSRLS"), found[1:] if found else (True, True), strict=True))
    attributes = [
        "LOGIN",
        "CREATEROLE",
        "CREATEDB" if createdb else "NOCREATEDB",
        *[f"NO{name}" for name, on in held.items() if on],
    ]
    if not found:
        attributes.append("NOSUPERUSER")
    statement = sql.SQL(f"{'ALTER' if found else 'CREATE'} ROLE {{}} {' '.join(attributes)}").format(
        sql.Identifier(role)
    )
    if password is not None:
        statement = sql.SQL("{} PASSWORD {}").format(statement, sql.Literal(password))
    con.execute(statement)
    con.execute(sql.SQL("REVOKE pg_signal_backend FROM {}").format(sql.Identifier(role)))


def _answers_role(con, role: str, answers: str, read_all: bool) -> None:
    from psycopg import sql

    if not con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (answers,)).fetchone():
        con.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(answers)))
    con.execute(sql.SQL("GRANT {} TO {} WITH ADMIN OPTION").format(sql.Identifier(answers), sql.Identifier(role)))
    con.execute(sql.SQL("REVOKE pg_signal_backend FROM {}").format(sql.Identifier(answers)))
    if read_all:
        con.execute(sql.SQL("GRANT pg_read_all_data TO {}").format(sql.Identifier(answers)))


def _drop_left_answer_roles(con, role: str) -> int:
    """Answer roles a grader that was killed could not drop, and the LiveSQL clones they own."""
    from psycopg import sql

    prefix = role + ANSWER_ROLE_INFIX
    left = [r[0] for r in con.execute("SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (prefix,))]
    for name in left:
        for (database,) in con.execute("SELECT datname FROM pg_database WHERE pg_get_userbyid(datdba) = %s", (name,)):
            con.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE false").format(sql.Identifier(database)))
            con.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))  # its clone
        con.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
    return len(left)


def _tables_role(con, role: str) -> None:
    """`<role>_tables`, and the right for `<role>` to cap answer roles' temporary files (PostgreSQL 15+)."""
    from psycopg import sql

    tables = role + TABLES_SUFFIX
    if not con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (tables,)).fetchone():
        con.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(tables)))
    con.execute(sql.SQL("GRANT {} TO {} WITH ADMIN OPTION").format(sql.Identifier(tables), sql.Identifier(role)))
    if con.info.server_version >= 150000:
        con.execute(sql.SQL("GRANT SET ON PARAMETER temp_file_limit TO {}").format(sql.Identifier(role)))


def _template(con, role: str, name: str) -> None:
    from psycopg import sql

    if not con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
        raise ValueError(f"--template {name}: no such database on the server")
    database = sql.Identifier(name)
    con.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(database, sql.Identifier(role)))
    con.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true").format(database))
    con.execute(sql.SQL("REVOKE CONNECT, TEMPORARY ON DATABASE {} FROM PUBLIC").format(database))


# What a LiveSQL template holds, outside the system schemas and extensions: (kind, ALTER word, identity).
_OBJECTS = """
WITH user_ns AS (
    SELECT oid, nspname, pg_get_userbyid(nspowner) AS owner FROM pg_namespace
    WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg\\_%%'
), extension_member AS (
    SELECT classid, objid FROM pg_depend WHERE deptype = 'e'
)
SELECT 'SCHEMA', format('%%I', n.nspname) FROM user_ns n
  WHERE n.oid NOT IN (SELECT objid FROM extension_member) AND n.owner NOT IN (%(owner)s, 'pg_database_owner')
UNION ALL
SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
            WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, format('%%I.%%I', n.nspname, c.relname)
  FROM pg_class c JOIN user_ns n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AND pg_get_userbyid(c.relowner) <> %(owner)s
    AND c.oid NOT IN (SELECT objid FROM extension_member)
    AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid
             AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
UNION ALL
SELECT 'ROUTINE', p.oid::regprocedure::text FROM pg_proc p JOIN user_ns n ON n.oid = p.pronamespace
  WHERE pg_get_userbyid(p.proowner) <> %(owner)s AND p.oid NOT IN (SELECT objid FROM extension_member)
UNION ALL
SELECT CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, format('%%I.%%I', n.nspname, t.typname)
  FROM pg_type t JOIN user_ns n ON n.oid = t.typnamespace
  WHERE t.typtype IN ('e', 'd', 'r', 'c') AND pg_get_userbyid(t.typowner) <> %(owner)s
    AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
    AND t.oid NOT IN (SELECT objid FROM extension_member)
"""


def _hand_objects(con, tables: str) -> int:
    """Give `<role>_tables` what the template holds (the answers' clones inherit it); how many objects."""
    from psycopg import sql

    found = con.execute(_OBJECTS, {"owner": tables}).fetchall()
    for kind, identity in found:
        con.execute(sql.SQL(f"ALTER {kind} {identity} OWNER TO {{}}").format(sql.Identifier(tables)))
    return len(found)


def make_answer_role(admin, group_suffix: str, seconds: int, hint: str, connections: int = 1) -> tuple[str, str]:
    """A login role for one answer, made from the grader's connection `admin`: no attribute, `connections` at most,
    a random password valid `seconds`, a member of `<grader><group_suffix>` only; the grader is made a member
    of it in the same statement (to signal its session, give it a database, drop it).  (name, password); QueryFailed
    `credentials_missing` with `hint` when the grader was not prepared for it."""
    from psycopg import Error, sql

    grader, until = admin.execute("SELECT current_user, now() + make_interval(secs => %s)", (seconds,)).fetchone()
    role, password = f"{grader}{ANSWER_ROLE_INFIX}{secrets.token_hex(6)}", secrets.token_urlsafe(24)
    try:
        admin.execute(
            sql.SQL(
                "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION CONNECTION LIMIT {} "
                "PASSWORD {} VALID UNTIL {} IN ROLE {} ROLE {}"
            ).format(
                sql.Identifier(role),
                sql.Literal(int(connections)),
                sql.Literal(password),
                sql.Literal(until.isoformat()),
                sql.Identifier(grader + group_suffix),
                sql.Identifier(grader),
            )
        )
    except Error as exc:
        if getattr(exc, "sqlstate", None) in _PRIVILEGE_STATES:
            words = f"the PostgreSQL role {grader!r} cannot make a role for this answer ({first_line(exc)}); {hint}"
            raise QueryFailed("credentials_missing", words) from None
        raise QueryFailed("exec_error", f"making this answer's role failed: {first_line(exc)}") from None
    return role, password


def drop_role(psycopg, con, role: str) -> None:
    from psycopg import sql

    with contextlib.suppress(psycopg.Error):
        con.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
