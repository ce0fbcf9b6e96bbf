"""Columns as the public scorers see them, turned into arrays.

The public rule works on `frame.transpose().values.tolist()`: Python objects
whose types depend on the frame (an all-numpy-numeric frame with one float
column turns every int into a float; any other frame keeps each column's
type, nullable integers included).  `FrameViews` reproduces those types and
stores each column in one of three forms:

- `num`: numbers and NULLs, as float64 plus the exact values and their
  Python type (`int`, `float` or `bool`), which decides the string the
  scorers sort by, and the NULL's own string (`nan`, or `<NA>` for nullable
  columns);
- `tok`: values compared with `==` only (strings, timestamps), kept as they
  are for direct comparison, with the flavour of each NULL; job-wide integer
  codes are made only when needed (`tokens.py`);
- `lit`: anything else, kept as the Python list for the literal rule.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from evaluators.limits import EXACT_FLOAT_INT
from evaluators.matching.kernels.row_pairing import text_bytes
from evaluators.matching.kernels.tokens import TokenSpace
from evaluators.tables.frames import arrow_strings, columns_of

# NULL flavours sort differently in the scorers' key (None last, NaN as 'nan',
# NaT as 'NaT', pd.NA as '<NA>'), so token columns keep them apart.
NAN_CODE, NONE_CODE, NAT_CODE, ZERO_CODE, NA_CODE = -1, -2, -3, -4, -5
SHORT = 1000  # columns up to this long are sorted by Python rather than by numpy's string ranking
MASKED = {f"{s}Int{b}" for s in ("", "U") for b in (8, 16, 32, 64)} | {"boolean"}
WHOLE_FLOAT_LIMIT = EXACT_FLOAT_INT  # below this a whole float prints as its int plus ".0", never in exponent form
OBJECT = np.dtype(object)
COUNTED_SPAN = 1 << 16  # int columns spanning up to this (or their rows) compare their multisets by counts


def scorer_key(x):
    """The public scorers' sort key for one value."""
    return (x is None, str(x), isinstance(x, (int, float)))


def sort_as_scorers(values: list) -> list | None:
    """The values in the scorers' sorted order, or None when that sort raises (a mismatch for them)."""
    kinds = set(map(type, values))
    try:
        # Over numbers alone (NaN included) or texts alone the key's first and last parts are constant,
        # so its middle part orders alone, and a stable sort keeps ties alike; a text is its own str.
        if kinds == {str}:
            return sorted(values)
        if kinds <= {int, float, bool}:
            return sorted(values, key=str)
        return sorted(values, key=scorer_key)
    except Exception:  # the scorers' comparison raises too, and counts as a mismatch
        return None


@dataclass(eq=False)
class Tokens:
    """The null-handling-independent part of a token column."""

    space: object  # "str" or ("datetime", tz): codes compare only within one space
    values: object  # pyarrow strings, object ndarray of str, or int64 ns timestamps
    null: np.ndarray
    flavour: np.ndarray  # NULL code per cell (int8), 0 where not NULL
    source: pd.Series
    tokens: TokenSpace
    codes: Any = None  # int64 ndarray, filled in bulk by `tokens`

    def token_values(self):
        return self.values

    @cached_property
    def items(self) -> np.ndarray:
        return self.source.to_numpy(dtype=object)


