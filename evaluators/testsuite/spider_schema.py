"""Spider 1's schemas as the official scorer reads them.

- `tables.json` (the official format: a list of entries with `db_id`, `table_names_original`,
  `column_names_original`, `foreign_keys`) gives only the foreign-key map of each database: every column of
  a set linked by foreign keys maps to the lowest-numbered column of the set (`build_foreign_key_map`).
- the tables and columns the parser resolves names against come from the database file itself
  (`<db>/<db_id>/<db_id>.sqlite`, as `get_schema` reads it), opened read-only.
"""

from __future__ import annotations

import json
from pathlib import Path

from evaluators.errors import Location, SpecError
from evaluators.execution.opener import open_sqlite
from evaluators.testsuite.spider_parse import SchemaIds


def _column_ids(entry: dict) -> list[str]:
    tables = entry["table_names_original"]
    return [f"__{tables[t].lower()}.{c.lower()}__" if t >= 0 else "__all__" for t, c in entry["column_names_original"]]


def foreign_key_map(entry: dict) -> dict[str, str]:
    columns = _column_ids(entry)
    linked: list[set[int]] = []
    for first, second in entry["foreign_keys"]:
        group = next((g for g in linked if first in g or second in g), None)  # the first set either is in
        if group is None:
            group = set()
            linked.append(group)
        group |= {first, second}
    return {columns[k]: columns[min(group)] for group in linked for k in group}


def read_tables(path: Path) -> dict[str, dict[str, str]]:
    """db_id -> foreign-key map, from an official tables.json; SpecError (exit 2) for a file not in that form."""
    where = Location(str(path))
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecError(f"cannot read tables.json: {error}", where) from None
    if not isinstance(entries, list):
        raise SpecError("tables.json is not a list of database entries", where)
    maps = {}
    for number, entry in enumerate(entries):
        try:
            maps[entry["db_id"]] = foreign_key_map(entry)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise SpecError(
                f"entry {number} is not a Spider schema (db_id, table_names_original, column_names_original, "
                f"foreign_keys): {type(error).__name__} {error}",
                where,
            ) from None
    return maps


def require_described(maps: dict, db_ids: dict[str, Location], tables_file: Path) -> None:
    """Every gold database must be in tables.json (the scorer stops with a KeyError on the first that is not)."""
    missing = [(db, where) for db, where in db_ids.items() if db not in maps]
    if missing:
        names = ", ".join(f"{db} ({where})" for db, where in missing[:10])
        raise SpecError(
            f"{len(missing)} gold database(s) not described in {tables_file}: {names}",
            hint="pass the tables.json of this benchmark (--table)",
        )


def database_schema(database: Path) -> SchemaIds:
    """The tables and columns of a SQLite file, lower-cased, as the scorer's `get_schema` lists them."""
    con = open_sqlite(str(database))
    try:
        tables = [str(r[0]).lower() for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return SchemaIds({t: [str(r[1]).lower() for r in con.execute(f"PRAGMA table_info({t})")] for t in tables})
    finally:
        con.close()
