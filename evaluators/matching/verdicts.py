"""The one verdict type every matcher returns (table rules, answers, rows, rewards): score, reason, detail.

`mapping` is the strict table rule's column mapping, when it found one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    score: float
    reason: str
    detail: str
    mapping: tuple = ()

    @property
    def passed(self) -> bool:
        return self.score >= 1.0

    @property
    def ok(self) -> bool:
        return self.passed


def same_for_all(names, score: float, reason: str, detail: str) -> dict:
    verdict = Verdict(score, reason, detail)
    return {name: verdict for name in names}
