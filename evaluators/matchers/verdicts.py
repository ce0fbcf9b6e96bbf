"""What a matcher returns: one verdict per semantics."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    score: float
    reason: str
    detail: str

    @property
    def passed(self) -> bool:
        return self.score >= 1.0


def same_for_all(names, score: float, reason: str, detail: str) -> dict:
    verdict = Verdict(score, reason, detail)
    return {name: verdict for name in names}
