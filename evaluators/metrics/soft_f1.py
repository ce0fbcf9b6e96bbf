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
"""

from __future__ import annotations

from collections.abc import Sequence


def _row_counts(pred_row: Sequence, gold_row: Sequence) -> tuple[float, float, float]:
    width = len(gold_row)
    matches = sum(value in gold_row for value in pred_row)
    pred_only = len(pred_row) - matches
    truth_only = sum(value not in pred_row for value in gold_row)
    return matches / width, pred_only / width, truth_only / width


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


def soft_f1(pred: list, gold: list) -> float:
    """The official Soft F1 of one question; TypeError when a row holds an unhashable value (official 0)."""
    if not pred and not gold:
        return 1.0
    pred, gold = _unique([tuple(r) for r in pred], [tuple(r) for r in gold])
    paired = min(len(pred), len(gold))
    pairs = [(pred[i], gold[i]) for i in range(paired)]
    return _f1(pairs, len(gold) - paired, len(pred) - paired)


def soft_f1_unordered(pred: list, gold: list) -> float:
    """Soft F1 with rows paired by content, not position (ours; unhashable values compare by `==`)."""
    if not pred and not gold:
        return 1.0
    pred_rows, gold_rows = _dedupe([tuple(r) for r in pred]), _dedupe([tuple(r) for r in gold])
    pairs, left, unpaired = _equal_pairs(pred_rows, gold_rows)
    if len(unpaired) * len(left) > _GREEDY_LIMIT:  # too many to search: the rest pair by position
        pairs += [(pred_rows[k], g) for k, g in zip(left, unpaired, strict=False)]
        left = left[len(unpaired) :]
    else:
        for gold_row in unpaired:
            if not left:
                break
            best = max(left, key=lambda k: _row_counts(pred_rows[k], gold_row)[0])
            left.remove(best)
            pairs.append((pred_rows[best], gold_row))
    return _f1(pairs, len(gold_rows) - len(pairs), len(left))


_GREEDY_LIMIT = 1_000_000


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
