"""Structural checks of one gold spec: its files exist, and its indices fit them.

Each check returns messages (empty when fine).  Files are read through a
`TableReader`, the graders' own, and the same reader is then used by the
self-check, so each gold file is read once.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.loading.checks import read_sql_file
from evaluators.loading.paths import answer_path
from evaluators.tables.read import TableReader

TEMPORAL_SQL = "gold.sql"  # a temporal spec's gold is the result of running this file


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def gold_paths(gold_dir: Path, instance_id: str, names: list, found: list) -> dict:
    """name -> path for the gold files that exist inside the instance folder; the others become messages."""
    paths = {}
    for name in names:
        try:
            paths[name] = answer_path(gold_dir, instance_id, name)
        except InstanceError as exc:
            detail = exc.detail.replace("file not found", "the spec names a file that does not exist")
            found.append(detail)
    return paths


def is_flat(cols) -> bool:
    return isinstance(cols, list) and bool(cols) and all(isinstance(c, int) for c in cols)


def table_match_cols(golds: list, cols, found: list) -> list:
    """The column list that applies to each gold file, after checking there is one per file."""
    n = len(golds)
    if cols in ([], None, [[]], [None]):
        return [[] for _ in golds]
    if isinstance(cols, int):
        return [[cols] for _ in golds]
    if is_flat(cols):
        if n > 1:
            found.append(
                f"a flat condition_cols list with {n} gold files is read differently by the presets "
                "(spider2 pairs the k-th index with the k-th file, spider2-lite and strict repeat it "
                "for every file); write one list per file"
            )
        return [cols for _ in golds]
    if len(cols) != n:
        found.append(
            f"{n} gold file(s) but {len(cols)} condition_cols lists: write one list per gold file, "
            f"in the order of 'gold'"
        )
    return [c or [] for c in cols] + [None] * max(0, n - len(cols))


def column_range(name: str, cols: list | None, width: int | None, found: list) -> None:
    if width is None:
        return  # unreadable: already reported
    bad = [i for i in cols or [] if not -width <= i < width]
    if bad:
        found.append(
            f"condition_cols {bad} name column(s) that {name} lacks: it has {width} column(s), "
            f"numbered 0 to {width - 1}"
        )


def check_table_match(params: dict, folder_files: dict, reader: TableReader, found: list) -> None:
    golds = as_list(params["gold"])
    per_file = table_match_cols(golds, params["condition_cols"], found)
    for name, cols in zip(golds, per_file, strict=False):
        if name in folder_files:
            column_range(name, cols, csv_width(reader, folder_files[name], found), found)


def check_tables_match(params: dict, folder_files: dict, reader: TableReader, found: list) -> None:
    golds = params["gold"]
    cols, orders = params["condition_cols"], params["ignore_orders"]
    for key, value in (("condition_cols", cols), ("ignore_orders", orders)):
        if value is not None and len(value) != len(golds):
            found.append(f"{len(golds)} gold file(s) but {len(value)} {key} entries: write one per gold file")
    for k, name in enumerate(golds):
        if name in folder_files and cols is not None and k < len(cols):
            column_range(name, cols[k], csv_width(reader, folder_files[name], found), found)


def check_duckdb_match(params: dict, folder_files: dict, reader: TableReader, found: list) -> None:
    path = folder_files.get(params["gold"])
    if path is None:
        return
    try:
        tables = reader.duckdb_tables(path)
    except InstanceError as exc:
        found.append(exc.detail)
        return
    tabs = params["condition_tabs"] or tables
    lacking = [t for t in tabs if t not in tables]
    if lacking:
        found.append(f"condition_tabs {lacking} are not tables of {params['gold']} (it has {sorted(tables)})")
    cols, orders = params["condition_cols"], params["ignore_orders"]
    for key, value in (("condition_cols", cols), ("ignore_orders", orders)):
        if value is not None and len(value) != len(tabs):
            found.append(f"{len(tabs)} table(s) but {len(value)} {key} entries: write one per table")
    for k, table in enumerate(tabs):
        if table in tables and cols is not None and k < len(cols):
            width = reader.duckdb_table(path, table).shape[1]
            column_range(f"table {table!r}", cols[k], width, found)


def csv_width(reader: TableReader, path: Path, found: list) -> int | None:
    try:
        return reader.csv(path, low_memory=False).shape[1]
    except InstanceError as exc:
        found.append(exc.detail)
        return None


def check_temporal(folder: Path, max_bytes: int, found: list) -> None:
    path = folder / TEMPORAL_SQL
    if not path.is_file():
        found.append(f"the spec is temporal but {folder.name}/{TEMPORAL_SQL} does not exist")
        return
    try:
        read_sql_file(path, max_bytes, "unreadable_gold")
    except InstanceError as exc:
        found.append(exc.detail)


CHECKS = {"csv": check_table_match, "csvs": check_tables_match, "duckdb": check_duckdb_match}  # by gold_tables
