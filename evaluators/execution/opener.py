"""The one place that opens a database file the grader did not write.

Answers (a submitted `.duckdb`), gold databases and everything under `--db-dir`
are opened here and nowhere else, always inside a worker process (worker.py), so
the parent's timeout can kill whatever runs on them.  A submitted file is first
opened, once and without following links out, by `loading/paths.py`; a DuckDB
answer reaches this module as a hard link to (or a copy of) that open file in the
work folder (`executor._checked_file`), never by its submitted name again.
Why each setting is there:

DuckDB
- `read_only=True`: submitted SQL and views cannot change the file.
- `enable_external_access=False`: a view or query cannot read the grading
  machine's files (`read_text('/etc/...')`, `read_csv`), attach other databases,
  or reach the network; the file named here is still readable.
- `autoinstall_known_extensions` / `autoload_known_extensions` off: an extension
  (httpfs, ...) cannot be fetched or loaded to get around the line above.
- `temp_directory`: DuckDB spills to `<database>.tmp` beside the file by default,
  which would write into the gold or submission folder; spills go to the run's
  work folder instead.
- `memory_limit`: one query cannot take the machine's memory (DuckDB spills or
  fails past it).
- `lock_configuration=True`, last: submitted SQL cannot `SET` any of the above back.

SQLite
- `mode=ro`: writes are refused.
- `immutable=1`: SQLite treats the file as unchanging, so it takes no locks and
  creates no `-wal`/`-shm`/journal files beside it (a gold database in WAL mode
  would otherwise get them in the gold folder).
- `SQLITE_LIMIT_ATTACHED = 0`: no `ATTACH` (and so no `VACUUM INTO` a new file).
- `hard_heap_limit`: the memory cap for one connection.
- A first read of the schema: SQLite opens lazily, and a file that is not a
  database must fail here, as "cannot open", not later as a query error.
- `copy_database_file`: the only way a template is read for `livesql`, whose answers may write: they get
  a private copy in the work folder (a reflink or a kernel copy), never the file itself; the template is
  the file `loading/paths.open_inside` opened beneath `--db_root` (its name comes from the submission).

SQLite, BIRD's private copy (`sqlite_private_copy`, writable: the official scorer's way)
- `max_page_count`: the copy grows by `copy_growth_bytes` at most (a recursive
  `INSERT ... randomblob()` wrote 3 GB in 4 s); `hard_heap_limit` and
  `temp_store = MEMORY`: temporary tables and sorts stay under the heap cap, not
  in /tmp; PRAGMAs that set something and ATTACH are denied by the authorizer.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

DEFAULT_MEMORY_LIMIT_MB = 4096


def duckdb_config(temp_dir: str | None, memory_limit_mb: int | None) -> dict:
    config: dict = {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "memory_limit": f"{memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB}MB",
    }
    if temp_dir:  # DuckDB creates it when it first spills (and removes its files when the connection closes)
        config["temp_directory"] = str(temp_dir)
    config["lock_configuration"] = True
    return config


def open_duckdb(path: str | None, temp_dir: str | None, memory_limit_mb: int | None = None):
    """A locked-down DuckDB connection to `path` (read-only), or an in-memory one when `path` is None."""
    import duckdb

    config = duckdb_config(temp_dir, memory_limit_mb)
    if path is None:
        return duckdb.connect(":memory:", config=config)
    return duckdb.connect(str(path), read_only=True, config=config)


def open_sqlite(path: str, memory_limit_mb: int | None = None, decode_errors: str = "strict") -> sqlite3.Connection:
    """A read-only, immutable SQLite connection to `path`."""
    # A worker keeps its connections for the next request, which may run on another thread (worker.py).
    con = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro&immutable=1", uri=True, check_same_thread=False)
    try:
        con.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        set_heap_limit(con, memory_limit_mb)
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        con.close()
        raise
    if decode_errors == "ignore":  # test-suite-sql-eval's reading of undecodable text
        con.text_factory = lambda raw: raw.decode(errors="ignore")
    return con


def file_identity(stat: os.stat_result) -> tuple:
    """What tells a database file from the one seen before, for what is kept between queries (a kept immutable
    connection, a cached gold result): size and mtime alone are kept by a file swapped in place or renamed over
    it (`cp -p`, `rsync -t`, `os.utime`); the inode changes with a rename, and the kernel sets ctime on every
    write and every `utime`, and nothing sets it back."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def file_state(path: str | None) -> tuple:
    """`file_identity` of the file at `path`, () when there is none: the key part of a cached gold result,
    taken before the gold runs, so a file changed meanwhile is a new key at the next call."""
    try:
        return file_identity(os.stat(path)) if path else ()
    except OSError:
        return ()


