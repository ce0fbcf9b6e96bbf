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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEYS_TRIED = 3  # gold columns tried as the row key; past that, pairing is unlikely to help
PROBE = 64  # rows checked before whole columns, to reject most pairs cheaply
JUDGES = 6  # gold columns that vote for one of several candidate pairings


def row_pairings(gold_keys: list[np.ndarray], pred_keys: list[np.ndarray]) -> list[np.ndarray]:
    """Candidate row pairings: for each predicted row, the gold row it lines up with.

    Keys are numeric arrays without NULLs.  A gold key must hold distinct values;
    a partner is a predicted key with the same sorted values.  Two id-like
    columns can share their values, so every partner of the first usable gold
    key is offered (the caller keeps the pairing under which most columns agree).
    """
    for g in gold_keys[:KEYS_TRIED]:
        if not len(g):
            return []
        order = np.argsort(g)  # distinct values: any sort gives the same order
        ranked = g[order]
        if not (ranked[1:] != ranked[:-1]).all():
            continue  # ties: rows with equal keys could be paired either way
        found = []
        for p in pred_keys:
            if len(p) != len(g) or p.min() != ranked[0] or p.max() != ranked[-1]:
                continue
            p_order = np.argsort(p)
            if np.array_equal(p[p_order], ranked):
                gold_of_pred = np.empty(len(p), dtype=np.int64)
                gold_of_pred[p_order] = order
                found.append(gold_of_pred)
        if found:
            return found
    return []


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


def arrow_strings(column) -> pa.Array:
    """A pandas string column (Series or array) as one pyarrow array (pandas may hold several chunks)."""
    array = pa.array(getattr(column, "array", column))
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


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
