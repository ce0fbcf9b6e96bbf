"""The official BIRD scorers' rules (mini-dev's `evaluation_ex.py` and BIRD dev's `evaluation.py`), quirks kept.

- A prediction value is split on the exact separator `"\\t----- bird -----\\t"`; the SQL runs as written
  (a fenced prediction fails: nothing is unwrapped).  A value without the separator, or with it twice,
  runs whole after `strip()`, so the `--` of a mangled `-----bird-----` starts an SQL comment.  The db_id
  after the separator is ignored: the gold line's database is used.  A value that is not a string runs
  as `" "`, which returns no rows on SQLite and is an error on PostgreSQL and MySQL (psycopg2, PyMySQL).
- BIRD dev (`evaluation.py`) runs both queries on the prediction's db_id (`financial` for a non-string
  value; an empty db_id opens `<db_root>/.sqlite`, an empty database, and the question fails) and crashes on a
  value without exactly one separator; mini-dev runs on the gold's db_id.
- A result holding an unhashable value (json, arrays) makes `set()` raise: 0.
- Results are compared as Python sets of row tuples: `1 == 1.0`, duplicates and row order ignored.
- An error or a timeout scores 0.  `;;` and two statements fail (sqlite3 runs one statement).
- The prediction and then the gold run on one writable connection inside the transaction Python's
  sqlite3 opens before DML and never commits: a DELETE or UPDATE that removes or changes the rows the
  gold reads can score 1, an INSERT or DDL usually scores 0.  We reproduce this on a private copy of the
  database in the work folder, rolled back and deleted; the database itself is only ever opened read-only.
"""

from __future__ import annotations

SEPARATOR = "\t----- bird -----\t"
NOT_A_STRING = " "
DEV_DEFAULT_DB = "financial"  # dev's database for a value that is not a string
DEV_EMPTY_DB = (  # dev's path for an empty db_id is <db_root>/.sqlite: sqlite3 opens an empty database there
    "the prediction names no database after the separator: BIRD dev's evaluation.py opens '/.sqlite', "
    "an empty database, where the gold query fails (no such table)"
)
# What psycopg2 and PyMySQL raise for an empty or blank query (the SQLite script gets no rows instead).
EMPTY_QUERY_ERRORS = {
    "postgres": "can't execute an empty query (psycopg2, as the official script runs it)",
    "mysql": "(1065, 'Query was empty') (PyMySQL, as the official script runs it)",
}


def split_prediction(value: object) -> tuple[str, str | None]:
    """(the SQL the official script runs, the db_id it read, or None)."""
    if not isinstance(value, str):
        return NOT_A_STRING, None
    parts = value.split(SEPARATOR)
    if len(parts) != 2:
        return value.strip(), None
    return parts[0], parts[1]


def dev_database(value: object) -> str | None:
    """The database BIRD dev's `evaluation.py` runs this prediction (and its gold) on: the db_id after the
    separator, `financial` for a value that is not a string; None where dev crashes (no separator, or two)."""
    if not isinstance(value, str):
        return DEV_DEFAULT_DB
    parts = value.split(SEPARATOR)
    return parts[1] if len(parts) == 2 else None


def dev_crash_problems(preds: list, pred_file) -> list:
    """A file dev's `evaluation.py` cannot score (`sql, db_name = value.split(...)` raises): said once."""
    from evaluators.errors import Location
    from evaluators.loading.specs import Problem

    crashing = [p for p in preds if dev_database(p.value) is None]
    if not crashing:
        return []
    keys = ", ".join(p.key for p in crashing[:5]) + (" ..." if len(crashing) > 5 else "")
    return [
        Problem(
            crashing[0].location if crashing[0].location.line else Location(str(pred_file)),
            f"{len(crashing)} prediction(s) without exactly one separator (keys {keys}): BIRD dev's evaluation.py "
            "stops on the first (not enough values to unpack) and gives no figure for this file; graded here "
            "as mini-dev does (the text run whole, on the gold's database)",
        )
    ]


