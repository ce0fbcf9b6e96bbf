"""Fingerprints: the databases a run grades on are the ones the benchmark was scored on, or a hard error.

A run on databases that did not load fully scores low without a word (a table missing, rows cut short).
`take` reads each database's fingerprint (schema, row counts, an order-free checksum of every table's
rows: fingerprint_worker.py) in a worker; `write` keeps them in a JSON file; `verify` reads them again
where a run will grade and raises `FingerprintMismatch` (exit 2) naming each database and table that
differs.  Local databases (SQLite, DuckDB files) are named by their path under the database folder, so the
file checks a copy of the folder anywhere; server databases (PostgreSQL, MySQL/MariaDB, templates
included) by their name on the server the run's DSN reaches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluators.atomic import write_text
from evaluators.errors import EvalError, Location, UsageError
from evaluators.execution.backends.base import Request, credential_environment
from evaluators.execution.executor import ExecConfig
from evaluators.health.fingerprint_worker import ENGINES

FORMAT = "spider-grade fingerprint 1"
ACTION = "evaluators.health.fingerprint_worker:fingerprint"
LOCAL_SUFFIXES = {".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite", ".duckdb": "duckdb", ".ddb": "duckdb"}
SERVERS = ("postgres", "mysql")


class FingerprintMismatch(EvalError):
    """The databases are not the fingerprinted ones (exit 2): a setup error, never a score."""


@dataclass(frozen=True)
class Target:
    engine: str  # sqlite | duckdb | postgres | mysql
    name: str  # the path under the database folder, or the server's database name
    ref: str  # what the backend opens: the file's absolute path, or the database name


def local_targets(folder: Path, engine: str | None = None) -> list[Target]:
    """Every SQLite/DuckDB file under `folder` by its suffix (`.db` is SQLite unless `engine` says DuckDB)."""
    found = []
    for path in sorted(Path(folder).rglob("*")):
        kind = LOCAL_SUFFIXES.get(path.suffix.lower())
        if kind is None or not path.is_file():
            continue
        if engine is not None and path.suffix.lower() == ".db":
            kind = engine
        if engine is None or kind == engine:
            found.append(Target(kind, path.relative_to(folder).as_posix(), str(path.resolve())))
    return found


def server_targets(engine: str, names: list[str]) -> list[Target]:
    return [Target(engine, name, name) for name in names]


def take(targets: list[Target], config: ExecConfig) -> dict:
    """The fingerprint file's contents for `targets`; a database that cannot be read is a UsageError."""
    databases = {}
    for target in targets:
        databases[target.name] = {"engine": target.engine, "tables": _read(target, config)}
    return {"format": FORMAT, "databases": databases}


def _read(target: Target, config: ExecConfig) -> dict:
    from evaluators.execution import worker

    environment = {} if target.engine not in SERVERS else credential_environment()
    request = Request(target.engine, "", "", target.ref, config.settings(target.engine), environment, "inline", True)
    event = worker.execute(request, ACTION)
    if event.get("reason") != "ok":
        raise UsageError(
            f"cannot fingerprint {target.name} ({target.engine}): {event.get('reason')}: {event.get('detail')}"
        )
    return event["tables"]


def write(path: Path, contents: dict) -> None:
    write_text(path, json.dumps(contents, indent=1, sort_keys=True) + "\n")


def load(path: Path) -> dict:
    """A fingerprint file, checked: a broken one is a UsageError naming the file (and line)."""
    try:
        contents = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the fingerprint file: {exc.strerror}", Location(str(path))) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise UsageError(f"not a fingerprint file: {exc}", Location(str(path), line)) from None
    if not isinstance(contents, dict) or contents.get("format") != FORMAT:
        raise UsageError(f'not a fingerprint file (no "format": "{FORMAT}")', Location(str(path)))
    for name, entry in (contents.get("databases") or {}).items():
        if (
            not isinstance(entry, dict)
            or entry.get("engine") not in ENGINES
            or not isinstance(entry.get("tables"), dict)
        ):
            raise UsageError(
                f"database {name!r}: needs an engine of {', '.join(ENGINES)} and tables", Location(str(path))
            )
    return contents


def verify(path: Path, db_dir: Path | None, config: ExecConfig) -> int:
    """Check the databases of the fingerprint file at `path` where this run finds them (local files under
    `db_dir`, server databases through the run's DSN); the number checked, or FingerprintMismatch."""
    expected = load(path)["databases"]
    differences = []
    for name, entry in expected.items():
        engine = entry["engine"]
        if engine in SERVERS:
            target = Target(engine, name, name)
        else:
            file = Path(db_dir or ".") / name
            if not file.is_file():
                differences.append(f"{name}: database file missing under {db_dir}")
                continue
            target = Target(engine, name, str(file.resolve()))
        try:
            found = _read(target, config)
        except UsageError as exc:
            differences.append(exc.message)
            continue
        differences += [f"{name}: {words}" for words in compare(entry["tables"], found)]
    if differences:
        shown = "; ".join(differences[:20]) + (f"; and {len(differences) - 20} more" if len(differences) > 20 else "")
        raise FingerprintMismatch(
            f"the databases differ from the fingerprint {Path(path).name}: {shown}",
            hint="reload the databases (a partial load scores low without a word), or fingerprint them again",
        )
    return len(expected)


def compare(expected: dict, found: dict) -> list[str]:
    """In words, each table of one database that differs from its fingerprint."""
    words = [f"table {name} missing" for name in expected if name not in found]
    words += [f"table {name} not in the fingerprint" for name in found if name not in expected]
    for name in (n for n in expected if n in found):
        was, now = expected[name], found[name]
        if [list(c) for c in was.get("columns", [])] != [list(c) for c in now["columns"]]:
            words.append(f"table {name}: columns {_columns(was.get('columns', []))} now {_columns(now['columns'])}")
        elif was.get("rows") != now["rows"]:
            words.append(f"table {name}: {now['rows']:,} rows, fingerprint {was.get('rows'):,}")
        elif was.get("checksum") != now["checksum"]:
            words.append(f"table {name}: content differs (same {now['rows']:,} rows)")
    return words


def _columns(columns: list) -> str:
    return "(" + ", ".join(f"{c[0]} {c[1]}".strip() for c in columns) + ")"
