"""mini-interact tasks (SQLite) and scripted agents covering the official submit handling's cases: Query and
Management tasks, phase 2 with the phase-1 replay, failed then fixed submits, budgets run out, the quirks of
docs/interact.md.

    python tests/interact_generator.py OUT                      write OUT/<db>/..., OUT/tasks.jsonl, ...
    python tests/interact_generator.py OUT --record AGENT PYTHON run the official batch loop, unmodified
        (AGENT: mini_interact/knowledge_based/mini_interact_agent of bird-bench/BIRD-Interact, PYTHON: a venv
        with jsonlines, tqdm and sqlglot), its LLM calls answered from the scripts by
        tests/interact_official_driver.py, and write tests/data/parity/interact_mini.json: the run it
        recorded (the official output lines) and the official verdicts per submit, phase and task; and its
        --debug run (the gold submitted in each phase): the reward and phases per task, for --oracle.
    python tests/interact_generator.py OUT --postgres --record AGENT PYTHON   the same with bird_interact_agent
        (AGENT: bird_interact_agent/, PYTHON with psycopg2 too) on a throwaway PostgreSQL server:
        tests/data/parity/interact_postgres.json
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "parity" / "interact_mini.json"

SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL, status TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'Paris'), (2, 'Bo', 'Rome'), (3, 'Cy', 'Paris'), (4, 'Di', 'Oslo');
INSERT INTO orders VALUES (1, 1, 10.04, 'paid'), (2, 1, 20.0, 'paid'), (3, 2, 7.5, 'open'), (4, 3, 12.25, 'paid'),
    (5, 3, 12.25, 'paid'), (6, 4, 3.33, 'open');
"""
DATABASES = {"shop": SHOP}
# The same database on PostgreSQL (bird-interact-lite's engine), under a name no other test's template has.
PG_DATABASES = {"ishop": SHOP.replace("REAL", "DOUBLE PRECISION")}
RECORDED_PG = Path(__file__).parent / "data" / "parity" / "interact_postgres.json"

COUNT_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    rows, err, to = execute_queries(["{check}"], db_path, conn)
    assert not err, "the check failed"
    assert rows == {expected}, f"state is {{rows}}"
"""
EX_BASE_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn):
    assert ex_base(pred_sqls, sol_sqls, db_path, conn) == 1
"""

PARIS = "SELECT name FROM customers WHERE city = 'Paris' ORDER BY id"
PAID = "SELECT SUM(amount) FROM orders WHERE status = 'paid' AND id > 0"
ENDS_QUOTED = "SELECT name FROM customers WHERE city = 'Paris'"  # mini strips its closing quote


def _count(check: str, expected) -> str:
    return COUNT_TEST.format(check=check, expected=repr(expected))


def _task(iid: str, sol, category="Query", tests=(), follow=None, **extra) -> dict:
    task = {
        "instance_id": iid,
        "selected_database": "shop",
        "amb_user_query": f"question {iid}",
        "category": category,
        "sol_sql": list(sol),
        "test_cases": list(tests),
        "conditions": extra.pop("conditions", {"order": False}),
        "user_query_ambiguity": {"critical_ambiguity": extra.pop("critical", [])},
        "knowledge_ambiguity": extra.pop("knowledge", []),
        "difficulty_tier": extra.pop("difficulty", "Simple"),
        **extra,
    }
    if follow is not None:
        task["follow_up"] = {"query": f"follow-up of {iid}", "category": "Query", "conditions": {}, **follow}
    return task


def submit(sql: str, quote: str = '"""') -> tuple:
    return ("User", f"submit({quote}{sql}{quote})")


def run(sql: str) -> tuple:
    return ("Environment", f'execute("{sql}")')


ASK = ("User", "ask('which city?')")
SCHEMA = ("Environment", "get_schema()")

UPDATE_PAID = "UPDATE orders SET status = 'paid' WHERE id = 3"
PAID_COUNT = _count("SELECT COUNT(*) FROM orders WHERE status = 'paid'", [(5,)])
INSERT_ORDER = "INSERT INTO orders VALUES (7, 2, 50.0, 'open')"
OPEN_AFTER = _count("SELECT COUNT(*) FROM orders WHERE status = 'open'", [(3,)])
DELETE_OPEN = "DELETE FROM orders WHERE status = 'open' AND id > 0"
NONE_OPEN = _count("SELECT COUNT(*) FROM orders", [(2,)])  # 1 and 2 set open by the set-up, 7 by phase 1


