"""test-suite-sql-eval's `--plug_value`: the gold's values plugged into the prediction's value slots.

The scorer (`parse.get_all_preds_for_execution`) re-formats both queries with sqlparse, takes the gold's
values (quoted strings, then whitespace-separated tokens that are decimal or integer numbers) and the
prediction's slots (the same kinds of tokens), and tries every assignment of gold values to slots
(`len(values) ** slots` of them), the prediction as written first.  Each step below is the scorer's, quirks
included: the text is lower-cased outside the values, `;` and tabs are dropped, `T1.*` becomes `*`, a value
glued to a bracket (`'a')`) is not a slot.  The one change: the search is bounded by a cap, since the
scorer's can run for hours (`len(values) ** slots` grows fast); when the cap stops it the caller says so.
Values are tried in sorted order (the scorer's order is a Python set's, which changes from run to run).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice, product

SLOT = "VALUERARE"
_T_STARS = ("t1.*", "t2.*", "t3.*", "T1.*", "T2.*", "T3.*")
_FLOAT = re.compile(r"[-+]?\d*\.\d+")
_INT = re.compile(r"[^tT]\d+")
_ALIAS_DOT = re.compile(r"(T\d+\.)\s")
_TABLE_ALIAS = re.compile(r"[Tt]\d+\.")


@dataclass(frozen=True)
class Plugged:
    variants: tuple[str, ...]  # the plugged predictions to try after the prediction itself, at most the cap
    total: int  # how many the scorer would try
    slots: int
    values: int

    @property
    def capped(self) -> bool:
        return self.total > len(self.variants)


def _sqlparse():
    from evaluators.testsuite.rules import sqlparse_module

    return sqlparse_module()


def _first_statement_tokens(query: str) -> list:
    statements = _sqlparse().parse(query)
    if not statements:
        raise ValueError("no statement")  # the scorer raises IndexError and stops
    return list(statements[0].flatten())


def _reformat(query: str) -> str:
    from sqlparse import tokens

    query = query.strip().replace(";", "").replace("\t", "")
    query = " ".join(t.value for t in _first_statement_tokens(query) if t.ttype != tokens.Whitespace)
    for star in _T_STARS:
        query = query.replace(star, "*")
    return query


def _strip_query(query: str) -> tuple[list[str], list[str]]:
    """(the lower-cased tokens with `valuerare` for each value, the values): the scorer's `strip_query`."""
    from sqlparse import tokens

    strings = (tokens.Literal.String.Single, tokens.Literal.String.Symbol)
    found = [t.value for t in _first_statement_tokens(query) if t.ttype in strings]
    values: list[str] = []
    for value in found:
        values.append(value)
        query = query.replace(value.strip(), SLOT)
    words = query.split()
    floats = _FLOAT.findall(query)
    values += [w for w in words if w in floats]
    words = [SLOT if w in floats else w for w in words]
    query = " ".join(words)
    ints = [i.strip() for i in _INT.findall(query)]
    values += [w for w in words if w in ints]
    words = [SLOT if w in ints else w for w in words]
    return _keywords(words), values


def _keywords(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        if "." in word and _TABLE_ALIAS.findall(word):
            out.extend(part.lower() for part in word.replace(".", " . ").split() if part)
        elif word:
            out.append(word.lower())
    return out


def extract(query: str) -> tuple[list[str], set[str]]:
    """The scorer's `extract_query_values`: (tokens with slots, the set of values)."""
    sql = _sqlparse().format(_reformat(query), reindent=False, keyword_case="upper")
    words, values = _strip_query(_ALIAS_DOT.sub(r"\1", sql))
    return words, set(values)


def _plug(words: list[str], assignment: tuple[str, ...]) -> str:
    out, values = [], iter(assignment)
    for word in words:
        out.append(next(values) if word == SLOT.lower() else word)
    return " ".join(out)


def plugged_predictions(gold: str, pred: str, cap: int) -> Plugged:
    """The scorer's plugged variants of `pred` (after the prediction itself), at most `cap` of them."""
    try:
        _, gold_values = extract(gold)
        words, _ = extract(pred)
    except (ValueError, IndexError):
        return Plugged((), 0, 0, 0)  # the scorer would stop on this pair; the prediction alone is graded
    slots = sum(word == SLOT.lower() for word in words)
    values = sorted(gold_values)
    assignments: Iterator[tuple[str, ...]] = product(*[values for _ in range(slots)])
    variants = tuple(_plug(words, a) for a in islice(assignments, cap))
    return Plugged(variants, len(values) ** slots, slots, len(values))
