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
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.execution.backends.postgres_backend import ANSWER_ROLE_INFIX, ANSWERS_SUFFIX


@dataclass(frozen=True)
class Prepared:
    role: str
    answers_role: str
    read_all: bool
    dropped: int  # answer roles left behind by an earlier run

    def to_text(self) -> str:
        reads = "pg_read_all_data" if self.read_all else "nothing yet (GRANT SELECT on your tables to it)"
        return (
            f"role {self.role!r}: LOGIN CREATEROLE, no superuser, no pg_signal_backend (gold runs as it)\n"
            f"role {self.answers_role!r}: NOLOGIN, reads {reads}; {self.role!r} holds it WITH ADMIN OPTION\n"
            f"each answer: a role {self.role}{ANSWER_ROLE_INFIX}<random> of its own, dropped after "
            f"({self.dropped} left from earlier runs dropped)\n"
        )


def prepare_postgres(admin_dsn: str, role: str = "grader", password: str | None = None, read_all: bool = True):
    """Make (or bring to this state) the roles of the module's docstring; ValueError for a superuser `role`."""
    import psycopg

    answers = role + ANSWERS_SUFFIX
    with psycopg.connect(admin_dsn, autocommit=True, connect_timeout=10) as con:
        _grader_role(con, role, password)
        _answers_role(con, role, answers, read_all)
        dropped = _drop_left_answer_roles(con, role)
    return Prepared(role, answers, read_all, dropped)


def _grader_role(con, role: str, password: str | None) -> None:
    from psycopg import sql

    found = con.execute(
        "SELECT rolsuper, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = %s", (role,)
    ).fetchone()
    if found and found[0]:
        raise ValueError(f"role {role!r} is a superuser: grade as another role (--role), never as a superuser")
    # Naming SUPERUSER, REPLICATION or BYPASSRLS in ALTER ROLE takes a superuser, even to say NO: an existing
    # role gets the NO... of those it holds (the administrator must then be a superuser), a new one all.
    held = dict(zip(("REPLICATION", "BYPASSRLS"), found[1:] if found else (True, True), strict=True))
    attributes = ["LOGIN", "CREATEROLE", "NOCREATEDB", *[f"NO{name}" for name, on in held.items() if on]]
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
    """Answer roles a grader that was killed could not drop."""
    from psycopg import sql

    prefix = role + ANSWER_ROLE_INFIX
    left = [r[0] for r in con.execute("SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (prefix,))]
    for name in left:
        con.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))
    return len(left)