def tasks_and_scripts() -> list[tuple[dict, list]]:
    return [
        (_task("q_first", [PARIS]), [submit(PARIS)]),
        (_task("q_fix", [PARIS]), [SCHEMA, submit("SELECT name FROM customers"), submit(PARIS)]),
        (_task("q_quote_end", [ENDS_QUOTED]), [submit(ENDS_QUOTED, '"'), submit(ENDS_QUOTED)]),
        (_task("q_quote_single", [PAID]), [submit(PAID, "'")]),
        (
            _task("q_round", [PAID]),
            [submit("SELECT ROUND(SUM(amount), 0) FROM orders WHERE status = 'paid' AND id > 0")],
        ),
        (_task("q_distinct", ["SELECT city FROM customers"]), [submit("SELECT DISTINCT city FROM customers")]),
        (
            _task("q_empty_gold", ["SELECT name FROM customers WHERE city = 'Lima' ORDER BY id"]),
            [submit("SELECT name FROM customers WHERE city = 'Lima' ORDER BY id")],
        ),
        (_task("q_multi", [PARIS]), [submit("SELECT 1; " + PARIS)]),
        (
            _task("q_order", ["SELECT name FROM customers ORDER BY name DESC"], conditions={"order": True}),
            [
                submit("SELECT name FROM customers ORDER BY name"),
                submit("SELECT name FROM customers ORDER BY name DESC"),
            ],
        ),
        (_task("q_two_phase", [PARIS], follow={"sol_sql": [PAID]}), [submit(PARIS), submit(PAID)]),
        (
            _task("q_phase2_fail_fix", [PARIS], follow={"sol_sql": [PAID]}),
            [submit(PARIS), submit("SELECT 1"), submit(PAID)],
        ),
        (_task("q_phase1_fail", [PARIS], follow={"sol_sql": [PAID]}), [submit("SELECT 2"), submit("SELECT 3")]),
        (_task("m_first", [UPDATE_PAID], "Management", [PAID_COUNT]), [submit(UPDATE_PAID)]),
        (
            _task("m_fix", [UPDATE_PAID], "Management", [PAID_COUNT]),
            [submit("UPDATE orders SET status = 'paid' WHERE id = 6"), submit(UPDATE_PAID)],
        ),
        (_task("m_no_tests", [UPDATE_PAID], "Management"), [submit("SELECT 1")]),
        (_task("m_ex_base_test", [UPDATE_PAID], "Management", [EX_BASE_TEST]), [submit(UPDATE_PAID)]),
        (_task("m_broken_sql", [UPDATE_PAID], "Management", [PAID_COUNT]), [submit("UPDATE nowhere SET x = 1")]),
        (
            _task(
                "m_replay",
                [INSERT_ORDER],
                "Management",
                [_count("SELECT COUNT(*) FROM orders", [(7,)])],
                follow={"sol_sql": [DELETE_OPEN], "category": "Management", "test_cases": [NONE_OPEN]},
                preprocess_sql=["UPDATE orders SET status = 'open' WHERE id = 1"],
                clean_up_sqls=["UPDATE orders SET status = 'open' WHERE id = 2"],
            ),
            [submit(INSERT_ORDER), submit("DELETE FROM orders WHERE id = 7"), submit(DELETE_OPEN)],
        ),
        (
            _task(
                "m_replay_query",
                [INSERT_ORDER],
                "Management",
                [_count("SELECT COUNT(*) FROM orders", [(7,)])],
                follow={"sol_sql": ["SELECT COUNT(*) FROM orders WHERE status = 'open' AND id > 0"]},
            ),
            [submit(INSERT_ORDER), submit("SELECT COUNT(*) FROM orders WHERE status = 'open' AND id > 0")],
        ),
        (
            _task(
                "m_bad_preprocess",
                [INSERT_ORDER],
                "Management",
                [],
                follow={"sol_sql": ["SELECT 1"]},
                preprocess_sql=["UPDATE missing SET x = 1"],
            ),
            [submit(INSERT_ORDER), submit("SELECT 1")],
        ),
        (
            _task("b_exceeded", [PARIS], follow={"sol_sql": [PAID]}),
            [*[run("SELECT 1")] * 13, submit(PARIS), submit(PAID)],
        ),
        (_task("b_forced_other", [PARIS]), [*[ASK] * 8, SCHEMA, submit(PARIS)]),
        (_task("b_forced_submit", [PARIS], critical=[{"term": "x"}]), [ASK, ASK, ASK, ASK, ASK, submit("SELECT 9")]),
        (
            _task("b_ambiguity", [PARIS], knowledge=[{"deleted_knowledge": 1}], difficulty="Challenging"),
            [ASK, ASK, ASK, ASK, submit("SELECT 9"), submit(PARIS)],
        ),
        (_task("o_env_submit", [PARIS]), [("Environment", f'submit("{PARIS}")'), submit(PARIS)]),
        (_task("o_garbled", [PARIS]), [("User", "hello"), submit(PARIS)]),
        (_task("o_after_end", [PARIS]), [submit(PARIS)]),
    ]


