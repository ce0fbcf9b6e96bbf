"""`doctor fingerprint` and `--fingerprint FILE`: a missing table, a missing row and a changed value are caught
on every engine (SQLite and DuckDB files, real PostgreSQL and MariaDB servers: tests/dbservers.py)."""

from __future__ import annotations

import itertools
import json
import sqlite3

import pytest
from helpers_io import run_cli

ROWS = [(i, f"name {i}", i * 1.5) for i in range(50)]
MUTATIONS = {
    "missing table": ("DROP TABLE extra", "table extra missing"),
    "missing row": ("DELETE FROM people WHERE id = 7", "table people: 49 rows, fingerprint 50"),
    "changed value": (
        "UPDATE people SET name = 'changed' WHERE id = 3",
        "table people: content differs (same 50 rows)",
    ),
}
_names = itertools.count()


class LocalFile:
    def __init__(self, engine, folder):
        self.engine, self.folder = engine, folder
        suffix = ".sqlite" if engine == "sqlite" else ".duckdb"
        self.path = folder / "shop" / f"shop{suffix}"
        self.path.parent.mkdir(parents=True)
        self.run("CREATE TABLE people (id INTEGER, name TEXT, score DOUBLE)", "CREATE TABLE extra (k TEXT)")
        self.run(
            *(f"INSERT INTO people VALUES ({i}, '{n}', {s})" for i, n, s in ROWS), "INSERT INTO extra VALUES ('x')"
        )

    def run(self, *statements):
        if self.engine == "sqlite":
            con = sqlite3.connect(self.path)
        else:
            duckdb = pytest.importorskip("duckdb")
            con = duckdb.connect(str(self.path))
        for statement in statements:
            con.execute(statement)
        con.commit()
        con.close()

    def args(self):
        return ["--db-dir", self.folder, "--engine", self.engine]


class ServerDatabase:
    def __init__(self, engine, server):
        self.engine, self.server = engine, server
        self.name = f"fp_{engine}_{next(_names)}"
        if engine == "postgres":
            with server.admin() as con:
                con.execute(f"CREATE DATABASE {self.name}")
        else:
            self._maria(f"CREATE DATABASE {self.name}", f"GRANT SELECT ON {self.name}.* TO 'grader'@'%'")
        self.run("CREATE TABLE people (id INTEGER, name TEXT, score DOUBLE PRECISION)", "CREATE TABLE extra (k TEXT)")
        self.run(
            *(f"INSERT INTO people VALUES ({i}, '{n}', {s})" for i, n, s in ROWS), "INSERT INTO extra VALUES ('x')"
        )
        if engine == "postgres":
            self.run("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")

    def _maria(self, *statements, database=None):
        con = self.server.admin(database)
        try:
            for statement in statements:
                con.cursor().execute(statement)
        finally:
            con.close()

    def run(self, *statements):
        if self.engine == "mysql":
            return self._maria(*statements, database=self.name)
        with self.server.admin(self.name) as con:
            for statement in statements:
                con.execute(statement)

    def args(self):
        option = "--postgres-dsn" if self.engine == "postgres" else "--mysql-dsn"
        return ["--engine", self.engine, "--database", self.name, option, self.server.dsn]


@pytest.fixture(params=["sqlite", "duckdb", "postgres", "mysql"])
def database(request, tmp_path):
    if request.param in ("sqlite", "duckdb"):
        return LocalFile(request.param, tmp_path / "dbs")
    fixture = "postgres_server" if request.param == "postgres" else "mariadb_server"
    return ServerDatabase(request.param, request.getfixturevalue(fixture))


def _take(database, tmp_path):
    target = tmp_path / "fp.json"
    result = run_cli("doctor", "fingerprint", *database.args(), "--output", target)
    assert result.exit_code == 0, result.output
    return target


