"""Typed cells for the strict rule: each cell typed on its own, from its text or its engine type.

NULL: empty or one of pandas' default missing-value tokens (or the engine's
NULL).  INT: `[+-]?\\d+` (surrounding blanks allowed), exact at any size,
leading zeros allowed.  FLOAT: any other finite number.  TEXT: everything
else, compared exactly (engine values that are neither numbers nor strings,
such as timestamps and booleans, are TEXT compared by type and value).

TEXT values are kept as they are; the integer codes the mapping search needs
are made lazily and in bulk by the job's `TokenTable` (see `tokens.py`).  A CSV
text column is typed only when first needed: its raw texts are kept, and two
identical texts are equal cells whatever their type, which often settles a
comparison without typing (`cell_proofs.py`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluators.limits import BLOCK_CELLS, EXACT_FLOAT_INT, HEAD_ROWS
from evaluators.matching.kernels.tokens import TokenSpace

NULL, INT, BIGINT, FLOAT, TEXT = 0, 1, 2, 3, 4
HEAD = HEAD_ROWS  # rows of a column's head print
SUM_BLOCK = BLOCK_CELLS  # rows per step of identity_sum: temporaries that stay in cache, not fresh column-long buffers
INT64_SAFE = EXACT_FLOAT_INT  # beyond this a float64 column may have lost integer digits


def floats_tell_their_text(values: np.ndarray) -> bool:
    """Do these floats (NaN aside) stand for their texts as strict cells: finite, below INT64_SAFE?
    Otherwise pandas may have hidden the text ('inf' or 'Infinity', lost integer digits)."""
    if not len(values):
        return True
    # fmax/fmin pass over NaN (NULL cells); the largest magnitude is at either end: no copy of the column.
    largest = np.fmax(abs(np.fmax.reduce(values)), abs(np.fmin.reduce(values)))
    return bool(np.isnan(largest) or largest < INT64_SAFE)


_CLASS_SALT = np.uint64(0xD6E8FEB86659FD93)
OBJECT_SPACE = "obj"  # TEXT from engine objects other than strings, keyed by type and repr


def _scramble(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a bijection on uint64 that spreads nearby values apart."""
    with np.errstate(over="ignore"):
        # In place on two buffers (the same arithmetic as the plain expression, a third of the allocations).
        y = x >> np.uint64(30)  # a new array: x itself is never written
        y ^= x
        y *= np.uint64(0xBF58476D1CE4E5B9)
        t = y >> np.uint64(27)
        y ^= t
        y *= np.uint64(0x94D049BB133111EB)
        np.right_shift(y, np.uint64(31), out=t)
        y ^= t
        return y


class TokenTable(TokenSpace):
    """The job's codes for TEXT cells (per space) and for integers beyond int64."""

    def __init__(self):
        super().__init__()
        self._bigints: dict = {}

    def bigint_codes(self, values: list[int]) -> np.ndarray:
        table = self._bigints
        return np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int64, count=len(values))


@dataclass(eq=False)
class TextPart:
    """The TEXT values of one column, waiting for codes (NULL and non-TEXT cells are ignored)."""

    space: object  # "str", ("datetime", tz) or OBJECT_SPACE
    values: object  # pyarrow strings, or a numpy array of str / int64 / repr strings
    codes: np.ndarray | None = None
    local: tuple | None = None  # (codes, uniques) of `values` already made while typing them, else None

    def token_values(self):
        return self.values


@dataclass(frozen=True)
class Cells:
    """The typed cells of one column."""

    cls: np.ndarray  # int8 cell classes
    num: np.ndarray | None  # float64 value of INT/BIGINT/FLOAT cells; None: no BIGINT/FLOAT cell, made from ival
    ival: np.ndarray  # int64 value of INT cells
    texts: tuple = ()  # TextParts holding the TEXT cells' values (each part its own rows)
    bigints: dict | None = None  # row -> Python int, for BIGINT cells


@dataclass(eq=False)
class RawText:
    """A CSV text column before typing: identical texts are equal cells whatever their type."""

    values: object  # pyarrow strings
    null: np.ndarray

    @cached_property
    def signature(self) -> tuple:
        return int(np.count_nonzero(self.null)), int(pc.sum(pc.binary_length(self.values)).as_py() or 0)


