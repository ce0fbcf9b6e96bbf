"""A frame's columns as Series, made once per frame and shared by both rules.

Making a Series costs tens of microseconds, which adds up over thousands of
small tables when the official views and the strict cells each made their
own.  Entries live exactly as long as their frame (a weak reference removes
them), so an id is never confused with a later frame's.
"""
from __future__ import annotations

import weakref

import pandas as pd

_COLUMNS: dict = {}  # id(frame) -> (weak reference, names, series)


def columns_of(frame: pd.DataFrame) -> tuple[list[str], list[pd.Series]]:
    """(column names as str, column Series), by position."""
    key = id(frame)
    hit = _COLUMNS.get(key)
    if hit is not None and hit[0]() is frame:
        return hit[1], hit[2]
    names = [str(c) for c in frame.columns.tolist()]
    series = [s for _, s in frame.items()]
    _COLUMNS[key] = (weakref.ref(frame, lambda ref, key=key: _forget(key, ref)), names, series)
    return names, series


def _forget(key: int, ref) -> None:
    if key in _COLUMNS and _COLUMNS[key][0] is ref:
        del _COLUMNS[key]
