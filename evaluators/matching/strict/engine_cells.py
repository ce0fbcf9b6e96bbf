"""Strict cells for engine-typed frames (DuckDB), where a value's type is its column's type.

Python ints are INT (BIGINT past int64), floats and decimals FLOAT, strings
TEXT; any other value (timestamp, boolean, date, ...) is TEXT compared by
type and value.  NULL is None, NaN, NaT or pd.NA.  Whole columns of one
numpy or nullable dtype are typed in bulk; object columns cell by cell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluators.matching.strict.cells import (
    BIGINT,
    FLOAT,
    INT,
    OBJECT_SPACE,
    TEXT,
    StrictColumn,
    TextPart,
    TokenTable,
    _empty,
    column,
    from_numbers,
    text_cells,
)
from evaluators.tables.frames import arrow_strings

_MASKED_INTS = {f"{s}Int{b}" for s in ("", "U") for b in (8, 16, 32, 64)}


def engine_column(name: str, series: pd.Series, tokens: TokenTable) -> StrictColumn:
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        try:
            return from_numbers(name, series.to_numpy())
        except OverflowError:  # uint64 past int64: Python ints, some of them BIGINT
            return from_objects(name, series.to_numpy(dtype=object), tokens)
    if str(dtype) in _MASKED_INTS and not _past_int64(series):
        null = series.isna().to_numpy()
        return from_numbers(name, series.to_numpy(dtype=np.int64, na_value=0), null)
    if str(dtype) == "Float64" or str(dtype) == "Float32":
        return from_numbers(name, series.to_numpy(dtype=np.float64, na_value=np.nan))
    if (isinstance(dtype, np.dtype) and dtype.kind == "b") or str(dtype) == "boolean":
        null = series.isna().to_numpy()
        words = np.where(series.to_numpy(dtype=bool, na_value=False), object_key(True), object_key(False))
        words = words.astype(object)
        words[null] = None
        return text_cells(name, null, TextPart(OBJECT_SPACE, words), tokens, series.to_numpy(dtype=object))
    if isinstance(dtype, np.dtype) and dtype.kind == "M" or isinstance(dtype, pd.DatetimeTZDtype):
        return _timestamps(name, series, tokens)
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        null = series.isna().to_numpy()
        return text_cells(name, null, TextPart("str", arrow_strings(series)), tokens, series.to_numpy(dtype=object))
    return from_objects(name, series.to_numpy(dtype=object), tokens)


def _timestamps(name: str, series: pd.Series, tokens: TokenTable) -> StrictColumn:
    """Timestamps as TEXT keyed like `repr(Timestamp)`: the instant (any unit) and the time zone."""
    tz = getattr(series.dtype, "tz", None)
    try:
        naive = series.dt.tz_convert("UTC").dt.tz_localize(None) if tz is not None else series
        values = naive.dt.as_unit("ns").to_numpy().view(np.int64)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):
        return from_objects(name, series.to_numpy(dtype=object), tokens)
    null = series.isna().to_numpy()
    part = TextPart(("datetime", str(tz)), np.where(null, 0, values))
    return text_cells(name, null, part, tokens, series.to_numpy(dtype=object))


def from_objects(name: str, values: np.ndarray, tokens: TokenTable) -> StrictColumn:
    """Engine-typed cells one by one: Python ints exact, floats and decimals numeric, the rest as tokens."""
    n = len(values)
    cls, num, ival = _empty(n)
    strings = np.full(n, None, dtype=object)
    objects = np.full(n, None, dtype=object)
    bigints = {}
    for i, v in enumerate(values.tolist()):
        if v is None or (isinstance(v, float) and v != v) or v is pd.NaT or v is pd.NA:
            continue
        if isinstance(v, str):
            cls[i], strings[i] = TEXT, v
        elif isinstance(v, bool) or not isinstance(v, (int, float)) and not _is_decimal(v):
            cls[i], objects[i] = TEXT, object_key(v)
        elif isinstance(v, int):
            if -(2**63) <= v < 2**63:
                cls[i], num[i], ival[i] = INT, float(v), v
            else:
                cls[i], num[i], bigints[i] = BIGINT, _float(v), v
        else:
            cls[i], num[i] = FLOAT, float(v)
    parts = tuple(
        TextPart(space, keys)
        for space, keys in (("str", strings), (OBJECT_SPACE, objects))
        if any(k is not None for k in keys)
    )
    for part in parts:
        tokens.register(part)
    return column(name, cls, num, ival, texts=parts, bigints=bigints or None, tokens=tokens, source=values)


def object_key(v) -> str:
    """What identifies a non-string, non-number engine value: its type and its repr."""
    return f"{type(v).__name__}:{v!r}"


def _past_int64(series: pd.Series) -> bool:
    if str(series.dtype) != "UInt64" or not series.notna().any():
        return False
    return int(series.max()) > np.iinfo(np.int64).max


def _float(v: int) -> float:
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _is_decimal(v) -> bool:
    return type(v).__name__ == "Decimal"
