"""Proving that a gold column's cells equal a predicted column's under one pairing of rows.

Two proofs, tried in order: identical texts (a CSV cell's type and value are
a function of its text, so identical texts are equal cells, and nothing needs
typing), then typed cells compared by the strict rule.  Cheap necessary
conditions (`signatures_agree`) and a probe of a few rows reject most wrong
pairs before whole columns are compared.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluators.matching.kernels import row_pairing
from evaluators.matching.kernels.numeric import isclose
from evaluators.matching.strict.cells import BIGINT, FLOAT, INT, TEXT, RawText, StrictColumn


def equal_under(g: StrictColumn, p: StrictColumn, rows, tol: float, cheap: bool = False) -> bool:
    """Is each cell of p equal to the gold cell `rows` pairs it with (identity when None)?

    With `cheap`, only proofs that type no column are tried."""
    if g.n != p.n:
        return False
    probe = row_pairing.probe_rows(g.n) if g.n > 4 * row_pairing.PROBE else None
    for check in _checks(g, p, cheap, tol):
        if (probe is None or check(probe if rows is None else rows[probe], probe)) and check(rows, None):
            return True
    return False


def cheap_checks(g: StrictColumn, p: StrictColumn, tol: float) -> list:
    """The proofs that type nothing, as functions of (gold rows, predicted rows)."""
    return list(_checks(g, p, True, tol))


def _checks(g: StrictColumn, p: StrictColumn, cheap: bool, tol: float):
    if g.raw is not None and p.raw is not None and g.raw.signature == p.raw.signature:
        yield lambda g_rows, p_rows: _same_texts(g.raw, p.raw, g_rows, p_rows)
    if (not cheap or (g.typed and p.typed)) and signatures_agree(g, p, tol):
        yield lambda g_rows, p_rows: cells_agree(g, p, g_rows, p_rows, tol)


def _same_texts(g: RawText, p: RawText, g_rows, p_rows) -> bool:
    null = row_pairing.take(g.null, g_rows)
    if not np.array_equal(null, row_pairing.take(p.null, p_rows)):
        return False
    return row_pairing.same_cells(row_pairing.take(g.values, g_rows), row_pairing.take(p.values, p_rows), null)


def signatures_agree(g: StrictColumn, p: StrictColumn, tol: float) -> bool:
    """Necessary for every cell of g to equal a distinct cell of p, whatever the pairing.

    Equal cells pair NULL with NULL, numbers with numbers, TEXT with TEXT (same
    counts; same total bytes of TEXT); paired numbers differ by at most
    D = max(tol, 1e-9 * largest magnitude), so the smallest (and largest) values
    of the two columns differ by at most D too.
    """
    if g.n != p.n or g.counts != p.counts:
        return False
    if g.text_bytes is not None and p.text_bytes is not None and g.text_bytes != p.text_bytes:
        return False
    if g.span is None or p.span is None:
        return True
    slack = max(tol, 1e-9 * max(g.span[2], p.span[2])) * (1 + 1e-9) + 1e-300
    if not np.isfinite(slack):
        return True
    return abs(g.span[0] - p.span[0]) <= slack and abs(g.span[1] - p.span[1]) <= slack


def cheap_partners(gold: list[StrictColumn], pred: list[StrictColumn], tol: float) -> list[set[int]]:
    """For each gold column, the predicted columns `equal_under(..., cheap=True)` may accept: a superset, found
    by buckets rather than pair by pair (wide tables have tens of thousands of pairs).  Identical texts need
    equal raw signatures; typed cells equal lengths and class counts, and spans within twice the slack of
    `signatures_agree` (looser than it, so rounding never drops a pair it would keep)."""
    by_raw: dict = {}
    by_counts: dict = {}
    for j, p in enumerate(pred):
        if p.raw is not None and any(g.raw is not None for g in gold):
            by_raw.setdefault((p.n, p.raw.signature), []).append(j)
        if p.typed and any(g.typed for g in gold):
            by_counts.setdefault((p.n, p.counts), []).append(j)
    spans = {key: _span_rows([pred[j] for j in js]) for key, js in by_counts.items()}
    partners = []
    for g in gold:
        found = set(by_raw.get((g.n, g.raw.signature), ())) if g.raw is not None and by_raw else set()
        key = (g.n, g.counts) if g.typed and by_counts else None
        if key in by_counts:
            near = _near_spans(g.span, spans[key], tol)
            found.update(j for j, ok in zip(by_counts[key], near.tolist(), strict=True) if ok)
        partners.append(found)
    return partners


def _span_rows(columns: list[StrictColumn]) -> np.ndarray:
    """(smallest, largest, largest magnitude) per column, NaN for a column without numbers."""
    return np.array([c.span if c.span is not None else (np.nan,) * 3 for c in columns], dtype=np.float64)


def _near_spans(span: tuple | None, spans: np.ndarray, tol: float) -> np.ndarray:
    """signatures_agree's span test of one span against many, with twice its slack (NaN rows always pass)."""
    if span is None:
        return np.ones(len(spans), dtype=bool)
    low, high, largest = span
    with np.errstate(invalid="ignore", over="ignore"):
        slack = 2 * (np.maximum(tol, 1e-9 * np.maximum(largest, spans[:, 2])) * (1 + 1e-9) + 1e-300)
        near = (np.abs(low - spans[:, 0]) <= slack) & (np.abs(high - spans[:, 1]) <= slack)
        return near | ~np.isfinite(slack)


