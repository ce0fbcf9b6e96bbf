"""Loading a SQLite database (a BIRD or Spider one) into a PostgreSQL or MySQL/MariaDB server, so the same
questions run on all three engines (`evaluate.py db load-sqlite`).

Column types follow what the SQLite file really stores, not its declared types (SQLite keeps text in
INTEGER columns and the like): a column whose values are all integers becomes BIGINT, all numbers
DOUBLE PRECISION, any text TEXT, blobs BYTEA/LONGBLOB.  Dates stay text, as SQLite holds them, so results
compare alike across the engines.  MySQL databases are created with a binary collation, so text compares
case-sensitively as in SQLite.  Keys and indexes are not copied; rows are.
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from evaluators.execution.backends.servers import url_parts
from evaluators.execution.opener import open_sqlite

BATCH = 1000


@dataclass(frozen=True)
class LoadResult:
    database: str
    tables: dict  # table -> rows

    def to_text(self) -> str:
        rows = sum(self.tables.values())
        return f"loaded {len(self.tables)} table(s), {rows:,} row(s) into database {self.database!r}\n"


def load_sqlite(
    sqlite_file: Path, engine: str, dsn: str, database: str | None = None, replace: bool = False
) -> LoadResult:
    name = database or Path(sqlite_file).stem
    with closing(open_sqlite(str(sqlite_file))) as source:
        tables = [
            r[0]
            for r in source.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        plans = {t: _column_types(source, t) for t in tables}
        loader = _Postgres(dsn) if engine == "postgres" else _MySQL(dsn)
        loader.create_database(name, replace)
        counts = {}
        with loader.connect(name) as target:
            for table, columns in plans.items():
                target.create_table(table, columns)
                counts[table] = target.copy_rows(source, table, [c for c, _ in columns])
    return LoadResult(name, counts)


def _column_types(source, table: str) -> list[tuple[str, str]]:
    quoted = _sqlite_name(table)
    columns = [row[1] for row in source.execute(f"PRAGMA table_info({quoted})")]
    out = []
    for column in columns:
        kinds = {r[0] for r in source.execute(f"SELECT DISTINCT typeof({_sqlite_name(column)}) FROM {quoted}")}
        kinds.discard("null")
        if kinds and kinds <= {"integer"}:
            out.append((column, "integer"))
        elif kinds and kinds <= {"integer", "real"}:
            out.append((column, "real"))
        elif kinds == {"blob"}:
            out.append((column, "blob"))
        else:
            out.append((column, "text"))
    return out


def _sqlite_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Postgres:
    TYPES = {"integer": "BIGINT", "real": "DOUBLE PRECISION", "text": "TEXT", "blob": "BYTEA"}

    def __init__(self, dsn: str):
        import psycopg

        self.psycopg, self.dsn = psycopg, dsn

    def create_database(self, name: str, replace: bool) -> None:
        with self.psycopg.connect(self.dsn, autocommit=True) as con:
            exists = con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if exists and replace:
                con.execute(f"DROP DATABASE {self.quote(name)}")
            if not exists or replace:
                con.execute(f"CREATE DATABASE {self.quote(name)} ENCODING 'UTF8' TEMPLATE template0")

    def connect(self, name: str):
        return _Target(self, self.psycopg.connect(self.dsn, dbname=name))

    @staticmethod
    def quote(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    placeholder = "%s"


class _MySQL:
    TYPES = {"integer": "BIGINT", "real": "DOUBLE", "text": "LONGTEXT", "blob": "LONGBLOB"}

    def __init__(self, dsn: str):
        import pymysql

        self.pymysql, self.parts = pymysql, url_parts(dsn)

    def _options(self) -> dict:
        keys = ("host", "port", "user", "password", "unix_socket")
        return {k: (int(v) if k == "port" else v) for k, v in self.parts.items() if k in keys}

    def create_database(self, name: str, replace: bool) -> None:
        con = self.pymysql.connect(autocommit=True, charset="utf8mb4", **self._options())
        try:
            cursor = con.cursor()
            if replace:
                cursor.execute(f"DROP DATABASE IF EXISTS {self.quote(name)}")
            cursor.execute(
                f"CREATE DATABASE IF NOT EXISTS {self.quote(name)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
            )
        finally:
            con.close()

    def connect(self, name: str):
        return _Target(self, self.pymysql.connect(database=name, charset="utf8mb4", **self._options()))

    @staticmethod
    def quote(name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    placeholder = "%s"


class _Target:
    def __init__(self, engine, con):
        self.engine, self.con = engine, con

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.con.commit()
        self.con.close()

    def create_table(self, table: str, columns: list[tuple[str, str]]) -> None:
        quote = self.engine.quote
        body = ", ".join(f"{quote(c)} {self.engine.TYPES[kind]}" for c, kind in columns)
        cursor = self.con.cursor()
        cursor.execute(f"DROP TABLE IF EXISTS {quote(table)}")
        cursor.execute(f"CREATE TABLE {quote(table)} ({body})")

    def copy_rows(self, source, table: str, columns: list[str]) -> int:
        quote = self.engine.quote
        names = ", ".join(quote(c) for c in columns)
        marks = ", ".join([self.engine.placeholder] * len(columns))
        insert = f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})"
        selected = ", ".join(_sqlite_name(c) for c in columns)
        rows = source.execute(f"SELECT {selected} FROM {_sqlite_name(table)}")
        cursor, count = self.con.cursor(), 0
        while batch := rows.fetchmany(BATCH):
            cursor.executemany(insert, batch)
            count += len(batch)
        return count