@dataclass(eq=False)
class Column:
    name: str
    kind: str  # "num", "tok" or "lit"
    n: int
    null_as_zero: bool
    # The fields below exist for the kinds named (one class serves all three, so they are typed Any:
    # the kind, checked by the callers, says which are there).
    exact: Any = None  # num: int64/uint64/bool/float64 ndarray as materialised
    null: Any = None  # num, tok: bool ndarray mask of NULL cells
    key_type: str = ""  # "int", "float" or "bool": the Python type the scorers see
    null_text: str = "nan"  # num: str() of this column's NULL
    base: Any = None  # tok: Tokens
    items: Any = None  # lit: list of Python objects
    key: tuple = ()  # (frame id, position, common dtype): the same data under either NULL handling

    @cached_property
    def num(self) -> np.ndarray:
        """num: the values as float64, NULL as NaN (or 0.0 when read as zero).  Made on first use: sorted
        comparisons never need it, and a NULL-heavy column read as zero would otherwise hold a copy."""
        values = self.exact.astype(np.float64, copy=False)
        if self.null_count and (self.null_as_zero or self.exact.dtype.kind != "f"):  # a float's NULL is its NaN
            values = np.where(self.null, 0.0 if self.null_as_zero else np.nan, values)
        return values

    @cached_property
    def null_count(self) -> int:
        return int(self.null.sum()) if self.null is not None else 0

    @cached_property
    def value_range(self):
        """num: smallest and largest value (a cheap signature of the multiset)."""
        if self.null_count == self.n:
            return None
        if self.null_count and self.exact.dtype.kind == "f":  # the NULLs are the NaNs, which fmin/fmax skip
            return (np.fmin.reduce(self.exact), np.fmax.reduce(self.exact))
        values = self.exact[~self.null] if self.null_count else self.exact
        return (values.min(), values.max())

    @cached_property
    def text_bytes(self) -> int | None:
        """tok: total length of the strings when stored by pyarrow (a cheap signature), else None."""
        return text_bytes(self.base.values)

    @cached_property
    def sorted_num(self) -> np.ndarray:
        # float64 is a monotone image of the exact values: their sorted order, without a second sort.
        values = self.sorted_exact.astype(np.float64, copy=False)
        if not self.null_as_zero or not self.null_count:
            return values
        # NULLs read as 0 go among the zeros (0.0 and -0.0 are one number here).
        return np.insert(values, int(np.searchsorted(values, 0.0)), np.zeros(self.null_count))

    def drop_sorted(self) -> None:
        """Forget the sorted copies (a column's worth of memory each); they are made again if asked."""
        for name in ("sorted_exact", "sorted_num", "_ranked_sorted"):
            self.__dict__.pop(name, None)

    @cached_property
    def int_counts(self) -> tuple[int, np.ndarray] | None:
        """num, int: (smallest value, how many cells hold each value from it up), NULLs left out, when the
        values span at most COUNTED_SPAN or the rows: the multiset `sorted_exact` shows, by a count instead
        of a sort (two columns with equal counts sort alike).  None otherwise."""
        if self.key_type != "int" or self.value_range is None:
            return None
        low, high = (int(v) for v in self.value_range)
        if high - low > max(COUNTED_SPAN, self.n):
            return None
        values = self.exact[~self.null] if self.null_count else self.exact
        offsets = np.subtract(values, values.dtype.type(low)).astype(np.intp, copy=False)  # within the span
        return low, np.bincount(offsets, minlength=high - low + 1)

    @cached_property
    def sorted_exact(self) -> np.ndarray:
        values = self.exact[~self.null] if self.null_count else self.exact.copy()
        values.sort()  # in place: one copy of the column, not two
        return values

    @cached_property
    def negative_zeros(self) -> int:
        if self.key_type != "float":
            return 0
        return int(np.count_nonzero((self.exact == 0) & np.signbit(self.exact) & ~self.null))

    @cached_property
    def whole_floats(self) -> bool:
        """num, float: no NULL, and every value whole, not -0.0 and below WHOLE_FLOAT_LIMIT."""
        values = self.exact
        return bool(
            self.key_type == "float"
            and len(values)
            and not self.null_count
            and not self.negative_zeros
            and np.abs(values).max() < WHOLE_FLOAT_LIMIT
            and (values == np.trunc(values)).all()
        )

    @cached_property
    def scorer_sorted(self) -> list | None:
        """The Python values in the scorers' sorted order (None when that sort raises)."""
        return sort_as_scorers(self.python_values())

    @cached_property
    def code_counts(self) -> tuple:
        """tok: the multiset of `codes` (what sorting them would show) as (NULL flavours with their counts,
        count of each job-wide code up to the last one present): a count, not a sort, and no copy of the
        column beyond its non-NULL codes."""
        codes = self.base.tokens.ensure(self.base)
        counts = np.bincount(codes[~self.null] if self.null_count else codes)
        return tuple(sorted(self.flavour_counts.items())), np.trim_zeros(counts, "b")

    @cached_property
    def flavour_counts(self) -> dict:
        """tok: {NULL code (ZERO_CODE when read as zero): cells}."""
        if not self.null_count:
            return {}
        if self.null_as_zero:
            return {ZERO_CODE: self.null_count}
        flavours, counts = np.unique(self.base.flavour[self.null], return_counts=True)
        return dict(zip(flavours.tolist(), counts.tolist(), strict=True))

    @cached_property
    def null_flavours(self) -> frozenset:
        return frozenset(self.flavour_counts)

    def same_tokens(self, other: Column) -> bool:
        """tok: do the two columns hold the same multiset of codes (NULL flavours included)?"""
        (mine, my_counts), (theirs, their_counts) = self.code_counts, other.code_counts
        return mine == theirs and bool(np.array_equal(my_counts, their_counts))

    def python_values(self) -> list:
        """The column as the scorers' Python list (after NULL-as-zero)."""
        if self.kind == "lit":
            return self.items
        if self.kind == "num":
            values = self.exact.tolist()
            fill = 0 if self.null_as_zero else (float("nan") if self.null_text == "nan" else pd.NA)
            for i in np.flatnonzero(self.null):
                values[i] = fill
            return values
        values = list(self.base.items)
        if self.null_as_zero:
            values = [0 if is_null else v for v, is_null in zip(values, self.null.tolist(), strict=True)]
        return values

    @property
    def official_sorted(self) -> tuple[np.ndarray, np.ndarray]:
        """num: (num, null) of the cells in the scorers' order, what `official_order` would gather.

        Cells holding one value (one bit pattern) are alike, and NULL cells are alike, so the distinct
        values in the scorers' order, each repeated by its count, with the NULLs at their text's place,
        give the same arrays without sorting the cells: one sort of the values, one of the distinct ones.
        (A NULL read as 0 may tie with a value 0 and interleave with it; its number is 0 all the same.)
        """
        if self.n > SHORT and self.key_type == "float":
            fill = 0.0 if self.null_as_zero else np.nan
            extra = "0" if self.null_as_zero else self.null_text
            made = plain_floats_sorted(self.sorted_exact, self.negative_zeros, self.null_count, extra, fill)
            if made is not None:
                return made  # cheap to make again from sorted_exact: not kept (a column's worth of memory)
        return self._ranked_sorted

    @cached_property
    def _ranked_sorted(self) -> tuple[np.ndarray, np.ndarray]:
        if self.n <= SHORT:
            order = self.official_order
            return self.num[order], self.null[order]
        keep = ~self.null
        values = self.exact[keep]
        bits = values.view(np.int64) if values.dtype.kind == "f" else values
        distinct_bits, counts = np.unique(bits, return_counts=True)
        distinct = distinct_bits.view(values.dtype) if values.dtype.kind == "f" else distinct_bits
        extra = "0" if self.null_as_zero else self.null_text
        rank = _plain_float_ranks(distinct, extra) if self.key_type == "float" else None
        if rank is None:
            rank = _text_ranks(list(map(str, distinct.tolist())), extra)
        order = np.argsort(rank[:-1], kind="stable")
        before = int(np.count_nonzero(rank[:-1] < rank[-1]))  # distinct values whose text sorts before NULL's
        nums = np.repeat(distinct.astype(np.float64)[order], counts[order])
        at = int(counts[order][:before].sum())
        fill = 0.0 if self.null_as_zero else np.nan
        num = np.concatenate([nums[:at], np.full(self.null_count, fill), nums[at:]])
        null = np.zeros(self.n, dtype=bool)
        null[at : at + self.null_count] = True
        return num, null

    @cached_property
    def official_order(self) -> np.ndarray:
        """num: the stable permutation by the scorers' key (x is None, str(x), is a number).

        Within a num column the key's first and last parts are constant, so the
        order is by str(x): each distinct value (told apart by its bits, so 0.0
        and -0.0 differ) is turned into its string once, the strings are ranked,
        and a stable sort of the ranks gives exactly Python's stable sort.
        """
        if self.n <= SHORT:  # Python's sort by the very key is cheaper for a short column
            texts = [str(x) for x in self.python_values()]
            return np.array(sorted(range(self.n), key=texts.__getitem__), dtype=np.int64)
        keep = ~self.null
        values = self.exact[keep]
        bits = values.view(np.int64) if values.dtype.kind == "f" else values
        _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
        extra = "0" if self.null_as_zero else self.null_text
        rank = _plain_float_ranks(values[first], extra) if self.key_type == "float" else None
        if rank is None:
            rank = _text_ranks(list(map(str, values[first].tolist())), extra)
        cell_rank = np.full(self.n, rank[-1], dtype=np.int64)
        cell_rank[keep] = rank[:-1][inverse.reshape(-1)]
        return np.argsort(cell_rank, kind="stable")


