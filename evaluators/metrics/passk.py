"""Unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language
Models Trained on Code", the HumanEval paper).

For one problem with ``n`` sampled attempts of which ``c`` are correct,
``pass@k = 1 - C(n-c, k) / C(n, k)``: the probability that a random size-k
subset of the n attempts contains at least one correct one.  The binomial
ratio overflows or loses precision for large n, so we use the paper's product
form ``1 - prod_{i=n-c+1}^{n} (1 - k/i)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["pass_at_k", "mean_pass_at_k"]


def _check_counts(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k is only defined for 1 <= k <= n={n}, got k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one instance with ``n`` attempts, ``c`` correct."""
    _check_counts(n, c, k)
    if n - c < k:  # every size-k subset must contain a correct attempt
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean pass@k over instances given as ``(n, c)`` pairs (benchmark score).

    Raises ValueError when there are no instances or any instance has n < k.
    """
    scores = [pass_at_k(n, c, k) for n, c in counts]
    if not scores:
        raise ValueError("mean pass@k over zero instances is undefined")
    return math.fsum(scores) / len(scores)
