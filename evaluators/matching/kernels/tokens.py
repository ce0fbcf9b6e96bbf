"""Exact integer codes for values compared with `==`, shared by every table of one job.

Codes are what the fallback paths of both rules sort and compare; equal codes
mean equal values, always (no hashing).  Encoding touches every cell through
a hash table, which costs as much as reading it, so it is done lazily (only
when a comparison cannot be settled by aligning the rows, see `row_pairing.py`)
and in bulk: all columns waiting for codes are encoded together, each space
(strings, each timestamp type) through one dictionary of known values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluators.tables.frames import LifetimeCache


class Vocabulary:
    """Distinct values of one space, numbered in order of first appearance.

    A dict is the record; a pandas Index over it is built for large batches
    (hashing in C), and dropped when the dict grows.
    """

    def __init__(self, dtype):
        self.dtype = dtype
        self._known: dict = {}
        self._index: pd.Index | None = None

    def codes(self, uniques: np.ndarray) -> np.ndarray:
        """Codes for distinct values; unseen ones get the next free numbers."""
        if len(uniques) <= SMALL_BATCH:
            known = self._known
            size = len(known)
            found = np.fromiter(
                (known.setdefault(v, len(known)) for v in uniques.tolist()), dtype=np.int64, count=len(uniques)
            )
            if len(known) != size:
                self._index = None
            return found
        if self._index is None:
            self._index = pd.Index(list(self._known), dtype=self.dtype)
        found = self._index.get_indexer(uniques).astype(np.int64, copy=False)
        new = found < 0
        if new.any():
            found[new] = np.arange(len(self._known), len(self._known) + int(new.sum()))
            self._known.update(zip(uniques[new].tolist(), found[new].tolist(), strict=False))
            self._index = None
        return found


def local_codes(values) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques) of one column; NULL cells get -1 (their flavour is kept elsewhere).
    Codes are int32 or int64: they only index the uniques (never written to)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()  # one dictionary for the whole column
        codes, dictionary = dictionary_codes(values)
        return codes, dictionary.to_numpy(zero_copy_only=False).astype(object)
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), np.asarray(uniques)


_ENCODED = LifetimeCache()  # pyarrow array -> (codes, dictionary)


def dictionary_codes(array: pa.Array, keep: bool = True) -> tuple[np.ndarray, pa.Array]:
    """(codes, dictionary) of a pyarrow array, -1 at NULL, the codes read-only (int32 as pyarrow makes them).

    The official presets' tokens and the strict rule's typing encode the same text columns (one array per
    column, `tables/frames.arrow_strings`), and a hash pass over a 3.3 * 10**6-row column costs a tenth of
    a second: the official side keeps its encoding while the array lives (`keep`), and the strict rule, which
    comes after it, takes it (`keep=False`: the cache lets go of it, 4 bytes a cell, once strict holds it)."""
    hit = _ENCODED.get(array) if keep else _ENCODED.pop(array)
    if hit is not None:
        return hit
    encoded = pc.dictionary_encode(array)
    indices = encoded.indices
    if indices.null_count:
        indices = indices.fill_null(-1)  # a pass of its own: only where there is a NULL to fill
    codes = indices.to_numpy(zero_copy_only=False)
    codes.flags.writeable = False
    made = (codes, encoded.dictionary)
    return _ENCODED.put(array, made) if keep else made


SMALL_BATCH = 2000  # distinct values below which a Python dict beats pandas' hashing (call overhead)


def _small_codes(values) -> tuple[np.ndarray, np.ndarray]:
    """local_codes for a short column, in Python: NULL (None or NaN) gets -1."""
    cells = values.to_pylist() if isinstance(values, (pa.Array, pa.ChunkedArray)) else values.tolist()
    seen: dict = {}
    codes = np.fromiter(
        (-1 if v is None or v != v else seen.setdefault(v, len(seen)) for v in cells), dtype=np.int64, count=len(cells)
    )
    return codes, np.array(list(seen), dtype=object) if seen else np.zeros(0, dtype=object)


class TokenSpace:
    """Lazily assigns job-wide codes to registered columns, all pending ones at once.

    A registered object needs `space` (a hashable naming its vocabulary),
    `token_values()` (what to encode, NULLs included) and a `codes` slot.
    """

    def __init__(self):
        self._vocabularies: dict = {}
        self._pending: list = []

    def register(self, item) -> None:
        self._pending.append(item)

    def ensure(self, item) -> np.ndarray:
        if item.codes is None:
            pending, self._pending = self._pending, []
            if not any(p is item for p in pending):
                pending.append(item)
            self._encode(pending)
        return item.codes

    def _encode(self, items: list) -> None:
        by_space: dict = {}
        for item in items:
            if item.codes is None:
                by_space.setdefault(item.space, []).append(item)
        for space, group in by_space.items():
            local = [_local_codes_of(item) for item in group]
            vocabulary = self._vocabularies.setdefault(space, Vocabulary(_dtype_of(space)))
            joined = np.concatenate([u for _, u in local]) if local else np.zeros(0)
            if _dtype_of(space) is np.int64 and joined.dtype == object:
                joined = joined.astype(np.int64)  # timestamps from short columns, as int64 nanoseconds
            batch_codes, batch_uniques = pd.factorize(joined)
            known = vocabulary.codes(np.asarray(batch_uniques))[batch_codes]
            start = 0
            for item, (codes, uniques) in zip(group, local, strict=False):
                mapping = np.append(known[start : start + len(uniques)], -1)  # -1 stays -1 (NULL)
                item.codes = mapping[codes]
                start += len(uniques)


def _local_codes_of(item) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques) of one registered item: those it made already (`local`), else encoded here."""
    made = getattr(item, "local", None)
    if made is not None:
        item.local = None  # the codes below replace them
        return made
    values = item.token_values()
    return (_small_codes if len(values) <= SMALL_BATCH else local_codes)(values)


def _dtype_of(space) -> object:
    return np.int64 if isinstance(space, tuple) and space[0] == "datetime" else object