PLAIN = (1e-4, 1e15)  # magnitudes whose str() is plain decimal (no exponent) with an exact integer part


def _plain_float_ranks(values: np.ndarray, extra: str) -> np.ndarray | None:
    """_text_ranks of distinct floats without printing each one, or None when it does not apply.

    For 1e-4 <= |x| < 1e15 (and zeros) str(x) is the sign, the integer part's digits, '.', and the
    shortest fraction digits.  Two texts with different sign-and-integer heads differ at or before the
    shorter head's '.', so the heads decide (few, printed once); within one head, fraction digits
    without trailing zeros sort as their values do, and a negative number's text is '-' and its
    magnitude's: so within a head the order is by magnitude.  `extra` must sort after every such text
    ('nan' and '<NA>' do: letters and '<' come after digits and '-')."""
    if extra not in ("nan", "<NA>") or values.dtype.kind != "f":
        return None
    magnitude = np.abs(values)
    if not (((magnitude >= PLAIN[0]) | (magnitude == 0)) & (magnitude < PLAIN[1])).all():
        return None
    whole = np.trunc(magnitude).astype(np.int64)
    heads, head_of = np.unique(whole * 2 + np.signbit(values), return_inverse=True)
    texts = [("-" if h & 1 else "") + str(h >> 1) + "." for h in heads.tolist()]
    head_rank = _text_ranks(texts, "")[:-1]
    order = np.lexsort((magnitude, head_rank[head_of.reshape(-1)]))
    rank = np.empty(len(values) + 1, dtype=np.int64)
    rank[order] = np.arange(len(values), dtype=np.int64)
    rank[-1] = len(values)
    return rank