def build(root: Path, postgres: bool = False) -> dict:
    """The databases (SQLite; PostgreSQL's are load_postgres's), tasks.jsonl (merged), public.jsonl + gt.jsonl
    (split), scripts.json."""
    root.mkdir(parents=True, exist_ok=True)
    for name, script in DATABASES.items():
        folder = root / name
        folder.mkdir(exist_ok=True)
        for file in (folder / f"{name}_template.sqlite", folder / f"{name}.sqlite"):
            file.unlink(missing_ok=True)
            with sqlite3.connect(file) as conn:
                conn.executescript(script)
            conn.close()
    pairs = tasks_and_scripts()
    if postgres:
        pairs = [({**task, "selected_database": "ishop"}, turns) for task, turns in pairs]
    _lines(root / "tasks.jsonl", [t for t, _ in pairs])
    _lines(root / "public.jsonl", [_public(t) for t, _ in pairs])
    _lines(root / "gt.jsonl", [_gt(t) for t, _ in pairs])
    scripts = {t["instance_id"]: [list(turn) for turn in turns] for t, turns in pairs}
    (root / "scripts.json").write_text(json.dumps(scripts, indent=1))
    return scripts


def _public(task: dict) -> dict:
    public = {k: v for k, v in task.items() if k not in ("sol_sql", "test_cases")}
    if "follow_up" in public:
        public["follow_up"] = {k: v for k, v in public["follow_up"].items() if k not in ("sol_sql", "test_cases")}
    return public


def _gt(task: dict) -> dict:
    gt = {"instance_id": task["instance_id"], "sol_sql": task["sol_sql"], "test_cases": task["test_cases"]}
    if "follow_up" in task:
        gt["follow_up"] = {k: task["follow_up"].get(k, []) for k in ("sol_sql", "test_cases")}
    return gt


def _lines(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def record(root: Path, agent: Path, python: str, postgres: bool = False) -> dict:
    """Run the official batch loop on the scripts; its output and the verdicts it gave, per submit.  PostgreSQL:
    bird_interact_agent's loop on a throwaway server (tests/dbservers.py) with its superuser `root`."""
    build(root, postgres)
    driver = [python, str(Path(__file__).parent / "interact_official_driver.py"), str(agent), str(root)]
    oracle = [*driver, "--debug", "--output", "oracle.jsonl"]  # mini's loop only: the gold submitted
    if not postgres:
        subprocess.run(driver, check=True)
        subprocess.run(oracle, check=True)
        return _recorded(root)
    from dbservers import start_postgres
    from livesql_generator import load_postgres

    server, stop = start_postgres()
    try:
        with server.admin() as con:
            con.execute("CREATE ROLE root SUPERUSER LOGIN PASSWORD '123123'")
        load_postgres(server.admin, None, PG_DATABASES)
        subprocess.run([*driver, "--postgres", f"127.0.0.1:{server.port}"], check=True)
    finally:
        stop()
    return _recorded(root)


def _recorded(root: Path) -> dict:
    statuses = [json.loads(line) for line in (root / "output.jsonl").read_text().splitlines()]
    for status in statuses:  # what grading never reads: the prompts (large) and the raw responses
        for name in ("current_prompt", "last_agent_response"):
            status.pop(name, None)
    if not (root / "oracle.jsonl").exists():  # bird_interact_agent's loop has no --debug
        return {"run": statuses, "official": official_verdicts(statuses)}
    gold = [json.loads(line) for line in (root / "oracle.jsonl").read_text().splitlines()]
    oracle = {
        s["original_data"]["instance_id"]: {
            k: s.get(k) for k in ("last_reward", "phase1_completed", "phase2_completed")
        }
        for s in gold
    }
    return {"run": statuses, "official": official_verdicts(statuses), "oracle": oracle}


def official_verdicts(statuses: list) -> dict:
    """Per task: the reward and the phases completed; per submit: passed, its phase (from the handler's own
    words), the reward after it."""
    out = {}
    for status in statuses:
        submits = []
        for entry in status["interaction_history"]:
            words = entry.get("observation") or ""
            if not (entry.get("interaction_object") == "User" and str(entry.get("action", "")).startswith("submit(")):
                continue
            phase = 1 if "Phase 1" in words else 2 if "Phase 2" in words else None
            submits.append({"passed": "SQL Correct!" in words, "phase": phase, "reward": entry.get("reward")})
        out[status["original_data"]["instance_id"]] = {
            "reward": status.get("last_reward") or 0.0,
            "phase1_completed": status.get("phase1_completed"),
            "phase2_completed": status.get("phase2_completed"),
            "submits": submits,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--record", nargs=2, metavar=("AGENT", "PYTHON"))
    parser.add_argument("--postgres", action="store_true", help="bird_interact_agent's loop on PostgreSQL")
    args = parser.parse_args()
    if not args.record:
        build(args.out, args.postgres)
        return
    found = record(args.out, Path(args.record[0]), args.record[1], args.postgres)
    target = RECORDED_PG if args.postgres else RECORDED
    target.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
