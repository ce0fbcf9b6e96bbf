"""Why a BIRD or test-suite score may be low for a reason that is not the model's: predictions paired with
the wrong gold lines.

The official scorers pair predictions with gold lines by position, and so do we (the verdicts stay
official).  But a predictions file whose keys are not "0", "1", ... in order (`json.dump(...,
sort_keys=True)` writes "0", "1", "10", "100", ...), whose count is not the gold's, or whose named
databases disagree with the gold lines' (a file shifted by one line) grades every question against another
question's gold.  These checks say so, loudly: on the terminal and in the report's problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.errors import Location
from evaluators.specs import Problem

PREFIX = "pairing: "  # what the command lines look for to repeat these problems as warnings
SHIFT_TOLERANCE = 3  # a few predictions may name another database by mistake; more is a sign of a shift
SHIFT_SHARE = 0.05


def key_order_problem(keys: Sequence[str], where: Location) -> Problem | None:
    """The first key that is not its position, or None when the keys are exactly "0".."n-1" in order."""
    for position, key in enumerate(keys):
        if key != str(position):
            looks_sorted = list(keys) == sorted(keys) and len(keys) > 10
            return Problem(
                where,
                f"{PREFIX}prediction keys are not 0..{len(keys) - 1} in order: position {position} holds key {key!r}. "
                "Predictions are paired with gold lines by position (as the official scorer pairs them), so "
                "from there on questions are graded against other questions' gold"
                + (
                    " (the keys are sorted as text, as json.dump(..., sort_keys=True) writes them)"
                    if looks_sorted
                    else ""
                ),
                hint="write the predictions in question order with keys 0..N-1 (no sort_keys)",
            )
    return None


def count_problem(predictions: int, golds: int, where: Location, session: int | None = None) -> Problem | None:
    """None when the counts agree; BIRD's whole file, or one blank-line-separated session of test-suite's."""
    if predictions == golds:
        return None
    return Problem(
        where,
        f"{PREFIX}{'' if session is None else f'session {session}: '}{predictions} prediction(s) for {golds} gold "
        "line(s): predictions pair with gold lines by position; "
        f"the official scorer compares only the first {min(predictions, golds)}",
        hint="one prediction per gold line, in the gold's order",
    )


@dataclass(frozen=True)
class GoldLine:
    """One `SQL<TAB>db_id` line of a BIRD or test-suite gold file."""

    sql: str
    db_id: str
    location: Location


def gold_line(line: str, where: Location, problems: list[Problem], strip: bool = False) -> GoldLine | None:
    """The line's SQL and db_id (each stripped with `strip`, as test-suite's scorer reads them); None and a gold
    problem for a line without exactly `SQL<TAB>db_id` (the official scorers stop there)."""
    fields = line.split("\t")
    if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
        problems.append(Problem(where, f"gold line has {len(fields)} tab-separated field(s), expected SQL<TAB>db_id"))
        return None
    sql, db_id = (f.strip() for f in fields) if strip else fields
    return GoldLine(sql, db_id, where)


def shift_problem(pairs: Sequence[tuple[str | None, str | None]], where: Location) -> Problem | None:
    """(predicted db_id, gold db_id) per position: many disagreements mean the file is shifted."""
    named = [(i, p, g) for i, (p, g) in enumerate(pairs) if p is not None and g is not None]
    wrong = [(i, p, g) for i, p, g in named if p.strip() != g.strip()]
    if len(wrong) <= max(SHIFT_TOLERANCE, SHIFT_SHARE * len(named)):
        return None
    index, predicted, gold = wrong[0]
    return Problem(
        where,
        f"{PREFIX}{len(wrong)} of {len(named)} predictions name another database than their gold line (first at "
        f"position {index}: {predicted!r} for a {gold!r} question): the predictions look shifted against the gold",
        hint="check that the predictions are in the gold's order, one per gold line",
    )


def warnings(problems: Sequence) -> list[str]:
    """The pairing problems among a report's problems, for the command line to repeat as warnings."""
    return [str(p) for p in problems if PREFIX in str(p)]
