"""BIRD execution accuracy (EX) and ORDER BY detection for gold SQL.

BIRD's official evaluator compares ``set(pred_rows) == set(gold_rows)``.  We
reproduce exactly those set semantics (row order and duplicate rows ignored,
column order significant, values compared with Python ``==``/``hash``, no float
tolerance), and only add a way to compare rows holding unhashable values
(lists, dicts, ...) where BIRD itself would crash.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["bird_ex", "outermost_has_order_by"]


class _Tag:
    """Private marker so a frozen list never equals a real tuple with the same items."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_LIST, _DICT = _Tag("list"), _Tag("dict")


def _freeze(value: Any) -> Any:
    """Return a hashable stand-in that is equal exactly when the originals are equal.

    Hashable values are returned unchanged (the very same object), so NaN keeps
    its identity-based set behaviour, as in BIRD.
    """
    try:
        hash(value)
        return value
    except TypeError:
        pass
    if isinstance(value, dict):
        return (_DICT, frozenset((_freeze(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):  # set == frozenset in Python, so no tag
        return frozenset(_freeze(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, tuple):  # a tuple that holds something unhashable
        return tuple(_freeze(v) for v in value)
    if hasattr(value, "tolist"):  # numpy arrays from DuckDB/pandas LIST columns
        return (_LIST, tuple(_freeze(v) for v in value.tolist()))
    if isinstance(value, Iterable):
        return (_LIST, tuple(_freeze(v) for v in value))
    raise TypeError(f"cannot compare value of type {type(value).__name__}")


def _row_set(rows: Iterable[Sequence[Any]]) -> set[tuple[Any, ...]]:
    return {tuple(_freeze(v) for v in row) for row in rows}


def bird_ex(pred_rows: Iterable[Sequence[Any]], gold_rows: Iterable[Sequence[Any]]) -> bool:
    """True when both results are equal as sets of row tuples (BIRD EX)."""
    return _row_set(pred_rows) == _row_set(gold_rows)


# --- ORDER BY detection --------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_OPEN, _CLOSE, _SEMI, _OTHER = "(", ")", ";", "?"


def _skip_quoted(sql: str, start: int, quote: str, backslash: bool) -> int:
    """Index just past the quoted section opened at ``start`` (doubled quote escapes)."""
    i = start + 1
    while i < len(sql):
        ch = sql[i]
        if backslash and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if sql.startswith(quote, i + 1):  # '' or "" is an escaped quote
                i += 2
                continue
            return i + 1
        i += 1
    return len(sql)  # unterminated: the rest of the text is inside the quote


def _skip_until(sql: str, start: int, end_marker: str) -> int:
    end = sql.find(end_marker, start)
    return len(sql) if end < 0 else end + len(end_marker)


def _tokens(sql: str, backslash_escapes: bool, hash_comments: bool) -> Iterator[str]:
    """Yield upper-cased words and bracket/semicolon marks; strings and comments vanish.

    Square brackets count as parentheses: they hold array literals, subscripts or
    SQLite identifiers, and none of those can contain the outer ORDER BY.
    """
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif sql.startswith("--", i) or (hash_comments and ch == "#"):
            i = _skip_until(sql, i, "\n")
        elif sql.startswith("/*", i):
            i = _skip_until(sql, i + 2, "*/")
        elif ch in "'\"`":
            i = _skip_quoted(sql, i, ch, backslash_escapes and ch != "`")
            yield _OTHER
        elif ch == "$" and (tag := _DOLLAR_TAG.match(sql, i)):
            i = _skip_until(sql, tag.end(), tag.group(0))
            yield _OTHER
        elif ch in "([":
            i += 1
            yield _OPEN
        elif ch in ")]":
            i += 1
            yield _CLOSE
        elif ch == ";":
            i += 1
            yield _SEMI
        elif word := _WORD.match(sql, i):
            i = word.end()
            yield word.group(0).upper()
        else:
            i += 1
            yield _OTHER


def _last_statement(tokens: list[str]) -> list[str]:
    """Tokens of the last non-empty statement: the one whose rows are returned."""
    statements: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        depth += (tok == _OPEN) - (tok == _CLOSE)
        if tok == _SEMI and depth <= 0:
            statements.append([])
        else:
            statements[-1].append(tok)
    non_empty = [s for s in statements if s]
    return non_empty[-1] if non_empty else []


def _strip_wrapping_parens(tokens: list[str]) -> list[str]:
    """``(SELECT ... ORDER BY x)`` as a whole statement is still the outermost query."""
    while len(tokens) >= 2 and tokens[0] == _OPEN and tokens[-1] == _CLOSE:
        depth = 0
        for pos, tok in enumerate(tokens):
            depth += (tok == _OPEN) - (tok == _CLOSE)
            if depth == 0:
                break
        if pos != len(tokens) - 1:  # first "(" closes early: "(a) UNION (b)"
            return tokens
        tokens = tokens[1:-1]
    return tokens


def outermost_has_order_by(
    sql: str, *, backslash_escapes: bool = False, hash_comments: bool = False
) -> bool:
    """Whether the outermost query of the (last) statement in ``sql`` has ORDER BY.

    ORDER BY inside parentheses (subqueries, CTE bodies, ``OVER (...)``,
    ``WITHIN GROUP (...)``, aggregate arguments), string literals, quoted
    identifiers and comments is ignored.  ``backslash_escapes`` and
    ``hash_comments`` enable BigQuery/MySQL-style lexing.
    """
    tokens = _strip_wrapping_parens(
        _last_statement(list(_tokens(sql, backslash_escapes, hash_comments)))
    )
    depth = 0
    previous = ""  # previous token at depth 0; a bracketed group counts as "(" + ")"
    for tok in tokens:
        if tok == _CLOSE:
            depth = max(depth - 1, 0)
        if depth == 0:
            if previous == "ORDER" and tok == "BY":
                return True
            previous = tok
        if tok == _OPEN:
            depth += 1
    return False
