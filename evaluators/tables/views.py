"""Columns as the public scorers see them, turned into arrays.

The public rule works on `frame.transpose().values.tolist()`: Python objects
whose types depend on the whole frame (an all-numeric frame with one float
column turns every int into a float).  `official_columns` reproduces those
types and stores each column in one of three forms:

- `num`: numbers and NULLs, as float64 plus the exact values and their
  Python type (`int`, `float` or `bool`), which decides the string the
  scorers sort by;
- `tok`: values compared with `==` only (strings, timestamps), as integer
  codes shared by both tables, with the flavour of each NULL;
- `lit`: anything else, kept as the Python list for the literal rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

# NULL flavours sort differently in the scorers' key (None last, NaN as 'nan',
# NaT as 'NaT'), so token columns keep them apart.
NAN_CODE, NONE_CODE, NAT_CODE, ZERO_CODE = -1, -2, -3, -4


@dataclass(eq=False)
class Column:
    name: str
    kind: str  # "num", "tok" or "lit"
    n: int
    null_as_zero: bool
    num: np.ndarray | None = None  # float64; NULL is NaN (or 0.0 when read as zero)
    exact: np.ndarray | None = None  # int64/uint64/bool/float64 as materialised
    null: np.ndarray | None = None  # bool mask of NULL cells
    key_type: str = ""  # "int", "float" or "bool": the Python type the scorers see
    codes: np.ndarray | None = None  # tok: shared codes, NULL flavours negative
    items: list | None = None  # lit: Python objects; tok: the original values, for messages
    _cache: dict = field(default_factory=dict)

    @cached_property
    def null_count(self) -> int:
        return int(self.null.sum()) if self.null is not None else 0

    @cached_property
    def sorted_num(self) -> np.ndarray:
        values = self.num if self.null_as_zero else self.num[~self.null]
        return np.sort(values)

    @cached_property
    def sorted_exact(self) -> np.ndarray:
        return np.sort(self.exact[~self.null])

    @cached_property
    def negative_zeros(self) -> int:
        if self.key_type != "float":
            return 0
        return int(np.count_nonzero((self.exact == 0) & np.signbit(self.exact) & ~self.null))

    @cached_property
    def sorted_codes(self) -> np.ndarray:
        return np.sort(self.codes)

    @cached_property
    def null_flavours(self) -> frozenset:
        return frozenset(int(c) for c in np.unique(self.codes[self.codes < 0]))

    def python_values(self) -> list:
        """The column as the scorers' Python list (after NULL-as-zero)."""
        if self.kind == "lit":
            return self.items
        if self.kind == "num":
            values = self.exact.tolist()
            fill = 0 if self.null_as_zero else float("nan")
            for i in np.flatnonzero(self.null):
                values[i] = fill
            return values
        values = list(self.items)
        if self.null_as_zero:
            values = [0 if is_null else v for v, is_null in zip(values, self.null.tolist())]
        return values

    @cached_property
    def official_order(self) -> np.ndarray:
        """Stable permutation by the scorers' key (x is None, str(x), is a number)."""
        values = self.python_values()
        keys = [(x is None, str(x), isinstance(x, (int, float))) for x in values]
        return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def _frame_is_numeric(frame: pd.DataFrame) -> np.dtype | None:
    """The common numpy dtype when transposing keeps numbers numeric, else None."""
    dtypes = list(frame.dtypes)
    if not dtypes or not all(isinstance(d, np.dtype) and d.kind in "iuf" for d in dtypes):
        return None
    return np.result_type(*dtypes)


def official_columns(frame: pd.DataFrame, null_as_zero: bool, tokens: "TokenSpace") -> list[Column]:
    common = _frame_is_numeric(frame)
    columns = []
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        name = str(frame.columns[position])
        if common is not None:
            columns.append(_num_column(name, series.to_numpy(dtype=common), null_as_zero))
        else:
            columns.append(_column(name, series, null_as_zero, tokens))
    return columns


def _num_column(name: str, values: np.ndarray, null_as_zero: bool) -> Column:
    key_type = {"i": "int", "u": "int", "b": "bool"}.get(values.dtype.kind, "float")
    null = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    num = values.astype(np.float64, copy=False)
    if null_as_zero and null.any():
        num = np.where(null, 0.0, num)
    return Column(name, "num", len(values), null_as_zero, num=num, exact=values, null=null, key_type=key_type)


def _column(name: str, series: pd.Series, null_as_zero: bool, tokens: "TokenSpace") -> Column:
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iufb":
        return _num_column(name, series.to_numpy(), null_as_zero)
    if isinstance(dtype, np.dtype) and dtype.kind == "M":
        return tokens.datetime_column(name, series, null_as_zero)
    values = series.to_numpy(dtype=object)
    kinds = {type(v) for v in values}
    only_text = kinds <= {str, float, type(None)} and all(v != v for v in values if type(v) is float)
    return tokens.string_column(name, values, null_as_zero) if only_text else _lit(name, values, null_as_zero)


def _lit(name, values, null_as_zero) -> Column:
    items = list(values)
    if null_as_zero:
        items = [0 if pd.isna(x) else x for x in items]
    return Column(name, "lit", len(items), null_as_zero, items=items)


class TokenSpace:
    """Shared integer codes for `==`-compared values of both tables of one comparison."""

    def __init__(self):
        self._strings: dict = {}
        self._datetimes: dict = {}

    def _encode(self, table: dict, values: np.ndarray, tag=None) -> np.ndarray:
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        keys = uniques.tolist() if tag is None else [(tag, u) for u in uniques.tolist()]
        mapping = np.array([table.setdefault(u, len(table)) for u in keys], dtype=np.int64)
        return mapping[codes] if len(codes) else np.zeros(0, dtype=np.int64)

    def string_column(self, name, values: np.ndarray, null_as_zero: bool) -> Column:
        is_none = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        is_nan = pd.isna(values) & ~is_none
        if not (~(is_none | is_nan)).any():
            return _num_column(name, np.full(len(values), np.nan), null_as_zero) if not is_none.any() \
                else _lit(name, values, null_as_zero)
        text = np.where(is_none | is_nan, "", values)
        codes = self._encode(self._strings, text) * 4  # room below for nothing; strings are >= 0
        codes[is_nan] = ZERO_CODE if null_as_zero else NAN_CODE
        codes[is_none] = ZERO_CODE if null_as_zero else NONE_CODE
        return Column(name, "tok", len(values), null_as_zero, codes=codes, null=is_nan | is_none, items=values)

    def datetime_column(self, name, series: pd.Series, null_as_zero: bool) -> Column:
        nat = series.isna().to_numpy()
        if null_as_zero and nat.any():
            return _lit(name, series.to_numpy(dtype=object), null_as_zero)
        raw = series.to_numpy().view(np.int64)
        codes = self._encode(self._datetimes, raw, tag=str(series.dtype)) * 4 + 1  # odd: never a string code
        codes[nat] = NAT_CODE
        return Column(name, "tok", len(raw), null_as_zero, codes=codes, null=nat, items=series.to_numpy(dtype=object))
