"""What the PostgreSQL and MySQL backends share: connection settings, and why each is safe.

Connection settings come, first to last, from the gold's `db` (the database name), a DSN/URL given with
`--postgres-dsn` / `--mysql-dsn`, and the standard places: PostgreSQL's `PGHOST`, `PGPORT`, `PGUSER`,
`PGPASSWORD`, `PGDATABASE`, `~/.pgpass` and service files (libpq reads them itself); MySQL's option
file (`~/.my.cnf`, `[client]`) and `MYSQL_HOST`, `MYSQL_TCP_PORT`, `MYSQL_USER`, `MYSQL_PWD`.  Passwords
are never printed: they are collected as secrets for redaction.
"""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qsl, unquote, urlsplit

PG_VARIABLES = (
    "PGHOST",
    "PGHOSTADDR",
    "PGPORT",
    "PGUSER",
    "PGPASSWORD",
    "PGDATABASE",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGSSLMODE",
    "PGCONNECT_TIMEOUT",
)
MYSQL_VARIABLES = ("MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT", "MYSQL_USER", "MYSQL_PWD")

# A server with no room for another session (its max_connections reached by other clients, a role's or a
# user's connection limit, a server still starting) is in a passing state, not a fault of the answer: a
# connection refused for it is tried again for up to ROOM_WAIT_S.  Scored as the refusal it was, an answer
# lost its point whenever the machine's other work filled the server (CI: 19 of 34 instead of 20).
PG_NO_ROOM = frozenset({"53300", "57P03"})  # too_many_connections, cannot_connect_now
MYSQL_NO_ROOM = frozenset({1040, 1203})  # too many connections: the server's, the user's
_MYSQL_LIMIT_REACHED = 1226  # an account's resource: only its max_user_connections passes (not the hourly ones)
ROOM_WAIT_S = 30.0  # within the worker's start-up allowance (worker.STARTUP_ALLOWANCE_S)


# libpq gives no SQLSTATE for a refused login (psycopg's `sqlstate` is None then), only the server's words
_PG_NO_ROOM_WORDS = re.compile(
    r"too many (?:clients|connections)|remaining connection slots are reserved"
    r"|the database system is (?:starting up|not yet accepting connections|in recovery mode)"
)


def pg_no_room(exc: BaseException) -> bool:
    return getattr(exc, "sqlstate", None) in PG_NO_ROOM or bool(_PG_NO_ROOM_WORDS.search(str(exc)))


def mysql_no_room(exc: BaseException) -> bool:
    code = exc.args[0] if exc.args else None  # pymysql: (code, message)
    return code in MYSQL_NO_ROOM or (code == _MYSQL_LIMIT_REACHED and "max_user_connections" in str(exc))


def when_room(connect, no_room, wait_s: float = ROOM_WAIT_S, make_room=None):
    """`connect()`, called again while the server refuses it only for want of room (`no_room(exc)`), with
    pauses growing from 10 ms to 0.25 s, until `wait_s` have passed; then its refusal is raised.  At the first
    refusal `make_room()` closes what the caller holds idle (a worker's kept sessions): a run's workers each
    keeping sessions would otherwise wait on each other's.  A run that is stopping (a signal came: the
    connection is a clean-up's) does not wait."""
    from evaluators import signals

    deadline = time.monotonic() + wait_s
    pause = 0.01
    while True:
        try:
            return connect()
        except Exception as exc:
            if not no_room(exc) or signals.received() or time.monotonic() + pause > deadline:
                raise
        if make_room is not None:
            make_room, then = None, make_room
            then()
            continue
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def url_parts(dsn: str | None) -> dict:
    """host, port, user, password, database (and query options) of a `scheme://user:pass@host:port/db?x=y` URL."""
    if not dsn or "://" not in dsn:
        return {}
    parts = urlsplit(dsn)
    found = {
        "host": parts.hostname,
        "port": parts.port,
        "user": unquote(parts.username or "") or None,
        "password": unquote(parts.password or "") or None,
        "database": unquote(parts.path.lstrip("/")) or None,
    }
    found.update(dict(parse_qsl(parts.query)))
    return {k: v for k, v in found.items() if v is not None}


def server_secrets(dsn: str | None, request, password_variable: str) -> list[str]:
    """The passwords a PostgreSQL/MySQL request could carry: its DSN's and the password variable's."""
    return dsn_secrets(dsn) + [v for k, v in request.environment.items() if k == password_variable and v]


def dsn_secrets(dsn: str | None) -> list[str]:
    """The password of a URL DSN (its userinfo, as written and decoded, and a `password` query option), or of a
    `key=value` libpq string (a quoted value may hold spaces and escaped quotes)."""
    if not dsn:
        return []
    if "://" in dsn:
        parts = urlsplit(dsn)
        found = [parts.password, unquote(parts.password)] if parts.password else []
        return found + [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
    found = []
    for match in _LIBPQ_PASSWORD.finditer(dsn):
        value = match.group(1)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:])
        found += [value, *(piece for piece in value.split() if len(piece) >= 4)] if value else []
    return [v for v in found if v]


_LIBPQ_PASSWORD = re.compile(r"(?i)(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'?|\S+)")
