"""Attempt-based metrics for multi-attempt / self-refining text-to-SQL agents.

Each instance has an ordered list of verdicts, first attempt through last
refinement.  Pass@1 / Pass@final / refinement gain follow the Self-Refine
protocol (Madaan et al. 2023: score the initial output against the output
after iterative refinement); Pass@k uses the HumanEval unbiased estimator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evaluators.metrics.passk import pass_at_k

__all__ = ["AttemptMetrics", "AttemptReport", "summarize_attempts", "select_score", "UNGROUPED"]

#: Group label for instances that are missing from the ``groups`` mapping.
UNGROUPED = "(ungrouped)"


@dataclass(frozen=True)
class AttemptMetrics:
    """Attempt metrics over one set of instances (all of them, or one group).

    ``pass_at_k[k]`` is the mean unbiased pass@k treating an instance's n
    attempts as n samples; ``any_correct_at_k[k]`` is the share of instances
    with a correct answer among their first k attempts (so
    ``any_correct_at_k[1] == pass_at_1``).  Both are keyed by k = 1..min n and
    only include k when *every* instance in the set has at least k attempts.
    """

    n_instances: int
    min_attempts: int
    max_attempts: int
    pass_at_1: float
    pass_at_final: float
    refinement_gain: float
    pass_at_k: dict[int, float]
    any_correct_at_k: dict[int, float]
    n_initially_failed: int
    n_recovered: int
    recovery_rate: float | None
    n_initially_passed: int
    n_regressions: int
    regression_rate: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AttemptReport:
    overall: AttemptMetrics
    by_group: dict[str, AttemptMetrics]

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "by_group": {name: m.to_dict() for name, m in self.by_group.items()},
        }


def _checked(instance_id: str, verdicts: Sequence[Any]) -> list[bool]:
    if len(verdicts) == 0:
        raise ValueError(f"instance {instance_id!r} has no attempts")
    for v in verdicts:
        if v not in (False, True):  # rejects None/NaN/strings, accepts numpy bools
            raise ValueError(f"instance {instance_id!r}: verdict {v!r} is not a bool")
    return [bool(v) for v in verdicts]


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def _metrics(runs: list[list[bool]]) -> AttemptMetrics:
    n = len(runs)
    first_ok = sum(r[0] for r in runs)
    last_ok = sum(r[-1] for r in runs)
    recovered = sum(not r[0] and r[-1] for r in runs)
    regressed = sum(r[0] and not r[-1] for r in runs)
    common = min(len(r) for r in runs)
    ks = range(1, common + 1)
    return AttemptMetrics(
        n_instances=n,
        min_attempts=common,
        max_attempts=max(len(r) for r in runs),
        pass_at_1=first_ok / n,
        pass_at_final=last_ok / n,
        refinement_gain=(last_ok - first_ok) / n,
        pass_at_k={k: math.fsum(pass_at_k(len(r), sum(r), k) for r in runs) / n for k in ks},
        any_correct_at_k={k: sum(any(r[:k]) for r in runs) / n for k in ks},
        n_initially_failed=n - first_ok,
        n_recovered=recovered,
        recovery_rate=_rate(recovered, n - first_ok),
        n_initially_passed=first_ok,
        n_regressions=regressed,
        regression_rate=_rate(regressed, first_ok),
    )


def summarize_attempts(
    verdicts_by_instance: Mapping[str, Sequence[bool]],
    groups: Mapping[str, str] | None = None,
) -> AttemptReport:
    """Overall and per-group attempt metrics.

    ``groups`` maps instance id -> label (e.g. difficulty); instances missing
    from it are reported under :data:`UNGROUPED`.  Raises ValueError for an
    empty input, an instance without attempts, or a non-boolean verdict.
    """
    if not verdicts_by_instance:
        raise ValueError("no instances to summarize")
    runs = {iid: _checked(iid, v) for iid, v in verdicts_by_instance.items()}
    members: dict[str, list[list[bool]]] = {}
    for iid, run in runs.items():
        label = groups.get(iid, UNGROUPED) if groups is not None else None
        if label is not None:
            members.setdefault(str(label), []).append(run)
    return AttemptReport(
        overall=_metrics(list(runs.values())),
        by_group={label: _metrics(members[label]) for label in sorted(members)},
    )


def select_score(verdicts: Sequence[Any], policy: str = "last") -> Any:
    """The score an instance gets from its attempts under a selection policy.

    ``"last"``: the final refinement counts (what a deployed agent returns);
    ``"best"``: the best attempt counts (an oracle upper bound; for bools this is
    "any attempt correct").  Works for bool verdicts and numeric scores alike.
    """
    if len(verdicts) == 0:
        raise ValueError("no attempts to select from")
    if policy == "last":
        return verdicts[-1]
    if policy == "best":
        return max(verdicts)
    raise ValueError(f"unknown policy {policy!r}; expected 'last' or 'best'")
