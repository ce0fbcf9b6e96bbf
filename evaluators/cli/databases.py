"""`grade`'s setup checks, before any answer runs: the databases the gold's SQL and Cypher specs name, looked
for where the run will look (`--db-dir`, else `GOLD/databases`) and, on PostgreSQL and MySQL, reached as an
answer reaches them.  None found is a setup mistake (exit 2, `loading/database_folder`), some missing a
problem said at the top; a run whose files could not be loaded says why later, as always."""

from __future__ import annotations

from pathlib import Path

from evaluators.errors import InstanceError, UsageError
from evaluators.loading.database_folder import SERVER_FAILURES, SERVER_OPTIONS, check_database_folder, server_hint
from evaluators.specs import Problem

LAYOUT = "{db}.duckdb, {db}.sqlite (or .db), {db}/{db}.sqlite or {db}.cypher"


def check_databases(loaded, executor, option: str) -> list[Problem]:
    """The problems to add to the report; UsageError when the gold's databases cannot be found at all."""
    if loaded is None:
        return []
    files, servers = _needed(loaded, executor)
    found = [_check_files(files, executor.config.db_dir, option)]
    found += [_check_server(backend, dbs, executor) for backend, dbs in sorted(servers.items())]
    return [p for p in found if p is not None]


def _needed(loaded, executor) -> tuple[dict[str, str], dict[str, set[str]]]:
    """({database file or graph name: backend}, {server backend: database names}) of the gold's SQL specs."""
    from evaluators.execution.backends import LOCAL
    from evaluators.matching import registry

    files: dict[str, str] = {}
    servers: dict[str, set[str]] = {}
    for gold in loaded.gold.records.values():
        if not any(registry.is_sql_func(s.func) or s.temporal for s in gold.specs):
            continue
        try:
            backend, db = executor.backend_for(gold)
        except InstanceError:
            continue  # the instance says so itself
        if backend in SERVER_OPTIONS:
            servers.setdefault(backend, set()).add(db or "")
        elif db is not None and (backend in LOCAL or _graph_name(backend, db)) and not Path(db).is_absolute():
            files.setdefault(db, backend)
    return files, servers


def _graph_name(backend: str, db: str) -> bool:
    """A graph the gold names by a valid name (a bad one is that instance's own `no_database`)."""
    if backend != "cypher":
        return False
    from evaluators.execution.graphs import check_graph_name

    try:
        check_graph_name(db)
    except InstanceError:
        return False
    return True


def _check_files(needed: dict[str, str], db_dir: Path | None, option: str) -> Problem | None:
    from evaluators.execution.executor import resolve_database

    if not needed:
        return None
    if db_dir is None:
        raise UsageError(
            f"the gold's SQL and Cypher instances name {len(needed)} database(s) ({', '.join(sorted(needed)[:5])}) "
            "but no --db-dir was given and the gold folder has no databases/ folder",
            hint="pass --db-dir, the folder of the database files",
        )

    def found(db: str) -> bool:
        if needed[db] == "cypher":
            from evaluators.execution.graphs import SCRIPT_SUFFIX

            return (Path(db_dir) / f"{db}{SCRIPT_SUFFIX}").is_file()
        try:
            return resolve_database(needed[db], db, db_dir) is not None
        except InstanceError:
            return False

    return check_database_folder(option, Path(db_dir), needed, found, LAYOUT)


def _check_server(backend: str, databases: set[str], executor) -> Problem | None:
    """One `SELECT 1` per database, run as an answer runs (on PostgreSQL as a role of its own): none reached is
    exit 2 (an unprepared role, a wrong DSN), some a problem.  The DSN itself is never printed."""
    from evaluators.errors import Location
    from evaluators.execution.executor import run_sql
    from evaluators.loading.database_folder import PREFIX

    probe = Path(executor.config.output_dir) / "setup_probe.csv"
    failed = {}
    for db in sorted(databases):
        result = run_sql(backend, db or None, "SELECT 1", executor.config, probe, collect="time")
        if not result.ok and result.reason in SERVER_FAILURES:
            failed[db] = result
    if not failed:
        return None
    option, first = SERVER_OPTIONS[backend], next(iter(failed.values()))
    if len(failed) == len(databases):
        raise UsageError(
            f"{option}: no answer can run on this server for any of the {len(databases)} database(s) the gold "
            f"names ({first.reason}): {first.detail}",
            hint=server_hint(backend, first.reason),
        )
    names = ", ".join(sorted(failed)[:5])
    return Problem(
        Location(option),
        f"{PREFIX}{len(failed)} of the {len(databases)} database(s) the gold names on this server cannot be "
        f"reached as an answer ({names}; {first.reason}: {first.detail}): their questions score 0",
    )
