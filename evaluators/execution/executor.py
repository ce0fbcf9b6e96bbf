"""Running SQL for grading: predicted `.sql` answers and temporal golds (`gold.sql` run at grading time).

    executor = Executor(ExecConfig(output_dir=Path("out/exec"), db_dir=Path("dbs")))
    result = executor.run_prediction(gold_instance, sql_text)     # ExecResult, CSV in out/exec/predictions/
    gold = executor.temporal_gold(gold_instance, gold_dir, "result.csv")   # GoldResult: live, cached or stored

Every query runs in a worker process (`execution/worker.py`) with a timeout that really
stops it.  Failures are results, never exceptions: `reason` says what went wrong and
`detail` gives the engine's first line, with credentials redacted.  Result CSVs and
the gold cache live under `output_dir`, never in the submission or gold folders.
Everything here is picklable, so a grader may call it from its own worker processes.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.execution.backends import LOCAL, REGISTRY, canonical_name
from evaluators.execution.backends.base import Request, credential_environment
from evaluators.execution.config import ExecConfig
from evaluators.execution.gold_cache import GoldCache, compare_csv, first_cell_of, safe_name
from evaluators.execution.row_files import read_rows, rows_path
from evaluators.pinned import PinnedPath
from evaluators.specs import GoldInstance
from evaluators.sqltext import read_sql_file, unwrap_fences

GOLD_SQL = "gold.sql"
LOCAL_SUFFIXES = {"duckdb": (".duckdb", ".ddb", ".db", ".sqlite"), "sqlite": (".sqlite", ".sqlite3", ".db", ".duckdb")}


@dataclass(frozen=True)
class ExecResult:
    ok: bool
    csv_path: Path | None  # result table as CSV (pandas to_csv(index=False)) in output_dir
    first_cell: object | None  # the first cell, for string/number specs (None if empty)
    reason: (
        str  # "ok" | "exec_error" | "timeout" | "cost_limit" | "credentials_missing" | "missing_extra" | "no_database"
    )
    detail: str  # engine message (first line, redacted) or words
    backend: str
    bytes_processed: int | None = None
    seconds: float | None = None  # the whole request in the worker: connecting, running, writing the CSV
    query_seconds: float | None = None  # executing and fetching every row only (local engines, Snowflake: None)
    rows_path: Path | None = None  # typed rows beside the CSV, when run with collect="rows" (execution/row_files.py)
    inline: tuple | None = None  # (columns, rows) when run with collect="inline": typed, no file at all

    def rows(self) -> tuple[list[str], list[tuple]]:
        """(column names, rows as the driver's Python values); needs a run with collect="rows" or "inline"."""
        if self.inline is not None:
            return self.inline
        if self.rows_path is None:
            raise ValueError("this result was run without collect='rows'")
        return read_rows(self.rows_path)

    def instance_error(self) -> InstanceError:
        """This failure as the InstanceError grading turns into the instance's reason."""
        return InstanceError(self.reason, self.detail)


@dataclass(frozen=True)
class GoldResult(ExecResult):
    source: str = "live"  # "live" | "cached" | "stored"
    cached_at: str | None = None
    drifted: bool | None = None  # live/cached gold differs from the stored gold file (None: nothing to compare)


def failure(reason: str, detail: str, backend: str = "") -> ExecResult:
    return ExecResult(False, None, None, reason, detail, backend)


def run_sql(
    backend: str,
    db_ref: str | None,
    sql: str,
    config: ExecConfig,
    out_csv: Path,
    collect: str = "csv",
    trusted: bool = False,
) -> ExecResult:
    """Run `sql` on `backend` in a worker process; the result table goes to `out_csv`.

    `collect="rows"` also keeps the driver's rows beside the CSV (`ExecResult.rows()`); `collect="time"`
    keeps nothing but `query_seconds` (fetching every row), for efficiency timings."""
    from evaluators.execution import worker

    name = canonical_name(backend)
    if name is None:
        return failure("no_database", f"unknown backend {backend!r}; one of {', '.join(REGISTRY)}", str(backend))
    if not sql or not sql.strip():
        return failure("exec_error", "empty SQL", name)
    try:
        database = graph_ref(db_ref, config) if name == "cypher" else resolve_database(name, db_ref, config.db_dir)
    except InstanceError as exc:
        return failure(exc.reason, exc.detail, name)
    writes = collect not in ("time", "inline")  # these write nothing: the path is a name only, left as given
    out_csv = Path(out_csv).resolve() if writes else Path(out_csv)
    rows_file = rows_path(out_csv) if writes else None
    if rows_file is not None:  # the last result of "time" and "inline" stays in place
        out_csv.unlink(missing_ok=True)  # a CSV left from an earlier run must never be graded as this one
        rows_file.unlink(missing_ok=True)
    environment = (
        {} if name in LOCAL or name == "cypher" else credential_environment()
    )  # local engines need no credentials
    event: dict = {}
    try:
        event = worker.execute(
            Request(name, sql, str(out_csv), database, config.settings(name), environment, collect, trusted)
        )
    finally:
        if writes and event.get("reason") != "ok":  # a killed worker (timeout, Ctrl-C) leaves its half-written files
            remove_partial_files(out_csv)
    ok = event.get("reason") == "ok"
    kept = ok and collect not in ("time", "inline")
    inline = None
    if ok and "data" in event:
        from evaluators.execution.row_files import decode_rows

        data = event["data"]
        inline = (data["columns"], decode_rows(data["rows"], data.get("tagged", True)))
    return ExecResult(
        ok,
        out_csv if kept else None,
        event.get("first_cell") if ok else None,
        event["reason"],
        event.get("detail", ""),
        name,
        event.get("bytes_processed"),
        event.get("seconds"),
        event.get("query_seconds"),
        rows_file if kept and collect == "rows" else None,
        inline,
    )


def graph_ref(db_ref: str | None, config: ExecConfig) -> str:
    """The embedded graph server's built graph for `db_ref` (execution/graphs.py), as a worker finds it."""
    from evaluators.execution.graphs import server_for

    return server_for(config.output_dir).graph(db_ref, config.db_dir, config.memory_limit_mb).to_text()


def remove_partial_files(out_csv: Path) -> None:
    """The temporary files a worker writes before renaming them into place (`.<name>.XXXX`), for this result."""
    rows_file = rows_path(out_csv)
    for name in (out_csv.name, rows_file.name):
        for partial in out_csv.parent.glob(f".{name}.*"):
            partial.unlink(missing_ok=True)


def resolve_database(backend: str, db_ref: str | None, db_dir: Path | None) -> str | None:
    """A local engine's database file (absolute path); a cloud reference passes through unchanged."""
    if backend not in LOCAL:
        return db_ref
    if db_ref is None:
        if backend == "duckdb":
            return None  # an in-memory database: SQL over literals only
        raise InstanceError("no_database", "the gold names no database ('db') for this SQLite instance")
    candidates = _local_candidates(backend, db_ref, db_dir)
    for path in candidates:
        if os.path.isfile(path):  # strings, not Paths: this runs once per query
            return os.path.realpath(path)
    if db_dir is None and not os.path.isabs(db_ref):
        raise InstanceError("no_database", f"database {db_ref!r} needs --db-dir (the folder of database files)")
    tried = ", ".join(Path(p).name for p in candidates[:4])
    raise InstanceError("no_database", f"no database file for {db_ref!r} under {db_dir} (tried {tried})")


def _local_candidates(backend: str, db_ref: str, db_dir: Path | None) -> list[str]:
    if os.path.isabs(db_ref):
        return [db_ref]
    if db_dir is None:
        return []
    base = os.fspath(db_dir)
    suffixes = LOCAL_SUFFIXES[backend]
    return (
        [os.path.join(base, db_ref)]
        + [os.path.join(base, f"{db_ref}{s}") for s in suffixes]
        + [os.path.join(base, db_ref, f"{db_ref}{s}") for s in suffixes]  # Spider 1 layout: <db>/<db>.sqlite
    )


class Executor:
    def __init__(self, config: ExecConfig):
        self.config = config

    def backend_for(self, gold: GoldInstance) -> tuple[str, str | None]:
        """(backend name, database reference) from the gold entry, or from the overrides."""
        meta = gold.metadata or {}
        given = self.config.backend_override or meta.get("type")
        name = canonical_name(given) if given is not None else "duckdb"  # DuckDB is the embedded default
        if name is None:
            raise InstanceError(
                "no_database",
                f"{'--backend' if self.config.backend_override else 'gold type'} "
                f"{given!r} names no SQL backend ({', '.join(REGISTRY)})",
            )
        db = self.config.db_override or meta.get("db") or meta.get("db_id")
        return name, (str(db) if db is not None else None)

    def run_prediction(self, gold: GoldInstance, sql_text: str, collect: str = "csv") -> ExecResult:
        """Run a predicted SQL answer; the CSV goes to output_dir/predictions/<instance_id>.csv."""
        return self._run(gold, sql_text, "predictions", collect, trusted=False)

    def run_gold_query(self, gold: GoldInstance, sql_text: str, collect: str = "rows") -> ExecResult:
        """Run a gold query now, uncached (execution_match); the CSV goes to output_dir/gold_queries/."""
        return self._run(gold, sql_text, "gold_queries", collect, trusted=True)

    def _run(self, gold: GoldInstance, sql_text: str, folder: str, collect: str, trusted: bool) -> ExecResult:
        try:
            name, db = self.backend_for(gold)
        except InstanceError as exc:
            return failure(exc.reason, exc.detail)
        out = Path(self.config.output_dir) / folder / f"{safe_name(gold.instance_id)}.csv"
        return run_sql(name, db, unwrap_fences(sql_text), self.config, out, collect, trusted)

    def run_predictions(self, items, jobs: int = 1) -> list[ExecResult]:
        """run_prediction for each (gold, sql_text), at most `jobs` at a time; results in order."""
        return run_parallel(lambda item: self.run_prediction(*item), list(items), jobs)

    def temporal_gold(self, gold: GoldInstance, gold_dir: Path, stored_file: str | list | None) -> GoldResult:
        """The gold of a temporal spec: gold.sql run now (or its cached result), else the stored file."""
        folder = Path(gold_dir) / gold.instance_id
        if isinstance(stored_file, (list, tuple)):  # a spec may list several gold files; the first is the stored one
            stored_file = stored_file[0] if stored_file else None
        stored = folder / stored_file if stored_file else None
        try:
            name, db = self.backend_for(gold)
            sql = read_sql_file(folder / GOLD_SQL, reason="unreadable_gold")
        except InstanceError as exc:
            return _stored_or_failure(failure(exc.reason, exc.detail), stored)
        cache = GoldCache(Path(self.config.output_dir) / "gold_cache", name, db, sql)
        entry = None if self.config.refresh_gold else cache.load()
        source = "cached" if entry else "live"
        if entry is None:
            live = run_sql(name, db, sql, self.config, cache.scratch_path(), trusted=True)
            if not live.ok or live.csv_path is None:
                return _stored_or_failure(live, stored)
            entry = cache.store(
                live.csv_path,
                backend=name,
                db=db,
                instance_id=gold.instance_id,
                first_cell=live.first_cell,
                bytes_processed=live.bytes_processed,
                seconds=live.seconds,
            )
        result = _gold_from_entry(entry, name, source)
        if stored is not None and stored.is_file():
            result = _with_drift(result, stored)
        return result


def _with_drift(result: GoldResult, stored: Path) -> GoldResult:
    if result.csv_path is None:
        return result
    try:
        return replace(result, drifted=not compare_csv(result.csv_path, stored))
    except Exception as exc:  # an unreadable stored file leaves drift unknown; the live gold still stands
        return replace(
            result, detail=f"{result.detail}; drift unknown: {stored.name} unreadable ({type(exc).__name__})"
        )


def _gold_from_entry(entry: dict, backend: str, source: str) -> GoldResult:
    live = source == "live"
    detail = "gold.sql run now" if live else f"gold.sql result cached at {entry['cached_at']}"
    return GoldResult(
        True,
        entry["csv_path"],
        entry.get("first_cell"),
        "ok",
        detail,
        backend,
        entry.get("bytes_processed") if live else None,
        entry.get("seconds") if live else None,
        source=source,
        cached_at=None if live else entry["cached_at"],
    )


def _stored_or_failure(live: ExecResult, stored: Path | None) -> GoldResult:
    """When the gold cannot run, the stored gold file (if any) stands in, and the report says why."""
    if stored is None or not stored.is_file():
        return GoldResult(**{**asdict(live), "source": "live"})
    return GoldResult(
        True,
        stored,
        first_cell_of(stored),
        "ok",
        f"gold.sql not run ({live.reason}: {live.detail}); using the stored {stored.name}",
        live.backend,
        source="stored",
    )


def run_parallel(function, items: list, jobs: int = 1) -> list:
    """function(item) for each item, `jobs` at a time; threads suffice as each query runs in its own process."""
    if jobs <= 1 or len(items) < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(function, items))


