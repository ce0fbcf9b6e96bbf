"""Instances in the official LiveSQLBench (SQLite edition) and BIRD-CRITIC formats, on small databases of
our own, each with a prediction (`pred_sqls`), covering the official quirks (docs/livesql.md).

    python tests/livesql_generator.py OUT [--copies N]            write OUT/databases, OUT/*.jsonl
    python tests/livesql_generator.py OUT --record-postgres LSB_SRC CRITIC_SRC MINI_DEV PYTHON  the same
        for the PostgreSQL sets, on a throwaway server (record_postgres says how)
    python tests/livesql_generator.py OUT --record MINI_DEV CRITIC  also run the official single-instance
        scripts (unmodified, fetched beside the project) on every instance and write the verdicts to
        tests/data/livesql_official_verdicts.json

`--copies N` repeats every instance N times under new ids (for bench/livesql.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

VERDICTS = Path(__file__).parent / "data" / "livesql_official_verdicts.json"

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT, signup TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL, status TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'Paris', '2024-01-05'), (2, 'Bo', 'Rome', '2024-02-11'),
    (3, 'Cy', 'Paris', '2024-03-20'), (4, 'Di', 'Oslo', '2024-03-21');
INSERT INTO orders VALUES (1, 1, 10.004, 'paid'), (2, 1, 20.0, 'paid'), (3, 2, 7.5, 'open'),
    (4, 3, 12.25, 'paid'), (5, 3, 12.25, 'paid'), (6, 4, 3.333, 'open');
"""
LIB = """
CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, year INTEGER, copies INTEGER);
CREATE TABLE loans (book_id INTEGER, member TEXT, due TEXT);
INSERT INTO books VALUES (1, 'Dune', 1965, 2), (2, 'Emma', 1815, 1), (3, 'Ulysses', 1922, 0), (4, 'Solaris', 1961, 3);
INSERT INTO loans VALUES (1, 'kim', '2024-05-01'), (1, 'lee', '2024-05-03'), (4, 'kim', '2024-06-01');
"""
DATABASES = {"shop": SHOP, "library": LIB}

STATE_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    rows, err, to = execute_queries(["{check}"], db_path, conn)
    assert not err, "the check query failed"
    assert rows == {expected}, f"state is {{rows}}"
"""
CONDITIONS_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    assert ex_base(pred_sqls, sol_sqls, db_path, conn, conditions) == 1
"""
KEYWORD_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    assert check_sql_function_usage(pred_sqls, ["{word}"]) == 1, "{word} not used"
"""
PLAN_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    plan, err, to = execute_queries(["EXPLAIN QUERY PLAN SELECT * FROM orders WHERE customer_id = 3"], db_path, conn)
    assert any("INDEX" in str(row) for row in plan), f"no index used: {plan}"
"""
QEP_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    assert performance_compare_by_qep(pred_sqls, sol_sqls, db_path, conn) == 1
"""
# A helper called without a connection opens a new one on the copy: no TEMP table of the prediction's
NEW_CONNECTION_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    rows, other = perform_query_on_sqlite_databases("{check}", db_path)
    assert other is not conn, "the same connection"
    assert rows == {expected}, f"state is {{rows}}"
"""
ROUNDED_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    pred, _, _ = execute_queries(pred_sqls, db_path, conn)
    gold, _, _ = execute_queries(sol_sqls, db_path, conn)
    assert preprocess_results(pred) == preprocess_results(gold), "different after rounding"
