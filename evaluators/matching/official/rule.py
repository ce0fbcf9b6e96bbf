"""The public Spider2 table rule, vectorised.

Rule: restrict the gold to `condition_cols`; each gold column must equal some
predicted column as a vector (names ignored, extra predicted columns allowed,
equal lengths).  With `ignore_order` each vector is sorted on its own by the
key (x is None, str(x), x is a number).  NULL equals NULL; numbers are equal
under `math.isclose(a, b, abs_tol=tol)`; anything else must be `==`.

Speed comes from never sorting by strings unless it can change the verdict:
two vectors holding the same values of the same Python type (and NULLs of
the same flavour) line up identically under any deterministic sort, so they
match; two vectors whose numbers differ beyond tolerance fail under any
alignment.  The first kind is usually proven by lining up whole rows
(`row_pairing.py`: identical cells under one permutation mean identical
multisets); otherwise by comparing sorted values or sorted job-wide codes.
Only vectors that are close but not identical pay for the scorers' string
sort, once per column and vectorised (`views.Column.official_order`); for
floats printed without exponent it is read off the numeric sort, by integer
part (`column_views.plain_floats_sorted`), and compared block by block
(`numeric.all_close`).  A gold column looks for a same-values partner among
the predicted columns of its signature (kind, length, NULLs, range) first.
Presets grading the same files share views, row pairings and proofs of
identity (identical with NULL kept as NULL stays identical with NULL as 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from evaluators.matching.kernels import row_pairing
from evaluators.matching.kernels.numeric import all_close, isclose
from evaluators.matching.kernels.tokens import TokenSpace
from evaluators.matching.official import small_tables
from evaluators.matching.official.column_views import Column, FrameViews
from evaluators.matching.official.python_cells import describe_miss, literal_match
from evaluators.matching.verdicts import Verdict

_SAMPLE = 33  # positions checked before a full comparison, to reject most pairs cheaply
_IDENTITY_MISSES = 3  # gold columns without an identical partner in table order before that look stops


@dataclass(frozen=True)
class Selection:
    """Some columns of a gold frame, by position (views are shared with the whole frame)."""

    frame: pd.DataFrame
    positions: tuple


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
    return Selection(gold, _positions(list(condition_cols), gold.shape[1]))


def _positions(cols: list, width: int) -> tuple:
    """What `frame.iloc[:, cols]` would select, by position; the same IndexError when it fails."""
    if all(type(c) is int and -width <= c < width for c in cols):
        return tuple(c % width for c in cols)
    # Anything unusual (bools, numpy ints, out of range): iloc's own checks on a stand-in.
    return tuple(int(i) for i in pd.Series(np.arange(width)).iloc[cols])


def compare(
    pred: pd.DataFrame, gold, *, ignore_order: bool, tol: float, null_as_zero: bool = False, views=None
) -> Verdict:
    """Does `pred` pass the official rule against the (already restricted) `gold`?"""
    if isinstance(gold, pd.Series):
        return _series_quirk(gold)
    views = views or ViewCache()
    if views.tiny_match(pred, gold, ignore_order, tol, null_as_zero):
        return _all_found(gold.positions if isinstance(gold, Selection) else gold.columns)
    if null_as_zero and not (views.has_nulls(pred) or views.has_nulls(gold)):
        null_as_zero = False  # nothing to read as 0: share the views and proofs of the other presets
    gold_cols = views.columns(gold, null_as_zero)
    pred_cols = views.columns(pred, null_as_zero)
    rows = views.pairing(pred, gold, null_as_zero) if ignore_order else None
    alike = _by_signature(pred_cols)
    # Unpaired rows compared in table order: after a few gold columns with no identical partner the
    # prediction is not in the gold's order, and the look costs a probe per look-alike (wide tables: many).
    misses, unordered = 0, ignore_order and rows is None
    for g in gold_cols:
        look = not unordered or misses < _IDENTITY_MISSES
        if views.proven(g, pred, ignore_order) or (
            look and any(_identical(g, p, rows) for p in _likely_partners(g, pred_cols))
        ):
            views.prove(g, pred, ignore_order)
            continue
        misses += look
        same: list = []
        candidates = _candidates(g, pred_cols, alike, ignore_order, same)
        if not any(_vectors_match(g, p, ignore_order, tol) for p in candidates):
            return Verdict(0.0, _failure_reason(g, pred_cols), describe_miss(g, pred_cols, ignore_order, tol))
        if same:  # the first candidate, holding g's very values: a match under every preset, as an identity is
            views.prove(g, pred, ignore_order)
            g.drop_sorted()  # the other presets find g proven: its sorted copy would only hold memory
            same[0].drop_sorted()  # and the partner's: made again only for a gold column of the same values
    if all(views.proven(g, pred, ignore_order) for g in gold_cols):
        for p in pred_cols:
            p.drop_sorted()
    return _all_found(gold_cols)


def _all_found(gold_cols) -> Verdict:
    return Verdict(1.0, "match", f"all {len(gold_cols)} gold column(s) found a matching predicted column")


def _series_quirk(gold: pd.Series) -> Verdict:
    if len(gold) == 0:
        return Verdict(1.0, "match", "scalar condition_cols on an empty gold: nothing to compare")
    return Verdict(
        0.0,
        "invalid_spec",
        "condition_cols is a single number, not a list: the suite fails every comparison for such a spec",
    )


def _failure_reason(g: Column, pred_cols: list[Column]) -> str:
    if not pred_cols:
        return "column_not_found"
    if all(p.n != g.n for p in pred_cols):
        return "row_count_mismatch"
    return "column_not_found"


class ViewCache:
    """Column views per frame and row pairings per frame pair, shared by presets that read the same files."""

    def __init__(self):
        self.tokens = TokenSpace()
        self._frames: dict = {}
        self._pairings: dict = {}
        self._proven: set = set()
        self._vectors_cache: dict = {}
        self._lists_cache: dict = {}
        self._nulls: dict = {}
        self._exact: dict = {}

    def frame(self, frame: pd.DataFrame) -> FrameViews:
        key = id(frame)
        if key not in self._frames:
            self._frames[key] = FrameViews(frame, self.tokens)  # holds the frame, so its id stays unique
        return self._frames[key]

    def columns(self, table, null_as_zero: bool) -> list[Column]:
        if isinstance(table, Selection):
            return self.frame(table.frame).columns(list(table.positions), null_as_zero)
        return self.frame(table).columns(list(range(table.shape[1])), null_as_zero)

    def tiny_match(self, pred: pd.DataFrame, gold, ignore_order: bool, tol: float, null_as_zero: bool) -> bool:
        """A match shown by the scorers' own loop on small plain tables.  False when the loop does not
        apply or finds a miss: the views then reach the same verdict and describe it."""
        frame, positions = (
            (gold.frame, gold.positions) if isinstance(gold, Selection) else (gold, tuple(range(gold.shape[1])))
        )
        if not small_tables.fits(len(frame), len(positions), len(pred), pred.shape[1]):
            return False
        gold_vectors = self._vectors(frame, positions, null_as_zero, ignore_order)
        pred_vectors = self._vectors(pred, tuple(range(pred.shape[1])), null_as_zero, ignore_order)
        if gold_vectors is None or pred_vectors is None:
            return False
        # Vectors are cached, so their ids name them; an exact match holds for every preset's tolerance.
        key = (id(gold_vectors), id(pred_vectors))
        if key not in self._exact:
            self._exact[key] = small_tables.all_found_exactly(gold_vectors, pred_vectors)
        return self._exact[key] or small_tables.all_found(gold_vectors, pred_vectors, tol)

    def _vectors(self, frame: pd.DataFrame, positions: tuple, null_as_zero: bool, ignore_order: bool):
        key = (id(frame), positions, null_as_zero, ignore_order)
        if key not in self._vectors_cache:
            lists = self._lists(frame, positions)
            if lists is None:
                self._vectors_cache[key] = None
            elif null_as_zero and not small_tables.has_null(lists):  # nothing to read as 0: the other presets' vectors
                self._vectors_cache[key] = self._vectors(frame, positions, False, ignore_order)
            else:
                self._vectors_cache[key] = small_tables.scorer_vectors(lists, null_as_zero, ignore_order)
        return self._vectors_cache[key]

    def _lists(self, frame: pd.DataFrame, positions: tuple):
        key = (id(frame), positions)
        if key not in self._lists_cache:
            # The frame is kept beside its lists so that its id is not reused while cached.
            self._lists_cache[key] = (frame, small_tables.python_lists(frame, positions))
        return self._lists_cache[key][1]

    def has_nulls(self, table) -> bool:
        frame = table.frame if isinstance(table, Selection) else table
        key = id(frame)
        if key not in self._nulls:
            self._nulls[key] = (frame, bool(frame.isna().to_numpy().any()))  # the frame keeps its id unique
        return self._nulls[key][1]

    def proven(self, g: Column, pred: pd.DataFrame, ignore_order: bool) -> bool:
        """Has g been shown identical to a column of pred?  Shown without NULL-as-zero, it holds with it too."""
        return (g.key, id(pred), ignore_order, False) in self._proven or (
            g.key,
            id(pred),
            ignore_order,
            g.null_as_zero,
        ) in self._proven

    def prove(self, g: Column, pred: pd.DataFrame, ignore_order: bool) -> None:
        self._proven.add((g.key, id(pred), ignore_order, g.null_as_zero))

    def pairing(self, pred: pd.DataFrame, gold, null_as_zero: bool) -> np.ndarray | None:
        key = (id(pred), id(gold.frame if isinstance(gold, Selection) else gold))
        if key not in self._pairings:
            gold_cols, pred_cols = self.columns(gold, null_as_zero), self.columns(pred, null_as_zero)
            pairings = row_pairing.row_pairings(_keys(gold_cols), _keys(pred_cols))
            self._pairings[key] = row_pairing.best_pairing(
                pairings,
                lambda: [
                    [partial(_cells_identical, g, p) for p in _likely_partners(g, pred_cols)]
                    for g in gold_cols[: row_pairing.JUDGES]
                ],
            )
        return self._pairings[key]


def _keys(columns: list[Column]) -> list[np.ndarray]:
    return [c.exact for c in columns if c.kind == "num" and c.key_type != "bool" and not c.null_count]


def _likely_partners(g: Column, pred_cols: list[Column]):
    """Predicted columns worth a direct cell-by-cell check: same kind, length, NULLs and range."""
    for p in pred_cols:
        if p.kind != g.kind or p.n != g.n or p.null_count != g.null_count or g.kind == "lit":
            continue
        if g.kind == "num" and (g.key_type != p.key_type or g.value_range != p.value_range):
            continue
        if g.kind == "tok" and (g.base.space != p.base.space or g.text_bytes != p.text_bytes):
            continue
        yield p


def _identical(g: Column, p: Column, rows) -> bool:
    """Is every cell of p identical to the cell of g that `rows` pairs it with (identity when None)?"""
    if g.n != p.n or (rows is not None and len(rows) != g.n):
        return False
    if g.n > 4 * row_pairing.PROBE:
        probe = row_pairing.probe_rows(g.n)
        if not _cells_identical(g, p, probe if rows is None else rows[probe], probe):
            return False
    return _cells_identical(g, p, rows, None)


def _cells_identical(g: Column, p: Column, g_rows, p_rows) -> bool:
    """Cells of g at g_rows identical to cells of p at p_rows (None: all rows in order)?"""
    null = row_pairing.take(g.null, g_rows)
    if not np.array_equal(null, row_pairing.take(p.null, p_rows)):
        return False
    if g.kind == "num":
        if g.null_count and not g.null_as_zero and g.null_text != p.null_text:
            return False
        return row_pairing.same_cells(row_pairing.take(g.exact, g_rows), row_pairing.take(p.exact, p_rows), null)
    if (
        not g.null_as_zero
        and g.null_count
        and not np.array_equal(row_pairing.take(g.base.flavour, g_rows), row_pairing.take(p.base.flavour, p_rows))
    ):
        return False
    return row_pairing.same_cells(
        row_pairing.take(g.base.values, g_rows), row_pairing.take(p.base.values, p_rows), null
    )


def _by_signature(pred_cols: list[Column]) -> dict:
    """Predicted columns by `_signature`, in their order."""
    alike: dict = {}
    for p in pred_cols:
        alike.setdefault(_signature(p), []).append(p)
    return alike


def _signature(c: Column) -> tuple:
    """What two columns of the same values (`_same_values`) share, cheap to compare: a wide table's gold
    column then looks only at its few look-alikes for a same-values partner, not at every predicted column."""
    if c.kind == "tok":
        return ("tok", c.n, c.null_count, c.base.space)
    if c.kind == "num":  # ints and floats of one multiset have one range (as floats: a necessary condition)
        low_high = c.value_range
        return ("num", c.n, c.null_count, None if low_high is None else (float(low_high[0]), float(low_high[1])))
    return ("lit", id(c))  # never the same values as another column


def _candidates(g: Column, pred_cols: list[Column], alike: dict, ignore_order: bool, same: list):
    """Predicted columns, those that can be equal without tolerance first (each group in table order);
    those are also put in `same`."""
    for p in alike.get(_signature(g), ()):  # lazily: the caller stops at the first match, usually the first
        if _same_values(g, p, ignore_order):
            same.append(p)
            yield p
    yield from (p for p in pred_cols if not any(p is q for q in same))


def _same_values(g: Column, p: Column, ignore_order: bool) -> bool:
    if g.kind != p.kind or g.n != p.n or g.kind == "lit" or g.null_count != p.null_count:
        return False
    if g.kind == "tok":
        if g.base.space != p.base.space or _bytes_differ(g, p):
            return False
        if not ignore_order:
            return _identical(g, p, None)
        return g.same_tokens(p)
    if ignore_order and {g.key_type, p.key_type} == {"int", "float"}:
        return _ints_as_floats(g, p) and bool(np.array_equal(g.sorted_exact, p.sorted_exact))
    if g.key_type != p.key_type or (g.null_count and not g.null_as_zero and g.null_text != p.null_text):
        return False
    if ignore_order:
        if g.key_type == "int":
            counted = _same_int_counts(g, p)
            if counted is not None:
                return counted
        return np.array_equal(g.sorted_exact, p.sorted_exact) and g.negative_zeros == p.negative_zeros
    return np.array_equal(g.null, p.null) and np.array_equal(g.exact[~g.null], p.exact[~p.null])


def _same_int_counts(g: Column, p: Column) -> bool | None:
    """Do two int columns hold one multiset, told by their value counts (`Column.int_counts`: no sort)?
    None when either spans too much to count (then their sorted values tell)."""
    mine, theirs = g.int_counts, p.int_counts
    if mine is None or theirs is None:
        return None
    return mine[0] == theirs[0] and bool(np.array_equal(mine[1], theirs[1]))


def _bytes_differ(g: Column, p: Column) -> bool:
    """Two text columns stored by pyarrow whose strings add up to different lengths hold different strings."""
    return g.text_bytes is not None and p.text_bytes is not None and g.text_bytes != p.text_bytes


def _ints_as_floats(g: Column, p: Column) -> bool:
    """Sorting by str(x) puts ints and the same values as floats in one order when the floats are whole,
    below WHOLE_FLOAT_LIMIT (so printed as the int plus ".0", never in exponent form) and not -0.0: where one int's
    text is a prefix of another's, the float texts differ first at ".", which sorts before any digit.
    Then equal multisets line up value for value, as the scorers compare them."""
    ints, floats = (g, p) if p.key_type == "float" else (p, g)
    return not ints.null_count and floats.whole_floats


def _vectors_match(g: Column, p: Column, ignore_order: bool, tol: float) -> bool:
    if g.n != p.n:
        return False
    if g.n == 0:
        return True  # two empty vectors are equal whatever their types
    if g.kind == "lit" or p.kind == "lit" or _mixed_datetimes(g, p):
        if not ignore_order:
            return literal_match(g.python_values(), p.python_values(), False, tol)
        a, b = g.scorer_sorted, p.scorer_sorted  # each column sorted once, not once per pair
        return a is not None and b is not None and literal_match(a, b, False, tol)
    if g.kind != p.kind:
        return False  # a string or timestamp never equals a number or NULL
    if g.kind == "tok":
        return _tokens_match(g, p, ignore_order)
    return _numbers_match(g, p, ignore_order, tol)


def _mixed_datetimes(g: Column, p: Column) -> bool:
    """Timestamps of two time zones: equal instants print differently, so only the literal rule knows."""
    return (
        g.kind == p.kind == "tok"
        and g.base.space != p.base.space
        and isinstance(g.base.space, tuple)
        and isinstance(p.base.space, tuple)
    )


def _tokens_match(g: Column, p: Column, ignore_order: bool) -> bool:
    if g.base.space != p.base.space:
        return False
    if not ignore_order:
        null = g.null & p.null  # NULLs of any flavour are equal; a NULL never equals a value
        if not np.array_equal(g.null, p.null):
            return False
        return row_pairing.same_cells(g.base.values, p.base.values, null)
    if g.null_flavours != p.null_flavours and g.null.any() and p.null.any():
        # NaN, None and NaT are equal but sort apart: only the literal rule knows where they land.
        return literal_match(g.python_values(), p.python_values(), True, 0.0)
    return g.same_tokens(p)


def _numbers_match(g: Column, p: Column, ignore_order: bool, tol: float) -> bool:
    if not ignore_order:
        if not g.null_as_zero and not np.array_equal(g.null, p.null):
            return False
        keep = slice(None) if g.null_as_zero else ~g.null
        return bool(isclose(g.num[keep], p.num[keep], tol).all())
    if not g.null_as_zero and g.null_count != p.null_count:
        return False
    if _same_values(g, p, True):
        return True  # (their sorted numbers are then alike, so close)
    if not _sorted_close(g.sorted_num, p.sorted_num, tol):
        return False  # sorted order is the best alignment under a tolerance: no other can pass
    return _sorted_match(g, p, tol)


def _sorted_close(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    if len(a) != len(b):
        return False
    if len(a) > 4 * _SAMPLE:
        probe = np.linspace(0, len(a) - 1, _SAMPLE).astype(np.int64)
        if not isclose(a[probe], b[probe], tol).all():
            return False
    return all_close(a, b, tol)


def _sorted_match(g: Column, p: Column, tol: float) -> bool:
    """Both columns in the scorers' order (`Column.official_sorted`), compared cell by cell."""
    (gn, g_null), (pn, p_null) = g.official_sorted, p.official_sorted
    if g.null_as_zero:
        return all_close(gn, pn, tol)
    # A NULL matches only a NULL; NULL cells hold NaN and no other cell does (NaN is the NULL of a float).
    return bool(np.array_equal(g_null, p_null)) and all_close(gn, pn, tol, nan_equal=True)
