"""Tables too big for pandas, read into DuckDB instead (issue 27: beyond RAM, out of core).

A CSV pair whose frames would not fit the run's `--memory-limit-mb` is loaded, every cell as text,
into a DuckDB database file in the work folder, with DuckDB's own memory limit and spill folder
there too; `matching/official/out_of_core.py` then compares it with SQL.  The estimate errs high:
a pandas frame of short text cells costs several times the CSV's bytes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from pandas._libs.parsers import STR_NA_VALUES

from evaluators import signals
from evaluators.errors import InstanceError

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

    def table(self, path: Path, reason: str) -> str:
        """The name of the table holding `path` (read once), every cell VARCHAR, NULL for an empty field."""
        key = str(path)
        if key not in self._tables:
            name = f"t{len(self._tables)}"
            try:
                # pandas' NA words, quoted or not, are NULL (as pandas reads them); every other cell is text.
                self.con.execute(
                    f"CREATE TABLE {name} AS SELECT * FROM read_csv(?, header = true, all_varchar = true, "
                    "delim = ',', quote = '\"', escape = '\"', strict_mode = true, allow_quoted_nulls = true, "
                    "nullstr = ?)",
                    [os.fspath(path), sorted(STR_NA_VALUES)],  # a submitted file: the fd that was checked
                )
            except Exception as exc:  # duckdb.Error: the file is the instance's problem, not the run's
                signals.check()  # unless Ctrl-C cancelled the read: then the run stops, not just this semantics
                why = "memory_limit" if "Out of Memory" in str(exc) else reason
                raise InstanceError(why, f"{Path(path).name}: out-of-core read failed: {exc}") from None
            self._tables[key] = name
        return self._tables[key]

    def close(self) -> None:
        self._forget()
        self.con.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def remove_spilled(plan: SpillPlan) -> None:
    """Remove what grading processes killed mid-instance (a parallel run stopped by a signal) left in the
    work folder: their DuckDB files, which no `close()` reached."""
    for folder in Path(plan.work_dir).glob("spill-*"):
        shutil.rmtree(folder, ignore_errors=True)
