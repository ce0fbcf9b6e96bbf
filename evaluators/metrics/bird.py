"""BIRD execution accuracy (EX) and ORDER BY detection for gold SQL.

BIRD's official evaluator compares ``set(pred_rows) == set(gold_rows)``.  We
reproduce exactly those set semantics (row order and duplicate rows ignored,
column order significant, values compared with Python ``==``/``hash``, no float
tolerance), and only add a way to compare rows holding unhashable values
(lists, dicts, ...) where BIRD itself would crash.
"""

from __future__ import annotations

import functools
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
    rows = rows if isinstance(rows, list | tuple) else list(rows)
    try:  # every value hashable (all SQL results but arrays and json): `_freeze` would return each unchanged
        return set(map(tuple, rows))
    except TypeError:
        return {tuple(_freeze(v) for v in row) for row in rows}


def bird_ex(pred_rows: Iterable[Sequence[Any]], gold_rows: Iterable[Sequence[Any]]) -> bool:
    """True when both results are equal as sets of row tuples (BIRD EX)."""
    return _row_set(pred_rows) == _row_set(gold_rows)


# --- ORDER BY detection --------------------------------------------------------

_OPEN, _CLOSE, _SEMI, _OTHER = "(", ")", ";", "?"
_MARKS = {"L_PAREN": _OPEN, "L_BRACKET": _OPEN, "R_PAREN": _CLOSE, "R_BRACKET": _CLOSE, "SEMICOLON": _SEMI}


def _tokens(sql: str, backslash_escapes: bool, hash_comments: bool) -> Iterator[str]:
    """Upper-cased words and bracket/semicolon marks from sqlglot's tokens; strings, quoted names and
    comments are one opaque token or nothing.  Square brackets count as parentheses: they hold array
    literals or subscripts, and neither can contain the outer ORDER BY."""
    from evaluators.sqltext import lenient_tokens

    try:
        tokens = lenient_tokens(sql, backslash_escapes, hash_comments)
    except ValueError:  # an unterminated string: what follows its quote is inside it
        return
    for token in tokens:
        kind = token.token_type.name
        if kind in _MARKS:
            yield _MARKS[kind]
        elif kind == "ORDER_BY":
            yield from ("ORDER", "BY")
        elif sql[token.start : token.end + 1].upper() == token.text.upper():  # written as it reads: not quoted
            yield token.text.upper()
        else:
            yield _OTHER


# The plain part of SQL, scanned without sqlglot (a fifth of a second to import, a millisecond a gold): spaces,
# comments, '...' strings, "..." and `...` names, ASCII words and numbers, brackets and operators.  Anything
# else (a backslash, $, #, @, ?, braces, non-ASCII, a nested or open comment, an open quote, a prefixed
# string such as E'..', a number running into a word) leaves the text to sqlglot's tokens (`_tokens`); the
# tests check on generated texts that both give the same answer.
_PLAIN = re.compile(
    r"""(?P<space>[ \t\r\n]+)
    |(?P<comment>--[^\n\r]*|/\*(?:(?!/\*)[^*]|\*(?!/))*\*/)
    |(?P<quoted>'(?:[^'\\]|'')*'|"[^"\\]*"|`[^`\\]*`)
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_'"`]))
    |(?P<number>[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_.]))
    |(?P<mark>[()\[\];])
    |(?P<operator>[,.=<>!+*%|&~^:]|-(?!-)|/(?!\*))""",
    re.VERBOSE,
)


def _plain_tokens(sql: str) -> list[str] | None:
    """`_tokens`' words and marks for text of the plain part (strings, quoted names and operators each one
    opaque token), or None when the text holds anything else."""
    if "USER-DEFINED" in sql.upper():  # sqlglot's one keyword of letters and a sign: it reads past its end
        return None
    out: list[str] = []
    at, end = 0, len(sql)
    while at < end:
        found = _PLAIN.match(sql, at)
        if found is None:
            return None
        kind, text = found.lastgroup, found.group()
        if kind == "word":
            out.append(text.upper())
        elif kind == "mark":
            out.append(_SEMI if text == ";" else _OPEN if text in "([" else _CLOSE)
        elif kind in ("quoted", "number", "operator"):
            out.append(_OTHER)
        at = found.end()
    return out


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
        if _closing(tokens) != len(tokens) - 1:  # first "(" closes early: "(a) UNION (b)"
            return tokens
        tokens = tokens[1:-1]
    return tokens


def _closing(tokens: list[str]) -> int:
    """Where the bracket opened by the first token closes (the last token when it never does)."""
    depth = 0
    for pos, tok in enumerate(tokens):
        depth += (tok == _OPEN) - (tok == _CLOSE)
        if depth == 0:
            return pos
    return len(tokens) - 1


def outermost_has_order_by(sql: str, *, backslash_escapes: bool = False, hash_comments: bool = False) -> bool:
    """Whether the outermost query of the (last) statement in ``sql`` has ORDER BY.

    ORDER BY inside parentheses (subqueries, CTE bodies, ``OVER (...)``,
    ``WITHIN GROUP (...)``, aggregate arguments), string literals, quoted
    identifiers and comments is ignored.  ``backslash_escapes`` and
    ``hash_comments`` enable BigQuery/MySQL-style lexing.
    """
    if "ORDER" not in sql.upper():  # no token can read ORDER (tokens are read upper-cased): no tokenizing
        return False
    return _outermost_order_by(sql, backslash_escapes, hash_comments)


@functools.lru_cache(maxsize=4096)
def _outermost_order_by(sql: str, backslash_escapes: bool, hash_comments: bool) -> bool:
    """One tokenizing per gold text: BIRD asks once per question, and questions share golds."""
    tokens = _plain_tokens(sql)
    if tokens is None:
        tokens = list(_tokens(sql, backslash_escapes, hash_comments))
    return _order_by_on_top(tokens)


def _order_by_on_top(tokens: list[str]) -> bool:
    """ORDER BY at depth 0 of the last statement's tokens (wrapping brackets taken off)."""
    depth = 0
    previous = ""  # previous token at depth 0; a bracketed group counts as "(" + ")"
    for tok in _strip_wrapping_parens(_last_statement(tokens)):
        if tok == _CLOSE:
            depth = max(depth - 1, 0)
        if depth == 0:
            if previous == "ORDER" and tok == "BY":
                return True
            previous = tok
        if tok == _OPEN:
            depth += 1
    return False
