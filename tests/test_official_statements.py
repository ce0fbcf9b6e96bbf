"""Which statements BIRD on PostgreSQL/MySQL runs as the official drivers do, and which it refuses (writes)."""

import pytest

from evaluators.official_statements import Plan, plan

RUN = [
    ("postgres", "VALUES (1)", ("VALUES (1)",)),
    ("postgres", "SELECT 1; SELECT name FROM items", ("SELECT 1", "SELECT name FROM items")),
    ("postgres", "SELECT a FROM t WHERE (b) FOR UPDATE", ("SELECT a FROM t WHERE (b)",)),
    ("postgres", "SELECT a FROM t FOR SHARE SKIP LOCKED", ("SELECT a FROM t",)),
    ("postgres", "SHOW search_path", ("SHOW search_path",)),
    ("mysql", "SHOW TABLES", ("SHOW TABLES",)),
    ("mysql", "SET @x = 1", ("SET @x = 1",)),
    ("mysql", "SET @x = (SELECT max(id) FROM t)", ("SET @x = (SELECT max(id) FROM t)",)),
    ("mysql", "SELECT 1 INTO @v", ("SELECT 1 INTO @v",)),
    ("mysql", "SELECT a FROM t LOCK IN SHARE MODE", ("SELECT a FROM t LOCK IN SHARE MODE",)),
    ("mysql", "SELECT a FROM t FOR UPDATE", ("SELECT a FROM t",)),
    ("mysql", " -- only a comment", ()),
]

REFUSED = [
    ("postgres", "SELECT 1; DELETE FROM t"),
    ("postgres", "SELECT * INTO t2 FROM t"),
    ("postgres", "COPY t TO PROGRAM 'x'"),
    ("postgres", "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"),
    ("postgres", "SET search_path = x"),
    ("postgres", "SHOW x; DROP TABLE t"),
    ("mysql", "SET GLOBAL read_only = 0"),
    ("mysql", "SET SESSION TRANSACTION READ WRITE"),
    ("mysql", "SELECT 1 INTO OUTFILE '/tmp/x'"),
    ("mysql", "SELECT 1 /*! , 2 */"),
    ("mysql", "SHOW TABLES; SELECT 1"),
    ("mysql", "CALL p()"),
    ("mysql", ""),
    ("postgres", "-- only a comment"),
    ("mysql", ";"),
    ("mysql", "; -- c"),
]


@pytest.mark.parametrize(("dialect", "sql", "statements"), RUN)
def test_read_only_statements_run_as_the_driver_runs_them(dialect, sql, statements):
    assert plan(sql, dialect) == Plan(statements)


@pytest.mark.parametrize(("dialect", "sql"), REFUSED)
def test_what_could_write_is_refused(dialect, sql):
    assert isinstance(plan(sql, dialect), str)