"""


def _query(iid: str, db: str, sol: list, pred: list, order: bool = False, tests=None) -> dict:
    return {
        "instance_id": iid,
        "selected_database": db,
        "query": f"question {iid}",
        "category": "Query",
        "sol_sql": sol,
        "pred_sqls": pred,
        "preprocess_sql": [],
        "clean_up_sql": [],
        "test_cases": tests or [],
        "conditions": {"order": order},
        "efficiency": False,
    }


def _manage(iid: str, db: str, sol: list, pred: list, tests: list, efficiency: bool = False, **extra) -> dict:
    item = _query(iid, db, sol, pred, tests=tests)
    item.update(category="Management", efficiency=efficiency, **extra)
    return item


def _state(check: str, expected) -> str:
    return STATE_TEST.format(check=check, expected=repr(expected))


def livesql_instances() -> list[dict]:
    paid = "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'paid')"
    total = "SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id"
    stock = "SELECT copies FROM books WHERE id = 3"
    return [
        _query("q_exact", "shop", [paid + ";"], [paid + ";"]),
        _query("q_wrong", "shop", [paid + ";"], ["SELECT name FROM customers;"]),
        _query(
            "q_round_kept", "shop", [total + ";"], ["SELECT customer_id, ROUND(SUM(amount), 1) FROM orders GROUP BY 1;"]
        ),
        _query(
            "q_round_2dp", "shop", [total + ";"], ["SELECT customer_id, SUM(amount) + 0.001 FROM orders GROUP BY 1;"]
        ),
        _query(
            "q_distinct",
            "shop",
            ["SELECT amount FROM orders WHERE customer_id = 3;"],
            ["SELECT DISTINCT amount FROM orders WHERE customer_id = 3;"],
        ),
        _query("q_dupes", "shop", ["SELECT DISTINCT status FROM orders;"], ["SELECT status FROM orders;"]),
        _query(
            "q_order_wrong",
            "shop",
            ["SELECT name FROM customers ORDER BY name;"],
            ["SELECT name FROM customers ORDER BY name DESC;"],
            order=True,
        ),
        _query(
            "q_order_free",
            "shop",
            ["SELECT name FROM customers ORDER BY name;"],
            ["SELECT name FROM customers ORDER BY name DESC;"],
        ),
        _query(
            "q_empty_gold",
            "shop",
            ["SELECT name FROM customers WHERE city = 'Lima';"],
            ["SELECT name FROM customers WHERE city = 'Lima';"],
        ),
        _query(
            "q_last_counts", "shop", ["SELECT COUNT(*) FROM orders;"], ["SELECT COUNT(*) FROM orders;", "SELECT 99;"]
        ),
        _query(
            "q_first_ignored", "shop", ["SELECT COUNT(*) FROM orders;"], ["SELECT 99;", "SELECT COUNT(*) FROM orders;"]
        ),
        _query("q_syntax", "shop", [paid + ";"], ["SELEC name FROM customers;"]),
        _query(
            "q_comment",
            "library",
            ["SELECT title FROM books WHERE year < 1950;"],
            ["-- old books\nSELECT title FROM books WHERE year < 1950;"],
        ),
        _query(
            "q_cte",
            "library",
            ["SELECT member, COUNT(*) FROM loans GROUP BY member;"],
            ["WITH l AS (SELECT * FROM loans) SELECT member, COUNT(*) FROM l GROUP BY member;"],
        ),
        _query(
            "q_custom_cond",
            "shop",
            ["SELECT city FROM customers;"],
            ["SELECT city FROM customers;"],
            tests=[CONDITIONS_TEST],
        ),
        _query(
            "q_custom_rounded",
            "shop",
            [total + ";"],
            ["SELECT customer_id, SUM(amount) - 0.002 FROM orders GROUP BY 1;"],
            tests=[ROUNDED_TEST],
        ),
        _manage(
            "m_update",
            "library",
            ["UPDATE books SET copies = copies + 1 WHERE id = 3;"],
            ["UPDATE books SET copies = 1 WHERE title = 'Ulysses';"],
            [_state(stock, [(1,)])],
        ),
        _manage(
            "m_update_wrong",
            "library",
            ["UPDATE books SET copies = copies + 1 WHERE id = 3;"],
            ["UPDATE books SET copies = 2 WHERE id = 3;"],
            [_state(stock, [(1,)])],
        ),
        _manage(
            "m_empty_pred_holds",
            "library",
            ["DELETE FROM loans WHERE member = 'nobody';"],
            [],
            [_state("SELECT COUNT(*) FROM loans", [(3,)])],
        ),
        _manage(
            "m_empty_pred_needed",
            "library",
            ["DELETE FROM loans WHERE member = 'kim';"],
            [],
            [_state("SELECT COUNT(*) FROM loans", [(1,)])],
        ),
        _manage(
            "m_insert",
            "shop",
            ["INSERT INTO customers VALUES (5, 'Eve', 'Lima', '2024-04-01');"],
            ["INSERT INTO customers (id, name, city, signup) VALUES (5, 'Eve', 'Lima', '2024-04-01');"],
            [_state("SELECT name FROM customers WHERE city = 'Lima'", [("Eve",)])],
        ),
        _manage(
            "m_index_keyword",
            "shop",
            ["CREATE INDEX ix_cust ON orders(customer_id);"],
            ["CREATE INDEX ix_c2 ON orders(customer_id);"],
            [KEYWORD_TEST.format(word="create index"), PLAN_TEST],
            efficiency=True,
        ),
        _manage(
            "m_no_index",
            "shop",
            ["CREATE INDEX ix_cust ON orders(customer_id);"],
            ["CREATE TABLE t (x);"],
            [PLAN_TEST],
            efficiency=True,
        ),
        _manage(
            "m_qep_missing",
            "shop",
            ["CREATE INDEX ix_cust ON orders(customer_id);"],
            ["CREATE INDEX ix_cust ON orders(customer_id);"],
            [QEP_TEST],
            efficiency=True,
        ),
        _manage(
            "m_conditions_param",
            "library",
            ["DELETE FROM loans WHERE member = 'lee';"],
            ["DELETE FROM loans WHERE member = 'lee';"],
            [CONDITIONS_TEST],
        ),
        _manage(
            "m_preprocess",
            "library",
            ["UPDATE books SET copies = 0 WHERE year < 1900;"],
            ["UPDATE books SET copies = 0 WHERE id = 2;"],
            [_state("SELECT SUM(copies) FROM books", [(5,)])],
            preprocess_sql=["UPDATE books SET copies = 9 WHERE id = 2;"],
            clean_up_sql=["DELETE FROM loans;"],
        ),
        _manage(
            "m_pred_error",
            "library",
            ["DELETE FROM loans WHERE member = 'lee';"],
            ["DELETE FROM nosuch;"],
            [_state("SELECT COUNT(*) FROM loans", [(2,)])],
        ),
        _manage(
            "m_view",
            "library",
            ["CREATE VIEW overdue AS SELECT * FROM loans WHERE due < '2024-05-02';"],
            ["CREATE VIEW overdue AS SELECT book_id, member, due FROM loans WHERE due < '2024-05-02';"],
            [_state("SELECT member FROM overdue", [("kim",)])],
        ),
        _query(
            "q_rewrite",
            "shop",
            ["SELECT COUNT(*) FROM orders;"],
            ["DELETE FROM orders WHERE id > 2;", "SELECT 2;"],
        ),
        _manage(
            "m_temp_table",
            "library",
            ["CREATE TEMP TABLE picked AS SELECT id FROM books WHERE id < 3;"],
            ["CREATE TEMP TABLE picked AS SELECT id FROM books WHERE id < 3;"],
            [NEW_CONNECTION_TEST.format(check="SELECT COUNT(*) FROM picked", expected=[(2,)])],
        ),
        _manage(
            "m_new_connection",
            "library",
            ["UPDATE books SET copies = 5 WHERE id = 3;"],
            ["UPDATE books SET copies = 5 WHERE id = 3;"],
            [NEW_CONNECTION_TEST.format(check="SELECT copies FROM books WHERE id = 3", expected=[(5,)])],
        ),
    ]


def critic_instances() -> list[dict]:
    def item(iid, issue, sol, pred, tests=None, order=False):
        base = _query(iid, "shop", sol, pred, order=order, tests=tests)
        base.pop("selected_database")
        base.update(db_id="shop", issue_sql=issue)
        return base

    top = "SELECT name FROM customers WHERE city = 'Paris' ORDER BY signup;"
    return [
        item("c_fixed", ["SELECT name FROM customers WHERE city = 'paris';"], [top], [top]),
        item(
            "c_still_buggy",
            ["SELECT name FROM customers WHERE city = 'paris';"],
            [top],
            ["SELECT name FROM customers WHERE city = 'paris';"],
        ),
        item("c_issue_passes", [top], [top], [top]),
        item("c_conditions_param", ["SELECT 1;"], [top], [top], tests=[CONDITIONS_TEST], order=True),
        item(
            "c_state",
            ["UPDATE orders SET status = 'paid';"],
            ["UPDATE orders SET status = 'paid' WHERE id = 3;"],
            ["UPDATE orders SET status = 'paid' WHERE customer_id = 2;"],
            tests=[_state("SELECT COUNT(*) FROM orders WHERE status = 'open'", [(1,)])],
        ),
        item(
            "c_state_wrong",
            ["UPDATE orders SET status = 'paid';"],
            ["UPDATE orders SET status = 'paid' WHERE id = 3;"],
            ["UPDATE orders SET status = 'void';"],
            tests=[_state("SELECT COUNT(*) FROM orders WHERE status = 'open'", [(1,)])],
        ),
        item("c_issue_errors", ["SELEC 1;"], [top], [top]),
    ]


PG_SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT, signup DATE);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount NUMERIC(10, 3), status TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'Paris', '2024-01-05'), (2, 'Bo', 'Rome', '2024-02-11'),
    (3, 'Cy', 'Paris', '2024-03-20'), (4, 'Di', 'Oslo', '2024-03-21');
INSERT INTO orders SELECT i, 1 + i % 4, (i % 50) + 0.004, CASE WHEN i % 3 = 0 THEN 'open' ELSE 'paid' END
    FROM generate_series(1, 2000) AS i;
ANALYZE;
"""
PG_DATABASES = {"shop": PG_SHOP}
PG_STATE_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, err, to = execute_queries(["{check}"], db_name, conn)
    assert not err, "the check query failed"
    assert [tuple(r) for r in rows] == {expected}, f"state is {{rows}}"
