"""test-suite-sql-eval's `--plug_value`: the gold's values plugged into the prediction's value slots.

The scorer (`parse.get_all_preds_for_execution`) re-formats both queries with sqlparse, takes the gold's
values (quoted strings, then whitespace-separated tokens that are decimal or integer numbers) and the
prediction's slots (the same kinds of tokens), and tries every assignment of gold values to slots
(`len(values) ** slots` of them), the prediction as written first.  Each step below is the scorer's, quirks
included: the text is lower-cased outside the values, `;` and tabs are dropped, `T1.*` becomes `*`, a value
glued to a bracket (`'a')`) is not a slot.  The one change: the search is bounded by a cap, since the
scorer's can run for hours (`len(values) ** slots` grows fast); when the cap stops it the caller says so.
Values are tried in sorted order (the scorer's order is a Python set's, which changes from run to run).

What the search costs before the cap is bounded too (issue L): a prediction or gold longer than
`MAX_PLUG_CHARS` is not plugged (a 2 MB comment made each of the 1,000 variants 2 MB: 206 s and 2 GB); the
variants are made one at a time as they are tried, and no more than `MAX_PLUG_BYTES` of them in all; a text
sqlparse refuses (its 10,000-token limit) is not plugged (the scorer would stop its whole run); the scan
for values is linear (sets, each distinct value replaced once); the number of variants the scorer would try
is a number only while it has at most 18 digits (`values^slots` as text past that: JSON writes no integer
of more than 4,300 digits).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice, product
from math import log10

SLOT = "VALUERARE"
_T_STARS = ("t1.*", "t2.*", "t3.*", "T1.*", "T2.*", "T3.*")
_FLOAT = re.compile(r"[-+]?\d*\.\d+")
_INT = re.compile(r"[^tT]\d+")
_ALIAS_DOT = re.compile(r"(T\d+\.)\s")
_TABLE_ALIAS = re.compile(r"[Tt]\d+\.")
MAX_PLUG_CHARS = 65_536  # a longer prediction or gold is not plugged (Spider's are a few hundred characters)
MAX_PLUG_BYTES = 16 * 1024 * 1024  # the plugged variants tried for one question hold at most this much SQL
_MAX_EXACT_DIGITS = 18


class Variants:
    """The plugged predictions to try, made one at a time as they are iterated; `len` is how many."""

    def __init__(self, words: list[str], values: list[str], slots: int, count: int):
        self._words, self._values, self._slots, self._count = words, values, slots, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        assignments = product(*[self._values for _ in range(self._slots)])
        return (_plug(self._words, a) for a in islice(assignments, self._count))


@dataclass(frozen=True)
class Plugged:
    variants: Variants | tuple  # the plugged predictions to try after the prediction itself, at most the cap
    total: int | str  # how many the scorer would try ("values^slots" when that has more than 18 digits)
    slots: int
    values: int
    skipped: str = ""  # why this pair is not plugged, when it is not

    @property
    def capped(self) -> bool:
        return isinstance(self.total, str) or self.total > len(self.variants)


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
    values: list[str] = list(found)
    replaced: set[str] = set()
    for value in found:
        # Replacing a value again changes nothing unless it holds the slot word (a replacement can make a new
        # occurrence only there: a value starts and ends with a quote, the slot word has none).
        if value not in replaced or SLOT in value:
            replaced.add(value)
            query = query.replace(value.strip(), SLOT)
    words = query.split()
    floats = set(_FLOAT.findall(query))
    values += [w for w in words if w in floats]
    words = [SLOT if w in floats else w for w in words]
    query = " ".join(words)
    ints = {i.strip() for i in _INT.findall(query)}
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


_SLOT_WORD = SLOT.lower()


def _plug(words: list[str], assignment: tuple[str, ...]) -> str:
    out, values = [], iter(assignment)
    for word in words:
        out.append(next(values) if word == _SLOT_WORD else word)
    return " ".join(out)


def plugged_predictions(gold: str, pred: str, cap: int) -> Plugged:
    """The scorer's plugged variants of `pred` (after the prediction itself), at most `cap` of them."""
    longest = max(len(gold), len(pred))
    if longest > MAX_PLUG_CHARS:
        return Plugged((), 0, 0, 0, f"not plugged: {longest:,} characters, over {MAX_PLUG_CHARS:,}")
    try:
        _, gold_values = extract(gold)
        words, _ = extract(pred)
    except (ValueError, IndexError):
        return Plugged((), 0, 0, 0)  # the scorer would stop on this pair; the prediction alone is graded
    except Exception as error:  # sqlparse's SQLParseError (its token limit), a RecursionError
        return Plugged((), 0, 0, 0, f"not plugged: sqlparse cannot read it ({type(error).__name__}: {error})"[:300])
    slots = sum(word == _SLOT_WORD for word in words)
    values = sorted(gold_values)
    total = _count(len(values), slots)
    within = cap if isinstance(total, str) else min(cap, total)
    width = sum(map(len, words)) + len(words) + slots * max(map(len, values), default=0)
    count = min(within, max(1, MAX_PLUG_BYTES // max(1, width))) if within else 0
    return Plugged(Variants(words, values, slots, count), total, slots, len(values))


def _count(values: int, slots: int) -> int | str:
    """values ** slots, or "values^slots" when that has more than 18 digits (never computed then)."""
    if values > 1 and slots * log10(values) > _MAX_EXACT_DIGITS:
        return f"{values}^{slots}"
    return values**slots
