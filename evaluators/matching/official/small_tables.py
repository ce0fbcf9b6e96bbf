"""Small tables under the official rule: the scorers' own loop, without column views.

For a table of a few hundred cells, building typed views (tens of pandas and
pyarrow calls per column) costs more than the scorers' Python loop itself.
Here the loop runs on the very Python lists `frame.transpose().values.tolist()`
would give, made column by column (the transposition alone costs more than
the loop).  Only frames of plain CSV dtypes (numpy numbers and bools, pandas'
NaN-string columns) take this path; their Python values are known exactly.
Each vector is sorted once rather than once per pair: the sort is
deterministic, so the lists compared are the ones the scorers compare.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluators.limits import SMALL_TABLE_ROWS
from evaluators.matching.official.column_views import common_numeric, sort_as_scorers
from evaluators.matching.official.python_cells import literal_match
from evaluators.tables.frames import arrow_texts, column_arrays, to_objects

# Past these (rows; rows x gold columns x predicted columns) the vectorised views win (bench/corpus.py).
MAX_ROWS = SMALL_TABLE_ROWS
MAX_WORK = 5_000


def fits(gold_rows: int, gold_cols: int, pred_rows: int, pred_cols: int) -> bool:
    rows = max(gold_rows, pred_rows)
    return rows <= MAX_ROWS and rows * max(gold_cols, 1) * max(pred_cols, 1) <= MAX_WORK


def python_lists(frame: pd.DataFrame, positions: tuple) -> list | None:
    """The columns at `positions` as the Python lists the scorers' transposition gives, or None
    when a column's dtype is not a plain one."""
    _, arrays = column_arrays(frame)
    chosen = [arrays[i] for i in positions]
    dtypes = [a.dtype for a in chosen]
    if not all(_plain(d) for d in dtypes):
        return None
    common = common_numeric(dtypes)
    return [
        (a.astype(common, copy=False) if common is not None else a).tolist() if isinstance(a, np.ndarray) else _texts(a)
        for a in chosen
    ]


def _texts(array) -> list:
    """A NaN-string column as the transposition gives it: str, and NaN for NULL."""
    texts = arrow_texts(array)
    if texts is None:
        return to_objects(array).tolist()
    return [np.nan if x is None else x for x in texts]


def scorer_vectors(lists: list, null_as_zero: bool, ignore_order: bool) -> list:
    """The lists as the scorers compare them: NULL read as 0 first if asked, then sorted by their key."""
    vectors = []
    for values in lists:
        if null_as_zero:
            values = [0 if x != x else x for x in values]  # plain values: only float NaN is NULL
        vectors.append(sort_as_scorers(values) if ignore_order else values)
    return vectors


def _plain(dtype) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iufb"
    return isinstance(dtype, pd.StringDtype) and dtype.na_value is np.nan


def has_null(lists: list) -> bool:
    """Does any of these plain lists hold a NULL (for plain dtypes, only float NaN)?"""
    return any(x != x for values in lists for x in values)


def all_found(gold: list, pred: list, tol: float) -> bool:
    """Does every gold vector equal some predicted vector (both already in the order compared)?"""
    return all(g is not None and any(p is not None and literal_match(g, p, False, tol) for p in pred) for g in gold)


def all_found_exactly(gold: list, pred: list) -> bool:
    """Does every gold vector equal some predicted vector value for value?  Then it also does under the
    scorers' loop at any tolerance: equal plain values are equal numbers, equal texts or the same NaN
    (Python's list equality takes an object as equal to itself), each of which the loop accepts."""
    return all(g is not None and any(p is not None and g == p for p in pred) for g in gold)
