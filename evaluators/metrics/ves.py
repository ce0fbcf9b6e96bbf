"""Valid Efficiency Score (VES, BIRD paper: Li et al. 2023, "Can LLM Already
Serve as A Database Interface?") and Reward-based VES (R-VES, BIRD mini-dev).

The caller runs gold and predicted SQL alternately N times (see
:func:`time_alternately`) and passes both timing lists per instance.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "TIME_FLOOR_S",
    "VesInstance",
    "VesSummary",
    "filter_outliers",
    "time_ratio",
    "rves_reward",
    "score_instance",
    "aggregate_ves",
    "time_alternately",
]

#: Mean timings are floored to this many seconds before dividing, so zero or
#: sub-resolution timings never divide by zero and two ~0 timings give ratio 1.
TIME_FLOOR_S = 1e-9

#: R-VES buckets from BIRD mini-dev: (lower bound on the time ratio, reward).
_RVES_BUCKETS = ((2.0, 1.25), (1.0, 1.0), (0.5, 0.75), (0.25, 0.5))
_RVES_BELOW = 0.25


@dataclass(frozen=True)
class VesInstance:
    """Per-instance efficiency result; timing fields are None when not timed."""

    correct: bool
    ratio: float | None  # mean(kept gold) / mean(kept pred), the raw time ratio
    ves: float  # sqrt(ratio) * 100, 0 when wrong
    reward: float  # R-VES bucket reward, 0 when wrong
    rves: float  # sqrt(reward) * 100
    gold_mean_s: float | None
    pred_mean_s: float | None
    pred_min_s: float | None
    pred_max_s: float | None
    pred_cv: float | None  # stdev / mean of kept pred timings: timing noise
    gold_dropped: int
    pred_dropped: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VesSummary:
    n_instances: int
    n_correct: int
    ves: float
    rves: float
    median_ratio: float | None  # over correct, timed instances

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def filter_outliers(times: Sequence[float]) -> list[float]:
    """Keep timings within mean ± 3σ (population σ, like BIRD's ``np.std``).

    Bounds are inclusive, so with σ = 0 everything is kept; fewer than 2
    timings are kept as is.  By Samuelson's inequality no point of n samples
    lies beyond sqrt(n-1)·σ, so nothing can be dropped unless n >= 11.
    """
    values = [float(t) for t in times]
    if any(t < 0 or not math.isfinite(t) for t in values):
        raise ValueError("timings must be finite, non-negative seconds")
    if len(values) < 2:
        return values
    sigma = statistics.pstdev(values)
    if sigma == 0:  # explicit: a rounded mean could sit a hair off equal timings
        return values
    mean = statistics.fmean(values)
    return [t for t in values if abs(t - mean) <= 3 * sigma]


def time_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """mean(gold) / mean(pred) after outlier filtering, means floored at TIME_FLOOR_S."""
    return _ratio_of_kept(filter_outliers(gold_times), filter_outliers(pred_times))


def _ratio_of_kept(gold: list[float], pred: list[float]) -> float:
    if not gold or not pred:
        raise ValueError("need at least one gold and one predicted timing")
    return max(statistics.fmean(gold), TIME_FLOOR_S) / max(statistics.fmean(pred), TIME_FLOOR_S)


def rves_reward(ratio: float) -> float:
    """BIRD mini-dev reward: >=2 -> 1.25, [1,2) -> 1, [0.5,1) -> 0.75, [0.25,0.5) -> 0.5, else 0.25."""
    for lower, reward in _RVES_BUCKETS:
        if ratio >= lower:
            return reward
    return _RVES_BELOW


def _cv(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.pstdev(values) / mean if mean > 0 else 0.0


def score_instance(correct: bool, gold_times: Sequence[float] = (), pred_times: Sequence[float] = ()) -> VesInstance:
    """Score one instance.  A correct instance needs timings; a wrong one scores 0
    but its ratio is still reported when timings are given."""
    timed = len(gold_times) > 0 and len(pred_times) > 0
    if correct and not timed:
        raise ValueError("a correct instance needs gold and predicted timings")
    gold = filter_outliers(gold_times) if timed else []
    pred = filter_outliers(pred_times) if timed else []
    ratio = _ratio_of_kept(gold, pred) if timed else None
    reward = rves_reward(ratio) if correct and ratio is not None else 0.0
    return VesInstance(
        correct=bool(correct),
        ratio=ratio,
        ves=math.sqrt(ratio) * 100 if correct and ratio is not None else 0.0,
        reward=reward,
        rves=math.sqrt(reward) * 100,
        gold_mean_s=statistics.fmean(gold) if gold else None,
        pred_mean_s=statistics.fmean(pred) if pred else None,
        pred_min_s=min(pred) if pred else None,
        pred_max_s=max(pred) if pred else None,
        pred_cv=_cv(pred),
        gold_dropped=len(gold_times) - len(gold) if timed else 0,
        pred_dropped=len(pred_times) - len(pred) if timed else 0,
    )


def aggregate_ves(instances: Iterable[VesInstance]) -> VesSummary:
    """VES and R-VES: means over ALL instances, wrong ones contributing 0."""
    items = list(instances)
    if not items:
        raise ValueError("VES over zero instances is undefined")
    ratios = [i.ratio for i in items if i.correct and i.ratio is not None]
    return VesSummary(
        n_instances=len(items),
        n_correct=sum(i.correct for i in items),
        ves=math.fsum(i.ves for i in items) / len(items),
        rves=math.fsum(i.rves for i in items) / len(items),
        median_ratio=statistics.median(ratios) if ratios else None,
    )


def time_alternately(
    run_gold: Callable[[], object], run_pred: Callable[[], object], iterations: int
) -> tuple[list[float], list[float]]:
    """Time gold then prediction, alternating, ``iterations`` times each.

    Interleaving spreads cache warm-up and machine load evenly over both
    queries.  Each callable must execute its query and fetch all rows.
    """
    if iterations < 1:
        raise ValueError("iterations must be >= 1")
    gold_times: list[float] = []
    pred_times: list[float] = []
    for _ in range(iterations):
        for run, sink in ((run_gold, gold_times), (run_pred, pred_times)):
            start = time.perf_counter()
            run()
            sink.append(time.perf_counter() - start)
    return gold_times, pred_times


# --- the official definitions, each under its own name ------------------------------------------------


def official_clean_abnormal(values: Sequence[float]) -> list[float]:
    """BIRD's `clean_abnormal`: keep x with mean - 3σ < x < mean + 3σ (strict, population σ).

    Quirk kept: when every value is equal (σ = 0) nothing is kept, and the official time ratio then
    fails (a division by zero), which its caller scores 0."""
    if not values:
        return []
    mean = statistics.fmean(values)
    sigma = statistics.pstdev(values)
    return [x for x in values if mean - 3 * sigma < x < mean + 3 * sigma]


def official_time_ratio(gold_times: Sequence[float], pred_times: Sequence[float]) -> float:
    """Both official scripts (BIRD dev's VES, mini-dev's R-VES): the mean of the per-iteration ratios
    gold_time / pred_time that `clean_abnormal` keeps; 0.0 where the scripts fail (a zero time, nothing kept)."""
    try:
        ratios = [g / p for g, p in zip(gold_times, pred_times, strict=True)]
        kept = official_clean_abnormal(ratios)
        return sum(kept) / len(kept)
    except ZeroDivisionError:
        return 0.0


def official_ves(time_ratios: Sequence[float]) -> float:
    """BIRD dev's VES: mean over every question of sqrt(time_ratio) * 100 (0 for a wrong answer)."""
    return math.fsum(math.sqrt(r) * 100 for r in time_ratios) / len(time_ratios) if time_ratios else 0.0


def official_rves(time_ratios: Sequence[float]) -> float:
    """mini-dev's R-VES: mean over every question of sqrt(reward) * 100, reward bucketed from the time ratio
    (0 for a wrong answer or a ratio of 0)."""
    rewards = [rves_reward(r) if r > 0 else 0.0 for r in time_ratios]
    return math.fsum(math.sqrt(r) * 100 for r in rewards) / len(rewards) if rewards else 0.0


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties take their average rank); None with fewer than 3 pairs or no spread."""
    if len(xs) != len(ys) or len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = math.fsum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(math.fsum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(math.fsum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else None


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks
