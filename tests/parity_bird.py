"""Parity data for `bird` against BIRD's official scripts, and the recorder of their verdicts.

`build(root, dialect)` writes both layouts from the cases below: mini-dev's (`mini/pred.json`,
`mini/gold.sql`, `mini/questions.jsonl`) and BIRD dev's (`dev/predict_dev.json`, `dev/dev_gold.sql`,
`dev/dev.json`), and the SQLite databases `<root>/db/<db_id>/<db_id>.sqlite` (shop, financial).  For
PostgreSQL and MySQL the same tables are loaded into a server database first (`load_server`).

Recording (tests/data/parity/bird.json), with the official code unmodified:

    python tests/parity_bird.py record --minidev /path/to/mini_dev/evaluation --dev /path/to/bird/llm/src \\
        --python /path/to/python-with-func_timeout-psycopg2-pymysql [--servers]

The driver imports `evaluation_ex.py`, `evaluation_f1.py` (mini-dev) or `evaluation.py` (dev), runs their own
`package_sqls` and `run_sqls_parallel`, and stores each question's `res` in order.  For PostgreSQL and
MySQL it replaces only `evaluation_utils.connect_postgresql` / `connect_mysql` (the scripts' hard-coded
credentials) with a connection to the test server; `--servers` starts them (tests/dbservers.py).
`compare-random MINIDEV DEV PYTHON N` (SQLite) and `compare-random-servers MINIDEV PYTHON N` add N seeded
random questions and compare the official verdicts with the project's live (nothing recorded).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

SEP = "\t----- bird -----\t"
RECORDED = Path(__file__).parent / "data" / "parity" / "bird.json"
DIALECTS = ("SQLite", "PostgreSQL", "MySQL")

ITEMS = [(1, "pen", 2.5, "a"), (2, "ink", 10.0, "a"), (3, "cap", None, "b"), (4, "pad", 2.5, "c")]
LOANS = [(1, 100), (2, 250)]

# (gold, prediction value, difficulty, where: "all", "sqlite", "server", "pg", "mysql")
CASES = [
    ("SELECT name FROM items WHERE kind = 'a'", "SELECT name FROM items WHERE kind = 'a'", "simple", "all"),
    ("SELECT name FROM items WHERE kind = 'a'", "SELECT name FROM items WHERE price > 5", "simple", "all"),
    ("SELECT count(*) FROM items", "SELECT count(*) * 1.0 FROM items", "simple", "all"),
    ("SELECT kind FROM items", "SELECT DISTINCT kind FROM items", "moderate", "all"),
    ("SELECT name FROM items ORDER BY id", "SELECT name FROM items ORDER BY id DESC", "moderate", "all"),
    ("SELECT name, kind FROM items", "SELECT kind, name FROM items", "moderate", "all"),
    ("SELECT id, name FROM items", "SELECT id, name, kind FROM items", "challenging", "all"),
    ("SELECT id, name FROM items", "SELECT id FROM items", "challenging", "all"),
    ("SELECT id, name FROM items WHERE id < 3", "SELECT id, name FROM items", "challenging", "all"),
    ("SELECT name FROM items WHERE id > 9", "SELECT name FROM items", "simple", "all"),
    ("SELECT name FROM items", "SELECT name FROM items WHERE id > 9", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", "SELECT name FROM items WHERE id > 8", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", "", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", None, "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", 7, "simple", "all"),
    ("SELECT name FROM items", "SELECT name FROM nowhere", "moderate", "all"),
    ("SELECT name FROM items", "```sql\nSELECT name FROM items\n```", "moderate", "all"),
    ("SELECT id FROM items WHERE id = 2", "SELECT id FROM items WHERE id = 2 -----bird----- shop", "simple", "all"),
    ("SELECT id, price FROM items", "SELECT price, id FROM items", "simple", "all"),
    ("SELECT price FROM items", "SELECT price FROM items WHERE price IS NOT NULL", "moderate", "all"),
    ("SELECT 1", "SELECT 1;;", "simple", "sqlite"),
    ("SELECT amount FROM loans", "SELECT amount FROM loans", "simple", "all"),  # shop has no loans: dev's rule
    ("SELECT name FROM items", ("SELECT name FROM items", "financial"), "simple", "sqlite"),
    ("SELECT amount FROM loans", ("SELECT amount FROM loans", "financial"), "simple", "sqlite"),
    ("SELECT name FROM items", ("SELECT name FROM items", "nowhere"), "simple", "sqlite"),
    # PostgreSQL values as psycopg2 returns them
    (
        "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
        "simple",
        "pg",
    ),
    ("SELECT '(1,a)'", "SELECT ROW(1, 'a')", "simple", "pg"),
    ("SELECT 'infinity'::timestamp", "SELECT 'infinity'::timestamp", "simple", "pg"),
    ("SELECT 'infinity'::date", "SELECT 'infinity'::date", "simple", "pg"),
    ("SELECT '{\"a\": 1}'::json", "SELECT '{\"a\": 1}'::json", "simple", "pg"),
    ("SELECT ARRAY[1, 2]", "SELECT ARRAY[1, 2]", "simple", "pg"),
    ("SELECT name FROM items", "SELECT array_agg(name) FROM items", "simple", "pg"),
    ("SELECT 'infinity'::timestamptz", "SELECT 'infinity'::timestamptz", "simple", "pg"),
    ("SELECT '-infinity'::date", "SELECT '-infinity'::date", "simple", "pg"),
    ("SELECT 'infinity'::timestamp", "SELECT '-infinity'::timestamp", "simple", "pg"),
    ("SELECT '(1,\"a b\")'", "SELECT ROW(1, 'a b')", "simple", "pg"),
    ("SELECT '192.168.0.1'", "SELECT '192.168.0.1'::inet", "simple", "pg"),
    ("SELECT '10.0.0.0/8'", "SELECT '10.0.0.0/8'::cidr", "simple", "pg"),
    ("SELECT '08:00:2b:01:02:03'", "SELECT '08:00:2b:01:02:03'::macaddr", "simple", "pg"),
    ("SELECT '$1.50'", "SELECT 1.5::money", "simple", "pg"),
    ("SELECT '101'", "SELECT B'101'", "simple", "pg"),
    ("SELECT '(1,2)'", "SELECT point(1, 2)", "simple", "pg"),
    ("SELECT 'a'::bytea", "SELECT 'a'::bytea", "simple", "pg"),
    ("SELECT 1.50", "SELECT 1.5::numeric", "simple", "pg"),
    ("SELECT 'NaN'::numeric", "SELECT 'NaN'::numeric", "simple", "pg"),
    ("SELECT 'NaN'::float8", "SELECT 'NaN'::float8", "simple", "pg"),
    ("SELECT interval '1 day'", "SELECT interval '24 hours'", "simple", "pg"),
    ("SELECT '[1,3)'::int4range", "SELECT int4range(1, 3)", "simple", "pg"),
    ("SELECT '<a/>'", "SELECT '<a/>'::xml", "simple", "pg"),
    ("SELECT '{\"a\": 1}'", "SELECT '{\"a\": 1}'::jsonb", "simple", "pg"),
    ("SELECT 1", "VALUES (1)", "simple", "server"),
    ("SELECT name FROM items", "SHOW search_path", "simple", "pg"),
    ("SELECT name FROM items ORDER BY id", "SELECT name FROM items ORDER BY id DESC", "simple", "all"),
    ("SELECT name, kind FROM items ORDER BY id", "SELECT name, kind FROM items ORDER BY name", "simple", "all"),
    ("SELECT DISTINCT kind FROM items", "SELECT kind FROM items", "simple", "all"),
    (
        "SELECT kind, count(*) FROM items GROUP BY kind",
        "SELECT kind, count(id) FROM items GROUP BY kind",
        "moderate",
        "all",
    ),
    ("SELECT b'1'", "SELECT 1", "simple", "mysql"),
    ("SELECT CAST('2020-01-01' AS DATE)", "SELECT '2020-01-01'", "simple", "mysql"),
    ("SELECT 1.5", "SELECT 1.50", "simple", "mysql"),
    ("SELECT JSON_OBJECT('a', 1)", "SELECT JSON_OBJECT('a', 1)", "simple", "mysql"),
    ("SELECT name FROM items WHERE id = 1", "SELECT name FROM items WHERE id = 1 # comment", "simple", "mysql"),
    ("SELECT name FROM items WHERE id = 1", "SELECT name FROM items WHERE id = 1 /*! AND 1 */", "simple", "mysql"),
    ("SELECT name FROM items", "SELECT name FROM items; ", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", " -- only a comment", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", "/* only a comment */", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", ";", "simple", "all"),
    ("SELECT name FROM items WHERE id > 9", "; -- c", "simple", "all"),
    ("SELECT name FROM items", "SELECT 1; SELECT name FROM items", "moderate", "pg"),
    ("SELECT name FROM items WHERE id = 1", "SELECT name FROM items WHERE id = 1 FOR UPDATE", "moderate", "server"),
    (
        "SELECT name FROM items WHERE id = 1",
        "SELECT name FROM items WHERE id = 1 LOCK IN SHARE MODE",
        "simple",
        "mysql",
    ),
    ("SELECT 1 WHERE 1 = 0", "SET @x = 1", "simple", "mysql"),
    ("SELECT 1 WHERE 1 = 0", "SELECT 1 INTO @v", "simple", "mysql"),
    ("SELECT 'items' UNION SELECT 'loans'", "SHOW TABLES", "simple", "mysql"),
    ("SELECT name FROM items", "SELECT 1; SELECT name FROM items", "moderate", "mysql"),
    ("SELECT name FROM items", "DELETE FROM items WHERE id > 9", "challenging", "server"),
]


def cases(dialect: str, extra_random: int = 0) -> list[tuple]:
    where = {"SQLite": ("all", "sqlite"), "PostgreSQL": ("all", "server", "pg"), "MySQL": ("all", "server", "mysql")}
    return [c for c in CASES if c[3] in where[dialect]] + random_cases(extra_random)


def random_cases(count: int, seed: int = 11) -> list[tuple]:
    """Seeded random (gold, prediction, difficulty, "all") cases over the items table."""
    import random

    rng = random.Random(seed)
    columns = ["name", "id", "price", "kind", "name, kind", "kind, name", "id, price", "count(*)", "DISTINCT kind"]
    wheres = ["", " WHERE kind = 'a'", " WHERE price > 2", " WHERE id > 9", " WHERE price IS NULL", " WHERE id < 3"]
    orders = ["", " ORDER BY id", " ORDER BY id DESC", " ORDER BY name"]
    out = []
    for _ in range(count):
        gold = f"SELECT {rng.choice(columns)} FROM items{rng.choice(wheres)}{rng.choice(orders)}"
        pred = f"SELECT {rng.choice(columns)} FROM items{rng.choice(wheres)}{rng.choice(orders)}"
        tail = rng.choice(["", "", ";", "; -- c", " -- c", " /* c */", ";\n", ";;", "; SELECT 1", "\n"])
        pred = rng.choice([pred, pred, pred, gold, gold + " LIMIT 2", ""]) + tail
        out.append((gold, pred, rng.choice(["simple", "moderate", "challenging"]), "all"))
    return out


def _value(pred, db: str):
    if isinstance(pred, tuple):
        return pred[0] + SEP + pred[1]
    if isinstance(pred, str) and pred and "-----bird-----" not in pred:
        return pred + SEP + db
    return pred


def _make_db(path: Path, loans: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE items (id INTEGER, name TEXT, price REAL, kind TEXT)")
    con.executemany("INSERT INTO items VALUES (?,?,?,?)", ITEMS)
    if loans:
        con.execute("CREATE TABLE loans (id INTEGER, amount INTEGER)")
        con.executemany("INSERT INTO loans VALUES (?,?)", LOANS)
    con.commit()
    con.close()


def build(root: Path, dialect: str = "SQLite", extra_random: int = 0) -> list[tuple]:
    root = Path(root)
    _make_db(root / "db" / "shop" / "shop.sqlite", loans=dialect != "SQLite")
    _make_db(root / "db" / "financial" / "financial.sqlite", loans=True)
    chosen = cases(dialect, extra_random)
    preds = {str(i): _value(p, "shop") for i, (_, p, _, _) in enumerate(chosen)}
    gold = "".join(f"{g}\tshop\n" for g, _, _, _ in chosen)
    questions = [{"question_id": i, "db_id": "shop", "difficulty": d} for i, (_, _, d, _) in enumerate(chosen)]
    _write(root / "mini", ("pred.json", "gold.sql", "questions.jsonl"), preds, gold, questions)
    # BIRD dev stops at a value without exactly one separator: its files hold the others only, and
    # dev_crash/ holds them all (the official script raises; the project grades and says so).
    keep = [k for k, v in enumerate(preds.values()) if not isinstance(v, str) or len(v.split(SEP)) == 2]
    dev_preds = {str(n): list(preds.values())[k] for n, k in enumerate(keep)}
    dev_gold = "".join(gold.splitlines(keepends=True)[k] for k in keep)
    _write(
        root / "dev",
        ("predict_dev.json", "dev_gold.sql", "dev.json"),
        dev_preds,
        dev_gold,
        [questions[k] for k in keep],
    )
    _write(root / "dev_crash", ("predict_dev.json", "dev_gold.sql", "dev.json"), preds, gold, questions)
    return chosen


def dev_kept(dialect: str = "SQLite", extra_random: int = 0) -> list[int]:
    """Positions of the cases the dev files hold."""
    values = [_value(p, "shop") for _, p, _, _ in cases(dialect, extra_random)]
    return [k for k, v in enumerate(values) if not isinstance(v, str) or len(v.split(SEP)) == 2]


def _write(folder: Path, names: tuple, preds: dict, gold: str, questions: list) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / names[0]).write_text(json.dumps(preds, indent=1), encoding="utf-8")
    (folder / names[1]).write_text(gold, encoding="utf-8")
    if names[2].endswith(".jsonl"):
        (folder / names[2]).write_text("".join(json.dumps(q) + "\n" for q in questions))
    else:
        (folder / names[2]).write_text(json.dumps(questions))


# ---------------------------------------------------------------- the official side (another venv)


def official_driver(script: Path, root: Path, dialect: str, connection: dict) -> list:
    """Run in the official scripts' venv: their own package_sqls and run_sqls_parallel, each `res` in order."""
    sys.path.insert(0, str(script.parent))
    name = script.stem
    module = __import__(name)
    if connection:
        import evaluation_utils

        if dialect == "PostgreSQL":
            import psycopg2

            evaluation_utils.connect_postgresql = lambda: psycopg2.connect(**connection)
        else:
            import pymysql

            evaluation_utils.connect_mysql = lambda: pymysql.connect(**connection)
    module.exec_result = []
    db_root = str(root / "db") + "/"
    if name == "evaluation":  # BIRD dev
        preds, db_paths = module.package_sqls(str(root / "dev") + "/", db_root, mode="gpt", data_mode="dev")
        golds, _ = module.package_sqls(str(root / "dev") + "/", db_root, mode="gt", data_mode="dev")
        module.run_sqls_parallel(list(zip(preds, golds, strict=False)), db_places=db_paths, num_cpus=1)
    else:
        preds, _ = module.package_sqls(str(root / "mini" / "pred.json"), db_root, mode="pred")
        golds, db_paths = module.package_sqls(str(root / "mini" / "gold.sql"), db_root, mode="gt")
        module.run_sqls_parallel(
            list(zip(preds, golds, strict=False)), db_places=db_paths, num_cpus=1, sql_dialect=dialect
        )
    return [r["res"] for r in module.sort_results(module.exec_result)]


def run_official(python: str, script: Path, root: Path, dialect: str, connection: dict | None = None) -> list:
    done = subprocess.run(
        [python, __file__, "driver", str(script), str(root), dialect, json.dumps(connection or {})],
        capture_output=True,
        text=True,
        cwd=script.parent,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the project's side


def project_results(root: Path, work: Path, dialect: str, layout: str, dsn: str | None = None) -> list[dict]:
    from evaluators.bird.run import BirdOptions, grade_bird

    options = BirdOptions(
        root / "db",
        dialect,
        work_dir=work,
        postgres_dsn=dsn if dialect == "PostgreSQL" else None,
        mysql_dsn=dsn if dialect == "MySQL" else None,
    )
    if layout in ("dev", "dev_crash"):
        report = grade_bird(root / layout, root / layout, root / layout / "dev.json", options)
    else:
        report = grade_bird(
            root / "mini" / "pred.json", root / "mini" / "gold.sql", root / "mini" / "questions.jsonl", options
        )
    return [{"ex": int(i.score), "soft_f1": i.execution.get("soft_f1"), "reason": i.reason} for i in report.instances]


if __name__ == "__main__":
    if sys.argv[1] == "driver":
        script, root, dialect, connection = sys.argv[2:6]
        print(json.dumps(official_driver(Path(script), Path(root), dialect, json.loads(connection))))


def load_server(root: Path, dialect: str, pg=None, maria=None) -> tuple[str, dict]:
    """The shop tables into a server database named `shop`; (the grader's DSN, the official connection)."""
    from helpers_io import run_cli

    shop = root / "db" / "shop" / "shop.sqlite"
    if dialect == "PostgreSQL":
        admin = f"postgresql://postgres@127.0.0.1:{pg.port}/postgres"
        result = run_cli("db", "load-sqlite", shop, "--engine", "postgres", "--dsn", admin, "--replace")
        assert result.exit_code == 0, result.output
        with pg.admin("shop") as con:
            con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")
        return pg.dsn.rsplit("/", 1)[0] + "/shop", {
            "host": "127.0.0.1",
            "port": pg.port,
            "user": "postgres",
            "dbname": "shop",
        }
    admin = f"mysql://root@localhost/?unix_socket={maria.socket}"
    result = run_cli("db", "load-sqlite", shop, "--engine", "mysql", "--dsn", admin, "--replace")
    assert result.exit_code == 0, result.output
    con = maria.admin()
    try:
        con.cursor().execute("GRANT ALL ON shop.* TO 'grader'@'%'")  # the read-only transaction must hold (not FILE)
    finally:
        con.close()
    return maria.dsn + "/shop", {"unix_socket": maria.socket, "user": "root", "database": "shop"}


SCRIPTS = {"ex": "evaluation_ex.py", "f1": "evaluation_f1.py"}


def record(minidev: Path, dev: Path, python: str, work: Path, servers: bool) -> dict:
    out: dict = {}
    for dialect in DIALECTS if servers else ("SQLite",):
        root = work / dialect
        build(root, dialect)
        connection: dict = {}
        stop = []
        if dialect != "SQLite":
            from dbservers import start_mariadb, start_postgres

            server, stopper = (start_postgres if dialect == "PostgreSQL" else start_mariadb)()
            stop.append(stopper)
            _, connection = load_server(root, dialect, server, server)
        try:
            found = {k: run_official(python, minidev / name, root, dialect, connection) for k, name in SCRIPTS.items()}
            if dialect == "SQLite":
                found["dev"] = run_official(python, dev / "evaluation.py", root, dialect)
            out[dialect] = found
        finally:
            for stopper in stop:
                stopper()
    return out


def compare_random(minidev: Path, dev: Path, python: str, work: Path, count: int) -> dict:
    """SQLite only: the fixed and `count` random cases, official and ours, compared live (not recorded)."""
    build(work, "SQLite", count)
    found = {k: run_official(python, minidev / name, work, "SQLite") for k, name in SCRIPTS.items()}
    found["dev"] = run_official(python, dev / "evaluation.py", work, "SQLite")
    mini = project_results(work, work / "w", "SQLite", "mini")
    dev_ours = project_results(work, work / "w", "SQLite", "dev")
    return {
        "ex": (sum(a["ex"] == b for a, b in zip(mini, found["ex"], strict=True)), len(found["ex"])),
        "soft_f1": (sum(a["soft_f1"] == b for a, b in zip(mini, found["f1"], strict=True)), len(found["f1"])),
        "dev": (sum(a["ex"] == b for a, b in zip(dev_ours, found["dev"], strict=True)), len(found["dev"])),
    }


def compare_random_servers(minidev: Path, python: str, work: Path, count: int) -> dict:
    """PostgreSQL and MariaDB (started here): fixed and random cases, official and ours, compared live."""
    from dbservers import start_mariadb, start_postgres

    out = {}
    for dialect, start in (("PostgreSQL", start_postgres), ("MySQL", start_mariadb)):
        root = work / dialect
        build(root, dialect, count)
        server, stop = start()
        try:
            dsn, connection = load_server(root, dialect, server, server)
            found = {k: run_official(python, minidev / name, root, dialect, connection) for k, name in SCRIPTS.items()}
            ours = project_results(root, root / "w", dialect, "mini", dsn)
        finally:
            stop()
        out[dialect] = {
            "ex": (sum(a["ex"] == b for a, b in zip(ours, found["ex"], strict=True)), len(found["ex"])),
            "soft_f1": (sum(a["soft_f1"] == b for a, b in zip(ours, found["f1"], strict=True)), len(found["f1"])),
        }
    return out


if __name__ == "__main__" and sys.argv[1] == "compare-random-servers":  # MINIDEV PYTHON COUNT
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as tmp:
        print(compare_random_servers(Path(sys.argv[2]).resolve(), sys.argv[3], Path(tmp), int(sys.argv[4])))

if __name__ == "__main__" and sys.argv[1] == "compare-random":  # MINIDEV DEV PYTHON COUNT
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as tmp:
        print(
            compare_random(
                Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve(), sys.argv[4], Path(tmp), int(sys.argv[5])
            )
        )

if __name__ == "__main__" and sys.argv[1] == "record":
    import argparse
    import tempfile

    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("--minidev", type=Path, required=True)
    parser.add_argument("--dev", type=Path, required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--servers", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as tmp:
        found = record(args.minidev.resolve(), args.dev.resolve(), args.python, Path(tmp), args.servers)
    RECORDED.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
