"""A SQLite authorizer that lets a statement read and nothing else.

`mode=ro` already refuses writes to the file, but a refused write is an engine error that a
caller could mistake for any other; this guard names it, and it also refuses what `mode=ro`
lets through: `PRAGMA` assignments (`PRAGMA cache_size=0`, `PRAGMA query_only=0`), temporary
tables and indexes, `BEGIN`/`SAVEPOINT`, `ANALYZE`, `ATTACH`.  `UPDATE ... RETURNING` and
`DELETE ... RETURNING` are refused while they are prepared, before any row is touched.
"""

from __future__ import annotations

import sqlite3

WRITE_REFUSED = "write refused"  # the start of the error text, so callers can tell a write from other errors
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
# Pragmas that only read, whatever their argument is (a table or index name).
_READ_PRAGMAS_WITH_ARG = {
    "table_info",
    "table_xinfo",
    "index_info",
    "index_xinfo",
    "index_list",
    "foreign_key_list",
    "table_list",
}
# Pragmas that only read when they are given no argument (with one, most of them set something).
_READ_PRAGMAS = _READ_PRAGMAS_WITH_ARG | {
    "database_list",
    "collation_list",
    "function_list",
    "module_list",
    "pragma_list",
    "compile_options",
    "user_version",
    "schema_version",
    "application_id",
    "page_count",
    "page_size",
    "encoding",
    "freelist_count",
    "max_page_count",
    "foreign_keys",
    "case_sensitive_like",
    "data_version",
}


def read_only_authorizer(refused: list):
    """An authorizer for `Connection.set_authorizer`; each refused action is appended to `refused`."""

    def authorize(action: int, arg1, arg2, database, trigger) -> int:
        if action in _ALLOWED:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA and _pragma_reads(str(arg1 or "").lower(), arg2):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master" and trigger is None:
            # SQLite asks this while it reads the schema for a pragma table function (pragma_table_info('t'));
            # a real UPDATE of the schema needs writable_schema, refused above, on a file opened read-only.
            return sqlite3.SQLITE_OK
        refused.append(f"{_ACTION_NAMES.get(action, action)} {arg1 or ''}".strip())
        return sqlite3.SQLITE_DENY

    return authorize


def _pragma_reads(name: str, argument) -> bool:
    return name in _READ_PRAGMAS_WITH_ARG or (name in _READ_PRAGMAS and argument is None)


_ACTION_NAMES = {
    getattr(sqlite3, f"SQLITE_{n.upper()}"): n
    for n in (
        "create_index",
        "create_table",
        "create_temp_index",
        "create_temp_table",
        "create_temp_trigger",
        "create_temp_view",
        "create_trigger",
        "create_view",
        "delete",
        "drop_index",
        "drop_table",
        "drop_temp_index",
        "drop_temp_table",
        "drop_temp_trigger",
        "drop_temp_view",
        "drop_trigger",
        "drop_view",
        "insert",
        "pragma",
        "transaction",
        "update",
        "attach",
        "detach",
        "alter_table",
        "reindex",
        "analyze",
        "create_vtable",
        "drop_vtable",
        "savepoint",
    )
}
