"""What the pictures show, computed once for the PNG (plots.py) and the HTML report (html.py).

Every bar is a mean over instances with its denominator and a bootstrap 95 % interval; breakdowns keep the
report's own grouping (func and scalar metadata keys with at most 50 values)."""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.metrics.stats import bootstrap_ci


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
        if key != "func" and len(buckets) > 50:
            continue
        out[key] = [_bar(label, items) for label, items in sorted(buckets.items())]
    return out


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
