"""One database's fingerprint, read inside a worker process (execution/worker.py runs it by name).

The connection is the one the engine's backend makes for a gold query (SQLite and DuckDB through
`execution/opener.py`, read-only; PostgreSQL and MySQL through their backends' `connect`, read-only
transactions), never one of our own.  For every base table: its columns and declared types, its row count,
and a checksum of its rows that does not depend on their order: each row's cells are written as
`type:value`, hashed (BLAKE2b, 128 bits) and the hashes summed modulo 2**128, so a missing, extra or changed
row changes the sum, and a table read in another order does not.  Rows are streamed in batches, never held.
"""

from __future__ import annotations

import hashlib

from evaluators.execution.backends import base, get_backend
from evaluators.execution.backends.base import QueryFailed, Request

BATCH_ROWS = 5000
_MODULUS = 1 << 128

# Each engine's catalog: (schema, table, column, type) of every base table's columns, in column order.
_COLUMNS_SQL = {
    "sqlite": (
        "SELECT '', m.name, p.name, p.type FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
        "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid"
    ),
    "duckdb": (
        "SELECT c.table_schema, c.table_name, c.column_name, c.data_type FROM information_schema.columns AS c "
        "JOIN information_schema.tables AS t USING (table_catalog, table_schema, table_name) "
        "WHERE t.table_type = 'BASE TABLE' AND c.table_catalog = current_database() "
        "ORDER BY c.table_schema, c.table_name, c.ordinal_position"
    ),
    "postgres": (
        "SELECT c.table_schema, c.table_name, c.column_name, c.data_type FROM information_schema.columns AS c "
        "JOIN information_schema.tables AS t USING (table_catalog, table_schema, table_name) "
        "WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema') "
        "ORDER BY c.table_schema, c.table_name, c.ordinal_position"
    ),
    "mysql": (
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE FROM information_schema.COLUMNS AS c "
        "JOIN information_schema.TABLES AS t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
        "WHERE t.TABLE_TYPE = 'BASE TABLE' AND c.TABLE_SCHEMA = DATABASE() "
        "ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION"
    ),
}
_DEFAULT_SCHEMA = {"sqlite": "", "duckdb": "main", "postgres": "public", "mysql": None}  # None: the database itself
ENGINES = tuple(_COLUMNS_SQL)


def fingerprint(request: Request, message: dict, notify) -> dict:
    """{"tables": {name: {"columns": [[name, type], ...], "rows": n, "checksum": hex}}} of the request's database."""
    if request.backend not in _COLUMNS_SQL:
        raise QueryFailed("no_database", f"no fingerprint for {request.backend} databases")
    con = _connect(request)
    try:
        notify({"event": "started"})
        tables = _catalog(con, request.backend)
        return {"tables": {name: _table(con, request.backend, key, columns) for name, (key, columns) in tables.items()}}
    except QueryFailed:
        raise
    except Exception as exc:  # the engine's own error, in its words (credentials redacted by the worker)
        raise QueryFailed("exec_error", base.first_line(exc)) from None
    finally:
        con.close()


def _connect(request: Request):
    if request.backend == "sqlite":
        from evaluators.execution.backends import sqlite_backend

        return sqlite_backend.connect(request)
    if request.backend == "duckdb":
        from evaluators.execution.backends import duckdb_backend

        return duckdb_backend.connect(base.import_driver("duckdb", "duckdb", "duckdb"), request)
    backend = get_backend(request.backend)
    driver = base.import_driver(*backend.driver)
    con = backend.connect(driver, request, {})
    backend.begin(driver, con, request)  # the read-only transaction and the server's own timeout
    return con


def _catalog(con, engine: str) -> dict[str, tuple[tuple[str, str], list[list[str]]]]:
    """name -> ((schema, table), [[column, type], ...]); the name is the table's, schema-qualified outside
    the engine's default schema."""
    cursor = con.cursor()
    cursor.execute(_COLUMNS_SQL[engine])
    found: dict = {}
    for schema, table, column, kind in cursor.fetchall():
        default = _DEFAULT_SCHEMA[engine]
        name = table if default is None or schema == default else f"{schema}.{table}"
        found.setdefault(name, ((schema, table), []))[1].append([str(column), str(kind or "").upper()])
    return found


def _table(con, engine: str, key: tuple[str, str], columns: list) -> dict:
    cursor = con.cursor(**({"name": "fingerprint"} if engine == "postgres" else {}))
    if engine == "mysql":
        import pymysql

        cursor = con.cursor(pymysql.cursors.SSCursor)
    cursor.execute(f"SELECT * FROM {_qualified(engine, key)}")
    count, total = 0, 0
    while batch := cursor.fetchmany(BATCH_ROWS):
        for row in batch:
            total = (total + row_hash(row)) % _MODULUS
        count += len(batch)
    cursor.close()
    return {"columns": columns, "rows": count, "checksum": f"{total:032x}"}


def _qualified(engine: str, key: tuple[str, str]) -> str:
    schema, table = key
    if engine == "mysql":
        return "`" + table.replace("`", "``") + "`"
    quoted = '"' + table.replace('"', '""') + '"'
    return quoted if not schema else '"' + schema.replace('"', '""') + '".' + quoted


def row_hash(row) -> int:
    """A row's 128-bit hash: each cell as `type:value` (so 1 and '1' differ), NULL apart from every text."""
    text = "\x1f".join("\x00" if cell is None else f"{type(cell).__name__}:{_cell(cell)}" for cell in row)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big")


def _cell(cell) -> str:
    if isinstance(cell, bytes | bytearray | memoryview):
        return bytes(cell).hex()
    if isinstance(cell, float):
        return repr(cell)
    return str(cell)