class StrictColumn:
    """A column of typed cells; a CSV text column may be typed only when first needed (`raw` stays)."""

    def __init__(
        self,
        name: str,
        cells: Cells | None = None,
        *,
        typer=None,
        raw: RawText | None = None,
        tokens: TokenTable | None = None,
        source=None,
        n: int | None = None,
    ):
        self.name, self.raw, self.tokens, self.source = name, raw, tokens, source
        self._cells, self._typer = cells, typer
        if cells is not None:
            self.n = len(cells.cls)
        elif n is not None:
            self.n = n
        else:
            raise ValueError(f"column {name!r}: a column typed later needs its length")
        self._memo: dict = {}

    @property
    def typed(self) -> bool:
        return self._cells is not None

    @property
    def cells(self) -> Cells:
        if self._cells is None:
            self._cells, self._typer = self._typer(), None
        return self._cells

    cls = property(lambda self: self.cells.cls)

    @property
    def num(self) -> np.ndarray:
        """float64 value of the numeric cells, NaN elsewhere; made from the INT values when first asked
        (a column of integers or TEXT often never needs it: 8 bytes a cell saved)."""
        num = self.cells.num
        if num is None:
            num = self._memo.get("num")
            if num is None:
                ints = self.cls == INT
                num = self._memo["num"] = (
                    np.where(ints, self.ival, np.nan) if not ints.all() else self.ival.astype(float)
                )
        return num

    ival = property(lambda self: self.cells.ival)
    texts = property(lambda self: self.cells.texts)
    bigints = property(lambda self: self.cells.bigints)

    @cached_property
    def class_counts(self) -> np.ndarray:
        """Cells per class (NULL, INT, BIGINT, FLOAT, TEXT), counted in one pass."""
        cls = self.cls  # counted class by class: bincount would first widen every cell to 8 bytes
        return np.array([np.count_nonzero(cls == k) for k in range(TEXT + 1)], dtype=np.int64)

    @cached_property
    def has_float(self) -> bool:
        return bool(self.class_counts[FLOAT])

    @cached_property
    def has_text(self) -> bool:
        return bool(self.class_counts[TEXT])

    @cached_property
    def code(self) -> np.ndarray:
        """int64 token of TEXT and BIGINT cells (equal token, equal value), -1 elsewhere."""
        text = self.cls == TEXT
        if not (text.any() or self.bigints):
            return np.broadcast_to(np.int64(-1), (self.n,))  # read-only, no memory: nothing to encode
        if self.tokens is None:
            raise ValueError(f"column {self.name!r}: text cells need the job's token table")
        shared = self._part_codes(text)
        if shared is not None:
            return shared
        code = np.full(self.n, -1, dtype=np.int64)
        for part in self.texts if text.any() else ():
            values = self.tokens.ensure(part)
            rows = text & (values >= 0)
            # Object codes go below -1, apart from string codes: an object never equals a string.
            code[rows] = (-2 - values[rows]) if part.space == OBJECT_SPACE else values[rows]
        if self.bigints:
            rows = list(self.bigints)
            code[rows] = self.tokens.bigint_codes([self.bigints[r] for r in rows])
        return code

    def _part_codes(self, text: np.ndarray) -> np.ndarray | None:
        """The token table's own codes of a column whose cells (`text`: which are TEXT) are strings of its one
        text part or NULL: they are already `code` cell for cell (-1 at NULL, no object space to move), so no
        second column-long int64 copy is made (3.3 * 10**6 rows: 26 MB a text column, 105 MB for a pair's four).
        None otherwise."""
        counts = self.class_counts
        if counts[INT] or counts[BIGINT] or counts[FLOAT] or self.bigints or len(self.texts) != 1:
            return None
        if self.texts[0].space == OBJECT_SPACE:
            return None
        values = self.tokens.ensure(self.texts[0])  # type: ignore[union-attr]  # code() checked tokens is set
        if len(values) != self.n or values.dtype != np.int64 or (len(values) and values.min() < -1):
            return None
        return values if np.array_equal(values >= 0, text) else None

    def key(self, exact_numbers: bool) -> np.ndarray:
        """Per-row uint64 code, equal when the cells are equal; numbers collapse to one code
        unless `exact_numbers` (then INT cells keep their value and FLOAT cells are never involved)."""
        memo = self._memo.get(exact_numbers)
        if memo is None and not exact_numbers and self.uniform in (INT, FLOAT):
            # Every cell a number: one code for the whole column, kept as a read-only view (no memory).
            only = _scramble(np.zeros(1, dtype=np.uint64)) ^ (np.uint64(INT) * _CLASS_SALT)
            memo = self._memo[exact_numbers] = np.broadcast_to(only, (self.n,))
        if memo is None:
            value = np.where(self.cls == INT, self.ival, self.code).astype(np.uint64)
            numeric = (self.cls == INT) | (self.cls == BIGINT) | (self.cls == FLOAT)
            cls = np.where(numeric, np.int8(INT), self.cls) if not exact_numbers else self.cls
            if not exact_numbers:
                value = np.where(numeric, np.uint64(0), value)
            memo = self._memo[exact_numbers] = _scramble(value) ^ (cls.astype(np.uint64) * _CLASS_SALT)
        return memo

    @property
    def identity(self) -> np.ndarray:
        """int64 per cell, equal for two cells of the same class exactly when they are identical: the INT value,
        the FLOAT value's bits (-0.0 as 0.0), the TEXT/BIGINT token, 0 for NULL (made when asked, not kept)."""
        return self.identity_at(None)

    def identity_at(self, rows: np.ndarray | slice | None) -> np.ndarray:
        """`identity` of the cells at `rows` only (all of them when None)."""

        def pick(values: np.ndarray) -> np.ndarray:
            return values if rows is None else values[rows]

        if self.uniform == INT:
            return pick(self.ival)  # nothing to replace: the INT values are the identities
        if self.uniform == FLOAT:  # every cell its float's bits: no class to gather and test (rows paired at random)
            return (pick(self.num) + 0.0).view(np.int64)
        cls, counts = pick(self.cls), self.class_counts  # the column's counts: a superset of the rows' classes
        # np.where over whole columns: a boolean-mask assignment costs several times more.
        value = None
        if counts[TEXT] or counts[BIGINT]:
            value = pick(self.code)  # -1 at NULL cells: set to 0 below
            if counts[INT]:
                value = np.where(cls == INT, pick(self.ival), value)
            if counts[NULL]:
                value = np.where(cls == NULL, np.int64(0), value)
        elif counts[INT]:
            value = np.where(cls == INT, pick(self.ival), np.int64(0))
        if counts[FLOAT]:
            bits = (pick(self.num) + 0.0).view(np.int64)
            value = np.where(cls == FLOAT, bits, np.int64(0) if value is None else value)
        return np.zeros(len(cls), dtype=np.int64) if value is None else value

    @property
    def identity_key(self) -> np.ndarray:
        """Per-row uint64 hash of (class, identity): equal for identical cells (which are equal cells).
        Made again when asked (a few passes over the column) rather than kept: it is 8 bytes a cell."""
        return self.identity_key_at(None)

    def identity_key_at(self, rows: np.ndarray | slice | None) -> np.ndarray:
        """`identity_key` of the cells at `rows` only (all of them when None)."""
        key = _scramble(self.identity_at(rows).view(np.uint64))
        if self.uniform is not None:
            key ^= np.uint64(self.uniform * int(_CLASS_SALT) % 2**64)  # one class: one constant, no per-cell salt
            return key
        key ^= (self.cls if rows is None else self.cls[rows]).astype(np.uint64) * _CLASS_SALT
        return key

    @cached_property
    def identity_sum(self) -> int:
        """The column's multiset of identical cells as one number (equal multisets, equal sums).
        Summed block by block: at 10^7 rows each column-long temporary is a fresh mapping, page faults and all."""
        total = 0
        with np.errstate(over="ignore"):
            for start in range(0, self.n, SUM_BLOCK):
                total += int(self.identity_key_at(slice(start, start + SUM_BLOCK)).sum(dtype=np.uint64))
        return total % 2**64

    @cached_property
    def plain_sum(self) -> int:
        """The sum of the column's identities, modulo 2**64: equal for identical multisets of cells, like
        `identity_sum`, and a fraction of its cost (no hash of each cell; an INT column's values are summed
        as they are).  Columns it tells apart need no `identity_sum`."""
        total = 0
        for start in range(0, self.n, SUM_BLOCK):
            part = self.identity_at(slice(start, start + SUM_BLOCK))
            total += int(part.view(np.uint64).sum(dtype=np.uint64))
        return total % 2**64

    def exact_key(self) -> list[np.ndarray]:
        """Sort keys that are equal exactly when two non-FLOAT cells are equal."""
        value = np.where(self.cls == INT, self.ival, self.code)
        return [self.cls.astype(np.int64), value]

    @cached_property
    def fingerprint(self) -> bytes:
        """A digest of every cell: equal digests, identical columns (`num` counts only where it is not made
        from the INT values, and a marker keeps the two forms apart)."""
        return self._digest(None)

    @cached_property
    def head_print(self) -> bytes:
        """The fingerprint of the first HEAD rows: columns with different head prints differ."""
        return self._digest(HEAD)

    def _digest(self, rows: int | None) -> bytes:
        digest = hashlib.blake2b(digest_size=16)
        cells = self.cells
        code = self.code
        parts = [cells.cls, cells.ival] + ([code] if code.strides[0] else [])  # a broadcast code is all -1
        parts += [cells.num] if cells.num is not None else []
        digest.update(b"%d %d %d|" % (self.n, len(parts), cells.num is None))
        for part in parts:
            digest.update(np.ascontiguousarray(part[:rows]).data)
        return digest.digest()

    @cached_property
    def profile(self):
        """What any one-to-one partner must share: class counts, sorted tokens, sorted numbers."""
        numeric = (self.cls == INT) | (self.cls == BIGINT) | (self.cls == FLOAT)
        return (
            int((self.cls == NULL).sum()),
            int(numeric.sum()),
            np.sort(self.code[self.cls == TEXT]),
            np.sort(self.num if self.uniform in (INT, FLOAT) else self.num[numeric]),  # no masked copy when all are
        )

    @cached_property
    def uniform(self) -> int | None:
        """The class shared by every cell (INT, FLOAT or TEXT), else None."""
        for cls in (INT, FLOAT, TEXT):
            if self.n and self.class_counts[cls] == self.n:
                return cls
        return None

    @cached_property
    def key_values(self) -> np.ndarray | None:
        """Values that can pair rows (all INT, or all finite FLOAT), else None."""
        if self.uniform == INT:
            return self.ival
        if self.uniform == FLOAT and np.isfinite(self.num).all():
            return self.num
        return None

    @cached_property
    def span(self) -> tuple | None:
        """(smallest, largest, largest magnitude) of the numeric cells, None without any."""
        _, numbers, _ = self.counts
        if not numbers:
            return None
        if self.uniform == INT:  # float() keeps the order: the same figures as from num, without making num
            low, high = float(self.ival.min()), float(self.ival.max())
            return low, high, max(abs(low), abs(high))
        numeric = self.num
        if numbers < self.n:
            numeric = numeric[(self.cls == INT) | (self.cls == BIGINT) | (self.cls == FLOAT)]
        low, high = float(numeric.min()), float(numeric.max())
        return low, high, max(abs(low), abs(high))

    @cached_property
    def text_bytes(self) -> int | None:
        """Total bytes of the TEXT cells when pyarrow holds them all (a signature of their multiset), else None."""
        if len(self.texts) != 1 or self.bigints or self.counts[1]:
            return None
        values = self.texts[0].values
        if not isinstance(values, (pa.Array, pa.ChunkedArray)):
            return None
        return int(pc.sum(pc.binary_length(values)).as_py() or 0)

    @cached_property
    def counts(self) -> tuple:
        """Cells per class: a cheap signature every partner shares (FLOAT may stand for any number)."""
        c = self.class_counts
        return int(c[NULL]), int(c[INT] + c[BIGINT] + c[FLOAT]), int(c[TEXT])


