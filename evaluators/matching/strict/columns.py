"""The strict rule's typed columns of a frame already read (CSV text or engine values).

A CSV column is typed from pandas' reading when that keeps its cells' text
(ints, finite floats below 2**53, strings); other columns (booleans, huge or
infinite floats) are typed from their text, read again by the caller's
`text_of`.  So is a text column holding NA words as text: pandas' parser
keeps `""` and `NA` as strings in a column it gave up typing as int64 (a cell
beyond its range), where the strict rule's own typing makes them NULL.  An engine-typed frame (DuckDB) gives each column's type directly.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluators.matching.strict.cells import StrictColumn, TokenTable, floats_tell_their_text, from_numbers
from evaluators.matching.strict.engine_cells import engine_column
from evaluators.matching.strict.text_cells import from_text
from evaluators.tables.frames import arrow_strings, column_arrays, columns_of, to_objects
from evaluators.tables.quickcsv import NA

_LONG = 19  # int64 holds every integer of up to 18 digits
_NA_LONGEST = max(len(word.encode()) for word in NA)
_OFFSETS = {pa.string(): np.int32, pa.large_string(): np.int64}
_NA_WORDS = {kind: pa.array(sorted(NA), type=kind) for kind in (pa.string(), pa.large_string())}


def strict_columns(frame: pd.DataFrame, tokens: TokenTable, text_of=None) -> list[StrictColumn]:
    """Typed cells for every column of a frame; `text_of(positions)` re-reads columns as text.

    Without `text_of` the frame is engine-typed (DuckDB) and each column's dtype is its cells' type.
    """
    names, all_columns = columns_of(frame) if text_of is None else column_arrays(frame)
    columns: list[StrictColumn | None] = []
    need_text: list[int] = []
    for position, column in enumerate(all_columns):
        if text_of is None:
            columns.append(engine_column(names[position], column, tokens))
            continue
        typed = _csv_column(names[position], column, tokens)
        if typed is None:
            need_text.append(position)  # typed below from the column's text
        columns.append(typed)
    if need_text:
        text = text_of(need_text)
        for k, position in enumerate(need_text):
            columns[position] = from_text(names[position], text.iloc[:, k].to_numpy(dtype=object), tokens)
    return cast(list[StrictColumn], columns)  # every None was typed from its text just above


def _csv_column(name: str, array, tokens: TokenTable) -> StrictColumn | None:
    """A column (its array) typed from pandas' reading, or None when its text must be read again."""
    dtype = array.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return _ints(name, array)
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return from_numbers(name, array) if floats_tell_their_text(array) else None
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        strings = arrow_strings(array)
        return None if _na_words_kept(strings) else from_text(name, strings, tokens)
    if dtype == np.dtype(object) or isinstance(dtype, pd.StringDtype):
        values = to_objects(array)
        return None if _na_words_kept(values) else from_text(name, values, tokens)
    return None  # booleans and the like: their text decides


def _na_words_kept(values) -> bool:
    """Did pandas keep NA words (`""`, `NA`, ...) as text?  Only where it fell back from int64 on a cell
    beyond its range (19 digits or more), and then no cell of the column is NULL; the text re-read
    (dtype=object) makes them NULL, as the strict rule's typing says.  Most columns are settled by their
    cells' lengths alone, read from pyarrow's offsets: a fallback holds a long cell and a short one."""
    if isinstance(values, pa.Array):
        if values.null_count or not _long_and_short(values):
            return False
        words = _NA_WORDS.get(values.type)
        return words is None or bool(pc.any(pc.is_in(values, value_set=words)).as_py())
    if pd.isna(values).any():
        return False
    return not NA.isdisjoint(v for v in values.tolist() if isinstance(v, str))


def _long_and_short(values: pa.Array) -> bool:
    """Does a cell have 19 characters or more (an integer int64 may not hold) and another at most as
    many as the longest NA word?"""
    width = _OFFSETS.get(values.type)
    if width is None or not len(values):
        return width is None  # another storage: let the text decide
    offsets = np.frombuffer(values.buffers()[1], dtype=width)[values.offset : values.offset + len(values) + 1]
    lengths = np.diff(offsets)
    return bool(lengths.max() >= _LONG and lengths.min() <= _NA_LONGEST)


def _ints(name: str, values: np.ndarray) -> StrictColumn | None:
    try:
        return from_numbers(name, values)
    except OverflowError:
        return None
