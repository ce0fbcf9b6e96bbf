"""`--reference-date`: golds run as if today were a fixed day (not the official figure: the official scorers
run them today).  The current-time words outside string literals become that day; SQLite's `'now'` too."""

from __future__ import annotations

import re

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_WORDS = re.compile(r"\b(CURRENT_DATE|CURRENT_TIMESTAMP|LOCALTIMESTAMP|NOW\s*\(\s*\)|CURDATE\s*\(\s*\))", re.I)


def at_reference_date(sql: str, day: str, dialect: str) -> str:
    """`sql` with today's date replaced by `day` (YYYY-MM-DD) in `dialect` (sqlite, postgres, mysql)."""
    out, at = [], 0
    for literal in _LITERAL.finditer(sql):
        out.append(_WORDS.sub(lambda m: _literal(m.group(1), day, dialect), sql[at : literal.start()]))
        out.append(f"'{day}'" if literal.group(0).lower() == "'now'" else literal.group(0))
        at = literal.end()
    out.append(_WORDS.sub(lambda m: _literal(m.group(1), day, dialect), sql[at:]))
    return "".join(out)


def _literal(word: str, day: str, dialect: str) -> str:
    is_date = word.upper().startswith(("CURRENT_DATE", "CURDATE"))
    value = day if is_date else f"{day} 00:00:00"
    if dialect == "sqlite":
        return f"'{value}'"
    return f"{'DATE' if is_date else 'TIMESTAMP'} '{value}'"