"""
PG_EX_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert ex_base(pred_sqls, sol_sqls, db_name, conn) == 1
"""
PG_QEP_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert performance_compare_by_qep(pred_sqls, sol_sqls, db_name, conn) == 1, "not cheaper"
"""
PG_ROUND_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert ex_base(remove_round(pred_sqls), sol_sqls, db_name, conn) == 1
"""
FAILING_TEST = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    assert False, 'never passes'\n"
# LiveSQLBench's evaluation.py gives test code no `date` (its import lands where the function cannot see it)
PG_DATE_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, err, to = execute_queries(["SELECT signup FROM customers WHERE id = 1"], db_name, conn)
    assert rows[0][0] == date(2024, 1, 5), f"signup is {rows}"
"""
# A helper called without a connection takes a new one from the harness's pool: no TEMP tables of the
# prediction's session; committed rows are there; the pool (maxconn 5) is never given them back.
PG_NEW_CONNECTION_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, other = perform_query_on_postgresql_databases("{check}", db_name)
    assert other is not conn, "the same connection"
    assert [tuple(r) for r in rows] == {expected}, f"state is {{rows}}"
"""
PG_POOL_TEST = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    for i in range({times}):
        rows, other = perform_query_on_postgresql_databases("SELECT 1", db_name)
    assert rows == [(1,)]
