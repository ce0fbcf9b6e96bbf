import sqlite3

import duckdb
import pytest

from evaluators.execution.probes.plan_cost import (
    duckdb_cost_from_explain,
    plan_cost,
    sqlite_cost_from_details,
)
from evaluators.execution.probes.validity import check_validity
from evaluators.metrics.validity import (
    REASONS,
    ValidityResult,
    summarize_validity,
    valid_at_k,
)

BIG_ROWS = 5000


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sqlite") / "shop.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE big(id INTEGER, grp INTEGER, label TEXT);"
        "CREATE TABLE small(id INTEGER PRIMARY KEY, name TEXT);"
        "INSERT INTO small VALUES (1,'a'),(2,'b'),(3,'c');"
    )
    con.executemany("INSERT INTO big VALUES (?,?,?)", [(i, i % 10, f"l{i}") for i in range(BIG_ROWS)])
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="module")
def duckdb_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("duckdb") / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        f"CREATE TABLE big AS SELECT range AS id, range % 10 AS grp, 'l' || range AS label FROM range({BIG_ROWS})"
    )
    con.execute("CREATE TABLE small(id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO small VALUES (1,'a'),(2,'b'),(3,'c')")
    con.close()
    return path


VALIDITY_CASES = [
    ("SELECT id, name FROM small", "valid"),
    ("SELECT b.id FROM big AS b JOIN small AS s ON b.id = s.id WHERE s.name = 'a'", "valid"),
    ("SELECT grp, COUNT(*) FROM big GROUP BY grp ORDER BY grp;", "valid"),
    ("-- comment first\nSELECT name FROM small", "valid"),
    ("SELEC id FROM small", "syntax_error"),
    ("SELECT id FROM small WHERE", "syntax_error"),
    ("SELECT 'unterminated FROM small", "syntax_error"),
    ("", "syntax_error"),
    ("   ", "syntax_error"),
    ("SELECT * FROM no_such_table", "unknown_table"),
    ("SELECT * FROM nope.small", "unknown_table"),
    ("SELECT missing FROM small", "unknown_column"),
    ("SELECT s.missing FROM small AS s", "unknown_column"),
    ("SELECT id FROM small WHERE missing = 1", "unknown_column"),
    ("SELECT id FROM big, small", "invalid"),  # ambiguous column
    ("SELECT no_such_function(id) FROM small", "invalid"),
    ("SELECT 1; SELECT 2", "invalid"),  # one statement per attempt
    ("SELECT missing FROM small WHERE name = 'syntax error'", "unknown_column"),
    ("SELECT 'no such table' AS x, missing FROM small", "unknown_column"),
]


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
@pytest.mark.parametrize(("sql", "reason"), VALIDITY_CASES)
def test_validity_by_engine(engine, sql, reason, sqlite_db, duckdb_db):
    db = sqlite_db if engine == "sqlite" else duckdb_db
    result = check_validity(sql, db, engine)
    assert result.reason == reason, result.message
    assert result.valid is (reason == "valid")
    assert result.reason in REASONS
    if reason not in ("valid",) and sql.strip():
        assert result.message  # the engine's message is kept for the report


def test_sqlite_double_quoted_unknown_column_is_a_string_literal(sqlite_db):
    # SQLite's documented misfeature, kept: the engine decides validity.
    assert check_validity('SELECT "missing" FROM small', sqlite_db, "sqlite").valid is True
    assert check_validity('SELECT "missing" FROM small', sqlite_db, "sqlite3").valid is True


def test_sqlite_validity_compiles_but_never_executes(sqlite_db):
    result = check_validity("DROP TABLE small", sqlite_db, "sqlite")
    assert result.valid is True  # EXPLAIN compiles the statement only
    con = sqlite3.connect(sqlite_db)
    assert con.execute("SELECT COUNT(*) FROM small").fetchone() == (3,)
    con.close()


def test_duckdb_read_only_refuses_writes(duckdb_db):
    result = check_validity("INSERT INTO small VALUES (9, 'z')", duckdb_db, "duckdb")
    assert (result.valid, result.reason) == (False, "invalid")
    con = duckdb.connect(str(duckdb_db), read_only=True)
    assert con.execute("SELECT COUNT(*) FROM small").fetchone() == (3,)
    con.close()


def test_not_checked_is_kept_apart_from_invalid(tmp_path, sqlite_db):
    missing = check_validity("SELECT 1", tmp_path / "missing.sqlite", "sqlite")
    assert (missing.valid, missing.reason) == (None, "not_checked")
    unsupported = check_validity("SELECT 1", sqlite_db, "bigquery")
    assert (unsupported.valid, unsupported.reason) == (None, "not_checked")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database file" * 100)
    corrupt = check_validity("SELECT 1", garbage, "sqlite")
    assert (corrupt.valid, corrupt.reason) == (None, "not_checked")
    corrupt_duck = check_validity("SELECT 1", garbage, "duckdb")
    assert (corrupt_duck.valid, corrupt_duck.reason) == (None, "not_checked")


