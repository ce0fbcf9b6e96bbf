"""Typed cells for the strict rule: each cell typed on its own, from its text or its engine type.

NULL: empty or one of pandas' default missing-value tokens.  INT: `[+-]?\\d+`
(surrounding blanks allowed), exact at any size, leading zeros allowed.
FLOAT: any other finite number.  TEXT: everything else, compared exactly.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

NULL, INT, BIGINT, FLOAT, TEXT = 0, 1, 2, 3, 4
INT64_SAFE = 2 ** 53  # beyond this a float64 column may have lost integer digits
_CLASS_SALT = np.uint64(0xD6E8FEB86659FD93)


def _scramble(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a bijection on uint64 that spreads nearby values apart."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))
_INT_RE = re.compile(r"\s*[+-]?\d+\s*")


@dataclass(eq=False)
class StrictColumn:
    name: str
    cls: np.ndarray  # int8 cell classes
    num: np.ndarray  # float64 value of INT/BIGINT/FLOAT cells
    ival: np.ndarray  # int64 value of INT cells
    code: np.ndarray  # int64 token of TEXT and BIGINT cells
    source: np.ndarray | None = None  # the original cells, for messages
    _memo: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.cls)

    @cached_property
    def has_float(self) -> bool:
        return bool((self.cls == FLOAT).any())

    def key(self, exact_numbers: bool) -> np.ndarray:
        """Per-row uint64 code, equal when the cells are equal; numbers collapse to one code
        unless `exact_numbers` (then INT cells keep their value and FLOAT cells are never involved)."""
        memo = self._memo.get(exact_numbers)
        if memo is None:
            value = np.where(self.cls == INT, self.ival, self.code).astype(np.uint64)
            numeric = (self.cls == INT) | (self.cls == BIGINT) | (self.cls == FLOAT)
            cls = np.where(numeric, np.int8(INT), self.cls) if not exact_numbers else self.cls
            if not exact_numbers:
                value = np.where(numeric, np.uint64(0), value)
            memo = self._memo[exact_numbers] = _scramble(value) ^ (cls.astype(np.uint64) * _CLASS_SALT)
        return memo

    @cached_property
    def fingerprint(self) -> bytes:
        return hashlib.blake2b(b"".join(a.tobytes() for a in (self.cls, self.ival, self.code, self.num)),
                               digest_size=16).digest()

    @cached_property
    def profile(self):
        """What any one-to-one partner must share: class counts, sorted tokens, sorted numbers."""
        numeric = (self.cls == INT) | (self.cls == BIGINT) | (self.cls == FLOAT)
        return (int((self.cls == NULL).sum()), int(numeric.sum()),
                np.sort(self.code[self.cls == TEXT]), np.sort(self.num[numeric]))


class TokenTable:
    """Codes for TEXT cells and big integers, shared by both tables of one comparison."""

    def __init__(self):
        self._codes: dict = {}

    def encode(self, values) -> np.ndarray:
        """Codes for a sequence of hashable keys (texts, or tagged tuples for big integers)."""
        table = self._codes
        return np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int64, count=len(values))


def _empty(n: int):
    return (np.zeros(n, dtype=np.int8), np.full(n, np.nan), np.zeros(n, dtype=np.int64),
            np.full(n, -1, dtype=np.int64))


def from_numbers(name: str, values: np.ndarray) -> StrictColumn:
    """A numeric pandas/DuckDB column whose cells need no text: ints exact, floats finite."""
    n = len(values)
    cls, num, ival, code = _empty(n)
    if values.dtype.kind in "iu":
        cls[:] = INT
        num = values.astype(np.float64)
        if values.dtype.kind == "u" and n and values.max() > np.iinfo(np.int64).max:
            raise OverflowError("uint64 beyond int64")
        ival = values.astype(np.int64)
    else:
        null = np.isnan(values)
        cls[:] = FLOAT
        cls[null] = NULL
        num = values.astype(np.float64)
    return StrictColumn(name, cls, num, ival, code, values)


def from_text(name: str, values: np.ndarray, tokens: TokenTable) -> StrictColumn:
    """Cells typed from their text (NaN/None already mark NULL); each distinct text is typed once."""
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    typed = [_type_text(u) for u in uniques.tolist()]
    u_cls = np.array([t[0] for t in typed] + [NULL], dtype=np.int8)
    u_num = np.array([t[1] for t in typed] + [np.nan], dtype=np.float64)
    u_ival = np.array([t[2] for t in typed] + [0], dtype=np.int64)
    u_code = np.full(len(typed) + 1, -1, dtype=np.int64)
    keyed = [i for i, t in enumerate(typed) if t[3] is not None]
    if keyed:
        u_code[keyed] = tokens.encode([typed[i][3] for i in keyed])
    return StrictColumn(name, u_cls[codes], u_num[codes], u_ival[codes], u_code[codes], values)


def _type_text(text) -> tuple:
    """(class, number, int64 value, token) for one distinct cell text."""
    text = str(text)
    if _INT_RE.fullmatch(text):
        value = int(text)
        if -(2 ** 63) <= value < 2 ** 63:
            return INT, float(value), value, None
        return BIGINT, float(value), 0, ("int", value)
    try:
        number = float(text) if "_" not in text else float("nan")
    except ValueError:
        number = float("nan")
    if number == number and abs(number) != float("inf"):
        return FLOAT, number, 0, None
    return TEXT, float("nan"), 0, text


def from_objects(name: str, values: np.ndarray, tokens: TokenTable) -> StrictColumn:
    """Engine-typed cells (DuckDB): Python ints exact, floats and decimals numeric, the rest as tokens."""
    n = len(values)
    cls, num, ival, code = _empty(n)
    rest = []
    for i, v in enumerate(values.tolist()):
        if v is None or (isinstance(v, float) and v != v) or v is pd.NaT:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) and not _is_decimal(v):
            rest.append(i)
        elif isinstance(v, int):
            cls[i], num[i] = (INT, float(v)) if -(2 ** 63) <= v < 2 ** 63 else (BIGINT, float(v))
            if cls[i] == INT:
                ival[i] = v
            else:
                code[i] = tokens.encode([("int", v)])[0]
        else:
            cls[i], num[i] = FLOAT, float(v)
    if rest:
        index = np.array(rest)
        cls[index] = TEXT
        code[index] = tokens.encode([v if isinstance(v, str) else ("obj", repr(v)) for v in values[index]])
    return StrictColumn(name, cls, num, ival, code, values)


def _is_decimal(v) -> bool:
    return type(v).__name__ == "Decimal"