"""


def pg_livesql_instances() -> list[dict]:
    paid = (
        "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'open' AND amount > 48)"
    )
    total = "SELECT customer_id, SUM(amount) FROM orders GROUP BY customer_id"
    count = "SELECT COUNT(*) FROM orders WHERE status = 'void'"
    index_test = _pg_state("SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'orders'", [(2,)])
    return [
        _query("pq_exact", "shop", [paid + ";"], [paid + ";"]),
        _query("pq_wrong", "shop", [paid + ";"], ["SELECT name FROM customers WHERE id < 3;"]),
        _query(
            "pq_round", "shop", [total + ";"], ["SELECT customer_id, ROUND(SUM(amount), 1) FROM orders GROUP BY 1;"]
        ),
        _query(
            "pq_dates",
            "shop",
            ["SELECT signup FROM customers WHERE city = 'Paris';"],
            ["SELECT signup::text FROM customers WHERE city = 'Paris';"],
        ),
        _query("pq_empty_gold", "shop", ["SELECT 1 WHERE false;"], ["SELECT 1 WHERE false;"]),
        _query(
            "pq_order_wrong",
            "shop",
            ["SELECT name FROM customers ORDER BY name;"],
            ["SELECT name FROM customers ORDER BY name DESC;"],
            order=True,
        ),
        _query(
            "pq_custom_ignored",
            "shop",
            ["SELECT city FROM customers;"],
            ["SELECT city FROM customers;"],
            tests=[FAILING_TEST],
        ),
        _query("pq_syntax", "shop", ["SELECT 1;"], ["SELEC 1;"]),
        _query(
            "pq_like",
            "shop",
            ["SELECT name FROM customers WHERE name LIKE 'A%';"],
            ["SELECT name FROM customers WHERE name LIKE 'A%%' OR name LIKE 'A%';"],
        ),
        _query(
            "pq_multi",
            "shop",
            ["SELECT name FROM customers WHERE id = 1;"],
            ["SELECT 1; SELECT name FROM customers WHERE id = 1;"],
        ),
        _query(
            "pq_json",
            "shop",
            ["SELECT json_build_object('n', name, 'v', 1.234) FROM customers;"],
            ["SELECT jsonb_build_object('n', name, 'v', 1.23) FROM customers;"],
        ),
        _query(
            "pq_uuid",
            "shop",
            ["SELECT md5(name)::uuid FROM customers;"],
            ["SELECT md5(name)::uuid::text FROM customers;"],
        ),
        _query(
            "pq_inet",
            "shop",
            ["SELECT ('10.0.0.' || id)::inet, ('10.' || id || '.0.0/16')::cidr FROM customers;"],
            ["SELECT '10.0.0.' || id, '10.' || id || '.0.0/16' FROM customers;"],
        ),
        _query(
            "pq_row",
            "shop",
            ["SELECT ROW(id, name) FROM customers;"],
            ["SELECT '(' || id || ',' || name || ')' FROM customers;"],
        ),
        _query("pq_infinity", "shop", ["SELECT 'infinity'::date;"], ["SELECT '9999-12-31'::date;"]),
        _query(
            "pq_numeric_array",
            "shop",
            ["SELECT customer_id, array_agg(amount ORDER BY id) FROM orders WHERE id < 9 GROUP BY 1;"],
            ["SELECT customer_id, array_agg(amount ORDER BY id) FROM orders WHERE id < 9 GROUP BY 1;"],
        ),
        _query(
            "pq_date_array",
            "shop",
            ["SELECT city, array_agg(signup ORDER BY id) FROM customers GROUP BY 1;"],
            ["SELECT city, array_agg(signup ORDER BY id) FROM customers GROUP BY 1;"],
        ),
        _query(
            "pq_text_array",
            "shop",
            ["SELECT array_agg(name ORDER BY id) FROM customers;"],
            ["SELECT array_agg(name ORDER BY id) FROM customers;"],
        ),
        _query("pq_empty_statement", "shop", [paid + ";"], ["", paid + ";"]),
        _query("pq_comment_statement", "shop", [paid + ";"], ["-- the answer follows", paid + ";"]),
        _query(
            "pq_rewrite", "shop", ["SELECT COUNT(*) FROM orders;"], ["DELETE FROM orders WHERE id > 21; SELECT 21;"]
        ),
        _manage(
            "pm_date_name",
            "shop",
            ["UPDATE customers SET city = 'Lyon' WHERE id = 2;"],
            ["UPDATE customers SET city = 'Lyon' WHERE id = 2;"],
            [PG_DATE_TEST],
        ),
        _manage(
            "pm_temp_table",
            "shop",
            ["CREATE TEMP TABLE picked AS SELECT id FROM orders WHERE id < 3;"],
            ["CREATE TEMP TABLE picked AS SELECT id FROM orders WHERE id < 3;"],
            [PG_NEW_CONNECTION_TEST.format(check="SELECT COUNT(*) FROM picked", expected=[(2,)])],
        ),
        _manage(
            "pm_new_connection",
            "shop",
            ["UPDATE orders SET status = 'void' WHERE id < 4;"],
            ["UPDATE orders SET status = 'void' WHERE id < 4;"],
            [PG_NEW_CONNECTION_TEST.format(check=count, expected=[(3,)])],
        ),
        _manage("pm_pool_4", "shop", ["SELECT 1;"], ["SELECT 1;"], [PG_POOL_TEST.format(times=4)]),
        _manage("pm_pool_5", "shop", ["SELECT 1;"], ["SELECT 1;"], [PG_POOL_TEST.format(times=5)]),
        _manage(
            "pm_update",
            "shop",
            ["UPDATE orders SET status = 'void' WHERE id < 11;"],
            ["UPDATE orders SET status = 'void' WHERE id BETWEEN 1 AND 10;"],
            [_pg_state(count, [(10,)])],
        ),
        _manage(
            "pm_update_wrong",
            "shop",
            ["UPDATE orders SET status = 'void' WHERE id < 11;"],
            ["UPDATE orders SET status = 'void' WHERE id < 10;"],
            [_pg_state(count, [(10,)])],
        ),
        _manage("pm_no_tests", "shop", ["DELETE FROM orders WHERE id = 1;"], ["DELETE FROM orders WHERE id = 2;"], []),
        _manage("pm_empty_pred_holds", "shop", ["DELETE FROM orders WHERE id = -1;"], [], [_pg_state(count, [(0,)])]),
        _manage(
            "pm_index",
            "shop",
            ["CREATE INDEX ix_c ON orders(customer_id);"],
            ["CREATE INDEX ix_mine ON orders(customer_id);"],
            [index_test],
            efficiency=True,
        ),
        _manage(
            "pm_qep",
            "shop",
            ["CREATE INDEX ix_c ON orders(id);"],
            ["SELECT * FROM orders WHERE id = 5;"],
            [PG_QEP_TEST],
            efficiency=True,
        ),
        _manage(
            "pm_conditions_param",
            "shop",
            ["DELETE FROM orders WHERE id = 1;"],
            ["DELETE FROM orders WHERE id = 1;"],
            [CONDITIONS_TEST],
        ),
        _manage(
            "pm_pred_error",
            "shop",
            ["DELETE FROM orders WHERE id = 1;"],
            ["DELETE FROM nosuch;"],
            [_pg_state(count, [(0,)])],
        ),
    ]


def pg_critic_instances() -> list[dict]:
    def item(iid, issue, sol, pred, tests, efficiency=False):
        base = _query(iid, "shop", sol, pred, tests=tests)
        base.pop("selected_database")
        base.update(db_id="shop", issue_sql=issue, efficiency=efficiency)
        return base

    top = "SELECT name FROM customers WHERE city = 'Paris' ORDER BY signup;"
    scan = "SELECT o.id FROM orders o WHERE o.id IN (SELECT id FROM orders WHERE amount > 0) AND o.id = 7;"
    return [
        item("cp_fixed", ["SELECT name FROM customers WHERE city = 'paris';"], [top], [top], [PG_EX_TEST]),
        item(
            "cp_wrong",
            ["SELECT name FROM customers WHERE city = 'paris';"],
            [top],
            ["SELECT name FROM customers;"],
            [PG_EX_TEST],
        ),
        item("cp_no_tests", ["SELECT 1;"], [top], ["SELECT 2;"], []),
        item(
            "cp_efficiency",
            [scan],
            ["SELECT id FROM orders WHERE id = 7;"],
            ["SELECT id FROM orders WHERE id = 7;"],
            [PG_QEP_TEST],
            efficiency=True,
        ),
        item(
            "cp_efficiency_slow",
            ["SELECT id FROM orders WHERE id = 7;"],
            ["SELECT id FROM orders WHERE id = 7;"],
            [scan],
            [PG_QEP_TEST],
            efficiency=True,
        ),
        item("cp_remove_round_missing", ["SELECT 1;"], [top], [top], [PG_ROUND_TEST]),
        item(
            "cp_state",
            ["UPDATE orders SET status = 'void';"],
            ["UPDATE orders SET status = 'void' WHERE id = 3;"],
            ["UPDATE orders SET status = 'void' WHERE id = 3;"],
            [_pg_state("SELECT COUNT(*) FROM orders WHERE status = 'void'", [(1,)])],
        ),
    ]


def _pg_state(check: str, expected) -> str:
    return PG_STATE_TEST.format(check=check, expected=repr(expected))


def write_postgres(out: Path, copies: int = 1) -> dict:
    """The PostgreSQL instance files (the templates are loaded by `load_postgres`)."""
    files = {}
    for label, items in (("livesql_pg", pg_livesql_instances()), ("critic_pg", pg_critic_instances())):
        path = out / f"{label}.jsonl"
        out.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            for k in range(copies):
                for it in items:
                    handle.write(
                        json.dumps(dict(it, instance_id=it["instance_id"] + (f"_{k}" if copies > 1 else ""))) + "\n"
                    )
        files[label] = path
    return files


def load_postgres(admin, grader_role: str | None = None, databases: dict | None = None) -> None:
    """`<db>_template` databases on the server `admin(dbname)` connects to as a superuser, marked as
    templates; with `grader_role` (the role `livesql --engine postgresql` connects as) prepared as
    `evaluate.py db prepare --template` makes them (docs/livesql.md): owned by the role, their tables by
    `<role>_tables`, each answer a role of its own."""
    from evaluators.execution.pg_roles import prepare_postgres

    databases = PG_DATABASES if databases is None else databases
    for name, script in databases.items():
        with admin("postgres") as con:
            if con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (f"{name}_template",)).fetchone():
                con.execute(f"ALTER DATABASE {name}_template IS_TEMPLATE false")  # else it cannot be dropped
            con.execute(f"DROP DATABASE IF EXISTS {name}_template")
            con.execute(f"CREATE DATABASE {name}_template")
        with admin(f"{name}_template") as con:
            con.execute(script)
        with admin("postgres") as con:
            con.execute(f"ALTER DATABASE {name}_template IS_TEMPLATE true")
    if grader_role:
        with admin("postgres") as con:
            dsn = con.info.dsn
        prepare_postgres(dsn, grader_role, templates=[f"{name}_template" for name in databases])


def write(out: Path, copies: int = 1) -> dict:
    """Databases under out/databases/<db>/<db>_template.sqlite and one JSONL per benchmark."""
    root = out / "databases"
    for name, script in DATABASES.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        path = root / name / f"{name}_template.sqlite"
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as con:
            con.executescript(script)
        con.close()
    files = {}
    for label, items in (("livesql", livesql_instances()), ("critic", critic_instances())):
        path = out / f"{label}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for k in range(copies):
                for it in items:
                    copy = dict(it, instance_id=it["instance_id"] + (f"_{k}" if copies > 1 else ""))
                    handle.write(json.dumps(copy) + "\n")
        files[label] = path
    return {"root": root, **files}


def official_verdict(script_dir: Path, instance: dict, db_root: Path, utils_dir: Path | None = None) -> dict:
    """Run the official single-instance script, unmodified, on a fresh ephemeral copy (one instance, one
    copy, as the wrapper would with 1 thread); its JSON answer."""
    db = instance.get("selected_database") or instance["db_id"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / db
        folder.mkdir()
        template = folder / f"{db}_template.sqlite"
        shutil.copyfile(db_root / db / f"{db}_template.sqlite", template)
        ephemeral = folder / f"{db}_ephemeral_1.sqlite"
        shutil.copyfile(template, ephemeral)
        source, answer = Path(tmp) / "one.jsonl", Path(tmp) / "out.json"
        source.write_text(json.dumps(instance) + "\n")
        env = {**os.environ, "EPHEMERAL_DB_PATH": str(ephemeral)}
        if utils_dir is not None:  # BIRD-CRITIC-1 imports a `utils` module it does not ship: mini_dev's
            env["PYTHONPATH"] = str(utils_dir)
        command = [sys.executable, "single_instance_eval_sqlite.py", "--jsonl_file", str(source)]
        command += ["--output_file", str(answer), "--mode", "pred", "--logging", "false"]
        subprocess.run(command, cwd=script_dir, env=env, capture_output=True, timeout=120, check=False)
        return json.loads(answer.read_text())


def record(out: Path, mini_dev: Path, critic: Path) -> dict:
    files = write(out)
    verdicts = {**json.loads(VERDICTS.read_text()), "livesql": {}, "critic": {}}  # the PostgreSQL sets stay
    for label, script_dir in (("livesql", mini_dev), ("critic", critic)):
        for line in files[label].read_text().splitlines():
            instance = json.loads(line)
            answer = official_verdict(script_dir, instance, files["root"], mini_dev if label == "critic" else None)
            verdicts[label][instance["instance_id"]] = {
                "status": answer["status"],
                "failed_test_cases": answer.get("failed_test_cases", []),
            }
    verdicts["how"] = (
        "tests/livesql_generator.py --record: each instance run alone by the unmodified "
        "single_instance_eval_sqlite.py --mode pred --logging false (mini_dev 4d970a9 "
        "live_sql_bench_sqlite/evaluation for livesql; BIRD-CRITIC-1 evaluation/src for critic, which "
        "imports a utils module it does not ship: mini_dev's utils.py was put on PYTHONPATH), "
        "EPHEMERAL_DB_PATH set to a fresh <db>_ephemeral_1.sqlite copy of the template, with "
        f"Python {sys.version.split()[0]} and SQLite {sqlite3.sqlite_version}"
    )
    VERDICTS.parent.mkdir(parents=True, exist_ok=True)
    VERDICTS.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")
    return verdicts


CRITIC_PG_RUNNER = (
    "import sys, runpy; sys.path.insert(0, '.'); import postgresql_utils as u; "
    "u.DEFAULT_DB_CONFIG.update(host='127.0.0.1', port=int(sys.argv[1])); "
    "sys.argv = ['single_instance_eval_postgresql.py'] + sys.argv[2:]; "
    "runpy.run_path('single_instance_eval_postgresql.py', run_name='__main__')"
)


def record_postgres(out: Path, lsb_src: Path, critic_src: Path, mini_dev: Path, python: str) -> dict:
    """Official PostgreSQL verdicts on a throwaway server (tests/dbservers.py), with `python` holding
    psycopg2 and tqdm: LiveSQLBench's evaluation.py as published (--num_threads 1, its superuser `root`),
    BIRD-CRITIC's single_instance_eval_postgresql.py unmodified, its hard-coded host and port replaced at
    run time (DEFAULT_DB_CONFIG), each instance on a fresh `shop` cloned from the template."""
    from dbservers import start_postgres

    files = write_postgres(out)
    server, stop = start_postgres()
    verdicts = json.loads(VERDICTS.read_text())
    try:
        with server.admin() as con:
            con.execute("CREATE ROLE root SUPERUSER LOGIN PASSWORD '123123'")
        load_postgres(server.admin)
        env = {**os.environ, "PGPASSWORD": "123123"}
        results = out / "lsb_results"
        command = [python, "evaluation.py", "--jsonl_file", str(files["livesql_pg"]), "--num_threads", "1"]
        command += ["--logging", "true", "--db_host", "127.0.0.1", "--db_port", str(server.port)]
        subprocess.run(command + ["--output_dir", str(results)], cwd=lsb_src, env=env, capture_output=True, check=False)
        lines = (results / "livesql_pg" / "output_with_status.jsonl").read_text().splitlines()
        verdicts["livesql_pg"] = {
            d["instance_id"]: {"status": d["status"], "failed_test_cases": []} for d in map(json.loads, lines)
        }
        verdicts["critic_pg"] = {}
        for line in files["critic_pg"].read_text().splitlines():
            instance = json.loads(line)
            with server.admin() as con:
                con.execute("DROP DATABASE IF EXISTS shop WITH (FORCE)")
                con.execute("CREATE DATABASE shop TEMPLATE shop_template")
            source, answer = out / "one.jsonl", out / "one_out.json"
            source.write_text(line + "\n")
            args = ["--jsonl_file", str(source), "--output_file", str(answer), "--mode", "pred", "--logging", "false"]
            run_env = {**env, "PYTHONPATH": str(mini_dev)}
            command = [python, "-c", CRITIC_PG_RUNNER, str(server.port), *args]
            subprocess.run(command, cwd=critic_src, env=run_env, capture_output=True, check=False)
            data = json.loads(answer.read_text())
            verdicts["critic_pg"][instance["instance_id"]] = {
                "status": data["status"],
                "failed_test_cases": data.get("failed_test_cases", []),
            }
    finally:
        stop()
    verdicts["how_postgres"] = record_postgres.__doc__.replace("\n   ", "").strip()
    VERDICTS.write_text(json.dumps(verdicts, indent=1, sort_keys=True) + "\n")
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--record", nargs=2, type=Path, metavar=("MINI_DEV_EVAL", "CRITIC_EVAL"))
    parser.add_argument("--record-postgres", nargs=4, metavar=("LSB_SRC", "CRITIC_SRC", "MINI_DEV_EVAL", "PYTHON"))
    args = parser.parse_args()
    if args.record_postgres:
        lsb, critic, mini_dev, python = args.record_postgres
        verdicts = record_postgres(args.out, Path(lsb), Path(critic), Path(mini_dev), python)
        for label in ("livesql_pg", "critic_pg"):
            print(label, {k: v["status"] for k, v in verdicts[label].items()})
    elif args.record:
        verdicts = record(args.out, *args.record)
        for label in ("livesql", "critic"):
            print(label, {k: v["status"] for k, v in verdicts[label].items()})
    else:
        print(write(args.out, args.copies))


if __name__ == "__main__":
    main()