def test_sqlite_path_with_uri_special_characters(tmp_path):
    folder = tmp_path / "my dir #1?x=%20"
    folder.mkdir()
    path = folder / "db.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t(a INTEGER)")
    con.close()
    assert check_validity("SELECT a FROM t", path, "sqlite").valid is True
    assert check_validity("SELECT b FROM t", path, "sqlite").reason == "unknown_column"


V = ValidityResult(True, "valid")
X = ValidityResult(False, "unknown_column", "no such column: c")
N = ValidityResult(None, "not_checked", "locked")


@pytest.mark.parametrize(
    ("attempts", "k", "expected"),
    [
        ([V], 1, True),
        ([X, V], 1, False),
        ([X, V], 2, True),
        ([X, X, X], 3, False),
        ([N, X], 2, None),  # nothing valid, one unknown: undetermined
        ([N, V], 2, True),  # a valid attempt decides regardless
        ([X, N, V], 2, None),
    ],
)
def test_valid_at_k(attempts, k, expected):
    assert valid_at_k(attempts, k) is expected


@pytest.mark.parametrize("k", [0, 3])
def test_valid_at_k_out_of_range(k):
    with pytest.raises(ValueError):
        valid_at_k([V, X], k)


def test_summarize_validity():
    summary = summarize_validity({"a": [V, V], "b": [X, V], "c": [X, X], "d": [N, X], "e": [X, X, V]})
    assert summary.n_instances == 5
    assert set(summary.valid_at_k) == {1, 2}  # "e" has 3 attempts, others 2
    assert summary.valid_at_1 == pytest.approx(1 / 4)  # d undetermined, left out
    assert summary.valid_at_k[2] == pytest.approx(2 / 4)
    assert summary.n_undetermined_at_k == {1: 1, 2: 1}
    assert summary.first_attempt_reasons == {"not_checked": 1, "unknown_column": 3, "valid": 1}
    assert summary.to_dict()["valid_at_1"] == summary.valid_at_1
    with pytest.raises(ValueError):
        summarize_validity({"a": []})


# --- plan cost ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("details", "cost"),
    [
        (["SCAN big"], 100),
        (["SCAN TABLE big"], 100),  # SQLite < 3.36 wording
        (["SEARCH small USING INTEGER PRIMARY KEY (rowid=?)"], 0),
        (["SCAN big", "USE TEMP B-TREE FOR ORDER BY"], 150),
        (
            ["SCAN b", "SEARCH s USING INDEX i (id=?)", "USE TEMP B-TREE FOR GROUP BY", "USE TEMP B-TREE FOR DISTINCT"],
            200,
        ),
        (["SCAN CONSTANT ROW"], 0),
        (["CO-ROUTINE sub", "SCAN t", "SCAN sub"], 200),
        ([], 0),
    ],
)
def test_sqlite_cost_rules(details, cost):
    assert sqlite_cost_from_details(details) == cost


@pytest.mark.parametrize(
    ("text", "cost"),
    [
        ("│        ~10,000 rows       │\n│           ~1 row          │", 10_001),
        ("│   EC: 250   │\n│  EC: 5 │", 255),  # older DuckDB rendering
        ("│ ~0 rows │ ~1,234,567 rows │", 1_234_567),
        ("│ ORDER_BY │ t.a ASC │", 0),
    ],
)
def test_duckdb_cost_parsing(text, cost):
    assert duckdb_cost_from_explain(text) == cost


def test_sqlite_full_scan_of_big_costs_more_than_point_lookup_of_small(sqlite_db):
    scan = plan_cost("SELECT * FROM big", sqlite_db, "sqlite")
    lookup = plan_cost("SELECT name FROM small WHERE id = 2", sqlite_db, "sqlite")
    sorted_scan = plan_cost("SELECT * FROM big ORDER BY label", sqlite_db, "sqlite")
    assert (scan.cost, lookup.cost, sorted_scan.cost) == (100, 0, 150)
    assert scan.plan and scan.plan[0].startswith("SCAN")
    assert lookup.plan[0].startswith("SEARCH")


def test_duckdb_full_scan_of_big_costs_more_than_point_lookup_of_small(duckdb_db):
    scan = plan_cost("SELECT * FROM big", duckdb_db, "duckdb")
    lookup = plan_cost("SELECT name FROM small WHERE id = 2", duckdb_db, "duckdb")
    assert scan.cost >= BIG_ROWS  # the scan's estimate is the table size
    assert 0 < lookup.cost <= 3
    assert scan.cost > lookup.cost
    assert any("SEQ_SCAN" in line.upper().replace(" ", "_") for line in scan.plan)  # DuckDB 2 writes "Seq Scan"


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_plan_cost_reports_engine_errors(engine, sqlite_db, duckdb_db):
    db = sqlite_db if engine == "sqlite" else duckdb_db
    bad = plan_cost("SELECT missing FROM small", db, engine)
    assert bad.cost is None and "missing" in bad.error
    empty = plan_cost("  ", db, engine)
    assert empty.cost is None and empty.error == "empty SQL"


def test_plan_cost_rejects_unsupported_engine(sqlite_db):
    with pytest.raises(ValueError):
        plan_cost("SELECT 1", sqlite_db, "snowflake")
