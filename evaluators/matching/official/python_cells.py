"""The scorers' per-cell loop, for columns of unusual Python objects, and words about a miss."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evaluators.matching.kernels.numeric import first_false, isclose
from evaluators.matching.official.column_views import SHORT, Column, scorer_key, sort_as_scorers
from evaluators.matching.verdicts import cells_differ

_WORDS_CELLS = 5000  # cells compared to find the closest column, for the message only
_WORDS_SORT_LIMIT = 50_000  # beyond this, Python-sorting odd columns for words is not worth it


def literal_match(v1: list, v2: list, ignore_order: bool, tol: float) -> bool:
    """The scorers' per-cell loop, for columns holding unusual Python objects."""
    try:
        if ignore_order:
            sorted1, sorted2 = sort_as_scorers(v1), sort_as_scorers(v2)
            if sorted1 is None or sorted2 is None:
                return False  # the scorers' own sort raised
            v1, v2 = sorted1, sorted2
        if len(v1) != len(v2):
            return False
        for a, b in zip(v1, v2, strict=False):
            if pd.isna(a) and pd.isna(b):
                continue
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if not math.isclose(float(a), float(b), abs_tol=tol):
                    return False
            elif a != b:
                return False
        return True
    except Exception:  # the scorers count any exception inside a comparison as a mismatch
        return False


def describe_miss(g: Column, pred_cols: list[Column], ignore_order: bool, tol: float) -> str:
    """Words for a gold column that found no partner: the closest candidate and a differing cell."""
    head = f"gold column {g.name!r} ({g.n} rows) matches no predicted column"
    same_len = [p for p in pred_cols if p.n == g.n]
    if g.kind != "lit" and any(p.kind == g.kind for p in same_len):
        same_len = [p for p in same_len if p.kind == g.kind]  # a number never equals a string: look among likes
    if not same_len:
        lengths = sorted({p.n for p in pred_cols})
        return (
            f"{head}: the prediction has {lengths[0] if lengths else 0} row(s)"
            if len(lengths) <= 1
            else f"{head}: predicted lengths {lengths}"
        )
    scored = [(_agreement(g, p, ignore_order, tol), i, p) for i, p in enumerate(same_len)]
    share, _, best = max(scored, key=lambda t: (t[0][0], -t[1]))
    where = (
        f"; first difference at {'sorted ' if ignore_order else ''}row {share[1]}: " + cells_differ(share[2], share[3])
        if share[1] is not None
        else ""
    )
    return f"{head}; closest is {best.name!r} ({share[0]:.0%} of cells agree){where}"


def _agreement(g: Column, p: Column, ignore_order: bool, tol: float):
    if g.kind == p.kind == "num":
        return _number_agreement(g, p, ignore_order, tol)
    a, b = _display_values(g, ignore_order), _display_values(p, ignore_order)
    same = np.array(
        [_cell_equal(x, y, tol) for x, y in zip(a[:_WORDS_CELLS], b[:_WORDS_CELLS], strict=False)], dtype=bool
    )
    return _summary(same, a, b)


def _number_agreement(g: Column, p: Column, ignore_order: bool, tol: float):
    """The same figures as the per-cell path, from arrays (official_order is the scorers' sort; past
    SHORT rows, where that sort costs a string per value, the words use numeric order instead)."""
    og, op = (_words_order(g), _words_order(p)) if ignore_order else (slice(None), slice(None))
    gn, pn = g.num[og][:_WORDS_CELLS], p.num[op][:_WORDS_CELLS]
    g_null, p_null = g.null[og][:_WORDS_CELLS], p.null[op][:_WORDS_CELLS]
    close = isclose(gn, pn, tol)
    same = close if g.null_as_zero else (g_null & p_null) | (~g_null & ~p_null & close)
    index = first_false(same) if len(same) else None
    if index is None:
        return _summary(same, [], [])
    return (float(same.mean()), index, _cell(g, og, index), _cell(p, op, index))


def _words_order(c: Column) -> np.ndarray:
    if c.n <= SHORT:
        return c.official_order
    return np.argsort(np.where(c.null & ~np.bool_(c.null_as_zero), np.inf, c.num), kind="stable")


def _cell(c: Column, order, index: int):
    """The Python value the scorers see at sorted position `index`."""
    position = int(np.arange(c.n)[order][index])
    if c.null[position]:
        return 0 if c.null_as_zero else (float("nan") if c.null_text == "nan" else pd.NA)
    return c.exact[position].item()


def _summary(same: np.ndarray, a, b):
    index = first_false(same) if len(same) else None
    share = float(same.mean()) if len(same) else 0.0
    return (share, index, a[index] if index is not None else None, b[index] if index is not None else None)


def _display_values(c: Column, ignore_order: bool) -> list:
    values = list(c.base.items) if c.kind == "tok" else c.python_values()
    if ignore_order and len(values) <= _WORDS_SORT_LIMIT:
        return sorted(values, key=scorer_key)
    return values


def _cell_equal(a, b, tol) -> bool:
    return literal_match([a], [b], False, tol)
