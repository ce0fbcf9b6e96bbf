"""BIRD mini-dev's Soft F1 (`evaluation/evaluation_f1.py`), as written, and an order-free variant beside it.

The official rule, quirks kept (`soft_f1`):

- two empty results score 1.0 (checked before anything else);
- duplicate rows are dropped, keeping the first of each (`dict.fromkeys`); a result holding an unhashable
  value (json, arrays) raises there, and the question scores 0;
- the i-th gold row is compared with the i-th predicted row: row order decides the score even when the
  question has no ORDER BY (mini_dev issues 5 and 15);
- per row pair, `matches` counts the predicted cells found anywhere in the gold row (`in`, Python `==`, so
  `1 == 1.0 == True`), `pred_only` the others, `truth_only` the gold cells not found in the predicted row;
  each is divided by the gold row's width; a gold row without a partner counts truth_only 1, a predicted row
  without one pred_only 1;
- precision = tp / (tp + fp), recall = tp / (tp + fn), F1 their harmonic mean, 0 when undefined.

`soft_f1_unordered` is ours: the same per-row counts, but rows are paired by content first (equal rows
together, then each remaining gold row with the remaining predicted row sharing the most cells), so a
correct answer in another row order scores 1.0.

Costs (issue L): the counts of a wide row pair come from sets (the same counts: equal values hash alike), the
greedy pairing stops at `_GREEDY_CELLS` cells as at `_GREEDY_LIMIT` pairs (1,000 rows 300 wide took 124 s),
and unhashable values (PostgreSQL arrays and json) are compared through hashable stand-ins with the same
equality (`_frozen`), so their pairing is linear too (3,000 rows took 7 s, and grew as the square).
"""

from __future__ import annotations

from collections.abc import Sequence


def _row_counts(pred_row: Sequence, gold_row: Sequence) -> tuple[float, float, float]:
    width = len(gold_row)
    gold_cells, pred_cells = gold_row, pred_row
    if len(pred_row) * width > _SET_FROM * _SET_FROM:
        gold_cells, pred_cells = _lookup(gold_row, len(pred_row)), _lookup(pred_row, width)
    matches = sum(value in gold_cells for value in pred_row)
    pred_only = len(pred_row) - matches
    truth_only = sum(value not in pred_cells for value in gold_row)
    return matches / width, pred_only / width, truth_only / width


_SET_FROM = 16  # membership tests per row above which a set is built (counts are the same: `in` is `==` both ways)


def _lookup(row: Sequence, tests: int):
    """The row for `in`: itself, or its set when many values are looked up in a wide row."""
    if tests * len(row) <= _SET_FROM * _SET_FROM:
        return row
    try:
        return set(row)
    except TypeError:
        return row


def _f1(pairs: list[tuple[Sequence, Sequence]], gold_alone: int, pred_alone: int) -> float:
    """Summed as the official lists are (pairs, then lone gold rows, then lone predicted rows), so the float
    result is the official one to the last bit."""
    counts = [_row_counts(pred_row, gold_row) for pred_row, gold_row in pairs]
    tp = sum([c[0] for c in counts] + [0] * gold_alone + [0] * pred_alone)
    fp = sum([c[1] for c in counts] + [1] * pred_alone)
    fn = sum([c[2] for c in counts] + [1] * gold_alone + [0] * pred_alone)
    precision = tp / (tp + fp) if tp + fp > 0 else 0
    recall = tp / (tp + fn) if tp + fn > 0 else 0
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0


def _unique(pred: list, gold: list) -> tuple[list, list]:
    set(pred)  # the official rule builds both sets first: an unhashable value raises TypeError here
    set(gold)
    return list(dict.fromkeys(pred)), list(dict.fromkeys(gold))


def _same_rows(pred: list[tuple], gold: list[tuple]) -> bool:
    """Equal row lists (Python `==`, cells found by identity or `==` as `in` finds them): every row pair
    counts (1, 0, 0), so F1 is exactly 1.0 under either pairing; most right answers end here at once."""
    return pred == gold and all(gold)  # a row of no cells would divide by its width: the long way


def soft_f1(pred: list, gold: list) -> float:
    """The official Soft F1 of one question; TypeError when a row holds an unhashable value (official 0)."""
    if not pred and not gold:
        return 1.0
    pred, gold = _unique([tuple(r) for r in pred], [tuple(r) for r in gold])
    if _same_rows(pred, gold):
        return 1.0
    paired = min(len(pred), len(gold))
    pairs = [(pred[i], gold[i]) for i in range(paired)]
    return _f1(pairs, len(gold) - paired, len(pred) - paired)


