"""Table names as Spider2-dbt's `duckdb_match` reads them: `SELECT * FROM {table_name}`, unquoted.

A name DuckDB's parser reads as that table unquoted is a plain identifier (a letter or `_`, then letters,
digits, `_` or `$`; dotted parts each so) that is not one of DuckDB's reserved keywords.  Any other name
(`order items`, `order`, `2024_sales`, `a-b`) makes the official read fail, and `evaluate.py` scores the
instance 0.  (`x y` would read table `x` under the alias `y` where such a table exists; the rule below
calls it unreadable, as it is whenever `x` does not exist.)
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[^\W\d][\w$]*")
# duckdb_keywords() WHERE keyword_category = 'reserved' (DuckDB 2.0): each fails as `SELECT * FROM <word>`.
RESERVED = frozenset(
    """all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create
    default deferrable desc describe distinct do else end except false fetch for foreign from group having in
    initially intersect into lambda lateral leading limit not null offset on only or order pivot pivot_longer
    pivot_wider placing primary qualify references returning select show some summarize symmetric table then to
    trailing true union unique unpivot using variadic when where window with""".split()
)


def unquoted_problem(table: str) -> str | None:
    """None when `SELECT * FROM {table}` reads the table; else why the official scorer cannot read it."""
    for part in table.split("."):
        if not _PLAIN.fullmatch(part):
            return f"{table!r} is not a plain name, so `SELECT * FROM {table}` unquoted fails"
        if part.lower() in RESERVED:
            return f"{part!r} is a DuckDB reserved word, so `SELECT * FROM {table}` unquoted fails"
    return None