def column(name: str, cls, num, ival, texts=(), bigints=None, tokens=None, source=None) -> StrictColumn:
    return StrictColumn(name, Cells(cls, num, ival, texts, bigints), tokens=tokens, source=source)


def no_ints(n: int) -> np.ndarray:
    """The `ival` of a column without INT cells: all 0, read-only and holding no memory.  A column-long
    np.zeros is not free: once glibc serves it from its heap (after the reading's big frees) calloc writes
    every byte (3.3 * 10**6 rows: 26 MB a column, 210 MB for the float columns of a pair)."""
    return np.broadcast_to(np.int64(0), (n,))


def _empty(n: int):
    return np.zeros(n, dtype=np.int8), np.full(n, np.nan), np.zeros(n, dtype=np.int64)


def from_numbers(name: str, values: np.ndarray, null: np.ndarray | None = None) -> StrictColumn:
    """A numeric pandas/DuckDB column whose cells need no text: ints exact, floats finite."""
    n = len(values)
    # No NaN-filled num here: both branches below replace it (at 10**7 rows it was 80 MB written for nothing).
    cls, ival = np.zeros(n, dtype=np.int8), no_ints(n)
    num: np.ndarray | None
    if values.dtype.kind in "iu":
        cls[:] = INT
        num = None  # made from ival when first asked (StrictColumn.num)
        if values.dtype.kind == "u" and n and values.max() > np.iinfo(np.int64).max:
            raise OverflowError("uint64 beyond int64")
        ival = values.astype(np.int64, copy=null is not None)  # the frame's own array when nothing is written
        if null is not None:
            cls[null], ival[null] = NULL, 0
    else:
        null = np.isnan(values)
        cls[:] = FLOAT
        cls[null] = NULL
        num = values.astype(np.float64, copy=False)  # read only from here on: the frame's own array
    return column(name, cls, num, ival, source=values)


def text_cells(name: str, null: np.ndarray, part: TextPart, tokens: TokenTable, source) -> StrictColumn:
    """Engine-typed values that are all TEXT (strings, timestamps, booleans) except NULLs."""
    cls, ival = np.zeros(len(null), dtype=np.int8), no_ints(len(null))
    cls[~null] = TEXT
    tokens.register(part)
    return column(name, cls, None, ival, texts=(part,), tokens=tokens, source=source)


def arrow_or_none(values):
    """pyarrow strings for an object array of str (NaN/None as NULL), else None."""
    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return None  # mixed or unusual objects (ints past int64 raise OverflowError)
    return array if pa.types.is_string(array.type) or pa.types.is_large_string(array.type) else None
