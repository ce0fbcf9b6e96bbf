"""Settling column comparisons by lining up whole rows, without sorting or encoding values.

A correct prediction is very often the gold with its rows permuted.  One
permutation then lines up every column at once, and it can be read off any
gold column whose values are all distinct, paired with a predicted column
holding the same sorted values (typically an id).  Whatever permutation is
used, if it pairs every cell of column g with an identical cell of column p,
the two columns hold the same multiset: that is the only conclusion drawn
here, so a wrong or missing permutation never changes a verdict, it only
sends the comparison to the slower exact path.  Cells are compared directly
(strings as strings), which costs one gather and one pass per column instead
of a hash table over every distinct value.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations, product

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEYS_TRIED = 3  # gold columns tried as the row key; past that, pairing is unlikely to help
PROBE = 64  # rows checked before whole columns, to reject most pairs cheaply
JUDGES = 6  # gold columns that vote for one of several candidate pairings
PAIRINGS_OFFERED = 8  # candidate pairings from two keys, at most
SAMPLE = 4096  # leading rows looked at for a repeated key before any sort
MAX_TIES = 2000  # tied neighbours past which the ties are broken by one lexsort, not run by run


def row_pairings(gold_keys: list[np.ndarray], pred_keys: list[np.ndarray]) -> list[np.ndarray]:
    """Candidate row pairings: for each predicted row, the gold row it lines up with.

    Keys are numeric arrays without NULLs.  A gold key must hold distinct values;
    a partner is a predicted key with the same sorted values.  Two id-like
    columns can share their values, so every partner of the first usable gold
    key is offered (the caller keeps the pairing under which most columns agree).
    When no single key is distinct, two keys together may be (float measures
    rarely repeat together): ties of the first are then ordered by the second.
    """
    golds = gold_keys[:KEYS_TRIED]
    if any(not len(g) for g in golds):
        return []
    # Both rules look for pairings of the same tables; a pairing is only ever a candidate (the rules
    # check cells under it), so a look-alike key can cost time but never change a verdict.
    seen = (_look(golds), _look(pred_keys))
    if seen not in _RECENT:
        if len(_RECENT) >= 8:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[seen] = _row_pairings(golds, pred_keys)
        for pairing in _RECENT[seen]:
            pairing.flags.writeable = False  # shared between the rules
    return _RECENT[seen]


_RECENT: dict[tuple, list[np.ndarray]] = {}


def _look(keys: list[np.ndarray]) -> tuple:
    """What a list of keys looks like: enough to tell the keys of two different tables apart."""
    return tuple(
        (len(k), k.dtype.kind, float(k.sum()), float(k[0]), float(k[-1]))
        if len(k) and k.dtype.kind in "iuf"
        else (len(k), id(k))
        for k in keys
    )


def _row_pairings(golds: list[np.ndarray], pred_keys: list[np.ndarray]) -> list[np.ndarray]:
    sorts = _Sorts(pred_keys)
    orders: list[np.ndarray | None] = []
    for g in golds:
        if _repeats_early(g) or not sorts.may_partner(g):
            orders.append(None)
            continue  # ties (rows with equal keys could be paired either way), or no partner: no sort needed
        order = np.argsort(g)
        orders.append(order)
        ranked = g[order]
        if not (ranked[1:] != ranked[:-1]).all():
            continue  # ties again, seen only once sorted
        found = [_pairing(order, sorts.order(j)) for j in sorts.partners(ranked)]
        if found:
            return found
    return _two_key_pairings(golds, orders, sorts)


class _Sorts:
    """Each predicted key's sort order, made once and only for keys that may be a partner."""

    def __init__(self, pred_keys: list[np.ndarray]):
        self.keys = pred_keys
        self._orders: dict[int, np.ndarray] = {}
        self._bounds: list[tuple] | None = None  # (length, smallest, largest) of each predicted key

    def order(self, j: int) -> np.ndarray:
        if j not in self._orders:
            self._orders[j] = np.argsort(self.keys[j])
        return self._orders[j]

    def bounds(self) -> list[tuple]:
        if self._bounds is None:
            self._bounds = [(len(p), p.min(), p.max()) if len(p) else (0, None, None) for p in self.keys]
        return self._bounds

    def may_partner(self, key: np.ndarray) -> bool:
        """Does some predicted key share this key's length, smallest and largest value (which every partner
        does)?  Answered without sorting the key: when none does, its sort is never made."""
        return ((len(key), key.min(), key.max()) if len(key) else (0, None, None)) in self.bounds()

    def partners(self, ranked: np.ndarray) -> list[int]:
        """The predicted keys holding exactly the sorted values `ranked`."""
        look = (len(ranked), ranked[0], ranked[-1]) if len(ranked) else (0, None, None)
        return [
            j
            for j, bound in enumerate(self.bounds())
            if bound == look and np.array_equal(self.keys[j][self.order(j)], ranked)
        ]


def _repeats_early(*keys: np.ndarray) -> bool:
    """Do the first SAMPLE rows already repeat a value (a tuple of values for several keys)?  Then the key is
    not distinct, and sorting the whole column to find out would cost more than the rest of the pairing."""
    heads = [k[:SAMPLE] for k in keys]
    order = np.lexsort(heads[::-1])  # sorted by the first key, then the next: equal tuples become neighbours
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for head in heads:
        ranked = head[order]
        same &= ranked[1:] == ranked[:-1]
    return bool(same.any())