def _check(database, fingerprint):
    args = [a for a in database.args() if a not in ("--engine", database.engine)]
    if "--database" in args:  # the file names the databases: a check takes the DSN only
        at = args.index("--database")
        del args[at : at + 2]
    return run_cli("doctor", "fingerprint", "--check", fingerprint, *args)


def test_a_fingerprint_holds_schema_rows_and_checksum(database, tmp_path):
    contents = json.loads(_take(database, tmp_path).read_text())
    (entry,) = contents["databases"].values()
    assert entry["engine"] == database.engine
    assert sorted(entry["tables"]) == ["extra", "people"]
    people = entry["tables"]["people"]
    assert [c[0] for c in people["columns"]] == ["id", "name", "score"]
    assert people["rows"] == 50 and len(people["checksum"]) == 32


def test_the_same_databases_pass(database, tmp_path):
    result = _check(database, _take(database, tmp_path))
    assert result.exit_code == 0, result.output
    assert "1 database(s) match fp.json" in result.output


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_difference_stops_with_exit_2_naming_the_table(database, mutation, tmp_path):
    fingerprint = _take(database, tmp_path)
    statement, words = MUTATIONS[mutation]
    database.run(statement)
    result = _check(database, fingerprint)
    assert result.exit_code == 2, result.output
    assert words in result.output and "differ from the fingerprint fp.json" in result.output


def test_rows_in_another_order_are_the_same_content(tmp_path):
    database = LocalFile("sqlite", tmp_path / "dbs")
    fingerprint = _take(database, tmp_path)
    database.run(
        "CREATE TABLE turned (id INTEGER, name TEXT, score DOUBLE)",
        "INSERT INTO turned SELECT * FROM people ORDER BY id DESC",
        "DROP TABLE people",
        "ALTER TABLE turned RENAME TO people",
    )
    assert _check(database, fingerprint).exit_code == 0


def test_a_changed_column_type_is_named(tmp_path):
    database = LocalFile("sqlite", tmp_path / "dbs")
    fingerprint = _take(database, tmp_path)
    database.run(
        "CREATE TABLE people2 AS SELECT * FROM people", "DROP TABLE people", "ALTER TABLE people2 RENAME TO people"
    )
    result = _check(database, fingerprint)
    assert result.exit_code == 2
    assert (
        "table people: columns (id INTEGER, name TEXT, score DOUBLE) now (id INT, name TEXT, score REAL)"
        in result.output
    )


@pytest.mark.parametrize("command", ["test-suite", "bird"])
def test_a_run_given_a_fingerprint_checks_it_before_grading(command, tmp_path):
    database = LocalFile("sqlite", tmp_path / "dbs")
    fingerprint = _take(database, tmp_path)
    (tmp_path / "gold.sql").write_text("SELECT count(*) FROM people\tshop\n")
    if command == "test-suite":
        (tmp_path / "pred.sql").write_text("SELECT count(*) FROM people\n")
        args = ["test-suite", "--gold", tmp_path / "gold.sql", "--pred", tmp_path / "pred.sql", "--db", database.folder]
    else:
        (tmp_path / "pred.json").write_text(json.dumps({"0": "SELECT count(*) FROM people\t----- bird -----\tshop"}))
        args = ["bird", "--predicted_sql_path", tmp_path / "pred.json", "--ground_truth_path", tmp_path / "gold.sql"]
        args += ["--db_root_path", database.folder]
    args += ["--work-dir", tmp_path / "work", "--fingerprint", fingerprint]
    passed = run_cli(*args)
    assert passed.exit_code == 0 and "1 database(s) match fp.json" in passed.output, passed.output
    database.run("DELETE FROM people WHERE id = 7")
    stopped = run_cli(*args)
    assert stopped.exit_code == 2, stopped.output
    assert "shop/shop.sqlite: table people: 49 rows, fingerprint 50" in stopped.output
    assert stopped.output.startswith("error: the databases differ")  # nothing graded, nothing printed before