def cells_agree(g: StrictColumn, p: StrictColumn, g_rows, p_rows, tol: float) -> bool:
    """The strict rule cell by cell on typed cells (rows None: all, in order)."""
    both = {g.uniform, p.uniform}
    if both == {INT}:
        return bool(np.array_equal(row_pairing.take(g.ival, g_rows), row_pairing.take(p.ival, p_rows)))
    if both in ({FLOAT}, {INT, FLOAT}):
        return bool(isclose(row_pairing.take(g.num, g_rows), row_pairing.take(p.num, p_rows), tol).all())
    if both == {TEXT}:
        return _texts_agree(g, p, g_rows, p_rows, np.ones(g.n if p_rows is None else len(p_rows), dtype=bool))
    gc, pc_ = row_pairing.take(g.cls, g_rows), row_pairing.take(p.cls, p_rows)
    same = gc == pc_
    numeric_g = (gc == INT) | (gc == BIGINT) | (gc == FLOAT)
    numeric_p = (pc_ == INT) | (pc_ == BIGINT) | (pc_ == FLOAT)
    with_float = numeric_g & numeric_p & ((gc == FLOAT) | (pc_ == FLOAT))
    if not (same | with_float).all():
        return False
    ints = same & (gc == INT)
    if ints.any() and not np.array_equal(
        row_pairing.take(g.ival, g_rows)[ints], row_pairing.take(p.ival, p_rows)[ints]
    ):
        return False
    if (
        with_float.any()
        and not isclose(
            row_pairing.take(g.num, g_rows)[with_float], row_pairing.take(p.num, p_rows)[with_float], tol
        ).all()
    ):
        return False
    texts = same & ((gc == TEXT) | (gc == BIGINT))
    return not texts.any() or _texts_agree(g, p, g_rows, p_rows, texts)


def _texts_agree(g: StrictColumn, p: StrictColumn, g_rows, p_rows, mask: np.ndarray) -> bool:
    """TEXT (and BIGINT) cells under `mask` equal: compared directly when both hold one kind of text."""
    simple = (
        len(g.texts) == len(p.texts) == 1 and g.texts[0].space == p.texts[0].space and not g.bigints and not p.bigints
    )
    if not simple:
        return bool(np.array_equal(row_pairing.take(g.code, g_rows)[mask], row_pairing.take(p.code, p_rows)[mask]))
    a, b = row_pairing.take(g.texts[0].values, g_rows), row_pairing.take(p.texts[0].values, p_rows)
    if isinstance(a, (pa.Array, pa.ChunkedArray)) or isinstance(b, (pa.Array, pa.ChunkedArray)):
        a = _arrow(a)
        equal = pc.fill_null(pc.equal(a, _arrow(b, a.type)), False)
        return bool(np.all(equal.to_numpy(zero_copy_only=False) | ~mask))
    return bool(np.array_equal(a[mask], b[mask]))


def _arrow(values, type_=None):
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values, from_pandas=True)
    return array.cast(type_) if type_ is not None and array.type != type_ else array
