"""Strict equality of two query results given as typed rows (the drivers' Python values).

The rule, for every execution verdict that compares engine results:

- the two results have the same number of columns; names are ignored;
- some one-to-one mapping of the gold's columns onto the prediction's makes the
  rows equal as multisets (as sequences when the gold query orders its rows);
- values keep their types: a text never equals a number (`'42'` is not `42`,
  `'00070'` is not `70`), NULL equals only NULL, booleans only booleans;
- numbers compare by value: integers (and decimals) exactly, and a float within a
  relative tolerance (engines round sums and averages differently);
- anything else (dates, bytes, lists, maps) compares with `==`.

Rows are paired after sorting by a key in which floats are rounded to the
tolerance's digits; two float values on either side of a rounding boundary can
therefore fail to pair (documented, rare, and never a false match).
"""

from __future__ import annotations

import math
from collections import Counter
from decimal import Decimal
from itertools import chain
from typing import Any

from evaluators.matching.verdicts import Verdict

REL_TOL = 1e-6
MAX_MAPPINGS = 5000  # candidate column mappings checked before giving up (mapping_search_exhausted)
_DIGITS = 6  # significant digits of the sort key for floats, matching REL_TOL


def strict_rows(gold: list[tuple], pred: list[tuple], ordered: bool, rel_tol: float = REL_TOL) -> Verdict:
    """The strict verdict for `pred` against `gold` (see the module docstring)."""
    gold_width, pred_width = _width(gold), _width(pred)
    if not gold and not pred:
        return Verdict(1.0, "match", "both results are empty")
    if len(gold) != len(pred):
        return Verdict(0.0, "row_count_mismatch", f"gold has {len(gold)} row(s), the prediction {len(pred)}")
    if gold_width != pred_width:
        return Verdict(
            0.0,
            "column_not_found",
            f"gold has {gold_width} column(s), the prediction {pred_width} (an extra column is wrong)",
        )
    if _identical(gold, pred):  # the identity mapping is the first one tried, and it matches
        order = "in order" if ordered else "as multisets"
        return Verdict(1.0, "match", f"rows equal {order} under column mapping {list(range(gold_width))}")
    candidates = _candidates(gold, pred, gold_width, rel_tol)
    missing = next((i for i, c in enumerate(candidates) if not c), None)
    if missing is not None:
        return Verdict(0.0, "column_not_found", f"gold column {missing} has no predicted column with the same values")
    for tried, mapping in enumerate(_mappings(candidates)):
        if tried >= MAX_MAPPINGS:
            return Verdict(0.0, "mapping_search_exhausted", f"no mapping found in {MAX_MAPPINGS} candidates")
        mapped = [tuple(row[j] for j in mapping) for row in pred]
        if _rows_equal(gold, mapped, ordered, rel_tol):
            order = "in order" if ordered else "as multisets"
            return Verdict(1.0, "match", f"rows equal {order} under column mapping {list(mapping)}")
    what = "in order (the gold query has ORDER BY)" if ordered else "as multisets"
    return Verdict(0.0, "value_mismatch", f"no column mapping makes the rows equal {what}")


_SCALARS = frozenset({int, float, str, bytes, Decimal, type(None)})


def _identical(gold: list[tuple], pred: list[tuple]) -> bool:
    """Row by row the same plain values of the same types (a right answer, most often): `values_equal` holds
    cell by cell, so the search below would take the identity mapping first and match.  Columns of equal
    values are candidates of each other only, tried in column order, each taking the first one left: the
    identity.  NaN, booleans and nested values take the long way."""
    # C's `==` row by row first (rows may be tuples on one side and lists on the other); it takes 1 for 1.0
    # and True, so the types next.
    if gold != pred and [*map(tuple, gold)] != [*map(tuple, pred)]:
        return False
    kinds = list(map(type, chain.from_iterable(gold)))
    return kinds == list(map(type, chain.from_iterable(pred))) and _SCALARS.issuperset(kinds)


def values_equal(a: Any, b: Any, rel_tol: float = REL_TOL) -> bool:
    kind_a, kind_b = _kind(a), _kind(b)
    if kind_a != kind_b:
        return False
    if kind_a == "number":
        if isinstance(a, float) or isinstance(b, float):
            a, b = float(a), float(b)
            if math.isnan(a) or math.isnan(b):
                return math.isnan(a) and math.isnan(b)
            return a == b or math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0)
        return a == b
    if kind_a == "list":
        return len(a) == len(b) and all(values_equal(x, y, rel_tol) for x, y in zip(a, b, strict=True))
    if kind_a == "map":
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], rel_tol) for k in a)
    return bool(a == b)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, Decimal)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _key(value: Any) -> tuple:
    """A total order across types; floats rounded so near-equal values sort together."""
    kind = _kind(value)
    if kind == "number":
        number = float(value)
        if math.isnan(number):
            return (kind, 1, 0.0, "")
        return (kind, 0, float(f"{number:.{_DIGITS}g}"), "")
    if kind in ("list", "map"):
        items = value.items() if kind == "map" else value
        return (kind, 0, 0.0, repr([_key(v) for v in items]))
    return (kind, 0, 0.0, repr(value) if kind != "text" else value)


def _width(rows: list[tuple]) -> int:
    return len(rows[0]) if rows else 0


def _column_signature(rows: list[tuple], index: int) -> Counter:
    return Counter(_key(row[index]) for row in rows)


def _candidates(gold: list[tuple], pred: list[tuple], width: int, rel_tol: float) -> list[list[int]]:
    """For each gold column, the predicted columns whose values could be the same multiset."""
    gold_sigs = [_column_signature(gold, i) for i in range(width)]
    pred_sigs = [_column_signature(pred, j) for j in range(width)]
    exact = [[j for j in range(width) if gold_sigs[i] == pred_sigs[j]] for i in range(width)]
    if all(exact):
        return exact
    # A rounding boundary can split near-equal floats: fall back to sorted pairwise comparison.
    return [[j for j in range(width) if _same_column(gold, pred, i, j, rel_tol)] for i in range(width)]


def _same_column(gold: list[tuple], pred: list[tuple], i: int, j: int, rel_tol: float) -> bool:
    left = sorted((row[i] for row in gold), key=_key)
    right = sorted((row[j] for row in pred), key=_key)
    return all(values_equal(a, b, rel_tol) for a, b in zip(left, right, strict=True))


def _mappings(candidates: list[list[int]]):
    """One-to-one mappings gold column -> predicted column, most constrained columns first (backtracking)."""
    order = sorted(range(len(candidates)), key=lambda i: len(candidates[i]))
    mapping = [0] * len(candidates)
    used: set[int] = set()

    def extend(depth: int):
        if depth == len(order):
            yield list(mapping)
            return
        position = order[depth]
        for column in candidates[position]:
            if column not in used:
                used.add(column)
                mapping[position] = column
                yield from extend(depth + 1)
                used.discard(column)

    yield from extend(0)


def _rows_equal(gold: list[tuple], pred: list[tuple], ordered: bool, rel_tol: float) -> bool:
    if not ordered:
        gold = sorted(gold, key=lambda row: [_key(v) for v in row])
        pred = sorted(pred, key=lambda row: [_key(v) for v in row])
    return all(
        len(a) == len(b) and all(values_equal(x, y, rel_tol) for x, y in zip(a, b, strict=True))
        for a, b in zip(gold, pred, strict=True)
    )