def _pairing(gold_order: np.ndarray, pred_order: np.ndarray) -> np.ndarray:
    gold_of_pred = np.empty(len(pred_order), dtype=np.int64)
    gold_of_pred[pred_order] = gold_order
    return gold_of_pred


def _two_key_pairings(golds: list[np.ndarray], orders: list[np.ndarray | None], sorts: _Sorts) -> list[np.ndarray]:
    """Pairings from two gold keys whose value pairs are distinct.  A pair of predicted partners (each
    holding its key's sorted values) must hold the gold's value pairs in the same order."""
    partners: dict[int, list[int]] = {}

    def order_of(k: int) -> np.ndarray:
        found = orders[k]
        if found is None:  # skipped as a single key: sorted now that it may serve in a pair
            found = orders[k] = np.argsort(golds[k])
        return found

    def partners_of(k: int) -> list[int]:
        if k not in partners:
            # Without a predicted key of the same length, smallest and largest value, sorting the gold key is wasted.
            partners[k] = sorts.partners(golds[k][order_of(k)]) if sorts.may_partner(golds[k]) else []
        return partners[k]

    for a, b in permutations(range(len(golds)), 2):
        if _repeats_early(golds[a], golds[b]) or not partners_of(a) or not partners_of(b):
            continue  # the two keys repeat together, or one has no predicted partner
        order = _ties_ordered(golds[a], order_of(a), golds[b])
        first, second = golds[a][order], golds[b][order]
        if not ((first[1:] != first[:-1]) | (second[1:] != second[:-1])).all():
            continue
        found = []
        for ja, jb in product(partners[a], partners[b]):
            if ja == jb:
                continue
            p_order = _ties_ordered(sorts.keys[ja], sorts.order(ja), sorts.keys[jb])
            if np.array_equal(sorts.keys[jb][p_order], second):
                found.append(_pairing(order, p_order))
            if len(found) >= PAIRINGS_OFFERED:
                break
        if found:
            return found
    return []


def _ties_ordered(first: np.ndarray, order: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`order` (which sorts `first`) with each run of equal `first` values sorted by `second`."""
    ranked = first[order]
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])
    if not len(tied):
        return order
    if len(tied) > MAX_TIES:  # many runs: one vectorised sort by both beats a loop over the runs
        return np.lexsort((second, first))
    order = order.copy()
    run_start = tied[0]
    for k, t in enumerate(tied):  # t: position t and t + 1 hold equal values
        if k + 1 == len(tied) or tied[k + 1] != t + 1:
            run = order[run_start : t + 2]
            order[run_start : t + 2] = run[np.argsort(second[run], kind="stable")]
            if k + 1 < len(tied):
                run_start = tied[k + 1]
    return order


@lru_cache(maxsize=64)
def probe_rows(n: int) -> np.ndarray:
    """A few rows spread over the table, to test a pairing or a column pair cheaply (read-only)."""
    rows = np.unique(np.linspace(0, n - 1, min(n, PROBE)).astype(np.int64)) if n else np.zeros(0, np.int64)
    rows.flags.writeable = False
    return rows


def best_pairing(pairings: list[np.ndarray], judges) -> np.ndarray | None:
    """The pairing under which most gold columns agree with some predicted column on the probe rows.

    `judges()` gives, per judging gold column, its checks: functions of (gold rows,
    predicted rows) telling whether it agrees with one candidate partner.  They are
    made once, and only when there is a choice; a pairing all judges accept is taken at once.
    """
    if len(pairings) <= 1:
        return pairings[0] if pairings else None
    checks = judges()
    probe = probe_rows(len(pairings[0]))
    best, best_score = None, -1
    for rows in pairings:
        score = sum(any(check(rows[probe], probe) for check in column) for column in checks)
        if score == len(checks):
            return rows
        if score > best_score:
            best, best_score = rows, score
    return best


def take(values, rows: np.ndarray | None):
    """values (numpy or pyarrow) at `rows`; all of them when rows is None."""
    if rows is None:
        return values
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return pc.take(values, pa.array(rows))
    return values[rows]


def same_cells(a, b, null: np.ndarray) -> bool:
    """Element-wise identity of two aligned value arrays whose NULL cells (`null`, the same in both) are skipped."""
    if isinstance(a, (pa.Array, pa.ChunkedArray)) or isinstance(b, (pa.Array, pa.ChunkedArray)):
        a, b = _arrow(a), _arrow(b)
        if a.type != b.type:
            b = b.cast(a.type)
        return bool(pc.all(pc.fill_null(pc.equal(a, b), True)).as_py() is not False)
    if null.any():
        a, b = a[~null], b[~null]
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return bool(np.array_equal(a.view(np.int64), b.view(np.int64)))  # bits: -0.0 is not 0.0 here
    return bool(np.array_equal(a, b))


def _arrow(values):
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    return pa.array(values, from_pandas=True)


def text_bytes(values) -> int | None:
    """Total length of the strings of a pyarrow column (a cheap signature), else None."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return int(pc.sum(pc.binary_length(values)).as_py() or 0)
    return None
