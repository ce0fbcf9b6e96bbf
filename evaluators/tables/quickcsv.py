"""A fast reader for small CSV files that gives exactly `pd.read_csv(path)`'s frame, or None.

`pd.read_csv` costs about a millisecond a file however small the file, and most
result files hold a few rows.  `read_small` parses them in Python and returns
None ("let pandas read it") for anything whose pandas reading it cannot vouch
for: the rules below were each checked against pandas 3 by experiment, and
tests/test_quickcsv.py compares the two readings over corpora and random texts.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

# pandas' documented default NA strings (`read_csv`'s `na_values`); each is confirmed below with read_csv
# itself, so a pandas that drops one is followed.  Only public pandas API is used in this module.
NA_CANDIDATES = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
)


def _default_na() -> frozenset:
    text = "a,b\n" + "".join(f'"{token}",x\n' for token in NA_CANDIDATES)
    frame = pd.read_csv(io.StringIO(text))
    return frozenset(token for token, missing in zip(NA_CANDIDATES, frame["a"].isna(), strict=False) if missing)


# Measured over the corpus files: Python reads a 100-byte file in 0.2 ms to pandas'
# 0.9 ms, and falls behind at about 7 KiB, where pandas' per-byte speed wins.
MAX_BYTES = 6 * 1024

NA = _default_na()  # pandas' default NA tokens, matched exactly on the raw field
TRUE_FALSE = frozenset({"true", "false"})
SEP = "\x00"  # joins a column's fields for one regex test; never in a field (NUL bails)

# ASCII-only grammars: Python's int() and float() also take '1_000', ' 5' and '١٢٣',
# which pandas reads as text.
INT_COLUMN = re.compile(r"[+-]?+[0-9]++(?:\x00[+-]?+[0-9]++)*+")
# Possessive and unambiguous, so that a failing match cannot backtrack for long.
FLOAT = r"[+-]?+(?:[0-9]++(?:\.[0-9]*+)?+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+"
FLOAT_COLUMN = re.compile(FLOAT + r"(?:\x00" + FLOAT + ")*+")
# Infinities pandas reads as floats in any case; other NaN spellings are left to it too.
SPECIAL = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
FIELD_LIMIT = 100  # pandas' float parser is exact, but not proven so for very long digit strings

# RFC 4180 quoting only: a quote opens a field, closes it, or is doubled inside it.
# Pandas and the csv module both read such text alike; stray quotes differ between them.
_FIELD = r'(?:"(?:[^"]|"")*+"|[^",\r\n]*+)'
_LINE = _FIELD + r"(?:," + _FIELD + r")*+"
QUOTED_TEXT = re.compile(r"(?:" + _LINE + r"\r?+\n)*+(?:" + _LINE + r")?+")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]")


def _reference():
    """The dtypes pandas gives a text column and the column names under the current options."""
    frame = pd.read_csv(io.BytesIO(b"a\nb\n"))
    return frame["a"].dtype, frame.columns.dtype


TEXT_DTYPE, NAMES_DTYPE = _reference()


def _text_array(values: list):
    """`pd.array(values, dtype=TEXT_DTYPE)`, built directly when pandas stores text in pyarrow (twice
    as fast: pandas' own path checks each value again)."""
    if getattr(TEXT_DTYPE, "storage", None) != "pyarrow":
        return pd.array(values, dtype=TEXT_DTYPE)
    return ArrowStringArray(pa.array(values, type=pa.large_string(), from_pandas=True), dtype=TEXT_DTYPE)


def read_small(data: bytes) -> pd.DataFrame | None:
    """`pd.read_csv` of these bytes with all defaults, or None when pandas must read them."""
    if not data or len(data) > MAX_BYTES or data.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    rows = _rows(text)
    if not rows:
        return None  # pandas raises: no columns to parse
    header, width = rows[0], len(rows[0])
    if "" in header or len(set(header)) != width:
        return None  # pandas renames empty and repeated names
    if len(set(map(len, rows))) != 1:
        return None  # short rows are padded, long ones move names onto an index
    if width == 1 and any(row[0].isspace() for row in rows):
        return None  # pandas skips whitespace-only lines; in wider files they are ragged
    arrays: list
    if len(rows) == 1:
        arrays = [np.empty(0, dtype=object) for _ in header]  # a header alone: empty object columns
    else:
        arrays = [_column(fields) for fields in zip(*rows[1:], strict=False)]
        if any(array is None for array in arrays):
            return None
    return _frame(arrays, _names(header), len(rows) - 1)


def _names(header: list[str]) -> pd.Index:
    return pd.Index(header, dtype=NAMES_DTYPE)


def _frame(arrays: list, names: pd.Index, length: int) -> pd.DataFrame:
    """The frame by pandas' public constructor (positions as keys, so repeated or odd names cannot clash)."""
    frame = pd.DataFrame(dict(zip(range(len(arrays)), arrays, strict=True)), index=pd.RangeIndex(length), copy=False)
    frame.columns = names
    return frame


def _rows(text: str) -> list[list[str]] | None:
    """Non-blank rows of fields, or None for line ends and quoting pandas might read otherwise."""
    if CONTROL.search(text):
        return None
    if '"' in text:
        if not QUOTED_TEXT.fullmatch(text):
            return None
        # newline="" keeps a quoted field's line ends as written, as pandas does
        return [row for row in csv.reader(io.StringIO(text, newline="")) if row]
    if "\r" in text:
        if text.count("\r") != text.count("\r\n"):
            return None  # a lone CR ends a line for pandas; not worth following
        text = text.replace("\r\n", "\n")
    return [line.split(",") for line in text.split("\n") if line]


def _column(fields: tuple[str, ...]) -> np.ndarray | pd.api.extensions.ExtensionArray | None:
    """One column typed as pandas types it, or None to bail."""
    has_na = not NA.isdisjoint(fields)
    present = [field for field in fields if field not in NA] if has_na else fields
    if not present:
        return np.full(len(fields), np.nan)
    joined = SEP.join(present)
    if INT_COLUMN.fullmatch(joined):
        return _ints(fields, present)
    longest = max(map(len, present))
    if longest > 18 and any(_beyond_int64(field) for field in present):
        return None  # pandas then types the column by which field comes first
    if FLOAT_COLUMN.fullmatch(joined):
        if longest > FIELD_LIMIT:
            return None
        # pandas' float parser rounds correctly, as float() does (checked on 500,000 random texts)
        if has_na:
            return np.array([np.nan if field in NA else float(field) for field in fields])
        return np.array(list(map(float, fields)))
    if not _plain_text(present, joined):
        return None
    values = [np.nan if field in NA else field for field in fields] if has_na else list(fields)
    return _text_array(values)


def _beyond_int64(field: str) -> bool:
    return bool(INT_COLUMN.fullmatch(field)) and not -(2**63) <= int(field) < 2**63


def _ints(fields: tuple[str, ...], present: Sequence[str]) -> np.ndarray | None:
    numbers = list(map(int, present))
    if min(numbers) < -(2**63) or max(numbers) >= 2**63:
        return None  # pandas turns to uint64, object or text (even leaving 'NA' as text)
    values = np.array(numbers, dtype=np.int64)
    if len(present) == len(fields):
        return values
    # with NA pandas reads ints and then casts them, so '-0' becomes +0.0, not float('-0')
    out = np.full(len(fields), np.nan)
    out[[field not in NA for field in fields]] = values
    return out


def _plain_text(fields: Sequence[str], joined: str) -> bool:
    """Whether pandas surely reads this non-numeric column as text, as written."""
    lowered = joined.lower()
    suspect = any(word in lowered for word in ("inf", "nan", "true", "false"))
    if not suspect and not any(char.isspace() for char in set(joined)):
        return True  # the common case, settled without a look at each field
    for field in fields:
        squeezed = "".join(field.split())  # without any whitespace
        if squeezed != field and (squeezed in NA or FLOAT_COLUMN.fullmatch(squeezed)):
            return False  # pandas reads ' 5' and '+1e 5' as numbers (not '1e 5'), maybe ' NA' as NA
        if suspect and (SPECIAL.fullmatch(squeezed) or squeezed.lower() in TRUE_FALSE):
            return False  # infinities are floats, True/False columns booleans
    return True
