"""Issue L (round 4) on the test suite's real PostgreSQL server: right answers whose text mentions what the
statement rules look for (in a string literal, a comment, or as a column named `role`) are run and score 1;
the rules still refuse the statements themselves (test_livesql_postgres.py)."""

from __future__ import annotations

import pytest
from livesql_generator import _pg_state
from test_livesql_postgres import _grade, _one, pg  # noqa: F401  (the module's server and templates)

STAFF = [
    "CREATE TABLE staff (id int PRIMARY KEY, role text)",
    "INSERT INTO staff VALUES (1, 'clerk'), (2, 'boss')",
    "CREATE TABLE notes (body text)",
]
ROLE_TYPE = "SELECT data_type FROM information_schema.columns WHERE table_name = 'staff' AND column_name = 'role'"
RIGHT_ANSWERS = {
    "literal_in_select": ("Query", "SELECT 'CREATE USER' AS advice, count(*) FROM orders", None),
    "literal_in_insert": (
        "Management",
        "INSERT INTO notes VALUES ('never DROP DATABASE shop')",
        _pg_state("SELECT body FROM notes", [("never DROP DATABASE shop",)]),
    ),
    "word_in_comment": ("Query", "SELECT count(*) FROM orders -- one database, no dblink", None),
    "column_named_role": (
        "Management",
        "ALTER TABLE staff ALTER role TYPE varchar(40)",
        _pg_state(ROLE_TYPE, [("character varying",)]),
    ),
    "set_a_column_named_role": (
        "Management",
        "UPDATE staff SET role = 'admin' WHERE id = 1",
        _pg_state("SELECT role FROM staff ORDER BY id", [("admin",), ("boss",)]),
    ),
}


@pytest.mark.parametrize("case", sorted(RIGHT_ANSWERS))
def test_a_right_answer_that_mentions_a_rule_word_scores_1(pg, tmp_path, case):  # noqa: F811
    category, sql, test = RIGHT_ANSWERS[case]
    fields = {"category": category, "preprocess_sql": STAFF, "sol_sql": [sql], "pred_sqls": [sql]}
    fields["test_cases"] = [test] if test else []
    report = _grade(pg, "livesql_pg", tmp_path / "w", _one(pg, tmp_path, **fields))
    instance = report.instances[0]
    assert instance.score == 1, (instance.reason, instance.detail)