def set_heap_limit(con: sqlite3.Connection, memory_limit_mb: int | None) -> None:
    """SQLite's heap cap: the whole process's (any connection's PRAGMA sets it for all), and the PRAGMA only
    ever lowers it, so it is sent only for a cap below the one in force.  Every setter of this process goes
    through here and no submitted SQL can set it (the authorizers refuse PRAGMA assignments), so the lowest
    cap sent is the one in force: sending it once a query was 5 % of a small question's time in a worker."""
    limit = int((memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB) * 1024 * 1024)
    if _heap_limit_set[0] is None or limit < _heap_limit_set[0]:
        con.execute(f"PRAGMA hard_heap_limit = {limit}")
        _heap_limit_set[0] = limit


_heap_limit_set: list = [None]  # the heap cap in force in this process (`set_heap_limit`)


def sqlite_private_copy(path: str, copy: str, memory_limit_mb: int | None = None) -> sqlite3.Connection:
    """A writable connection to a private copy of `path` made in the work folder, for reproducing a scorer
    that runs predictions on a writable connection (BIRD).  The original is only read; the caller rolls
    back and deletes the copy.  ATTACH is denied: it would create files wherever the SQL names.  The copy
    may grow by `copy_growth_bytes` at most (`max_page_count`: past it SQLite says "database or disk is
    full"), temporary tables and sorts stay in memory under the same heap cap as a read-only connection,
    and PRAGMAs that set something are denied, so the SQL cannot lift either cap."""
    import shutil

    shutil.copyfile(path, copy)
    con = sqlite3.connect(copy)
    try:
        limit_mb = memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        con.execute(f"PRAGMA max_page_count = {pages + copy_growth_bytes(limit_mb) // page_size + 1}")
        set_heap_limit(con, limit_mb)
        con.execute("PRAGMA temp_store = MEMORY")
    except BaseException:
        con.close()
        raise

    def authorize(action, first, second, *_):
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and second is not None and str(first).lower() not in _READING_PRAGMAS:
            return sqlite3.SQLITE_DENY  # `PRAGMA x = y`: a setting
        return sqlite3.SQLITE_OK

    con.set_authorizer(authorize)
    return con


_READING_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list"}
COPY_GROWTH_MB = 256  # what a prediction may write into a private copy, at most (and no more than the memory cap)


def copy_growth_bytes(memory_limit_mb: int) -> int:
    return min(COPY_GROWTH_MB, max(1, memory_limit_mb)) * 1024 * 1024


def copy_database_file(source: int, copy) -> None:
    """A private copy of the open database file `source` (an fd from `loading/paths.open_inside`, only read)
    at `copy` in the work folder: a reflink where the file system has them (instant, shares no later
    writes), else a kernel copy.  LiveSQLBench grades each phase on one (livesql/sandbox.py)."""
    import fcntl
    import shutil

    ficlone = 0x40049409  # FICLONE
    with open(copy, "wb") as target:
        try:
            fcntl.ioctl(target.fileno(), ficlone, source)
            return
        except OSError:
            pass
        with open(source, "rb", closefd=False) as reader:
            reader.seek(0)
            shutil.copyfileobj(reader, target, 1 << 20)


def read_gold_text(path: Path, max_bytes: int, reason: str) -> str:
    """A gold text file (a graph's creation script) as UTF-8, refused past `max_bytes` or when undecodable."""
    from evaluators.errors import InstanceError

    with open(path, "rb") as handle:  # the file the gold names, read once, never written
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InstanceError(reason, f"{path.name}: more than {max_bytes:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InstanceError(reason, f"{path.name}: not UTF-8 text (byte {exc.start})") from None
