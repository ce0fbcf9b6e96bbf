"""Valid@1 / Valid@k probes: does a SQL attempt parse and reference only existing tables and columns?
The engine decides, not string matching: the attempt is compiled with ``EXPLAIN`` on a read-only
connection, which parses and binds every name but never runs the query.  So validity stays separate
from execution failures (timeouts, wrong results): a valid query may still time out when executed.

The probes live with the engines; the figures over their results (Valid@k) are `metrics/validity.py`.
Grading runs them in a worker (`execution/inspect.py`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from evaluators.metrics.validity import ValidityResult

__all__ = [
    "open_read_only",
    "check_validity",
    "check_sqlite_validity",
    "check_duckdb_validity",
]

SQLITE_ENGINES = ("sqlite", "sqlite3")
DUCKDB_ENGINES = ("duckdb",)

# Patterns over lower-cased SQLite and DuckDB messages; "." never crosses a line.
_UNKNOWN_COLUMN = re.compile(r"no such column|referenced column .* not found|does not have a column named")
_UNKNOWN_TABLE = re.compile(
    r"no such table|table with name .* does not exist|schema with name"
    r'|catalog "[^"]*" does not exist|referenced table .* not found'
)
_SYNTAX = re.compile(r"syntax error|incomplete input|unrecognized token|parser error")
# Failures of the checker or its environment rather than of the attempt.
_SQLITE_ENVIRONMENT = re.compile(
    r"database is locked|unable to open|disk i/o|not a database|interrupted|out of memory"
    r"|closed database"
)


def _result_for(message: str) -> ValidityResult:
    """Classify an engine error message for an attempt the engine rejected.

    Only the first line is read: DuckDB appends the offending SQL after it,
    and a literal such as 'syntax error' in that SQL must not decide.
    """
    lines = message.strip().splitlines()
    text = lines[0].lower() if lines else ""
    for reason, pattern in (
        ("syntax_error", _SYNTAX),
        ("unknown_column", _UNKNOWN_COLUMN),
        ("unknown_table", _UNKNOWN_TABLE),
    ):
        if pattern.search(text):
            return ValidityResult(False, reason, message)
    return ValidityResult(False, "invalid", message)


_VALID = ValidityResult(True, "valid")
_EMPTY = ValidityResult(False, "syntax_error", "empty SQL")


def check_sqlite_validity(con: sqlite3.Connection, sql: str | None) -> ValidityResult:
    """Compile ``sql`` with EXPLAIN on an open (ideally read-only) SQLite connection.

    SQLite quirk kept as is: a double-quoted unknown column name is accepted as a
    string literal, so ``SELECT "nope" FROM t`` is valid.
    """
    if sql is None or not sql.strip():
        return _EMPTY
    try:
        con.execute("EXPLAIN " + sql).fetchall()
    except (sqlite3.Error, sqlite3.Warning) as exc:  # Warning: several statements, old Pythons
        if _SQLITE_ENVIRONMENT.search(str(exc).lower()):
            return ValidityResult(None, "not_checked", str(exc))
        return _result_for(str(exc))
    return _VALID


def check_duckdb_validity(con: Any, sql: str | None) -> ValidityResult:
    """Parse with ``extract_statements`` then EXPLAIN on an open DuckDB connection.

    On a read-only connection DuckDB refuses to EXPLAIN writes (INSERT, CREATE),
    so those come back ``invalid``; SQLite compiles them and calls them valid.
    """
    import duckdb  # local: SQLite-only runs need not load DuckDB

    if sql is None or not sql.strip():
        return _EMPTY
    try:
        statements = con.extract_statements(sql)
        if len(statements) != 1:
            return ValidityResult(False, "invalid", f"expected 1 statement, got {len(statements)}")
        con.execute("EXPLAIN " + statements[0].query).fetchall()
    except (
        duckdb.InterruptException,
        duckdb.OutOfMemoryException,
        duckdb.ConnectionException,
        duckdb.FatalException,
        duckdb.InternalException,
    ) as exc:
        return ValidityResult(None, "not_checked", str(exc))
    except (duckdb.ParserException, duckdb.SyntaxException) as exc:
        return ValidityResult(False, "syntax_error", str(exc))
    except duckdb.Error as exc:
        return _result_for(str(exc))
    return _VALID


@contextmanager
def open_read_only(db_path: str | Path, engine: str) -> Iterator[Any]:
    """Open a database file through the one opener (read-only, locked down; `execution/opener.py`).

    For callers of this library function; grading compiles in a worker (`execution/inspect.py`)."""
    from evaluators.execution.opener import open_duckdb, open_sqlite

    path, engine = Path(db_path), engine.lower()
    if not path.is_file():
        raise FileNotFoundError(f"database file not found: {path}")
    if engine in SQLITE_ENGINES:
        with closing(open_sqlite(str(path))) as con:
            yield con
    elif engine in DUCKDB_ENGINES:
        import tempfile

        with (
            tempfile.TemporaryDirectory(prefix="spider-grade-") as spill,
            closing(open_duckdb(str(path), spill)) as con,
        ):
            yield con
    else:
        raise ValueError(f"unsupported engine {engine!r}")


def check_validity(sql: str | None, db_path: str | Path, engine: str) -> ValidityResult:
    """Validity of one attempt against a SQLite or DuckDB database file.

    ``not_checked`` (valid=None) when the engine is unsupported or the database
    cannot be opened: the attempt is neither credited nor blamed.
    """
    engine = engine.lower()
    open_errors: tuple[type[Exception], ...]
    if engine in SQLITE_ENGINES:
        check, open_errors = check_sqlite_validity, (OSError, sqlite3.Error)
    elif engine in DUCKDB_ENGINES:
        import duckdb

        check, open_errors = check_duckdb_validity, (OSError, duckdb.Error)
    else:
        return ValidityResult(None, "not_checked", f"validity not supported for engine {engine!r}")
    try:
        with open_read_only(db_path, engine) as con:
            return check(con, sql)
    # The checks catch every engine error of the attempt itself, so what is left
    # comes from opening the database (missing file, lock held, not a database).
    except open_errors as exc:
        return ValidityResult(None, "not_checked", f"{type(exc).__name__}: {exc}")
