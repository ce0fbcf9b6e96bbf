"""EHRSQL 2024's comparison, in each version of its scorer (`scoring_program/scoring_utils.py`).

A result becomes one string: every cell through `float()` where that works, rounded (1 decimal until
commit 3c413b3 of 2024-03-05, 3 since), then `str()`; rows sorted as lists of those strings, only the first
100 kept, and the list written with `str()`.  Gold and prediction are equal when their strings are.  A query
that fails is the string `error_real` (gold) or `error_pred` (prediction), so a failing gold matches nothing.
The scorer runs the abstention `null` as no query at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.ehrsql.rewrite import rewrite
from evaluators.metrics.ehrsql import ABSTAIN

REPOSITORY = "glee4810/ehrsql-2024"
KEPT_ROWS = 100


@dataclass(frozen=True)
class Preset:
    name: str
    commit: str  # the scoring_program/ this preset reproduces
    date: str
    digits: int  # the rounding of every cell float() reads
    rewrite: str  # evaluators/ehrsql/rewrite.py VERSIONS

    @property
    def provenance(self) -> str:
        return f"{REPOSITORY} scoring_program/scoring.py at {self.commit[:7]} ({self.date})"


PRESETS = {
    p.name: p
    for p in (
        Preset("official", "b2a05a92143d5b28945b4a15e39aba6ca5ad58c6", "2024-08-23", 3, "2024-08"),
        Preset("official-2024-03-21", "e207f57a2d0af32b273d7ed69c37e30fa9862b68", "2024-03-21", 3, "2024-03"),
        Preset("official-round1", "40d045b623dc7ab70c7a9641250e16f0fab8b94f", "2024-03-05", 1, "2024-03"),
    )
}


def is_abstention(text: str, preset: Preset) -> bool:
    """The scorer compares the rewritten text with `null`: surrounding whitespace goes, the case stays."""
    return rewrite(text, preset.rewrite) == ABSTAIN


def cell_text(cell, digits: int) -> str:
    try:
        cell = round(float(cell), digits)
    except (TypeError, ValueError, OverflowError):  # what float() refuses stays itself
        pass
    return str(cell)


def result_text(rows, digits: int) -> str:
    """A query's rows as the scorer compares them."""
    return str(sorted([[cell_text(c, digits) for c in row] for row in rows])[:KEPT_ROWS])
