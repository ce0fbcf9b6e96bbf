"""The public Spider2 table rule, vectorised.

Rule: restrict the gold to `condition_cols`; each gold column must equal some
predicted column as a vector (names ignored, extra predicted columns allowed,
equal lengths).  With `ignore_order` each vector is sorted on its own by the
key (x is None, str(x), x is a number).  NULL equals NULL; numbers are equal
under `math.isclose(a, b, abs_tol=tol)`; anything else must be `==`.

Speed comes from never sorting by strings unless it can change the verdict:
two vectors whose numbers differ beyond tolerance fail under any alignment,
and two vectors holding the same values of the same Python type line up
identically under any deterministic sort.  Only the cases in between pay for
the scorers' string sort, and then once per column, not once per pair.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .numeric import first_false, isclose
from .views import Column, TokenSpace, official_columns

_SAMPLE = 33  # positions checked before a full comparison, to reject most pairs cheaply


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str  # "match", "column_not_found", "row_count_mismatch", ...
    detail: str


def select_condition_cols(gold: pd.DataFrame, condition_cols, wrap_scalar: bool):
    """The gold part the rule compares; raises IndexError for out-of-range columns."""
    if condition_cols is None or condition_cols == []:
        return gold
    if not isinstance(condition_cols, (list, tuple)):
        if not wrap_scalar:
            # The current suite passes the scalar to iloc and gets a Series; its
            # vectors are then scalars, every comparison raises, and the table fails.
            return gold.iloc[:, condition_cols]
        condition_cols = [condition_cols]
    return gold.iloc[:, list(condition_cols)]


def compare(pred: pd.DataFrame, gold: pd.DataFrame, *, ignore_order: bool, tol: float,
            null_as_zero: bool = False, views=None) -> Verdict:
    """Does `pred` pass the official rule against the (already restricted) `gold`?"""
    if isinstance(gold, pd.Series):
        return _series_quirk(gold)
    views = views or ViewCache()
    gold_cols = views.columns(gold, null_as_zero)
    pred_cols = views.columns(pred, null_as_zero)
    for g in gold_cols:
        if not any(_vectors_match(g, p, ignore_order, tol) for p in _candidates(g, pred_cols, ignore_order)):
            return Verdict(False, _failure_reason(g, pred_cols), describe_miss(g, pred_cols, ignore_order, tol))
    return Verdict(True, "match", f"all {len(gold_cols)} gold column(s) found a matching predicted column")


def _series_quirk(gold: pd.Series) -> Verdict:
    if len(gold) == 0:
        return Verdict(True, "match", "scalar condition_cols on an empty gold: nothing to compare")
    return Verdict(False, "invalid_spec", "condition_cols is a single number, not a list: the suite fails "
                   "every comparison for such a spec")


def _failure_reason(g: Column, pred_cols: list[Column]) -> str:
    if not pred_cols:
        return "column_not_found"
    if all(p.n != g.n for p in pred_cols):
        return "row_count_mismatch"
    return "column_not_found"


class ViewCache:
    """Column views per (frame, NULL handling), shared by presets that read the same files."""

    def __init__(self):
        self.tokens = TokenSpace()
        self._views: dict = {}

    def columns(self, frame: pd.DataFrame, null_as_zero: bool) -> list[Column]:
        key = (id(frame), null_as_zero)
        if key not in self._views:
            self._views[key] = (frame, official_columns(frame, null_as_zero, self.tokens))
        return self._views[key][1]


def _candidates(g: Column, pred_cols: list[Column], ignore_order: bool):
    """Predicted columns, those that can be equal without tolerance first."""
    same = [p for p in pred_cols if _same_values(g, p, ignore_order)]
    return same + [p for p in pred_cols if not any(p is s for s in same)]


def _same_values(g: Column, p: Column, ignore_order: bool) -> bool:
    if g.kind != p.kind or g.n != p.n or g.kind == "lit":
        return False
    if g.kind == "tok":
        a, b = (g.sorted_codes, p.sorted_codes) if ignore_order else (g.codes, p.codes)
        return bool(np.array_equal(a, b))
    if g.key_type != p.key_type or g.null_count != p.null_count:
        return False
    if ignore_order:
        return np.array_equal(g.sorted_exact, p.sorted_exact) and g.negative_zeros == p.negative_zeros
    return np.array_equal(g.null, p.null) and np.array_equal(g.exact[~g.null], p.exact[~p.null])


def _vectors_match(g: Column, p: Column, ignore_order: bool, tol: float) -> bool:
    if g.n != p.n:
        return False
    if g.kind == "lit" or p.kind == "lit":
        return literal_match(g.python_values(), p.python_values(), ignore_order, tol)
    if g.kind != p.kind:
        return False  # a string or timestamp never equals a number or NULL
    if g.kind == "tok":
        return _tokens_match(g, p, ignore_order)
    return _numbers_match(g, p, ignore_order, tol)


def _tokens_match(g: Column, p: Column, ignore_order: bool) -> bool:
    if not ignore_order:
        both_null = g.null & p.null
        return bool(np.all((g.codes == p.codes) | both_null))
    if g.null_flavours != p.null_flavours and g.null.any() and p.null.any():
        # NaN, None and NaT are equal but sort apart: only the literal rule knows where they land.
        return literal_match(list(g.items), list(p.items), True, 0.0)
    return bool(np.array_equal(g.sorted_codes, p.sorted_codes))


def _numbers_match(g: Column, p: Column, ignore_order: bool, tol: float) -> bool:
    if not ignore_order:
        if not g.null_as_zero and not np.array_equal(g.null, p.null):
            return False
        keep = slice(None) if g.null_as_zero else ~g.null
        return bool(isclose(g.num[keep], p.num[keep], tol).all())
    if not g.null_as_zero and g.null_count != p.null_count:
        return False
    if not _sorted_close(g.sorted_num, p.sorted_num, tol):
        return False  # sorted order is the best alignment under a tolerance: no other can pass
    if _same_values(g, p, True):
        return True
    return _aligned_match(g, p, g.official_order, p.official_order, tol)


def _sorted_close(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    if len(a) != len(b):
        return False
    if len(a) > 4 * _SAMPLE:
        probe = np.linspace(0, len(a) - 1, _SAMPLE).astype(np.int64)
        if not isclose(a[probe], b[probe], tol).all():
            return False
    return bool(isclose(a, b, tol).all())


def _aligned_match(g: Column, p: Column, g_order: np.ndarray, p_order: np.ndarray, tol: float) -> bool:
    gn, pn = g.num[g_order], p.num[p_order]
    if g.null_as_zero:
        return bool(isclose(gn, pn, tol).all())
    g_null, p_null = g.null[g_order], p.null[p_order]
    return bool(np.all((g_null & p_null) | (~g_null & ~p_null & isclose(gn, pn, tol))))


def _literal_key(x):
    return (x is None, str(x), isinstance(x, (int, float)))


def literal_match(v1: list, v2: list, ignore_order: bool, tol: float) -> bool:
    """The scorers' per-cell loop, for columns holding unusual Python objects."""
    try:
        if ignore_order:
            v1, v2 = sorted(v1, key=_literal_key), sorted(v2, key=_literal_key)
        if len(v1) != len(v2):
            return False
        for a, b in zip(v1, v2):
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
    if not same_len:
        lengths = sorted({p.n for p in pred_cols})
        return f"{head}: the prediction has {lengths[0] if lengths else 0} row(s)" if len(lengths) <= 1 \
            else f"{head}: predicted lengths {lengths}"
    scored = [(_agreement(g, p, ignore_order, tol), i, p) for i, p in enumerate(same_len)]
    share, _, best = max(scored, key=lambda t: (t[0][0], -t[1]))
    where = f"; first difference at {'sorted ' if ignore_order else ''}row {share[1]}: " \
            f"gold {share[2]!r} vs predicted {share[3]!r}" if share[1] is not None else ""
    return f"{head}; closest is {best.name!r} ({share[0]:.0%} of cells agree){where}"


def _agreement(g: Column, p: Column, ignore_order: bool, tol: float):
    a, b = _display_values(g, ignore_order), _display_values(p, ignore_order)
    same = np.array([_cell_equal(x, y, tol) for x, y in zip(a[:5000], b[:5000])], dtype=bool)
    index = first_false(same) if len(same) else None
    share = float(same.mean()) if len(same) else 0.0
    return (share, index, a[index] if index is not None else None, b[index] if index is not None else None)


def _display_values(c: Column, ignore_order: bool) -> list:
    values = list(c.items) if c.kind == "tok" else c.python_values()
    if ignore_order and len(values) <= 50_000:  # beyond that, words are not worth a slow sort
        return sorted(values, key=_literal_key)
    return values


def _cell_equal(a, b, tol) -> bool:
    return literal_match([a], [b], False, tol)
