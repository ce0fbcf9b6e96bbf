"""Reading prediction and gold tables once, for every preset that needs them.

The official presets read CSV files with pandas' defaults (the lite scorer
without `low_memory=False`).  Both ways give the same frame unless pandas
warns about mixed types, so one read serves both in the common case.  The
strict rule types cells from the same frame and goes back to the text only
for columns where pandas' types hide it (booleans, huge or infinite floats).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InstanceError
from .cells import INT64_SAFE, StrictColumn, TokenTable, from_numbers, from_objects, from_text

DEFAULT_MAX_BYTES = 2 * 1024 ** 3


class TableReader:
    """Caches frames per file; raises `InstanceError` with `reason` for unreadable files."""

    def __init__(self, reason: str, max_bytes: int = DEFAULT_MAX_BYTES):
        self.reason = reason  # "unreadable_prediction" or "unreadable_gold"
        self.max_bytes = max_bytes
        self._frames: dict = {}
        self._texts: dict = {}

    def _check_size(self, path: Path) -> None:
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise InstanceError(self.reason, f"{path.name}: {exc.strerror or exc}") from None
        if size > self.max_bytes:
            raise InstanceError(self.reason, f"{path.name} is {size:,} bytes, over the limit of "
                                f"{self.max_bytes:,} (raise it with --max-file-mb)")

    def csv(self, path: Path, low_memory: bool) -> pd.DataFrame:
        key = (str(path), low_memory)
        if key not in self._frames:
            self._check_size(path)
            self._read_csv(path)
            if key not in self._frames:
                self._frames[key] = _read(path, self.reason, low_memory=low_memory)
        return self._frames[key]

    def _read_csv(self, path: Path) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.DtypeWarning)
            frame = _read(path, self.reason, low_memory=True)
        self._frames[(str(path), True)] = frame
        if not any(issubclass(w.category, pd.errors.DtypeWarning) for w in caught):
            self._frames[(str(path), False)] = frame  # no chunk disagreed: both ways read the same

    def csv_text(self, path: Path, columns: list[int]) -> pd.DataFrame:
        key = (str(path), tuple(columns))
        if key not in self._texts:
            self._texts[key] = _read(path, self.reason, dtype=object, usecols=columns, low_memory=False)
        return self._texts[key]

    def duckdb_tables(self, path: Path) -> list[str]:
        with _duckdb(path, self.reason) as con:
            return [row[0] for row in con.execute("SHOW TABLES").fetchall()]

    def duckdb_table(self, path: Path, table: str) -> pd.DataFrame:
        key = (str(path), "table", table)
        if key not in self._frames:
            with _duckdb(path, self.reason) as con:
                quoted = '"' + table.replace('"', '""') + '"'
                try:
                    self._frames[key] = con.execute(f"SELECT * FROM {quoted}").fetchdf()
                except Exception as exc:
                    raise InstanceError("table_not_found" if "does not exist" in str(exc) else self.reason,
                                        f"{path.name}: table {table!r}: {_first_line(exc)}") from None
        return self._frames[key]


def _read(path: Path, reason: str, **options) -> pd.DataFrame:
    try:
        return pd.read_csv(path, **options)
    except FileNotFoundError:
        raise InstanceError(reason, f"{path.name}: file not found") from None
    except pd.errors.EmptyDataError:
        raise InstanceError(reason, f"{path.name}: empty file, no header") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(reason, f"{path.name}: not UTF-8 (byte {exc.start})") from None
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise InstanceError(reason, f"{path.name}: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _duckdb:
    def __init__(self, path: Path, reason: str):
        self.path, self.reason = path, reason

    def __enter__(self):
        import duckdb

        if not Path(self.path).is_file():
            raise InstanceError(self.reason, f"{Path(self.path).name}: file not found")
        try:
            self.con = duckdb.connect(str(self.path), read_only=True)
        except Exception as exc:
            raise InstanceError(self.reason, f"{Path(self.path).name}: not a readable DuckDB file: "
                                f"{_first_line(exc)}") from None
        return self.con

    def __exit__(self, *exc):
        self.con.close()
        return False


def strict_columns(frame: pd.DataFrame, tokens: TokenTable, text_of=None) -> list[StrictColumn]:
    """Typed cells for every column of a frame; `text_of(positions)` re-reads columns as text."""
    columns: list[StrictColumn | None] = []
    need_text = []
    for position in range(frame.shape[1]):
        series = frame.iloc[:, position]
        name = str(frame.columns[position])
        dtype = series.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "iu" and text_of is not None:
            columns.append(_ints(name, series.to_numpy()) or _later(need_text, position))
        elif isinstance(dtype, np.dtype) and dtype.kind == "f" and text_of is not None:
            values = series.to_numpy()
            finite = values[~np.isnan(values)]
            safe = np.isfinite(finite).all() and (len(finite) == 0 or np.abs(finite).max() < INT64_SAFE)
            columns.append(from_numbers(name, values) if safe else _later(need_text, position))
        elif text_of is not None:
            columns.append(from_text(name, series.to_numpy(dtype=object), tokens)
                           if dtype == object or str(dtype) == "str" else _later(need_text, position))
        else:
            columns.append(_typed_engine_column(name, series, tokens))
    if need_text:
        text = text_of(need_text)
        for k, position in enumerate(need_text):
            columns[position] = from_text(str(frame.columns[position]), text.iloc[:, k].to_numpy(dtype=object),
                                          tokens)
    return columns


def _later(need_text: list, position: int) -> None:
    need_text.append(position)
    return None


def _ints(name: str, values: np.ndarray) -> StrictColumn | None:
    try:
        return from_numbers(name, values)
    except OverflowError:
        return None


def _typed_engine_column(name: str, series: pd.Series, tokens: TokenTable) -> StrictColumn:
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        column = _ints(name, series.to_numpy()) if dtype.kind in "iu" else from_numbers(name, series.to_numpy())
        if column is not None and (dtype.kind != "f" or np.isfinite(series.to_numpy()[~series.isna()]).all()):
            return column
    return from_objects(name, series.to_numpy(dtype=object), tokens)