def fence_problem(preds: list, pred_file):
    """Predictions that begin with a markdown fence score 0, as in the official scripts (nothing is unwrapped):
    said once, at the top, since a whole file of them is a post-processing step left out, not the model's SQL."""
    from evaluators.errors import Location
    from evaluators.loading.database_folder import PREFIX
    from evaluators.loading.specs import Problem

    fenced = [p for p in preds if split_prediction(p.value)[0].lstrip().startswith(("```", "~~~"))]
    if not fenced:
        return None
    return Problem(
        fenced[0].location if fenced[0].location.line else Location(str(pred_file)),
        f"{PREFIX}{len(fenced)} of {len(preds)} predictions begin with a markdown fence; the official scorer does "
        "not unwrap them (each fails to run and scores 0)",
        hint="take the SQL out of the fence before grading, as your pipeline's post-processing should",
    )


def unhashable(pred_rows: list, gold_rows: list) -> str | None:
    """Why the official `set(rows)` raises on these results (json, arrays), or None: the official verdict
    is then 0 whatever the rows hold."""
    for side, rows in (("prediction", pred_rows), ("gold", gold_rows)):
        try:
            set(map(tuple, rows))
        except TypeError as exc:
            return f"BIRD EX: the {side}'s rows hold an unhashable value ({exc}); the official set() raises: 0"
    return None


def needs_private_copy(sql: str, gold_result, pred_result) -> bool:
    """Whether the prediction must run the official way, on the private copy (`RowResult`s of the read-only
    runs: the gold's, then the prediction's, None when it did not run).

    A prediction that ran on the read-only connection without a refusal is one statement that only reads
    (SQLite's own read-only guard, execution/sqlite_readonly.py, let nothing else through): the writable copy
    would give it and the gold the same rows, so its result stands.  A timeout stands too (the copy would
    time out as well).  Only when a run failed does sqlglot's parse (`is_plain_query`) decide, as it did
    for every prediction before: a write, two statements or text sqlglot cannot read go to the copy.  Parsing
    every prediction cost a millisecond or more each, most of the run's own time on small queries.
    A failure SQLite gave while compiling the text (`COMPILE_ERRORS`: no such column, a syntax error ...)
    happened before anything ran, on a schema the copy shares: the copy fails the same way, at the same
    place, so it stands too (and sqlglot, a fifth of a second to import, is not needed at all)."""
    if not sql.strip():
        return False
    if pred_result is not None and (pred_result.ok or pred_result.reason == "timeout"):
        return False
    if pred_result is not None and compile_error(pred_result.reason, pred_result.detail):
        return False
    return not is_plain_query(sql)


# SQLite's own words for a text it could not compile (the start of the message, SQLite's, never the SQL's):
# nothing ran.  A write refused by the read-only guard says "write refused" first, and is not one of these.
COMPILE_ERRORS = (
    "no such column: ",
    "no such table: ",
    "no such function: ",
    "ambiguous column name: ",
    'near "',  # near "...": syntax error
    "incomplete input",
    "unrecognized token: ",
    "wrong number of arguments to function ",
)


def compile_error(reason: str, detail: str) -> bool:
    """Whether a read-only run's failure is SQLite refusing to compile the text (see `needs_private_copy`)."""
    return reason == "exec_error" and detail.startswith(COMPILE_ERRORS)


def is_plain_query(sql: str) -> bool:
    """One read-only query (sqlglot, SQLite dialect): safe to run on the read-only connection, with the same
    result the writable one would give.  Anything else goes to the private copy."""
    from evaluators.sqltext import read_only_problem

    return read_only_problem(sql, "sqlite") is None


def ex(pred_rows: list, gold_rows: list) -> bool:
    from evaluators.metrics.bird import bird_ex

    return bird_ex(pred_rows, gold_rows)
