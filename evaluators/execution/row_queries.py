"""Many small queries at once, for rewards: typed rows, parallel workers, gold results cached.

    runner = RowRunner(jobs=4)
    gold = runner.gold(RowQuery("sqlite", "/dbs/bank.sqlite", "SELECT ..."))   # cached per (database, SQL)
    results = runner.run_many([RowQuery(...), ...])                             # in order

Every query goes through `execution.run_sql`, so it runs in a worker process on the one
opener (read-only, writes refused) with a timeout that stops it (the worker is killed when the
engine does not stop in time).  Rows come back typed over the pipe; the private work folder
(engine spills) is removed when the runner closes.
The gold cache lives as long as the runner; a database file that changes is a new key, so a stale
gold is never served: the key is the file's identity (device, inode) and its size, mtime and ctime,
since a file swapped in place or renamed over the old one may keep its size and mtime (`cp -p`,
`rsync -t`, `os.utime`), but the kernel sets ctime on every change and no call sets it back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluators.execution.config import ExecConfig
from evaluators.execution.opener import file_state


@dataclass(frozen=True)
class RowQuery:
    backend: str
    database: str | None  # a local engine's database file
    sql: str
    timeout_s: float = 30.0


@dataclass(frozen=True)
class RowResult:
    ok: bool
    reason: str  # execution.ExecResult reasons: "ok", "exec_error", "timeout", "no_database", ...
    detail: str
    columns: tuple = ()
    rows: tuple = ()
    query_seconds: float | None = None  # executing and fetching every row, in the worker


class RowRunner:
    def __init__(self, jobs: int | None = None, config: ExecConfig | None = None):
        """`config`: the run's settings (work folder, server DSNs); each query brings its own timeout."""
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self._base = config
        # Named, not made: inline runs write nothing, and a runner that lives as long as its process (the
        # rewards' pool, a forked trainer) never gets to close(); what is written creates it.
        self._scratch = Path(tempfile.gettempdir()) / f"row-queries-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._inline = self._scratch / "inline.csv"
        self._gold: dict[tuple, RowResult] = {}
        self._configs: dict[float, ExecConfig] = {}
        self._gold_locks: dict[tuple, threading.Lock] = {}
        self._lock = threading.Lock()
        self._threads: Any = None  # a ThreadPoolExecutor, made by the first `map` that needs it

    def run(self, query: RowQuery, trusted: bool = False) -> RowResult:
        """One query; its typed rows come back over the worker's pipe (collect="inline"), no file written."""
        from evaluators.execution.executor import run_sql  # not for a caller that only builds the runner

        config = self._config(query.timeout_s)
        out = self._inline  # named for the protocol only: an inline run writes nothing
        result = run_sql(query.backend, query.database, query.sql, config, out, collect="inline", trusted=trusted)
        if not result.ok:
            return RowResult(False, result.reason, result.detail)
        columns, rows = result.rows()
        return RowResult(True, "ok", "", tuple(columns), tuple(rows), result.query_seconds)

    def _config(self, timeout_s: float) -> ExecConfig:
        """The run's config with this timeout, made once per timeout (its settings are then made once too)."""
        config = self._configs.get(timeout_s)
        if config is None:
            if self._base is None:
                config = ExecConfig(output_dir=self._scratch, timeout_s=timeout_s)
            else:
                config = replace(self._base, timeout_s=timeout_s)
            self._configs[timeout_s] = config  # a race makes two equal configs: harmless
        return config

    def gold(self, query: RowQuery) -> RowResult:
        """The gold's result, run once per (database file state, SQL) for the life of the runner."""
        key = (query.backend, query.database, file_state(query.database), query.sql)
        with self._lock:
            lock = self._gold_locks.setdefault(key, threading.Lock())
        with lock:  # two threads asking for one gold run it once
            if key not in self._gold:
                self._gold[key] = self.run(query, trusted=True)
            return self._gold[key]

    def gold_cache_size(self) -> int:
        return len(self._gold)

    def map(self, function, items: list) -> list:
        """function(item) for each item on the runner's threads; results in order."""
        if self.jobs == 1 or len(items) < 2:
            return [function(item) for item in items]
        with self._lock:
            if self._threads is None:
                from concurrent.futures import ThreadPoolExecutor

                self._threads = ThreadPoolExecutor(max_workers=self.jobs)
        return list(self._threads.map(function, items))

    def run_many(self, queries: list[RowQuery]) -> list[RowResult]:
        return self.map(self.run, list(queries))

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> RowRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
