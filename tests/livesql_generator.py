"""Instances in the official LiveSQLBench (SQLite edition) and BIRD-CRITIC formats, on small databases of
our own, each with a prediction (`pred_sqls`), covering the official quirks (docs/livesql.md).

    python tests/livesql_generator.py OUT [--copies N]            write OUT/databases, OUT/*.jsonl
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
    verdicts: dict = {"how": "", "livesql": {}, "critic": {}}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--record", nargs=2, type=Path, metavar=("MINI_DEV_EVAL", "CRITIC_EVAL"))
    args = parser.parse_args()
    if args.record:
        verdicts = record(args.out, *args.record)
        for label in ("livesql", "critic"):
            print(label, {k: v["status"] for k, v in verdicts[label].items()})
    else:
        print(write(args.out, args.copies))


if __name__ == "__main__":
    main()
