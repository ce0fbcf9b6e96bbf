"""Vectorised numeric helpers shared by the official and strict rules."""

from __future__ import annotations

import numpy as np

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
