"""Vectorised numeric helpers shared by the official and strict rules."""

from __future__ import annotations

import numpy as np

from evaluators.limits import BLOCK_CELLS

REL_TOL = 1e-9


def isclose(a: np.ndarray, b: np.ndarray, abs_tol: float, rel_tol: float = REL_TOL) -> np.ndarray:
    """Element-wise `math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)`, to the bit."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(b - a)
        near = (diff <= np.abs(rel_tol * b)) | (diff <= np.abs(rel_tol * a)) | (diff <= abs_tol)
        # math.isclose: equal values (including equal infinities) are close; any other infinity is not.
        return (a == b) | (near & np.isfinite(a) & np.isfinite(b))


def first_false(mask: np.ndarray) -> int | None:
    """Index of the first False in a boolean array, or None when all are True."""
    if mask.all():
        return None
    return int(np.argmin(mask))


TIES_SHARE = 4  # when more than 1/TIES_SHARE of the rows need repair, one full argsort is cheaper


def hash_order(h: np.ndarray) -> np.ndarray:
    """`np.argsort(h, kind="stable")` for uint64 hashes, several times faster on large arrays (`hash_sorted`)."""
    return hash_sorted(h)[0]


def hash_sorted(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(`np.argsort(h, kind="stable")`, `h` in that order) for uint64 hashes, several times faster on large
    arrays; the sorted hashes come with the order because making the order reads them (a gather at
    random rows that a caller comparing two sides' hashes would otherwise make again).

    Each hash's low bits are replaced by its row number and the packed values are sorted (a plain
    sort is much faster than an argsort); the row numbers then read off an order that is right on the
    hashes' high bits, with ties by row.  Rows whose high bits agree but whose hashes differ (two
    distinct hashes sharing their high bits: about n**2 / 2**(65 - bits) groups, a few dozen at 10**7
    rows) are re-sorted within their groups, all groups in one sort, so the result is exact.
    """
    n = len(h)
    if n < 2:
        return np.arange(n, dtype=np.int64), h.copy()
    bits = int(n - 1).bit_length()
    low = np.uint64((1 << bits) - 1)
    packed = h & ~low
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & low).view(np.int64)
    ranked = h[order]
    bad = np.flatnonzero(ranked[1:] < ranked[:-1])
    if not len(bad):
        return order, ranked
    top = packed >> np.uint64(bits)
    groups = np.unique(top[bad])  # uint64, like `top`: searchsorted then converts nothing
    starts, ends = np.searchsorted(top, groups, "left"), np.searchsorted(top, groups, "right")
    sizes = ends - starts
    if int(sizes.sum()) * TIES_SHARE > n:
        order = np.argsort(h, kind="stable")
        return order, h[order]
    # The positions of every group to repair, groups in ascending order: a stable sort of their hashes
    # orders each group by hash (groups never mix: a group's high bits order it before the next one's),
    # and within equal hashes keeps the packed order, which is by row.
    spots = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    rows = order[spots]
    repaired = rows[np.argsort(h[rows], kind="stable")]
    order[spots] = repaired
    ranked[spots] = h[repaired]  # the rows outside the groups kept their places
    return order, ranked


BLOCK = BLOCK_CELLS  # cells per step of all_close: its temporaries stay small, and a miss stops the scan early


def all_close(a: np.ndarray, b: np.ndarray, abs_tol: float, nan_equal: bool = False) -> bool:
    """`isclose(a, b, abs_tol).all()` (NaN against NaN counted close when `nan_equal`), block by block.

    With a finite abs_tol, math.isclose(x, y) is `x == y`, or else |x - y| <= max(rel * max(|x|, |y|), abs_tol)
    with |x - y| finite: rel * |y| rounds monotonically, so the largest of the three bounds is the test, and
    an infinite difference comes only from an infinite input (or an overflow, which no finite bound covers)."""
    if len(a) != len(b):
        return False
    if not np.isfinite(abs_tol):
        close = isclose(a, b, abs_tol)
        if nan_equal:
            close |= np.isnan(a) & np.isnan(b)
        return bool(close.all())
    with np.errstate(invalid="ignore", over="ignore"):
        for start in range(0, len(a), BLOCK):
            x = a[start : start + BLOCK].astype(np.float64, copy=False)
            y = b[start : start + BLOCK].astype(np.float64, copy=False)
            diff = np.subtract(y, x)
            np.abs(diff, out=diff)
            bound = np.maximum(np.abs(x), np.abs(y))
            bound *= REL_TOL
            np.maximum(bound, abs_tol, out=bound)
            close = diff <= bound
            close &= diff != np.inf
            close |= x == y
            if nan_equal:
                close |= np.isnan(x) & np.isnan(y)
            if not close.all():
                return False
    return True
