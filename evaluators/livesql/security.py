"""The statement rules for a prediction that may write (docs/security.md, docs/livesql.md).

SQLite (the private copy is the only file it can reach):
- `SQLITE_LIMIT_ATTACHED = 0` and an authorizer that denies ATTACH/DETACH: no other database, no new file
  (`VACUUM INTO` needs an attach too).
- the `load_extension` SQL function is denied (Python leaves extension loading off as well).
- `PRAGMA temp_store = MEMORY`: temporary tables stay in memory, under the heap limit, not in /tmp.
- `PRAGMA hard_heap_limit`: the memory cap; `PRAGMA max_page_count`: the disk cap (pages the copy may
  grow by).  Predictions cannot set either back, nor the temp store or its directory.
- a progress handler stops any statement once the phase's deadline passes.
PostgreSQL: the prediction's text is refused before it runs when it names a function or statement that
reaches outside its clone (signalling other sessions, server files, other databases, roles, extensions).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time

_PROGRESS_EVERY = 10_000
_LOCKED_PRAGMAS = {"max_page_count", "temp_store", "temp_store_directory", "data_store_directory", "hard_heap_limit"}
_DENIED = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


def lock_down_sqlite(conn, memory_limit_mb, disk_limit_mb, deadline: float) -> None:
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.execute(f"PRAGMA hard_heap_limit = {int((memory_limit_mb or 4096) * 1024 * 1024)}")
    conn.execute("PRAGMA temp_store = MEMORY")
    pages, size = conn.execute("PRAGMA page_count").fetchone()[0], conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + int((disk_limit_mb or 1024) * 1024 * 1024 // size)}")
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_EVERY)
    conn.set_authorizer(_authorize)


def _authorize(action: int, arg1, arg2, database, trigger) -> int:
    if action in _DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and str(arg1 or "").lower() in _LOCKED_PRAGMAS and arg2 is not None:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


# Names a PostgreSQL prediction may not mention anywhere (identifiers or strings): they signal other
# sessions, read or write server files, reach other databases or change who the session is.
_PG_WORDS = (
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_file_write",
    "lo_import",
    "lo_export",
    "dblink",
    "postgres_fdw",
)
_PG_STATEMENTS = (
    (r"\bcopy\b[^;]*\b(to|from)\b\s*(program|')", "COPY to or from a server file or program"),
    (r"\b(create|alter|drop)\s+(database|extension|role|user|tablespace|server|language)\b", "a cluster object"),
    (r"\balter\s+system\b", "ALTER SYSTEM"),
    (r"\bset\s+(session\s+authorization|role)\b", "a change of role"),
    (r"\bload\s+'", "LOAD of a library"),
)


def refused(pred_sqls: list, engine: str) -> str | None:
    """Why the prediction is not run, or None."""
    if engine != "postgres":
        return None  # SQLite's rules are enforced by the engine (lock_down_sqlite)
    text = " ".join(pred_sqls).lower()
    for word in _PG_WORDS:
        if word in text:
            return f"not run: the prediction uses {word} (reaches outside its private database)"
    for pattern, what in _PG_STATEMENTS:
        if re.search(pattern, text):
            return f"not run: the prediction contains {what} (reaches outside its private database)"
    return None


@contextlib.contextmanager
def process_memory_limit(memory_limit_mb):
    """The worker's address space while it grades an instance, so a test case or driver cannot take the
    machine (room left for Python); the old limit comes back after, as the worker is reused."""
    import resource

    wanted = int(((memory_limit_mb or 4096) + 2048) * 1024 * 1024)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
