"""What the pictures show, computed once for the PNG (plots.py) and the HTML report (html.py).

Every bar is a mean over instances with its denominator and a bootstrap 95 % interval; breakdowns keep the
report's own grouping (func and scalar metadata keys with at most 50 values, not one per instance),
in the benchmark's order (`in_benchmark_order`)."""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.limits import MAX_BREAKDOWN_GROUPS
from evaluators.metrics.stats import bootstrap_ci

MAX_GROUPS = MAX_BREAKDOWN_GROUPS  # a breakdown with more groups than this is no chart (an id, a free-text field)
# Difficulty levels in the order the benchmarks print them (BIRD; Spider and the test suite).
LEVELS = (("simple", "moderate", "challenging"), ("easy", "medium", "hard", "extra"))


@dataclass(frozen=True)
class Bar:
    label: str
    n: int
    score: float
    score_ci: tuple | None
    strict: float
    strict_ci: tuple | None


def semantics_bars(report) -> list[Bar]:
    out = []
    for name, value in report.summary.scores.items():
        values = [i.scores.get(name, 0.0) for i in report.instances]
        ci = bootstrap_ci(values)
        out.append(Bar(name, len(values), value, ci, value, ci))
    return out


def breakdown_bars(report) -> dict[str, list[Bar]]:
    groups: dict[str, dict[str, list]] = {}
    for instance in report.instances:
        groups.setdefault("func", {}).setdefault("+".join(instance.funcs) or "?", []).append(instance)
        for key, value in instance.metadata.items():
            if isinstance(value, (str, int, bool)) and key not in ("instruction", "question"):
                groups.setdefault(key, {}).setdefault(str(value), []).append(instance)
    out = {}
    for key, buckets in groups.items():
        if key != "func" and (len(buckets) > MAX_GROUPS or _one_per_instance(buckets, len(report.instances))):
            continue
        out[key] = [_bar(label, buckets[label]) for label in in_benchmark_order(buckets)]
    return out


def _one_per_instance(buckets: dict, instances: int) -> bool:
    """A key that names every instance apart (BIRD's question_id, a test-suite turn): a chart of it would be
    one bar per question, each 0 or 100 %, which says nothing the instance table does not."""
    return instances > 1 and len(buckets) == instances


def in_benchmark_order(labels) -> list[str]:
    """Group labels as the benchmark lists them: BIRD's simple, moderate, challenging; Spider's easy, medium,
    hard, extra; numbers by value (2 before 10); anything else alphabetically."""
    labels = list(labels)
    for order in LEVELS:
        rank = {level: k for k, level in enumerate(order)}
        if labels and all(str(label).lower() in rank for label in labels):
            return sorted(labels, key=lambda label: rank[str(label).lower()])
    if labels and all(_is_int(label) for label in labels):
        return sorted(labels, key=int)
    return sorted(labels)


def _is_int(text) -> bool:
    try:
        int(text)
    except (TypeError, ValueError):
        return False
    return True


def _bar(label: str, items: list) -> Bar:
    scores, stricts = [i.score for i in items], [i.strict_score for i in items]
    return Bar(
        label,
        len(items),
        sum(scores) / len(items),
        bootstrap_ci(scores),
        sum(stricts) / len(items),
        bootstrap_ci(stricts),
    )
