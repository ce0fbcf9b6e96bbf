"""PostgreSQL databases cloned from a template for one phase, as LiveSQLBench's harness does with
`createdb --template`, and dropped after (also by name prefix, after a worker was killed)."""

from __future__ import annotations

import time
import uuid

from evaluators.execution.backends.base import Request
from evaluators.execution.backends.servers import PG_VARIABLES

_BUSY = "55006"  # object_in_use: another session is copying or using the template at this moment


def clone_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _options(request: Request, dbname: str | None) -> dict:
    options = {k.lower()[2:]: v for k, v in request.environment.items() if k in PG_VARIABLES and v}
    options = {("dbname" if k == "database" else k): v for k, v in options.items()}
    if dbname:
        options["dbname"] = dbname
    return options


def connect(psycopg, request: Request, dbname: str | None = None, autocommit: bool = False):
    return psycopg.connect(
        request.setting("postgres_dsn") or "", connect_timeout=10, autocommit=autocommit, **_options(request, dbname)
    )


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create(psycopg, request: Request, template: str, name: str) -> None:
    for attempt in range(20):
        try:
            with connect(psycopg, request, None, autocommit=True) as con:
                con.execute(f"CREATE DATABASE {_quoted(name)} TEMPLATE {_quoted(template)}")
            return
        except psycopg.Error as exc:
            if getattr(exc, "sqlstate", None) != _BUSY or attempt == 19:
                raise
            time.sleep(0.05 * (attempt + 1))


def drop(psycopg, request: Request, name: str) -> None:
    with connect(psycopg, request, None, autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {_quoted(name)} WITH (FORCE)")


def drop_prefixed(request: Request, message: dict, notify) -> dict:
    """Worker action `livesql_drop`: every clone whose name starts with the prefix (a killed worker's)."""
    import psycopg

    prefix = message["clone_prefix"]
    with connect(psycopg, request, None, autocommit=True) as con:
        names = [
            row[0] for row in con.execute("SELECT datname FROM pg_database WHERE starts_with(datname, %s)", (prefix,))
        ]
    for name in names:
        drop(psycopg, request, name)
    return {"dropped": names}
