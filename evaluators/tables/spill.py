"""Tables too big for pandas, read into DuckDB instead (issue 27: beyond RAM, out of core).

A CSV pair whose frames would not fit the run's `--memory-limit-mb` is loaded, every cell as text,
into a DuckDB database file in the work folder, with DuckDB's own memory limit and spill folder
there too; `matching/official/out_of_core.py` then compares it with SQL.  The estimate errs high:
a pandas frame of short text cells costs several times the CSV's bytes.

The route exists for memory, never for verdicts: DuckDB must read exactly the cells pandas reads, so
nothing is sniffed.  The header is the file's first line, split here (`csv_header`), and DuckDB is
told its columns, the delimiter, the quote, no skipped lines and no padding; in strict mode it stops
at a row of another width, a misplaced quote or a mix of line ends.  Where pandas and such a reading
could still differ, the pair is declined (`NotExact`, and pandas grades it, or `memory_limit`):
a blank or blank-looking first line (pandas skips it and takes the next as the header), spaces beside
a quote (DuckDB trims them, pandas keeps them), a file DuckDB refuses to read (ragged rows, which
pandas pads or turns into an index; stray quotes; mixed line ends; bad UTF-8), and a one-column file
with an empty or blank cell (pandas skips blank lines, DuckDB makes them rows).
tests/test_route_equivalence.py forces the route on generated files and compares every verdict.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from pandas._libs.parsers import STR_NA_VALUES

from evaluators import signals
from evaluators.errors import InstanceError

BOM = codecs.BOM_UTF8
HEAD_BYTES = 1 << 20  # the header must end within the first MiB (DuckDB's own line limit is 2 MB)
CHUNK_BYTES = 16 << 20
BLANK_BESIDE_QUOTE = (b' "', b'" ')  # DuckDB trims spaces around a quoted field (not tabs: those it refuses)
MIN_DUCKDB_MB = 256  # below it DuckDB's CSV reader runs out on wide tables
FRAME_BYTES_PER_CSV_BYTE = 8  # measured: object-string frames 5-10x the CSV; grading about 2x the read


@dataclass(frozen=True)
class SpillPlan:
    """When to leave pandas, and where DuckDB may spill."""

    memory_limit_mb: int
    work_dir: Path

    free_bytes: int | None = None  # memory pandas may take when DuckDB cannot decide; None: the machine's

    def too_big(self, *paths: Path) -> bool:
        return _frame_estimate(paths) > self.memory_limit_mb * 1024 * 1024

    def beyond_memory(self, *paths: Path) -> bool:
        """Would pandas' frames of these files outgrow the memory the machine has free?  Then a pair DuckDB
        could not decide is that instance's `memory_limit`, not a run killed by the kernel."""
        free = self.free_bytes if self.free_bytes is not None else _free_memory()
        return _frame_estimate(paths) > free


def _frame_estimate(paths) -> int:
    try:
        size = sum(os.stat(os.fspath(p)).st_size for p in paths)  # pinned answers: their checked fd
    except OSError:
        return 0  # the ordinary reader reports the missing file with its own words
    return size * FRAME_BYTES_PER_CSV_BYTE


def _free_memory() -> int:
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


class NotExact(Exception):
    """DuckDB cannot be told to read this file exactly as pandas does; the words say why."""


def csv_header(path) -> list[str]:
    """The header's fields, as DuckDB will be told them, or NotExact where pandas' reading could differ."""
    with open(os.fspath(path), "rb") as handle:  # a submitted file: the pinned fd that was checked
        head = handle.read(HEAD_BYTES)
    head = head.removeprefix(BOM)  # both readers drop a UTF-8 byte-order mark
    end = _first_line_end(head)
    if end is None:
        raise NotExact("no complete header line within the first MiB")
    try:
        line = head[:end].decode("utf-8")
    except UnicodeDecodeError:
        raise NotExact("the header line is not UTF-8") from None
    if not line.strip(" \t\r\n\v\f"):
        raise NotExact("the first line is blank: pandas skips it and takes the next line as the header")
    fields = next(csv.reader(io.StringIO(line, newline="")), [])
    return _unique(fields)


def _first_line_end(head: bytes) -> int | None:
    """Where the first record ends (quoted line ends inside it are kept), or None."""
    quoted = False
    for k, byte in enumerate(head):
        if byte == 0x22:
            quoted = not quoted
        elif byte in (0x0A, 0x0D) and not quoted:
            return k
    return len(head) if len(head) < HEAD_BYTES and not quoted else None


def _unique(names: list[str]) -> list[str]:
    """Column names DuckDB accepts (distinct, not empty); they name columns in details, never decide."""
    out: list[str] = []
    for k, name in enumerate(names):
        name = name or f"Unnamed: {k}"
        while name in out:
            name += "_"
        out.append(name)
    return out


