"""BIRD-Platinum's verdicts (uiuc-kang-lab/BIRD-Platinum, `evaluation/grade.py`) on two results' rows.

Two verdicts a question: `bird`, BIRD's raw set equality of rows, and the scorer's `strict`: the same number
of columns (read on the first row), then by the gold's grading method either `multiset` (each row's cells
sorted as strings, rows compared as multisets) or tie-aware `subset,=,N` / `subset,>=,N` (the gold is the
full tie set; the prediction has exactly / at least N rows, each of them, its cells sorted as they are, one
of the gold's).  Sorting cells as they are raises on a row mixing text and numbers, NULL and anything, or
two NULLs: `OfficialError`, the official scorer stops on that question.  Its command line grades every
question as `multiset`; only its `grade()` function honours the gold's method (GRADINGS).

`ours` is the project's strict rule for the same gold methods: cells compared by type (NULL, number,
text, bytes; 1 and 1.0 one number, 1 and '1' two values), never raising.
"""

from __future__ import annotations

from collections import Counter

REPOSITORY = "uiuc-kang-lab/BIRD-Platinum"
COMMIT = "d6e0e96"  # evaluation/grade.py as of this commit
GRADINGS = {
    "official": "its command line: every question as `multiset`, the gold's tie annotations ignored",
    "official-tie-aware": "its grade() function: the gold's `grading_method` (`multiset`, `subset,=,N`, `subset,>=,N`)",
}


class OfficialError(Exception):
    """The official grade() raises on this question: no verdict."""


def bird_verdict(gold: list[tuple], pred: list[tuple]) -> bool:
    return set(gold) == set(pred)


def same_width(gold: list[tuple], pred: list[tuple]) -> bool:
    """The scorer's `grade_basic`: both empty, or the first rows as wide."""
    if not gold or not pred:
        return not gold and not pred
    return len(gold[0]) == len(pred[0])


def official_strict(gold: list[tuple], pred: list[tuple], method: str) -> tuple[bool, str]:
    """grade()'s second verdict and why; raises OfficialError where grade() raises."""
    if not same_width(gold, pred):
        return False, "the first rows differ in width (or one result is empty)"
    if "multiset" in method:
        return _official_multiset(gold, pred)
    if "subset" in method:
        parts = method.split(",")
        if len(parts) != 3:
            raise OfficialError(f"grading method {method!r} is not subset,<op>,<count>")
        _, op, count = parts
        if op not in ("=", ">="):
            return False, f"unknown subset method {op!r}"
        try:
            wanted = int(count)
        except ValueError as error:
            raise OfficialError(f"grading method {method!r}: {error}") from error
        return _official_subset(gold, pred, op, wanted)
    return False, f"unknown grading method {method!r}"


def _official_multiset(gold, pred) -> tuple[bool, str]:
    if len(gold) != len(pred):
        return False, f"gold has {len(gold)} row(s), the prediction {len(pred)}"
    if sorted(_text_row(r) for r in gold) != sorted(_text_row(r) for r in pred):
        return False, "the rows differ as multisets (cells sorted as strings)"
    return True, "the rows match as multisets (cells sorted as strings)"


def _text_row(row) -> tuple:
    return tuple(sorted(str(cell) for cell in row))


def _count_problem(op: str, wanted: int, found: int) -> str | None:
    if op == "=" and found != wanted:
        return f"{found} row(s), the gold asks for exactly {wanted}"
    if op == ">=" and found < wanted:
        return f"{found} row(s), the gold asks for at least {wanted}"
    return None


def _official_subset(gold, pred, op: str, wanted: int) -> tuple[bool, str]:
    problem = _count_problem(op, wanted, len(pred))
    if problem:
        return False, problem
    try:
        tie_set = {tuple(sorted(row)) for row in gold}
        chosen = {tuple(sorted(row)) for row in pred}
    except TypeError as error:
        raise OfficialError(f"a row's cells cannot be sorted as they are ({error})") from error
    if not chosen <= tie_set:
        return False, "a predicted row is not in the gold's tie set"
    return True, "every predicted row is in the gold's tie set"


def ours(gold: list[tuple], pred: list[tuple], method: str) -> tuple[bool, str]:
    """The project's strict verdict for the gold's method: the official rule on typed cells."""
    if not same_width(gold, pred):
        return False, "the first rows differ in width (or one result is empty)"
    if "subset" in method:
        parts = method.split(",")
        if len(parts) == 3 and parts[1] in ("=", ">=") and parts[2].strip().lstrip("-").isdigit():
            return _typed_subset(gold, pred, parts[1], int(parts[2]))
        return False, f"grading method {method!r} is not subset,=,N or subset,>=,N"
    if Counter(map(_typed_row, gold)) != Counter(map(_typed_row, pred)):
        return False, "the rows differ as multisets (cells compared by type)"
    return True, "the rows match as multisets (cells compared by type)"


def _typed_subset(gold, pred, op: str, wanted: int) -> tuple[bool, str]:
    problem = _count_problem(op, wanted, len(pred))
    if problem:
        return False, problem
    if not set(map(_typed_row, pred)) <= set(map(_typed_row, gold)):
        return False, "a predicted row is not in the gold's tie set (cells compared by type)"
    return True, "every predicted row is in the gold's tie set (cells compared by type)"


def _typed_row(row) -> tuple:
    return tuple(sorted(_typed(cell) for cell in row))


def _typed(cell) -> tuple:
    """A sort key that never raises: kind first, then the value (1 and 1.0 one number, '1' text)."""
    if cell is None:
        return (0, 0)
    if isinstance(cell, bool | int | float):
        return (1, float(cell)) if not isinstance(cell, int) or abs(cell) < 2**53 else (1, cell)
    if isinstance(cell, str):
        return (2, cell)
    if isinstance(cell, bytes | bytearray | memoryview):
        return (3, bytes(cell))
    return (4, repr(cell))
