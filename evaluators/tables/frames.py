"""A frame's columns, made once per frame and shared by both rules.

Two forms: the column arrays (numpy arrays or pandas extension arrays, a few
microseconds a frame) for code that needs only dtypes and values, and Series
(tens of microseconds each) for code that needs pandas' methods.  Over
thousands of small tables the difference is a good part of the grading time.
Entries live exactly as long as their frame (`LifetimeCache`: a weak reference removes them),
so an id is never confused with a later frame's.
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd
import pyarrow as pa


class LifetimeCache:
    """Values kept per object while the object lives: keyed by its id, and a weak reference to it removes the
    entry when it goes, so an id is never confused with a later object's."""

    def __init__(self) -> None:
        self._entries: dict = {}  # id(object) -> (weak reference to it, value)

    def get(self, owner):
        hit = self._entries.get(id(owner))
        return hit[1] if hit is not None and hit[0]() is owner else None

    def put(self, owner, value):
        key = id(owner)

        def forget(ref: weakref.ref, key: int = key) -> None:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]

        self._entries[key] = (weakref.ref(owner, forget), value)
        return value

    def pop(self, owner):
        value = self.get(owner)
        if value is not None:
            del self._entries[id(owner)]
        return value


_COLUMNS = LifetimeCache()  # frame -> [names, arrays, series or None]


def column_arrays(frame: pd.DataFrame) -> tuple[list[str], list]:
    """(column names as str, column arrays), by position.  The arrays are views: never write to them."""
    entry = _entry(frame)
    return entry[0], entry[1]


def columns_of(frame: pd.DataFrame) -> tuple[list[str], list[pd.Series]]:
    """(column names as str, column Series), by position."""
    entry = _entry(frame)
    if entry[2] is None:
        entry[2] = [s for _, s in frame.items()]
    return entry[0], entry[2]


def to_objects(array) -> np.ndarray:
    """A column array as Python objects, as `Series.to_numpy(dtype=object)` gives them."""
    return array.astype(object) if isinstance(array, np.ndarray) else array.to_numpy(dtype=object)


def arrow_texts(array) -> list | None:
    """A pyarrow-backed text column as a list of str and None (for NULL), or None for any other column.
    pyarrow makes the list several times faster than pandas' object conversion."""
    chunks = getattr(array, "_pa_array", None)
    if chunks is None or not isinstance(array.dtype, pd.StringDtype):
        return None
    return chunks.to_pylist()


def _entry(frame: pd.DataFrame) -> list:
    hit = _COLUMNS.get(frame)
    if hit is not None:
        return hit
    return _COLUMNS.put(frame, [[str(c) for c in frame.columns.tolist()], _arrays(frame), None])


def _arrays(frame: pd.DataFrame) -> list:
    get = getattr(frame, "_get_column_array", None)  # private, but it skips making a Series per column
    if get is not None:
        return [get(i) for i in range(frame.shape[1])]
    return [s.to_numpy() if isinstance(s.dtype, np.dtype) else s.array for _, s in frame.items()]


_STRINGS = LifetimeCache()  # pandas' own pyarrow chunks of a column -> the one combined array


def arrow_strings(column) -> pa.Array:
    """A pandas string column (Series or array) as one pyarrow array (pandas may hold several chunks).

    Made once per column while the frame holds it: both rules ask for it, and the one array lets
    `kernels/tokens.dictionary_codes` encode a column once for both (its cache is keyed by the array)."""
    array = getattr(column, "array", column)
    chunks = getattr(array, "_pa_array", None)
    if chunks is None:
        return _combined(pa.array(array))
    hit = _STRINGS.get(chunks)
    return hit if hit is not None else _STRINGS.put(chunks, _combined(pa.array(array)))


def _combined(array) -> pa.Array:
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