def check_quotes(path) -> None:
    """NotExact when a quote has a space beside it anywhere in the file: DuckDB trims such spaces, pandas
    keeps them (` "x"` is a text with its quotes for pandas).  A plain byte search, chunk by chunk; it
    declines some files pandas and DuckDB read alike (`"say ""hi"" now"`), never one they read apart."""
    with open(os.fspath(path), "rb") as handle:
        tail = b""
        while chunk := handle.read(CHUNK_BYTES):
            window = tail + chunk
            if b'"' in window and any(pair in window for pair in BLANK_BESIDE_QUOTE):
                raise NotExact("a quote with a space beside it, which DuckDB trims and pandas keeps")
            tail = chunk[-1:]


class SpillTables:
    """A DuckDB database in the work folder holding CSV files as all-text tables; removed on close."""

    def __init__(self, plan: SpillPlan):
        import duckdb

        self.folder = Path(plan.work_dir) / f"spill-{uuid.uuid4().hex[:12]}"
        self.folder.mkdir(parents=True, exist_ok=True)
        config: dict[str, str | bool | int | float | list[str]] = {
            "memory_limit": f"{max(plan.memory_limit_mb // 2, MIN_DUCKDB_MB)}MB",  # half: the process holds more than DuckDB
            "temp_directory": str(self.folder / "tmp"),
            "preserve_insertion_order": False,
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
        self.con = duckdb.connect(str(self.folder / "tables.duckdb"), config=config)
        self._forget = signals.on_interrupt(self.con.interrupt)  # Ctrl-C cancels a load or comparison under way
        self._tables: dict = {}
        self.cache: dict = {}  # what the comparison learnt of these tables, for the next semantics

    def table(self, path: Path) -> str:
        """The name of the table holding `path` (read once), every cell VARCHAR, NULL for an empty field
        or an NA word; NotExact (kept for the next semantics) when DuckDB cannot read it as pandas does."""
        key = str(path)
        if key not in self._tables:
            try:
                self._tables[key] = self._load(path, f"t{len(self._tables)}")
            except NotExact as exc:
                self._tables[key] = NotExact(f"{Path(path).name}: {exc}")
        if isinstance(self._tables[key], NotExact):
            raise self._tables[key]
        return self._tables[key]

    def _load(self, path: Path, name: str) -> str:
        header = csv_header(path)
        check_quotes(path)
        try:
            # Nothing sniffed: the header is the first line and its fields are the columns; pandas' NA words,
            # quoted or not, are NULL (as pandas reads them); every other cell is text.
            self.con.execute(
                f"CREATE TABLE {name} AS SELECT * FROM read_csv(?, auto_detect = false, header = true, skip = 0, "
                "columns = ?, delim = ',', quote = '\"', escape = '\"', comment = '', strict_mode = true, "
                "null_padding = false, allow_quoted_nulls = true, nullstr = ?, encoding = 'utf-8')",
                [os.fspath(path), {column: "VARCHAR" for column in header}, sorted(STR_NA_VALUES)],
            )
        except Exception as exc:  # duckdb.Error: ragged rows, stray quotes, mixed line ends, bad UTF-8 ...
            signals.check()  # unless Ctrl-C cancelled the read: then the run stops, not just this semantics
            if "Out of Memory" in str(exc):
                raise InstanceError("memory_limit", f"{Path(path).name}: out-of-core read failed: {exc}") from None
            raise NotExact(f"DuckDB's reader refused it ({str(exc).strip().splitlines()[0]})") from None
        if len(header) == 1:
            self._check_one_column(name, header[0])
        return name

    def _check_one_column(self, table: str, column: str) -> None:
        """pandas skips blank and blank-looking lines of a one-column file, DuckDB makes them rows (NULL or
        blanks): such a file, or one holding an empty or blank cell another way, is declined."""
        quoted = '"' + column.replace('"', '""') + '"'
        blank = self.con.execute(
            f"SELECT count(*) FROM {table} WHERE {quoted} IS NULL OR trim({quoted}, ' ' || chr(9)) = ''"
        ).fetchone()
        if blank and blank[0]:
            raise NotExact("a one-column file with an empty or blank cell, which pandas may skip as a blank line")

    def close(self) -> None:
        self._forget()
        self.con.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def remove_spilled(plan: SpillPlan) -> None:
    """Remove what grading processes killed mid-instance (a parallel run stopped by a signal) left in the
    work folder: their DuckDB files, which no `close()` reached."""
    for folder in Path(plan.work_dir).glob("spill-*"):
        shutil.rmtree(folder, ignore_errors=True)
