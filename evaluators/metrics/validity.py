"""Valid@1 / Valid@k: does a SQL attempt parse and reference only existing
tables and columns?  The SQL counterpart of the text-to-Cypher "KG valid" metric.

The engine decides, not string matching: the attempt is compiled with
``EXPLAIN`` on a read-only connection, which parses and binds every name but
never runs the query.  So validity stays separate from execution failures
(timeouts, wrong results): a valid query may still time out when executed.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "REASONS",
    "ValidityResult",
    "ValiditySummary",
    "open_read_only",
    "check_validity",
    "check_sqlite_validity",
    "check_duckdb_validity",
    "valid_at_k",
    "summarize_validity",
]

REASONS = ("valid", "syntax_error", "unknown_table", "unknown_column", "invalid", "not_checked")
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


@dataclass(frozen=True)
class ValidityResult:
    valid: bool | None  # None: could not be checked
    reason: str  # one of REASONS
    message: str = ""  # the engine's message, for the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def valid_at_k(results: Sequence[ValidityResult], k: int) -> bool | None:
    """Any of the first k attempts valid.  None when none is valid and at least
    one of them was not checked.  Requires 1 <= k <= len(results)."""
    if not 1 <= k <= len(results):
        raise ValueError(f"Valid@{k} needs at least {k} attempts, got {len(results)}")
    first = results[:k]
    if any(r.valid is True for r in first):
        return True
    return None if any(r.valid is None for r in first) else False


@dataclass(frozen=True)
class ValiditySummary:
    """Valid@k for k = 1..min attempts (every instance must have >= k attempts).

    Rates divide by the instances whose Valid@k was determined; undetermined
    ones are counted in ``n_undetermined_at_k`` instead.
    """

    n_instances: int
    valid_at_k: dict[int, float | None]
    n_undetermined_at_k: dict[int, int]
    first_attempt_reasons: dict[str, int]

    @property
    def valid_at_1(self) -> float | None:
        return self.valid_at_k[1]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "valid_at_1": self.valid_at_1}


def summarize_validity(results_by_instance: Mapping[str, Sequence[ValidityResult]]) -> ValiditySummary:
    runs = list(results_by_instance.values())
    if not runs or any(len(r) == 0 for r in runs):
        raise ValueError("need at least one instance, each with at least one attempt")
    rates: dict[int, float | None] = {}
    undetermined: dict[int, int] = {}
    for k in range(1, min(len(r) for r in runs) + 1):
        verdicts = [valid_at_k(r, k) for r in runs]
        known = [v for v in verdicts if v is not None]
        rates[k] = sum(known) / len(known) if known else None
        undetermined[k] = len(verdicts) - len(known)
    reasons: dict[str, int] = {}
    for r in runs:
        reasons[r[0].reason] = reasons.get(r[0].reason, 0) + 1
    return ValiditySummary(len(runs), rates, undetermined, dict(sorted(reasons.items())))
