"""Typing CSV text cells for the strict rule, in bulk.

`_type_text` is the definition: a cell is INT if it matches `\\s*[+-]?\\d+\\s*`,
FLOAT if Python's `float()` reads it as a finite number (underscores not
allowed), TEXT otherwise.  A short column applies it to each distinct text.
In a long one that would cost microseconds per distinct text, so cells are
first screened (`MAY_BE_NUMBER`, read from the first bytes of pyarrow's
buffer, and patterns run by pyarrow):

- a string whose first character is ASCII and cannot begin a Python number
  (not blank, sign, dot or digit, nor the start of `inf` or `nan`) is TEXT;
- plain ASCII integers of up to 18 digits are INT, parsed by pyarrow;
- plain ASCII decimals (`-1.5`, `.5`, `2e-3`, not bare digits) are FLOAT, parsed by pyarrow,
  whose parser rounds correctly, as Python's does, so the float is the same;
- the few remaining distinct texts go through `_type_text`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluators.limits import HEAD_ROWS
from evaluators.matching.kernels.tokens import dictionary_codes
from evaluators.matching.strict.cells import (
    BIGINT,
    FLOAT,
    INT,
    NULL,
    TEXT,
    Cells,
    RawText,
    StrictColumn,
    TextPart,
    TokenTable,
    _empty,
    arrow_or_none,
    no_ints,
)

_INT_RE = re.compile(r"\s*[+-]?\d+\s*")
# Python's own blanks in ASCII (str.isspace): what int() and float() strip.
_BLANK = r"\t\n\v\f\r \x1c-\x1f"
MAY_BE_NUMBER = rf"^(?:[{_BLANK}+\-.0-9]|[iI][nN][fF]|[nN][aA][nN]|[^\x00-\x7f])"
PLAIN_INT = r"^[+-]?[0-9]{1,18}$"  # 18 digits always fit in int64
PLAIN_FLOAT = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
DIGITS_ONLY = r"^[+-]?[0-9]+$"  # integers, even too long for PLAIN_INT, are never typed as floats


SMALL = 512  # up to this many cells, typing each distinct text in Python is cheaper than pyarrow's calls


def from_text(name: str, values, tokens: TokenTable) -> StrictColumn:
    """Cells typed from their text (NaN/None mark NULL), lazily: identical texts need no typing."""
    array = _as_arrow(values)
    null = array.is_null().to_numpy(zero_copy_only=False)
    typer = _type_short if len(array) <= SMALL else _type_column
    return StrictColumn(
        name,
        typer=lambda: typer(array, null, tokens),
        raw=RawText(array, null),
        tokens=tokens,
        source=values,
        n=len(array),
    )


def _type_column(array: pa.Array, null: np.ndarray, tokens: TokenTable) -> Cells:
    if _few_distinct(array):
        return _type_encoded(array, tokens)
    return _type_scanned(array, null, tokens)


def _type_scanned(array: pa.Array, null: np.ndarray, tokens: TokenTable) -> Cells:
    """Cells screened row by row (`may_be_number`); only the rows that may be numbers are encoded."""
    cls, ival = np.zeros(len(array), dtype=np.int8), np.zeros(len(array), dtype=np.int64)
    cls[~null] = TEXT
    maybe = may_be_number(array) & ~null
    bigints, num = None, None  # no number among the cells: num is made when asked (StrictColumn.num)
    if maybe.any():
        num = np.full(len(array), np.nan)
        rows = np.flatnonzero(maybe)
        encoded = pc.dictionary_encode(array.take(pa.array(rows)))
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        u_cls, u_num, u_ival, u_big = _type_uniques(encoded.dictionary)
        cls[rows], num[rows], ival[rows] = u_cls[codes], u_num[codes], u_ival[codes]
        if u_big:
            bigints = {int(r): u_big[c] for r, c in zip(rows.tolist(), codes.tolist(), strict=False) if c in u_big}
    part = TextPart("str", array)
    if (cls == TEXT).any():
        tokens.register(part)
    return Cells(cls, num, ival, (part,), bigints)


def _few_distinct(array: pa.Array) -> bool:
    """Do the first rows repeat their texts a lot (categories, codes, flags)?  Then the column is typed
    through its dictionary: one hash pass gives both the cells' types and the token table's codes."""
    head = array.slice(0, HEAD_ROWS)
    return len(head) > 0 and 4 * pc.count_distinct(head).as_py() <= len(head)


def _type_encoded(array: pa.Array, tokens: TokenTable) -> Cells:
    """The typing of `_type_column`, on each distinct text once (a cell's type is a function of its text)."""
    index, dictionary = dictionary_codes(array, keep=False)  # -1: NULL, the slot appended below; the official's
    n_uniques = len(dictionary)
    u_cls, u_num, u_ival = np.full(n_uniques + 1, TEXT, dtype=np.int8), np.full(n_uniques + 1, np.nan), None
    u_cls[-1] = NULL
    big: dict = {}
    maybe = np.flatnonzero(may_be_number(dictionary)) if n_uniques else np.zeros(0, dtype=np.int64)
    if len(maybe):
        m_cls, m_num, m_ival, m_big = _type_uniques(dictionary.take(pa.array(maybe)))
        u_ival = np.zeros(n_uniques + 1, dtype=np.int64)
        u_cls[maybe], u_num[maybe], u_ival[maybe] = m_cls, m_num, m_ival
        big = {int(maybe[k]): value for k, value in m_big.items()}
    cls = u_cls[index]
    numbers = bool(((u_cls == INT) | (u_cls == FLOAT) | (u_cls == BIGINT)).any())
    num = u_num[index] if numbers else None  # None: made when asked (StrictColumn.num)
    ival = u_ival[index] if u_ival is not None and (u_cls == INT).any() else no_ints(len(array))
    bigints = None
    if big:
        rows = np.flatnonzero(np.isin(index, list(big)))
        bigints = {int(r): big[int(c)] for r, c in zip(rows.tolist(), index[rows].tolist(), strict=True)}
    part = TextPart("str", array, local=(index, dictionary.to_numpy(zero_copy_only=False).astype(object)))
    if (u_cls[:-1] == TEXT).any():
        tokens.register(part)
    return Cells(cls, num, ival, (part,), bigints)


def _type_short(array: pa.Array, null: np.ndarray, tokens: TokenTable) -> Cells:
    """The same typing for a short column: `_type_text` on each distinct text."""
    cells = array.to_pylist()
    cls, num, ival = _empty(len(cells))
    typed: dict = {}
    texts = np.full(len(cells), None, dtype=object)
    bigints = {}
    for i, text in enumerate(cells):
        if text is None:
            continue
        kind = typed.get(text)
        if kind is None:
            kind = typed[text] = _type_text(text)
        cls[i], num[i], ival[i] = kind[0], kind[1], kind[2]
        if kind[0] == TEXT:
            texts[i] = text
        elif kind[0] == BIGINT:
            bigints[i] = kind[3][1]
    part = TextPart("str", texts)
    if (cls == TEXT).any():
        tokens.register(part)
    return Cells(cls, num, ival, (part,), bigints or None)


_FIRST = np.zeros(256, dtype=np.int8)  # by first byte: 0 TEXT for sure, 1 maybe a number, 2 maybe inf/nan
_FIRST[[ord(c) for c in "\t\n\v\f\r +-.0123456789"] + list(range(0x1C, 0x20)) + list(range(0x80, 0x100))] = 1
_FIRST[[ord(c) for c in "iInN"]] = 2


def may_be_number(array: pa.Array) -> np.ndarray:
    """`MAY_BE_NUMBER` for every cell, read from the first bytes of pyarrow's string buffer.

    ASCII characters are single bytes in UTF-8 and any byte of 0x80 or more starts a
    non-ASCII character, so the first three bytes decide exactly what the pattern does.
    NULL cells come out arbitrary; callers mask them.
    """
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return pc.fill_null(pc.match_substring_regex(array, MAY_BE_NUMBER), False).to_numpy(zero_copy_only=False)
    _, offsets, data = array.buffers()
    width = np.int64 if pa.types.is_large_string(array.type) else np.int32
    off = np.frombuffer(offsets, dtype=width)[array.offset : array.offset + len(array) + 1]
    if data is None or not len(data):
        return np.zeros(len(array), dtype=bool)
    data = np.frombuffer(data, dtype=np.uint8)
    start, length = off[:-1], np.diff(off)
    kind = _FIRST[data[np.minimum(start, len(data) - 1)]]  # an empty string's byte is read, then ignored
    kind[length == 0] = 0
    maybe = kind == 1
    word = np.flatnonzero((kind == 2) & (length >= 3))
    if len(word):
        at = start[word]
        b0, b1, b2 = data[at] | 0x20, data[at + 1] | 0x20, data[at + 2] | 0x20  # ASCII letters to lower case
        maybe[word] = ((b0 == ord("i")) & (b1 == ord("n")) & (b2 == ord("f"))) | (
            (b0 == ord("n")) & (b1 == ord("a")) & (b2 == ord("n"))
        )
    return maybe


def _as_arrow(values):
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    array = arrow_or_none(values)
    if array is None:  # not all strings (numbers among texts): type each one's str()
        null = pd.isna(values)
        array = pa.array(
            [None if is_null else str(v) for v, is_null in zip(values.tolist(), null.tolist(), strict=True)],
            type=pa.string(),
        )
    return array


def _type_uniques(uniques: pa.Array):
    """(class, number, int64 value, {index: big int}) for distinct non-NULL texts."""
    n = len(uniques)
    u_cls, u_num, u_ival = np.full(n, TEXT, dtype=np.int8), np.full(n, np.nan), np.zeros(n, dtype=np.int64)
    plain_int = pc.match_substring_regex(uniques, PLAIN_INT).to_numpy(zero_copy_only=False)
    plain_float = pc.match_substring_regex(uniques, PLAIN_FLOAT).to_numpy(
        zero_copy_only=False
    ) & ~pc.match_substring_regex(uniques, DIGITS_ONLY).to_numpy(zero_copy_only=False)
    if plain_int.any():
        ints = pc.cast(pc.utf8_ltrim(uniques.filter(pa.array(plain_int)), "+"), pa.int64())
        ints = ints.to_numpy(zero_copy_only=False)
        u_cls[plain_int], u_ival[plain_int], u_num[plain_int] = INT, ints, ints.astype(np.float64)
    if plain_float.any():
        floats = pc.cast(uniques.filter(pa.array(plain_float)), pa.float64()).to_numpy(zero_copy_only=False)
        u_cls[plain_float] = np.where(np.isfinite(floats), FLOAT, TEXT)
        u_num[plain_float] = np.where(np.isfinite(floats), floats, np.nan)
    big = {}
    rest = np.flatnonzero(~plain_int & ~plain_float)
    if len(rest):
        texts = uniques.take(pa.array(rest)).to_pylist()
        for i, text in zip(rest.tolist(), texts, strict=False):
            cls, number, value, token = _type_text(text)
            u_cls[i], u_num[i], u_ival[i] = cls, number, value
            if cls == BIGINT:
                big[i] = token[1]
    return u_cls, u_num, u_ival, big


def _type_text(text) -> tuple:
    """(class, number, int64 value, token) for one distinct cell text: the definition of the typing."""
    text = str(text)
    if _INT_RE.fullmatch(text):
        value = int(text)
        if -(2**63) <= value < 2**63:
            return INT, float(value), value, None
        return BIGINT, _big_float(value), 0, ("int", value)
    try:
        number = float(text) if "_" not in text else float("nan")
    except ValueError:
        number = float("nan")
    if number == number and abs(number) != float("inf"):
        return FLOAT, number, 0, None
    return TEXT, float("nan"), 0, text


def _big_float(value: int) -> float:
    """float(value), or an infinity where float() would overflow (such an int is close to no float)."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")
