"""The official BIRD scorers' rules (mini-dev's `evaluation_ex.py` and BIRD dev's `evaluation.py`), quirks kept.

- A prediction value is split on the exact separator `"\\t----- bird -----\\t"`; the SQL runs as written
  (a fenced prediction fails: nothing is unwrapped).  A value without the separator, or with it twice,
  runs whole after `strip()`, so the `--` of a mangled `-----bird-----` starts an SQL comment.  The db_id
  after the separator is ignored: the gold line's database is used.  A value that is not a string runs
  as `" "`, which returns no rows.
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


def split_prediction(value: object) -> tuple[str, str | None]:
    """(the SQL the official script runs, the db_id it read, or None)."""
    if not isinstance(value, str):
        return NOT_A_STRING, None
    parts = value.split(SEPARATOR)
    if len(parts) != 2:
        return value.strip(), None
    return parts[0], parts[1]


def is_plain_query(sql: str) -> bool:
    """One read-only query (sqlglot, SQLite dialect): safe to run on the read-only connection, with the same
    result the writable one would give.  Anything else goes to the private copy."""
    from evaluators.sqltext import read_only_problem

    return read_only_problem(sql, "sqlite") is None


def ex(pred_rows: list, gold_rows: list) -> bool:
    from evaluators.metrics.bird import bird_ex

    return bird_ex(pred_rows, gold_rows)
