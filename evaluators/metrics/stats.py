"""Intervals and significance for scores: bootstrap intervals and McNemar's exact test.

Seeded, so the same report always gives the same interval.  numpy does the resampling; the binomial tail is
computed exactly with integers (no scipy needed; the tests check it against scipy's `binomtest`).
"""

from __future__ import annotations

from math import comb

SEED = 20241
RESAMPLES = 2000


def bootstrap_ci(
    scores: list[float], level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float] | None:
    """Percentile interval of the mean over instances resampled with replacement; None for no instances."""
    import numpy as np

    if not scores:
        return None
    values = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def paired_bootstrap_ci(
    baseline: list[float], candidate: list[float], level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float] | None:
    """Percentile interval of mean(candidate - baseline), instances resampled jointly."""
    if len(baseline) != len(candidate):
        raise ValueError("paired scores need the same instances")
    return bootstrap_ci([c - b for b, c in zip(baseline, candidate, strict=True)], level, resamples, seed)


def mcnemar_exact(fixed: int, broken: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of `fixed` successes in `fixed + broken` trials at p=1/2
    (the discordant pairs), as scipy's `binomtest(..., alternative="two-sided")` computes it."""
    n = fixed + broken
    if n == 0:
        return 1.0
    probabilities = [comb(n, k) for k in range(n + 1)]  # each over 2**n
    observed = probabilities[fixed]
    # scipy: sum the probabilities not greater than the observed one (with a relative tolerance of 1e-7)
    total = sum(p for p in probabilities if p <= observed * (1 + 1e-7))
    return min(1.0, total / 2**n)
