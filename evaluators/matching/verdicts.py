"""The one verdict type every matcher returns (table rules, answers, rows, rewards): score, reason, detail.

`mapping` is the strict table rule's column mapping, when it found one."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Significant digits tried, fewest first, until a differing pair of float cells reads differently.
_DIGITS = (6, 9, 12, 17)


@dataclass(frozen=True)
class Verdict:
    score: float
    reason: str
    detail: str
    mapping: tuple = ()

    @property
    def passed(self) -> bool:
        """The one name for "this verdict passes" (there was an `ok` beside it, which ExecResult and RowResult
        use for "the query ran": a verdict never says `ok`)."""
        return self.score >= 1.0


def same_for_all(names, score: float, reason: str, detail: str) -> dict:
    verdict = Verdict(score, reason, detail)
    return {name: verdict for name in names}


# How near a miss is, by its reason: same shape with other values, then a column without a partner, then
# another number of rows; any other reason (unreadable, no number) is farthest.
_NEARNESS = {"value_mismatch": 0, "column_not_found": 1, "row_count_mismatch": 2}
_AGREE = re.compile(r"\((\d+)% of cells agree")


def closest_miss(failures: list[tuple[str, Verdict]]) -> tuple[str, Verdict]:
    """Of a gold's variants that all fail, the (name, verdict) nearest the answer, to explain the miss: the
    user fixes the answer against the variant it nearly was, not the first listed.  Ties go to the share of
    cells that agree, as both table rules write it in the detail, then to the order of the variants."""

    def distance(item: tuple[int, tuple[str, Verdict]]) -> tuple:
        k, (_, verdict) = item
        agree = _AGREE.search(verdict.detail)
        return _NEARNESS.get(verdict.reason, len(_NEARNESS)), -int(agree.group(1)) if agree else 0, k

    return min(enumerate(failures), key=distance)[1]


def cell_words(value, digits: int = 12) -> str:
    """A cell as a reader writes it: NULL, 3, 0.25, 'text', 2024-01-31; never a Python repr such as
    np.float64(0.0) or Decimal('1.5').  Floats get `digits` significant digits."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # a numpy scalar: its Python value
    if value is None or _is_missing(value):
        return "NULL"
    if isinstance(value, float):
        return format(value, f".{digits}g")
    if isinstance(value, str):
        return repr(value)
    return str(value)


def cell_pair(gold, predicted) -> tuple[str, str]:
    """Two differing cells in words, with as few digits as tell them apart (0.228 vs 0.229, not
    0.22844160091143337 vs 0.22912345678901234)."""
    for digits in _DIGITS:
        pair = cell_words(gold, digits), cell_words(predicted, digits)
        if pair[0] != pair[1]:
            return pair
    return pair


def cells_differ(gold, predicted) -> str:
    """The words of a differing cell pair in a miss's detail."""
    shown = cell_pair(gold, predicted)
    return f"gold {shown[0]} vs predicted {shown[1]}"


def _is_missing(value) -> bool:
    try:
        return bool(value != value)  # NaN, NaT
    except (TypeError, ValueError):
        return str(value) == "<NA>"  # pandas' NA refuses bool()