def plain_floats_sorted(ascending: np.ndarray, negative_zeros: int, null_count: int, extra: str, fill: float):
    """`Column.official_sorted` from the non-NULL values sorted as numbers, without sorting again, or None
    when it does not apply (values outside PLAIN, or a NULL text other than 'nan', '<NA>' or '0').

    Within PLAIN the scorers' text order is by head (sign and integer part, see `_plain_float_ranks`), then
    by magnitude.  The numeric order already holds each head's values together: the positive ones by
    magnitude, the negative ones backwards, and the zeros of both signs in one run (they compare equal).
    So the negative part is reversed, the zeros split by sign, and the head runs put in text order: only
    the heads are printed and sorted.  `negative_zeros` counts the -0.0 among the values: numpy's sort may
    turn -0.0 into 0.0 (its vectorised kernels do), so the sorted zeros' signs are not trusted.  NULL's text ('nan' and '<NA>' after every number, '0' after every
    negative and before '0.') is never a head (heads end in '.'), so it sits between two runs."""
    if extra not in ("nan", "<NA>", "0") or ascending.dtype.kind != "f":
        return None
    m = len(ascending)
    if m and not max(abs(ascending[0]), abs(ascending[-1])) < PLAIN[1]:
        return None  # too large for plain text, or infinite
    below = int(np.searchsorted(ascending, -PLAIN[0], side="right"))  # values <= -1e-4
    above = int(np.searchsorted(ascending, PLAIN[0], side="left"))  # values < 1e-4
    zeros = ascending[below:above]
    if zeros.any():
        return None  # a tiny non-zero magnitude prints in exponent form
    negatives = negative_zeros + below  # the values whose text starts with '-'
    cells = np.empty(m + null_count, dtype=np.float64)
    cells[:negative_zeros] = -0.0
    cells[negative_zeros:negatives] = ascending[:below][::-1]
    cells[negatives : negatives + len(zeros) - negative_zeros] = 0.0
    cells[negatives + len(zeros) - negative_zeros : m] = ascending[above:]
    cells[m:] = fill
    starts, heads = _head_runs(cells[:m], negatives)
    texts = [
        ("-" if start < negatives else "") + str(int(head)) + "."
        for start, head in zip(starts.tolist(), heads.tolist(), strict=True)
    ]
    rank = _text_ranks(texts, extra)
    bounds = np.append(starts, [m, m + null_count])
    run_order = np.argsort(rank, kind="stable").tolist()  # the NULL run last among equals: it never ties
    num = _runs_gathered(cells, bounds, run_order)
    null = np.zeros(m + null_count, dtype=bool)
    at = sum(int(bounds[k + 1] - bounds[k]) for k in run_order[: run_order.index(len(starts))])
    null[at : at + null_count] = True
    return num, null


