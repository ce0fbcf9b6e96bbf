"""Peak memory of one comparison, measured in a child process.

Usage: python bench/memory.py GOLD.csv PRED.csv   (prints one JSON line)

The child reads both tables, notes their in-memory size (pandas'
`memory_usage(deep=True)`) and its resident set, then resets the kernel's
peak-RSS mark (Linux `/proc/self/clear_refs`) so that the peak of the read
itself does not count, and runs each semantics' comparison with fresh caches.
The figures are the peak resident set during each comparison (VmHWM, the
same mark `resource.getrusage().ru_maxrss` reports) and, relative to the
tables' size: the part above the resident set before comparing (the
comparison's own memory), and the peak above the interpreter's resident set
before reading (tables plus comparison).  RSS counts
pyarrow's and numpy's memory alike (tracemalloc would miss pyarrow's pool).
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import SEMANTICS, compare, read_pair  # noqa: E402


def _status(field: str) -> int:
    """A /proc/self/status figure in bytes."""
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def measure(gold_path: Path, pred_path: Path) -> dict:
    gc.collect()
    empty = _status("VmRSS")  # interpreter and libraries, before any table
    gold, pred = read_pair(gold_path, pred_path)
    tables = int(gold.memory_usage(deep=True).sum() + pred.memory_usage(deep=True).sum())
    verdicts, peaks = {}, {}
    for semantics in SEMANTICS:
        gc.collect()
        before = _status("VmRSS")
        with open("/proc/self/clear_refs", "w") as marks:
            marks.write("5")  # reset VmHWM to the current RSS
        verdicts[semantics] = compare(semantics, gold, pred, gold_path, pred_path)
        peaks[semantics] = _status("VmHWM")
    peak = max(peaks.values())
    return {
        "rows": len(gold),
        "cols": gold.shape[1],
        "tables_bytes": tables,
        "rss_without_tables_bytes": empty,
        "rss_before_bytes": before,
        "tables_and_work_per_tables": (peak - empty) / tables,
        "peak_rss_bytes": peak,
        "peak_over_before_bytes": peak - before,
        "peak_rss_per_tables": peak / tables,
        "extra_per_tables": (peak - before) / tables,
        "peak_rss_by_semantics": peaks,
        "verdicts": verdicts,
    }


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]), Path(sys.argv[2]))))