def total_bytes(results) -> int:
    """Bytes processed over all results (BigQuery); unknown counts as 0."""
    return sum(r.bytes_processed or 0 for r in results)


@dataclass(frozen=True)
class DuckDBTables:
    """Tables of a DuckDB file, read in a worker: every table's name, the frames asked for, and why others failed."""

    names: tuple[str, ...]
    frames: dict
    errors: dict


def read_duckdb_tables(path: Path, tables: list[str] | None, config: ExecConfig) -> DuckDBTables:
    """Read `tables` (all when None) of the DuckDB file at `path` through the opener, in a killable worker
    under `config.timeout_s`; InstanceError(timeout / exec_error / no_database) when it cannot."""
    import pickle
    import shutil
    import uuid

    from evaluators.execution import worker

    folder = Path(config.output_dir).resolve() / "duckdb_tables" / uuid.uuid4().hex
    try:
        request = Request("duckdb", "", str(folder), _checked_file(path, folder), config.settings("duckdb"), {}, "csv")
        event = worker.execute(request, "read_tables", tables=tables)
        if event.get("reason") != "ok":
            raise InstanceError(event.get("reason", "exec_error"), event.get("detail", ""))
        frames = {}
        for table, file in event["files"].items():
            with open(file, "rb") as handle:  # written by our own worker a moment ago
                frames[table] = pickle.load(handle)
        return DuckDBTables(tuple(event["tables"]), frames, dict(event["errors"]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for empty in (folder.parent, folder.parent.parent):  # leave no work folder behind that nothing else made
            try:
                empty.rmdir()
            except OSError:
                break


def _checked_file(path: Path, folder: Path) -> str:
    """The name the worker opens for `path`.  A pinned answer (loading.paths) is the file already opened
    and checked: DuckDB resolves names itself, so it gets a hard link to that very file in the work folder
    (a copy read from the open file when the link cannot be made), never the submitted name again."""
    if not isinstance(path, PinnedPath):
        return str(Path(path).resolve())
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    checked = folder / f"answer{path.suffix}"
    try:
        os.link(os.fspath(path), checked, follow_symlinks=True)  # /proc/self/fd/N: the open file itself
    except OSError:  # another file system, or hard links refused
        shutil.copyfile(os.fspath(path), checked)
    return str(checked)


def duckdb_loader(config: ExecConfig | None = None):
    """The function `tables.read.TableReader` reads DuckDB files with: `loader(path, tables)`."""
    config = config or scratch_config()
    return lambda path, tables: read_duckdb_tables(path, tables, config)


_scratch: list[ExecConfig] = []


def scratch_config() -> ExecConfig:
    """An ExecConfig whose work folder is a private temporary folder, removed at exit (API use without --work-dir)."""
    if not _scratch:
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="spider-grade-"))
        atexit.register(shutil.rmtree, folder, True)
        _scratch.append(ExecConfig(output_dir=folder))
    return _scratch[0]


def default_executor(gold_dir: Path, output: Path | None = None, work_dir: Path | None = None) -> Executor:
    """The executor the CLI builds without execution flags: the work folder beside --output (else
    ./.grade-work), databases from GOLD/databases when it exists."""
    if work_dir is None:
        work_dir = Path(output).parent / f"{Path(output).stem}_exec" if output else Path(".grade-work")
    databases = Path(gold_dir) / "databases"
    return Executor(ExecConfig(output_dir=work_dir, db_dir=databases if databases.is_dir() else None))