def _runs_gathered(cells: np.ndarray, bounds: np.ndarray, run_order: list[int]) -> np.ndarray:
    """The runs of `cells` (run k is bounds[k]:bounds[k + 1]) one after another in `run_order`."""
    if len(run_order) <= GATHER_RUNS:
        return np.concatenate([cells[bounds[k] : bounds[k + 1]] for k in run_order])
    order = np.array(run_order, dtype=np.int64)
    lengths = (bounds[1:] - bounds[:-1])[order]
    offsets = np.cumsum(lengths) - lengths  # where each run lands
    index = np.repeat(bounds[:-1][order] - offsets, lengths)
    index += np.arange(len(cells), dtype=np.int64)
    return cells[index]


GATHER_RUNS = 4096  # past this many runs one gather beats a list of slices (which holds no index arrays)


def _head_runs(cells: np.ndarray, negatives: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of one head starts in `cells` (negatives by magnitude, then the rest), and its
    integer part."""
    if not len(cells):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    whole = np.abs(cells)
    np.trunc(whole, out=whole)
    change = whole[1:] != whole[:-1]
    if 0 < negatives < len(cells):
        change[negatives - 1] = True
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    return starts, whole[starts]


def _text_ranks(texts: list[str], extra: str) -> np.ndarray:
    """Ranks of the distinct `texts` and then of `extra` (which may equal one of them) in code-point order:
    np.unique's inverse up to a monotone map, so a stable sort by either gives one order.  Python's sort of
    str objects beats numpy's of a fixed-width unicode array.  Distinct values give distinct texts (a float's
    str round-trips, so two bit patterns other than NaN never print alike)."""
    order = sorted(range(len(texts)), key=texts.__getitem__)
    rank = np.empty(len(texts) + 1, dtype=np.int64)
    rank[np.array(order, dtype=np.int64)] = 2 * np.arange(len(texts), dtype=np.int64) + 1
    ranked = [texts[k] for k in order]
    at = bisect.bisect_left(ranked, extra)
    rank[-1] = 2 * at + 1 if at < len(ranked) and ranked[at] == extra else 2 * at
    return rank


def common_numeric(dtypes: list) -> np.dtype | None:
    """The common numpy dtype when transposing keeps numbers numeric, else None."""
    if not dtypes or not all(isinstance(d, np.dtype) and d.kind in "iuf" for d in dtypes):
        return None
    return np.result_type(*dtypes)


class FrameViews:
    """Column views of one frame, built per position on demand and kept."""

    def __init__(self, frame: pd.DataFrame, tokens: TokenSpace):
        self.frame, self.tokens = frame, tokens
        self.names, self._series = columns_of(frame)
        self._tokens: dict = {}
        self._columns: dict = {}

    @property
    def dtypes(self) -> list:
        return [s.dtype for s in self.all_series()]

    def columns(self, positions: list[int], null_as_zero: bool) -> list[Column]:
        series = self.all_series()
        common = common_numeric([series[i].dtype for i in positions])
        return [self._column(i, null_as_zero, common) for i in positions]

    def all_series(self) -> list[pd.Series]:
        """Every column as a Series, by position (shared with the strict cells of the same frame)."""
        return self._series

    def _column(self, position: int, null_as_zero: bool, common) -> Column:
        key = (position, null_as_zero, common)
        if key not in self._columns:
            series = self.all_series()[position]
            name = self.names[position]
            if common is not None:
                made = num_column(name, series.to_numpy(dtype=common), null_as_zero)
            else:
                made = self._typed_column(name, position, series, null_as_zero)
            made.key = (id(self.frame), position, common)
            self._columns[key] = made
        return self._columns[key]

    def _typed_column(self, name, position, series, null_as_zero) -> Column:
        dtype = series.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "iufb":
            return num_column(name, series.to_numpy(), null_as_zero)
        if str(dtype) in MASKED:
            return _masked_column(name, series, null_as_zero)
        base = self._tokens.get(position)
        if base is None:
            base = self._tokens[position] = token_base(series, self.tokens)
        if base is None:
            return lit_column(name, series.to_numpy(dtype=object), null_as_zero)
        if null_as_zero and base.space != "str" and base.null.any():
            return lit_column(name, series.to_numpy(dtype=object), null_as_zero)  # a NaT read as 0 is a lit
        return Column(name, "tok", len(series), null_as_zero, null=base.null, base=base)


def num_column(name: str, values: np.ndarray, null_as_zero: bool, null=None, null_text="nan") -> Column:
    key_type = {"i": "int", "u": "int", "b": "bool"}.get(values.dtype.kind, "float")
    if null is None:
        null = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
    return Column(
        name, "num", len(values), null_as_zero, exact=values, null=null, key_type=key_type, null_text=null_text
    )


def _masked_column(name: str, series: pd.Series, null_as_zero: bool) -> Column:
    """Nullable ints and bools: Python ints/bools with pd.NA, which sorts as '<NA>'."""
    null = series.isna().to_numpy()
    kind = series.dtype.kind
    target = {"i": np.int64, "u": np.uint64, "b": np.bool_}[kind]
    values = series.to_numpy(dtype=target, na_value=0 if kind != "b" else False)
    return num_column(name, values, null_as_zero, null=null, null_text="<NA>")


def lit_column(name: str, values: np.ndarray, null_as_zero: bool) -> Column:
    items = list(values)
    if null_as_zero:
        items = [0 if pd.isna(x) else x for x in items]
    return Column(name, "lit", len(items), null_as_zero, items=items)


def token_base(series: pd.Series, tokens: TokenSpace) -> Tokens | None:
    """Strings (with NaN/None NULLs) or timestamps as a token column; None when it is not one."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "M":
        return _datetime_base(series, tokens)
    if isinstance(dtype, pd.StringDtype) and dtype.na_value is np.nan:
        null = series.isna().to_numpy()
        if null.all():
            return None  # all-NULL: the frame's transposition gives plain NaNs
        values = arrow_strings(series) if dtype.storage == "pyarrow" else series.to_numpy(dtype=object)
        return _register(Tokens("str", values, null, _flavours(null, NAN_CODE), series, tokens))
    if dtype != OBJECT:
        return None
    values = series.to_numpy(dtype=object)
    null = pd.isna(values)
    if null.all() or pd.api.types.infer_dtype(values, skipna=True) != "string":
        return None
    flavour = np.zeros(len(values), dtype=np.int8)
    for i in np.flatnonzero(null):
        v = values[i]
        if v is None:
            flavour[i] = NONE_CODE
        elif type(v) is float:
            flavour[i] = NAN_CODE
        else:
            return None  # pd.NA or NaT among strings: the literal rule decides
    return _register(Tokens("str", values, null, flavour, series, tokens))


def _datetime_base(series: pd.Series, tokens: TokenSpace) -> Tokens | None:
    null = series.isna().to_numpy()
    if null.all():
        return None  # all NaT: the literal rule (NaT equals NaN and None there)
    tz = getattr(series.dtype, "tz", None)
    try:
        # One unit, in UTC: equal instants give equal ints.  Within one time zone equal
        # instants also print alike, so the scorers' string sort puts them together.
        naive = series.dt.tz_convert("UTC").dt.tz_localize(None) if tz is not None else series
        values = naive.dt.as_unit("ns").to_numpy().view(np.int64)
    except (OverflowError, ValueError, pd.errors.OutOfBoundsDatetime):
        return None
    space = ("datetime", str(tz))
    return _register(Tokens(space, values, null, _flavours(null, NAT_CODE), series, tokens))


def _flavours(null: np.ndarray, code: int) -> np.ndarray:
    """One NULL flavour code where `null`, 0 elsewhere, a byte a cell."""
    return np.where(null, np.int8(code), np.int8(0))


def _register(base: Tokens) -> Tokens:
    base.tokens.register(base)
    return base
