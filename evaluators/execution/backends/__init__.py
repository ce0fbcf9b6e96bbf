"""SQL backends by name.  A backend's module (and its driver) is imported only when it is asked for.

    get_backend("duckdb").run(request, notify)   # inside a worker process, see worker.py

`canonical_name` maps the gold's `type` ("Bigquery", "Snowflake", "DuckDB", "SQLite", "PostgreSQL", "MySQL", any case)
to a registry name.
"""

from __future__ import annotations

import functools
import importlib

# name -> (module, class); the module is imported lazily by get_backend.
REGISTRY = {
    "duckdb": ("duckdb_backend", "DuckDBBackend"),
    "sqlite": ("sqlite_backend", "SQLiteBackend"),
    "bigquery": ("bigquery_backend", "BigQueryBackend"),
    "snowflake": ("snowflake_backend", "SnowflakeBackend"),
    "postgres": ("postgres_backend", "PostgresBackend"),
    "mysql": ("mysql_backend", "MySQLBackend"),
    "cypher": ("cypher_backend", "CypherBackend"),  # FalkorDB, embedded (execution/graphs.py)
}
LOCAL = ("duckdb", "sqlite")  # engines whose database is a file under --db-dir
_ALIASES = {
    "sqlite3": "sqlite",
    "bq": "bigquery",
    "big query": "bigquery",
    "duck db": "duckdb",
    "postgresql": "postgres",
    "pg": "postgres",
    "mariadb": "mysql",
    "falkordb": "cypher",
}


def canonical_name(name: str | None) -> str | None:
    """The registry name for a gold `type` or a --backend value, or None if it names no backend."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    return key if key in REGISTRY else None


@functools.cache  # a worker asks for its backend once a query: importlib's lookup was 2 % of a small one
def backend_class(name: str):
    module_name, class_name = REGISTRY[name]
    module = importlib.import_module(f".{module_name}", __name__)
    return getattr(module, class_name)


def get_backend(name: str):
    return backend_class(name)()
