"""The semantics presets: which rule decides the reported `score`.

The three official presets reproduce the public Spider 2.0 scorers; they
differ only in tolerance, in reading NULL as 0, and in how pandas is asked to
read CSV files.  `strict` is this project's own rule (see `matching/strict/rule.py`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from evaluators.errors import UsageError


@dataclass(frozen=True)
class Preset:
    name: str
    tol: float
    null_as_zero: bool = False
    # The lite/snow scorer calls pd.read_csv without low_memory=False.
    low_memory: bool = False
    # The current suite lets a flat condition_cols list fail a multi-gold spec;
    # the lite scorer repeats it for every gold file.
    repeat_flat_condition_cols: bool = False
    official: bool = True
    description: str = ""
    scorer: str = ""  # the public scorer it reproduces: repository, file, commit (docs/doctor.md)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "spider2",
            1e-2,
            description="Spider 2.0 evaluation suite as now published (tolerance 1e-2)",
            scorer="xlang-ai/Spider2 spider2-dbt/evaluation_suite/eval_utils.py at 90985da3 (2025-07-25); "
            "tolerance 1e-2 since 9048a79e (2024-11-26)",
        ),
        Preset(
            "spider2-2024",
            1e-3,
            description="the suite's first release (tolerance 1e-3)",
            scorer="xlang-ai/Spider2 spider2/evaluation_suite/eval_utils.py at e9d20327 (2024-10-25), "
            "until 9048a79e (2024-11-26)",
        ),
        Preset(
            "spider2-lite",
            1e-2,
            null_as_zero=True,
            low_memory=True,
            repeat_flat_condition_cols=True,
            description="Spider2-lite/snow scorer: NULL read as 0",
            scorer="xlang-ai/Spider2 spider2-lite/evaluation_suite/evaluate.py at 5fa8a517 (2025-11-02) and "
            "spider2-snow/evaluation_suite/evaluate.py at 76b85e5d (2025-10-30)",
        ),
        Preset(
            "strict",
            1e-2,
            official=False,
            description="typed cells, exact integers, NULL only equals NULL, whole rows, 1:1 columns",
        ),
    )
}
OFFICIAL = tuple(name for name, p in PRESETS.items() if p.official)
STRICT_TOL = PRESETS["strict"].tol


def scorers() -> dict[str, str]:
    """Each official preset's scorer, for a report's provenance."""
    return {name: p.scorer for name, p in PRESETS.items() if p.official}


def semantics_help() -> str:
    """`--semantics`'s help: each preset, and the scorer an official one reproduces."""
    return "; ".join(f"{name}: {p.scorer or p.description}" for name, p in PRESETS.items())


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UsageError(f"unknown semantics {name!r}", hint=did_you_mean(name, PRESETS)) from None


def did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    choices = ", ".join(sorted(known))
    return f"did you mean {close[0]!r}? (known: {choices})" if close else f"known: {choices}"
