"""Small plain tables under the strict rule: a match shown on Python values, without typed cells.

Typing the cells of a few-row table costs more than comparing them.  Here the
columns are the Python values pandas read (ints, finite floats below 2**53,
texts; NULL as None), and a match is shown by a column mapping under which
the rows, as tuples, are equal (as a multiset with `ignore_order`).

Python-equal values are equal strict cells: equal texts are typed alike;
equal numbers are equal ints or a float within any tolerance of its partner
(floats this small hold their text's value well enough, ints stay exact);
None is NULL.  A text never equals a number here, though "1" and 1 may be
equal strict cells, so anything not shown equal goes to the full rule, which
decides it and explains a miss.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from evaluators.limits import SMALL_TABLE_ROWS
from evaluators.matching.strict.cells import floats_tell_their_text
from evaluators.tables.frames import arrow_texts, column_arrays, to_objects

MAX_ROWS = SMALL_TABLE_ROWS  # past this, the vectorised typed cells are as cheap


def plain_columns(frame: pd.DataFrame) -> list[list] | None:
    """Each column's values (NULL as None), or None when a column is not plain or the table not small."""
    if not 0 < len(frame) <= MAX_ROWS:
        return None
    columns = []
    for array in column_arrays(frame)[1]:
        values = _plain_values(array)
        if values is None:
            return None
        columns.append(values)
    return columns


def _plain_values(array) -> list | None:
    dtype = array.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "i":
        return array.tolist()
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        if not floats_tell_their_text(array):
            return None  # infinities and huge floats: their texts decide their cells
        return [None if x != x else x for x in array.tolist()]
    if isinstance(dtype, pd.StringDtype) and dtype.na_value is np.nan:
        texts = arrow_texts(array)
        return texts if texts is not None else [x if isinstance(x, str) else None for x in to_objects(array).tolist()]
    return None  # booleans, objects, dates: typed from their text by the full rule


def matching_columns(gold: list[list], pred: list[list], ignore_order: bool) -> list[int] | None:
    """A one-to-one mapping of gold columns onto predicted ones under which the rows are equal, or None
    when this quick look finds none (each gold column takes the first free column of equal values)."""
    if not gold or len(gold) > len(pred) or len(gold[0]) != len(pred[0]):
        return None
    summary = Counter if ignore_order else list
    predicted = [summary(p) for p in pred]
    free = list(range(len(pred)))
    mapping = []
    for g in gold:
        wanted = summary(g)
        j = next((j for j in free if predicted[j] == wanted), None)
        if j is None:
            return None
        free.remove(j)
        mapping.append(j)
    if (
        ignore_order
        and len(gold) > 1
        and Counter(zip(*gold, strict=False)) != Counter(zip(*(pred[j] for j in mapping), strict=False))
    ):
        return None  # columns agree one by one, but not as whole rows
    return mapping
