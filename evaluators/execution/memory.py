"""Memory a worker may use for one request, and how many bytes of result rows it may fetch.

`--memory-limit-mb` caps an engine's own memory (DuckDB's `memory_limit`, SQLite's `hard_heap_limit`), but
rows fetched into Python, a driver's buffered result (libpq, PyMySQL) and the frame built from them are
outside those caps: 100 MB blobs fetched row after row took a worker past 4 GB.  Two limits close that:

- `capped(limit_mb)`: while a request runs, the worker's `RLIMIT_DATA` (its heap and private writable
  mappings) is what it already uses plus `worker_allowance(limit_mb)`; an allocation past it fails
  (Python: `MemoryError`; SQLite, libpq, DuckDB: their out-of-memory error) and the request ends with
  `memory_limit`.  RLIMIT_DATA rather than RLIMIT_AS: DuckDB's allocator and glibc's thread arenas reserve
  far more address space than they ever write, so an address-space cap would refuse them at start.  The
  soft limit is put back after the request (a worker serves many), so each request gets its own cap.
- `fetch_rows(cursor, limit_mb)`: rows are fetched in batches with a running count of their bytes (from a
  sample of each large batch); past `fetch_budget(limit_mb)` the request ends with `result_too_large`
  before the next batch is read.
"""

from __future__ import annotations

import contextlib
import os
import resource

from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB

WORKER_SLACK_MB = 256  # imports done during the request (pandas, a driver) and the result's JSON line
THREAD_SLACK_MB = 32  # per core: an engine's thread stacks and allocator arenas (DuckDB runs a thread per core)
FETCH_BATCH = 1000
SAMPLE_ROWS = 32  # rows of a batch whose bytes are counted (see chunk_bytes)
_MB = 1024 * 1024
_ROW_OVERHEAD = 64  # a tuple and its slots, roughly
_CELL_OVERHEAD = 16  # a number, a None, a date: counted as this many bytes


def limit_of(settings: dict) -> int:
    return int(settings.get("memory_limit_mb") or DEFAULT_MEMORY_LIMIT_MB)


def fetch_budget(limit_mb: int) -> int:
    """Bytes of fetched rows allowed: half the limit, the other half for the frame or JSON built from them."""
    return max(1, limit_mb) * _MB // 2


def data_in_use() -> int:
    """This process's data segment and private writable mappings now (what RLIMIT_DATA counts), in bytes."""
    return _status_figure(b"VmData")


def address_space_in_use() -> int:
    """This process's virtual size now (what RLIMIT_AS counts), in bytes."""
    return _status_figure(b"VmSize")


def _status_figure(field: bytes) -> int:
    """A /proc/self/status figure in bytes, 0 where there is none to read.  One read, searched as bytes: a
    worker asks before every request, and reading the file line by line as text was a tenth of a
    millisecond of a short query's round trip."""
    try:
        descriptor = os.open("/proc/self/status", os.O_RDONLY)
        try:
            status = os.read(descriptor, 1 << 16)
        finally:
            os.close(descriptor)
        start = status.index(b"\n" + field + b":") + len(field) + 2
        return int(status[start : status.index(b"kB", start)]) * 1024
    except (OSError, ValueError):
        return 0


_CORES = os.cpu_count() or 1


def worker_allowance(limit_mb: int) -> int:
    """Bytes a request may add to the worker: twice the limit (the engine's share and the fetched rows'),
    and slack for imports and threads."""
    return (2 * limit_mb + WORKER_SLACK_MB + THREAD_SLACK_MB * _CORES) * _MB


@contextlib.contextmanager
def capped(limit_mb: int):
    """RLIMIT_DATA for the duration of one request (see the module's docstring); nothing where unsupported."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    except (AttributeError, ValueError, OSError):
        yield
        return
    in_use = data_in_use()
    cap = in_use + worker_allowance(limit_mb) if in_use else resource.RLIM_INFINITY
    if hard != resource.RLIM_INFINITY:
        cap = hard if cap == resource.RLIM_INFINITY else min(cap, hard)
    if soft != resource.RLIM_INFINITY and cap != resource.RLIM_INFINITY:
        cap = min(cap, soft)  # a limit the operator set on the grader stays the tighter one
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def row_bytes(rows) -> int:
    """What `rows` hold, roughly: the length of each text or bytes cell, a fixed size for anything else."""
    total = 0
    for row in rows:
        total += _ROW_OVERHEAD
        for cell in row:
            kind = type(cell)
            if kind is str or kind is bytes or kind is bytearray:
                total += len(cell) + _CELL_OVERHEAD
            elif kind is list or kind is tuple or kind is dict:
                total += len(str(cell)) + _CELL_OVERHEAD  # a DuckDB LIST or STRUCT, a graph value
            else:
                total += _CELL_OVERHEAD
    return total


def chunk_bytes(chunk: list) -> int:
    """`row_bytes` of a batch, from an even sample of `SAMPLE_ROWS` rows when it is longer: counting every
    cell of a large result would cost a third of fetching it.  A rare huge row the sample misses is still
    held by the worker's cap (`capped`), as `memory_limit` instead of `result_too_large`."""
    if len(chunk) <= SAMPLE_ROWS:
        return row_bytes(chunk)
    sample = chunk[:: len(chunk) // SAMPLE_ROWS]
    return row_bytes(sample) * len(chunk) // len(sample)


def too_large(used: int, budget: int, rows: int):
    from evaluators.execution.backends.base import QueryFailed

    return QueryFailed(
        "result_too_large",
        f"the result passed {budget // _MB:,} MB of rows after {rows:,} rows "
        f"(half of --memory-limit-mb; {used // _MB:,} MB fetched)",
    )


def fetch_rows(cursor, limit_mb: int, batch: int = FETCH_BATCH) -> list:
    """Every row of a DB-API cursor, in batches; `result_too_large` past `fetch_budget`.  Batches start at one
    row and double up to `batch` while the rows seen so far say the next one fits in what is left, so
    rows of 100 MB blobs are counted one at a time and small rows at full speed."""
    budget = fetch_budget(limit_mb)
    rows: list = []
    used = 0
    size = 1
    while True:
        chunk = cursor.fetchmany(size)
        if not chunk:
            return rows
        used += chunk_bytes(chunk)
        if used > budget:
            raise too_large(used, budget, len(rows) + len(chunk))
        rows.extend(chunk)
        average = used // len(rows) + 1
        size = max(1, min(batch, size * 2, (budget - used) // average))


def check_rows(rows, limit_mb: int) -> None:
    """`result_too_large` when rows a driver gave whole (a cloud engine, the graph server) pass the budget."""
    budget = fetch_budget(limit_mb)
    used = row_bytes(rows)
    if used > budget:
        raise too_large(used, budget, len(rows))
