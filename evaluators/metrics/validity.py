"""Valid@1 / Valid@k: does a SQL attempt parse and reference only existing
tables and columns?  The SQL counterpart of the text-to-Cypher "KG valid" metric.

The figures only: each attempt's `ValidityResult` comes from the engine's probe
(`execution/probes/validity.py`: EXPLAIN on a read-only connection), and this
module never opens a database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "REASONS",
    "ValidityResult",
    "ValiditySummary",
    "valid_at_k",
    "summarize_validity",
]

REASONS = ("valid", "syntax_error", "unknown_table", "unknown_column", "invalid", "not_checked")


@dataclass(frozen=True)
class ValidityResult:
    valid: bool | None  # None: could not be checked
    reason: str  # one of REASONS
    message: str = ""  # the engine's message, for the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def valid_at_k(results: Sequence[ValidityResult], k: int) -> bool | None:
    """Any of the first k attempts valid.  None when none is valid and at least
    one of them was not checked.  Requires 1 <= k <= len(results)."""
    if not 1 <= k <= len(results):
        raise ValueError(f"Valid@{k} needs at least {k} attempts, got {len(results)}")
    first = results[:k]
    if any(r.valid is True for r in first):
        return True
    return None if any(r.valid is None for r in first) else False


@dataclass(frozen=True)
class ValiditySummary:
    """Valid@k for k = 1..min attempts (every instance must have >= k attempts).

    Rates divide by the instances whose Valid@k was determined; undetermined
    ones are counted in ``n_undetermined_at_k`` instead.
    """

    n_instances: int
    valid_at_k: dict[int, float | None]
    n_undetermined_at_k: dict[int, int]
    first_attempt_reasons: dict[str, int]

    @property
    def valid_at_1(self) -> float | None:
        return self.valid_at_k[1]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "valid_at_1": self.valid_at_1}


def summarize_validity(results_by_instance: Mapping[str, Sequence[ValidityResult]]) -> ValiditySummary:
    runs = list(results_by_instance.values())
    if not runs or any(len(r) == 0 for r in runs):
        raise ValueError("need at least one instance, each with at least one attempt")
    rates: dict[int, float | None] = {}
    undetermined: dict[int, int] = {}
    for k in range(1, min(len(r) for r in runs) + 1):
        verdicts = [valid_at_k(r, k) for r in runs]
        known = [v for v in verdicts if v is not None]
        rates[k] = sum(known) / len(known) if known else None
        undetermined[k] = len(verdicts) - len(known)
    reasons: dict[str, int] = {}
    for r in runs:
        reasons[r[0].reason] = reasons.get(r[0].reason, 0) + 1
    return ValiditySummary(len(runs), rates, undetermined, dict(sorted(reasons.items())))
