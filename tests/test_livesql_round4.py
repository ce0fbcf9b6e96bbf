"""Issue L (round 4), the SQLite and statement-text classes of `evaluate.py livesql`: a database name is a
name inside --db_root; the disk limit covers everything the instance writes (the WAL too); the PostgreSQL
text rules look at statements only (right answers that mention such words in strings, comments or column
names are run) and read 1 MB in one linear pass (bench/loaders_scaling.py measures the ratio)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_livesql import _grade, _one, generated  # noqa: F401  (the module's generated databases)

from evaluators.livesql.helpers import remove_comments
from evaluators.livesql.security import refused

OK_TEST = "def test_case(pred_sqls, sol_sqls, db_path, conn):\n    pass\n"


def _secret_databases(tmp_path: Path) -> Path:
    """SQLite files outside --db_root (`<tmp>/root`) holding what a submission must never see in a report:
    `<tmp>/secret_template.sqlite`, which the old join reached from `<tmp>/secret` and `../secret`, and
    `<tmp>/secret/secret_template.sqlite`, which a link in the root reaches."""
    (tmp_path / "secret").mkdir()
    for path in (tmp_path / "secret_template.sqlite", tmp_path / "secret" / "secret_template.sqlite"):
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE creds (password TEXT)")
            con.execute("INSERT INTO creds VALUES ('hunter2-secret')")
    return tmp_path / "secret"


@pytest.mark.parametrize("how", ["absolute", "dotdot", "link"])
def test_a_database_name_is_a_name_inside_the_root(generated, tmp_path, how):  # noqa: F811
    folder = _secret_databases(tmp_path)
    root = tmp_path / "root"
    shutil.copytree(generated["root"], root)
    name = {"absolute": str(folder), "dotdot": "../secret", "link": "secret"}[how]
    if how == "link":
        (root / "secret").symlink_to(folder)  # a link in the root that leads out of it
    query = ["SELECT * FROM creds"]
    path = _one(tmp_path, generated, selected_database=name, sol_sql=query, pred_sqls=query, test_cases=[])
    report = _grade(generated, "livesql", tmp_path / "work", path, db_root=root)
    instance = report.instances[0]
    assert instance.reason == "unsafe_path", (instance.reason, instance.detail)
    assert "hunter2" not in repr(report)
    good = _one(tmp_path, generated)  # the operator's own databases still grade
    assert _grade(generated, "livesql", tmp_path / "work", good, db_root=root).instances[0].score == 1


WAL_FILL = [
    "PRAGMA wal_autocheckpoint = 0",
    "CREATE TABLE blob1 (b BLOB)",
    "INSERT INTO blob1 VALUES (randomblob(1000000))",
    *["UPDATE blob1 SET b = randomblob(1000000)"] * 40,
]
SETTINGS = [
    "journal_mode = DELETE",
    "journal_mode = OFF",
    "journal_size_limit = -1",
    "cache_spill = 0",
    "temp_store = FILE",
]


@pytest.mark.parametrize(
    "statements",
    [
        WAL_FILL,  # the payload: no checkpoint, the WAL grows by the row each time
        ["CREATE TABLE big AS SELECT randomblob(1500000) AS b UNION ALL SELECT randomblob(1500000)"],
        *[[f"PRAGMA {setting}", *WAL_FILL[1:]] for setting in SETTINGS],
    ],
    ids=["no-checkpoint", "one-transaction", *SETTINGS],
)
def test_the_disk_limit_covers_everything_the_instance_writes(generated, tmp_path, statements):  # noqa: F811
    path = _one(tmp_path, generated, category="Management", pred_sqls=statements, test_cases=[OK_TEST])
    work = tmp_path / "work"
    report = _grade(generated, "livesql", work, path, disk_limit_mb=5)
    instance = report.instances[0]
    assert instance.score == 0, instance.detail
    assert instance.reason == "exec_error", (instance.reason, instance.detail)
    assert not any(work.rglob("*.sqlite*"))


def test_a_prediction_within_the_disk_limit_still_passes(generated, tmp_path):  # noqa: F811
    """The limit is on what is on disk, not on how often it is rewritten: checkpoints reuse the WAL."""
    path = _one(tmp_path, generated, category="Management", pred_sqls=WAL_FILL[1:], test_cases=[OK_TEST])
    report = _grade(generated, "livesql", tmp_path / "work", path, disk_limit_mb=5)
    assert report.instances[0].score == 1, report.instances[0].detail


RIGHT_ANSWERS = [
    "SELECT 'CREATE USER' AS advice, count(*) FROM orders",
    "INSERT INTO notes VALUES ('never DROP DATABASE shop')",
    "SELECT count(*) FROM orders -- no dblink needed, one database",
    "ALTER TABLE staff ALTER role TYPE varchar(40)",
    "UPDATE staff SET role = 'admin' WHERE id = 1",
]


@pytest.mark.parametrize("sql", RIGHT_ANSWERS)
def test_the_text_rules_do_not_refuse_right_answers(sql):
    assert refused([sql], "postgres") is None


@pytest.mark.parametrize(
    "sql",
    [
        "DO $$ BEGIN CREATE ROLE intruder; END $$",
        "CREATE FUNCTION f() RETURNS text AS $b$ SELECT pg_read_file('/etc/passwd') $b$ LANGUAGE sql",
        "SELECT \"pg_read_file\"('/etc/passwd')",
        "SELECT pg_catalog.pg_ls_dir('.')",
        "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(a int)",
        "copy (SELECT 1) to program 'id'",
        "SELECT 1; /* x */ DROP ROLE IF EXISTS grader",
        "SET SESSION AUTHORIZATION postgres",
        "SET LOCAL ROLE postgres",
        "CREATE OR REPLACE TRUSTED PROCEDURAL LANGUAGE plperlu",
        "LOAD 'auto_explain'",
        "LOAD $$auto_explain$$",
        "COPY orders TO $x$/tmp/orders.csv$x$",
        # with standard_conforming_strings off PostgreSQL ends the string at '' and runs the DROP
        "SELECT 'x\\''; DROP DATABASE shop_template; --'",
    ],
)
def test_the_text_rules_still_refuse_the_statements(sql):
    assert refused([sql], "postgres").startswith("not run")


MB = 1 << 20


def _megabyte(unit: str, head: str = "", tail: str = "") -> str:
    return head + unit * (MB // len(unit) + 1) + tail


@pytest.mark.parametrize(
    "sql",
    [
        _megabyte("copy to ", "/* ", "*/"),  # the payload
        _megabyte("copy to "),
        _megabyte("'"),
        _megabyte("/*"),
        _megabyte("DO $$ "),
        _megabyte("E'\\"),
        _megabyte("$a"),
        _megabyte("()"),
    ],
    ids=["copy-to-comment", "copy-to-code", "quotes", "open-comments", "do-blocks", "backslashes", "dollars", "parens"],
)
def test_the_text_rules_read_a_megabyte(sql):
    assert (
        refused([sql], "postgres") is None
    )  # completes (bench/loaders_scaling.py: 4 times the text, 4 times the time)


def _harness_remove_comments(sql: str) -> str:
    """The harness's own substitutions, the definition the one-pass version must equal."""
    text = re.sub(r"/\*.*?\*/", "", sql, flags=re.DOTALL)
    text = re.sub(r"--.*?(\r\n|\r|\n)", r"\1", text)
    return re.sub(r"\n\s*\n+", "\n", text).strip()


@settings(max_examples=400)
@given(st.text(alphabet=["-", "/", "*", "\n", "\r", " ", "\t", "a", "\x0b", "\u2028"], max_size=40))
@example("/*/ a */ b -- c\r\n\r\n  \n x --")
@example("\n \r\n\t\n--\r-\n")
def test_remove_comments_equals_the_harness_patterns(sql):
    assert remove_comments([sql]) == [_harness_remove_comments(sql)]


@pytest.mark.parametrize("unit", ["-", "/*", "\n ", "--\r"], ids=["dashes", "open-comments", "blank-runs", "cr"])
def test_remove_comments_reads_a_megabyte(unit):
    """The default test case calls it on the prediction: 16 KB of dashes took 24 s with the patterns."""
    assert len(remove_comments([_megabyte(unit, "SELECT 1 ")])[0]) > 0  # completes
