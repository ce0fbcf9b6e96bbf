"""Reading prediction and gold tables once, for every preset that needs them.

The official presets read CSV files with pandas' defaults (the lite scorer
without `low_memory=False`).  Both ways give the same frame unless pandas
warns about mixed types, so one read serves both in the common case.  The
strict rule types cells from the same frame (`matching/strict/columns.py`) and
comes back here for the text only of columns where pandas' types hide it.
Small files skip pandas: `quickcsv` gives the same frame in a fraction of the time.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import IO

import pandas as pd

from evaluators.errors import InstanceError
from evaluators.tables import quickcsv
from evaluators.tables.memory import GIVE_BACK_ROWS, give_back_memory

DEFAULT_MAX_BYTES = 2 * 1024**3
# Endings for which pandas decompresses the file before reading it (compression="infer").
COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar")


class TableReader:
    """Caches frames per file; raises `InstanceError` with `reason` for unreadable files."""

    def __init__(self, reason: str, max_bytes: int = DEFAULT_MAX_BYTES, duckdb_loader=None):
        self.reason = reason  # "unreadable_prediction" or "unreadable_gold"
        self.max_bytes = max_bytes
        # loader(path, tables or None) -> execution.DuckDBTables: DuckDB files are read in a killable worker
        # through the one opener (a submitted view is a query); this layer never opens a database itself.
        self.duckdb_loader = duckdb_loader
        self._frames: dict = {}
        self._texts: dict = {}
        self._duckdb: dict = {}  # path -> DuckDBTables or the InstanceError reading it raised

    def check_size(self, path: Path) -> None:
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise InstanceError(self.reason, f"{path.name}: {exc.strerror or exc}") from None
        if size > self.max_bytes:
            raise InstanceError(
                self.reason,
                f"{path.name} is {size:,} bytes, over the limit of {self.max_bytes:,} (raise it with --max-file-mb)",
            )

    def csv(self, path: Path, low_memory: bool) -> pd.DataFrame:
        key = (str(path), low_memory)
        if key not in self._frames:
            self.check_size(path)
            self._read_csv(path)
            if key not in self._frames:
                self._frames[key] = _read(path, self.reason, self.max_bytes, low_memory=low_memory)
        return self._frames[key]

    def _read_csv(self, path: Path) -> None:
        frame = _read_small(path)
        if frame is not None:  # one low_memory chunk: no DtypeWarning, both ways read alike
            self._frames[(str(path), True)] = self._frames[(str(path), False)] = frame
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.DtypeWarning)
            frame = _read(path, self.reason, self.max_bytes, low_memory=True)
        self._frames[(str(path), True)] = frame
        if not any(issubclass(w.category, pd.errors.DtypeWarning) for w in caught):
            self._frames[(str(path), False)] = frame  # no chunk disagreed: both ways read the same
        if len(frame) >= GIVE_BACK_ROWS:
            give_back_memory()  # the parser's temporaries: a fifth of a big pair's peak, until the next family

    def csv_text(self, path: Path, columns: list[int]) -> pd.DataFrame:
        key = (str(path), tuple(columns))
        if key not in self._texts:
            self._texts[key] = _read(path, self.reason, self.max_bytes, dtype=object, usecols=columns, low_memory=False)
        return self._texts[key]

    def duckdb_tables(self, path: Path) -> list[str]:
        return list(self._load_duckdb(path, None).names)

    def duckdb_prefetch(self, path: Path, tables: list[str]) -> None:
        """Read these tables of `path` in one worker call (once per instance, for every preset)."""
        self._load_duckdb(path, list(tables))

    def duckdb_table(self, path: Path, table: str) -> pd.DataFrame:
        loaded = self._load_duckdb(path, [table])
        if table not in loaded.frames and table not in loaded.errors:
            self._duckdb.pop(str(path), None)
            loaded = self._load_duckdb(path, [table])
        if table in loaded.frames:
            return loaded.frames[table]
        message = loaded.errors.get(table, "not read")
        missing = table not in loaded.names or "does not exist" in message
        raise InstanceError("table_not_found" if missing else self.reason, f"{path.name}: table {table!r}: {message}")

    def _load_duckdb(self, path: Path, tables: list[str] | None):
        key = str(path)
        if key not in self._duckdb:
            self._duckdb[key] = self._read_duckdb(path if isinstance(path, Path) else Path(path), tables)
        loaded = self._duckdb[key]
        if isinstance(loaded, InstanceError):
            raise loaded
        return loaded

    def _read_duckdb(self, path: Path, tables: list[str] | None):
        if not path.is_file():
            return InstanceError(self.reason, f"{path.name}: file not found")
        self.check_size(path)
        if self.duckdb_loader is None:  # no run configured one: a worker with a private scratch folder
            from evaluators.execution.executor import duckdb_loader

            self.duckdb_loader = duckdb_loader()
        try:
            return self.duckdb_loader(path, tables)
        except InstanceError as exc:
            reason = exc.reason if exc.reason == "timeout" and self.reason == "unreadable_prediction" else self.reason
            return InstanceError(reason, f"{path.name}: not a readable DuckDB file: {exc.detail}")

    def close(self) -> None:
        """Drop what was read (nothing stays open: DuckDB files are read in worker processes)."""
        self._duckdb.clear()


def _read_small(path: Path) -> pd.DataFrame | None:
    """The fast reading of a small file, or None to let pandas read it and report any problem."""
    if str(path).lower().endswith(COMPRESSED):
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(quickcsv.MAX_BYTES + 1)  # a byte more tells a larger file
    except OSError:
        return None
    return quickcsv.read_small(data)


class _TooLarge(Exception):
    def __init__(self, count: int):
        super().__init__(count)
        self.count = count


class _Limited(io.RawIOBase):
    """A decompressing stream that counts what it gives out: a few MB of .gz must not become 17 GB."""

    def __init__(self, raw, limit: int):
        self.raw, self.limit, self.count = raw, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer)
        self.count += n or 0
        if self.count > self.limit:
            raise _TooLarge(self.count)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def _decompressed(path: Path, limit: int, reason: str):
    """A binary stream of the file's decompressed bytes, cut off past `limit`."""
    import bz2
    import gzip
    import lzma
    import zipfile

    name = path.name.lower()
    raw: IO[bytes] | gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile
    try:
        if name.endswith(".gz"):
            raw = gzip.open(path, "rb")
        elif name.endswith(".bz2"):
            raw = bz2.open(path, "rb")
        elif name.endswith(".xz"):
            raw = lzma.open(path, "rb")
        elif name.endswith(".zip"):
            archive = zipfile.ZipFile(path)
            members = archive.namelist()
            if len(members) != 1:
                raise InstanceError(reason, f"{path.name}: a zip answer holds exactly one file, not {len(members)}")
            raw = archive.open(members[0])
        else:
            raise InstanceError(
                reason, f"{path.name}: {name.rsplit('.', 1)[-1]} compression is not read (use .gz, .bz2, .xz or .zip)"
            )
    except (OSError, zipfile.BadZipFile, lzma.LZMAError, EOFError) as exc:
        raise InstanceError(reason, f"{path.name}: {_first_line(exc)}") from None
    except NotImplementedError as exc:  # zipfile: a compression method it does not know (before RuntimeError)
        raise InstanceError(reason, f"{path.name}: the zip member's compression is not supported ({exc})") from None
    except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required for extraction"
        raise InstanceError(reason, f"{path.name}: the zip member is encrypted ({_first_line(exc)})") from None
    return io.BufferedReader(_Limited(raw, limit))


def _broken_stream_errors() -> tuple:
    import lzma
    import zipfile
    import zlib

    return (zlib.error, zipfile.BadZipFile, lzma.LZMAError, EOFError)


_BROKEN_STREAM = _broken_stream_errors()


def _read(path: Path, reason: str, max_bytes: int = DEFAULT_MAX_BYTES, **options) -> pd.DataFrame:
    if str(path).lower().endswith(COMPRESSED):
        stream = _decompressed(path, max_bytes, reason)
        try:
            return _read_frame(stream, path, reason, **options)
        except _TooLarge as exc:
            raise InstanceError(
                reason,
                f"{path.name} decompresses to more than {max_bytes:,} bytes (stopped at "
                f"{exc.count:,}; raise the limit with --max-file-mb)",
            ) from None
        except _BROKEN_STREAM as exc:  # corrupt compressed data, met while pandas reads it
            raise InstanceError(reason, f"{path.name}: corrupt compressed data ({_first_line(exc)})") from None
        finally:
            stream.close()
    return _read_frame(path, path, reason, **options)


def _read_frame(source, path: Path, reason: str, **options) -> pd.DataFrame:
    try:
        return pd.read_csv(source, **options)
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
