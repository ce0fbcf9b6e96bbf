"""Intervals and significance for scores: bootstrap intervals and McNemar's exact test.

Seeded, so the same report always gives the same interval.  numpy does the resampling; the binomial tail is
computed exactly with integers (no scipy needed; the tests check it against scipy's `binomtest`).
Scores that are all 0 or 1 (every benchmark's pass or fail) need no resampling: the mean of n of them drawn
with replacement is Binomial(n, mean) / n exactly, so the interval is read from that distribution, what the
resamples only approximate (and no numpy is imported for a report of passes and fails).
"""

from __future__ import annotations

from math import comb, exp, lgamma, log, log1p, sqrt

SEED = 20241
RESAMPLES = 2000


def bootstrap_ci(
    scores: list[float], level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float] | None:
    """Percentile interval of the mean over instances resampled with replacement; None for no instances."""
    if not scores:
        return None
    if all(score == 0 or score == 1 for score in scores):
        return binary_interval(len(scores), int(sum(scores)), level)
    import numpy as np

    values = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def binary_interval(n: int, passed: int, level: float = 0.95) -> tuple[float, float]:
    """The bootstrap's percentile interval for `passed` ones among n scores of 0 or 1, exactly: the quantiles
    of Binomial(n, passed / n) / n (the smallest value whose cumulative probability reaches each level)."""
    p = passed / n
    if passed in (0, n):
        return p, p
    spread = sqrt(n * p * (1 - p))
    first, last = max(0, int(n * p - 12 * spread)), min(n, int(n * p + 12 * spread) + 1)  # beyond: < 1e-30
    base, log_p, log_q = lgamma(n + 1), log(p), log1p(-p)
    targets, found, total = [(1 - level) / 2, (1 + level) / 2], [], 0.0
    for k in range(first, last + 1):
        total += exp(base - lgamma(k + 1) - lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        while targets and total >= targets[0] * (1 - 1e-12):
            targets.pop(0)
            found.append(k / n)
        if not targets:
            break
    found += [last / n] * len(targets)
    return found[0], found[1]


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