def soft_f1_unordered(pred: list, gold: list) -> float:
    """Soft F1 with rows paired by content, not position (ours; unhashable values compare by `==`)."""
    if not pred and not gold:
        return 1.0
    pred, gold = [tuple(r) for r in pred], [tuple(r) for r in gold]
    if _same_rows(pred, gold):
        return 1.0
    if _unhashable(pred, gold):
        pred, gold = _frozen_rows(pred), _frozen_rows(gold)
    if _unhashable(pred, gold) and len(pred) * len(gold) > _GREEDY_LIMIT:  # no stand-in: too many to compare
        return _f1(list(zip(pred, gold, strict=False)), max(0, len(gold) - len(pred)), max(0, len(pred) - len(gold)))
    pred_rows, gold_rows = _dedupe(pred), _dedupe(gold)
    pairs, left, unpaired = _equal_pairs(pred_rows, gold_rows)
    width = max((len(row) for row in pred_rows), default=0)
    if len(unpaired) * len(left) > min(_GREEDY_LIMIT, _GREEDY_CELLS // max(1, width)):  # the rest pair by position
        pairs += [(pred_rows[k], g) for k, g in zip(left, unpaired, strict=False)]
        left = left[len(unpaired) :]
    else:
        for gold_row in unpaired:
            if not left:
                break
            cells = _lookup(gold_row, width)
            best = max(left, key=lambda k: sum(value in cells for value in pred_rows[k]))
            left.remove(best)
            pairs.append((pred_rows[best], gold_row))
    return _f1(pairs, len(gold_rows) - len(pairs), len(left))


_GREEDY_LIMIT = 1_000_000  # row pairs the greedy pairing may compare
_GREEDY_CELLS = 20_000_000  # predicted cells it may look up


class _Frozen:
    """A list or dict as a hashable value with the same `==` (a list equals only a list, a dict only a dict)."""

    __slots__ = ("kind", "items", "_hash")

    def __init__(self, kind: str, items) -> None:
        self.kind, self.items, self._hash = kind, items, hash((kind, items))

    def __eq__(self, other) -> bool:
        return isinstance(other, _Frozen) and self.kind == other.kind and self.items == other.items

    def __hash__(self) -> int:
        return self._hash


def _frozen(value):
    """`value`, or a hashable stand-in equal to what it equals; unchanged when there is none."""
    try:
        hash(value)
        return value
    except TypeError:
        pass
    try:
        if isinstance(value, list):
            return _Frozen("list", tuple(_frozen(v) for v in value))
        if isinstance(value, dict):
            return _Frozen("dict", frozenset((k, _frozen(v)) for k, v in value.items()))
        if isinstance(value, (set, bytearray)):  # equal to the frozenset / bytes of the same items
            return frozenset(_frozen(v) for v in value) if isinstance(value, set) else bytes(value)
    except TypeError:
        return value
    return value


def _frozen_rows(rows: list) -> list:
    return [tuple(_frozen(v) for v in row) for row in rows]


def _unhashable(*tables: list) -> bool:
    try:
        for rows in tables:
            set(rows)
    except TypeError:
        return True
    return False


def _equal_pairs(pred_rows: list, gold_rows: list) -> tuple[list, list[int], list]:
    """Equal rows paired; (pairs, indexes of unpaired predicted rows in order, unpaired gold rows)."""
    try:
        where = {row: k for k, row in enumerate(pred_rows)}
        taken = {where[row] for row in gold_rows if row in where}
        pairs = [(row, row) for row in gold_rows if row in where]
        unpaired = [row for row in gold_rows if row not in where]
    except TypeError:  # unhashable values: compare by ==
        taken, pairs, unpaired = set(), [], []
        for row in gold_rows:
            k = next((k for k, p in enumerate(pred_rows) if k not in taken and p == row), None)
            if k is None:
                unpaired.append(row)
            else:
                taken.add(k)
                pairs.append((pred_rows[k], row))
    return pairs, [k for k in range(len(pred_rows)) if k not in taken], unpaired


def _dedupe(rows: list) -> list:
    try:
        return list(dict.fromkeys(rows))
    except TypeError:
        out: list = []
        for row in rows:
            if row not in out:
                out.append(row)
        return out
