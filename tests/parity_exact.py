"""Parity data for Spider 1's exact set match, components, hardness and multi-turn, and their recorder.

`build(root)` writes a Spider-style folder: database/concert_1/concert_1.sqlite, tables.json, and two
gold/prediction pairs of files: `single` (one session: fixed gold queries of every hardness level, each with
predictions that are right, wrong in one component, unreadable to the scorer's parser, or equal in meaning
but not in form) and `multi` (seeded sessions of 1 to 6 turns, blank-line separated).  The official
results are recorded in tests/data/parity/exact.json, so CI compares without the official code:

    python tests/parity_exact.py record /path/to/test-suite-sql-eval /path/to/python

runs the official `evaluation.py --etype all` unmodified (its python needs nltk with punkt_tab, sqlparse,
tqdm; NLTK_DATA pointing at punkt_tab) and stores, per question in order, the hardness, the exact verdict,
the execution verdict and every component's result, and the tables it prints.  The driver only wraps the
official functions to note what they return.  This module imports nothing from `evaluators` at the top.

    python tests/parity_exact.py record-classic /path/to/taoyds-spider /path/to/python

does the same with taoyds/spider's classic `evaluation.py` (`--scorer spider`), adding its `eval_err_num`
count, into tests/data/parity/exact_classic.json.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

DB = "concert_1"
RECORDED = Path(__file__).parent / "data" / "parity" / "exact.json"
RECORDED_CLASSIC = Path(__file__).parent / "data" / "parity" / "exact_classic.json"
SETS = ("single", "multi")

SCHEMA = {
    "stadium": [("stadium_id", "INTEGER"), ("name", "TEXT"), ("capacity", "INTEGER"), ("location", "TEXT")],
    "singer": [("singer_id", "INTEGER"), ("name", "TEXT"), ("country", "TEXT"), ("age", "INTEGER")],
    "concert": [("concert_id", "INTEGER"), ("concert_name", "TEXT"), ("stadium_id", "INTEGER"), ("year", "TEXT")],
    "singer_in_concert": [("concert_id", "INTEGER"), ("singer_id", "INTEGER")],
}
FOREIGN_KEYS = [(("concert", "stadium_id"), ("stadium", "stadium_id")),
                (("singer_in_concert", "concert_id"), ("concert", "concert_id")),
                (("singer_in_concert", "singer_id"), ("singer", "singer_id"))]  # fmt: skip

J = "FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id"
J3 = J + " JOIN concert AS T3 ON T2.concert_id = T3.concert_id"
# gold -> predictions (right; wrong in one component; unreadable; same meaning, other form)
CASES = {
    "SELECT name FROM singer": [
        "SELECT name FROM singer",
        "SELECT country FROM singer",
        "SELECT count(name) FROM singer",
        "SELECT name AS n FROM singer",
        "SELECT DISTINCT name FROM singer",
        "SELECT name FROM singer LIMIT 5",
        "select NAME from SINGER ;",
        "SELECT name FROM stadium",
        "SELECT name, age FROM singer",
    ],
    "SELECT count(*) FROM singer WHERE age > 20": [
        "SELECT count(*) FROM singer WHERE age > 30",
        "SELECT count(*) FROM singer WHERE age < 20",
        "SELECT count(*) FROM singer WHERE age > value",
        "SELECT count(*) FROM singer WHERE age <> 20",
        "SELECT count(singer_id) FROM singer WHERE age > 20",
        "SELECT count(*) FROM singer",
        "SELECT count(*) FROM singer WHERE NOT age > 20",
        "SELECT count(*) FROM singer WHERE age >= 20",
    ],
    "SELECT name, country FROM singer WHERE age BETWEEN 20 AND 30 AND country = 'France'": [
        "SELECT name, country FROM singer WHERE age BETWEEN 1 AND 2 AND country = 'x'",
        "SELECT country, name FROM singer WHERE country = 'France' AND age BETWEEN 20 AND 30",
        "SELECT name, country FROM singer WHERE age BETWEEN 20 AND 30 OR country = 'France'",
        "SELECT name, country FROM singer WHERE age BETWEEN 20 AND 30",
        "SELECT name, country FROM singer WHERE age BETWEEN 20 AND 30 AND country LIKE 'France'",
        "SELECT name, country FROM singer WHERE country IS NOT NULL",
    ],
    "SELECT name FROM stadium ORDER BY capacity DESC LIMIT 1": [
        "SELECT name FROM stadium ORDER BY capacity DESC LIMIT 3",
        "SELECT name FROM stadium ORDER BY capacity",
        "SELECT name FROM stadium ORDER BY capacity DESC",
        "SELECT name FROM stadium ORDER BY capacity ASC LIMIT 1",
        "SELECT name FROM stadium WHERE capacity = (SELECT max(capacity) FROM stadium)",
        "SELECT name FROM stadium ORDER BY location DESC LIMIT 1",
    ],
    "SELECT country, count(*) FROM singer GROUP BY country HAVING count(*) > 1": [
        "SELECT country, count(*) FROM singer GROUP BY country HAVING count(*) > 5",
        "SELECT country, count(*) FROM singer GROUP BY country",
        "SELECT country, count(*) FROM singer GROUP BY name HAVING count(*) > 1",
        "SELECT country, count(*) FROM singer GROUP BY country HAVING avg(age) > 1",
        "SELECT country, count(*) AS c FROM singer GROUP BY country HAVING c > 1",
        "SELECT country, count(*) FROM singer GROUP BY singer.country HAVING count(*) > 1",
    ],
    f"SELECT T1.name {J} GROUP BY T2.singer_id ORDER BY count(*) DESC LIMIT 1": [
        f"SELECT T1.name {J} GROUP BY T1.singer_id ORDER BY count(*) DESC LIMIT 1",
        f"SELECT T1.name {J} GROUP BY T2.singer_id ORDER BY count(*) LIMIT 1",
        "SELECT T1.name FROM singer_in_concert AS T2 JOIN singer AS T1 ON T1.singer_id = T2.singer_id "
        "GROUP BY T2.singer_id ORDER BY count(*) DESC LIMIT 1",
        "SELECT T1.name FROM singer AS T1, singer_in_concert AS T2 WHERE T1.singer_id = T2.singer_id "
        "GROUP BY T2.singer_id ORDER BY count(*) DESC LIMIT 1",
        f"SELECT T1.name {J.replace('JOIN', 'LEFT JOIN')} GROUP BY T2.singer_id ORDER BY count(*) DESC LIMIT 1",
        f"SELECT T1.name {J.replace('T1.singer_id = T2', 'T1.age = T2')} GROUP BY T2.singer_id "
        "ORDER BY count(*) DESC LIMIT 1",
    ],
    "SELECT name FROM singer WHERE singer_id NOT IN (SELECT singer_id FROM singer_in_concert)": [
        "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM singer_in_concert)",
        "SELECT name FROM singer WHERE singer_id NOT IN (SELECT concert_id FROM singer_in_concert)",
        "SELECT name FROM singer EXCEPT SELECT T1.name " + J,
        "SELECT name FROM singer AS s WHERE NOT EXISTS (SELECT 1 FROM singer_in_concert AS c WHERE c.singer_id = s.singer_id)",
    ],
    "SELECT name FROM singer WHERE country = 'France' INTERSECT SELECT name FROM singer WHERE age > 40": [
        "SELECT name FROM singer WHERE country = 'Spain' INTERSECT SELECT name FROM singer WHERE age > 1",
        "SELECT name FROM singer WHERE country = 'France' UNION SELECT name FROM singer WHERE age > 40",
        "SELECT name FROM singer WHERE country = 'France' INTERSECT SELECT name FROM singer WHERE age < 40",
        "SELECT name FROM singer WHERE country = 'France' AND age > 40",
        "SELECT name FROM singer WHERE country = 'France' INTERSECT SELECT country FROM singer WHERE age > 40",
    ],
    f"SELECT T3.concert_name, count(*) {J3} WHERE T1.age > 30 OR T1.country = 'France' GROUP BY T3.concert_id": [
        f"SELECT T3.concert_name, count(*) {J3} WHERE T1.age > 30 AND T1.country = 'France' GROUP BY T3.concert_id",
        f"SELECT T3.concert_name, count(*) {J3} WHERE T1.age > 30 OR T1.country = 'France' GROUP BY T2.concert_id",
        f"SELECT T3.concert_name, count(*) {J3} WHERE T1.country = 'Spain' OR T1.age > 3 GROUP BY T3.concert_id",
        f"SELECT T3.concert_name, count(*) {J3} WHERE T1.age > 30 GROUP BY T3.concert_id",
        f"SELECT T3.concert_name, sum(T1.age) {J3} WHERE T1.age > 30 OR T1.country = 'France' GROUP BY T3.concert_id",
    ],
    "SELECT avg(capacity), max(capacity) FROM stadium WHERE name LIKE '%Park%'": [
        "SELECT avg(capacity), max(capacity) FROM stadium WHERE name LIKE '%x%'",
        "SELECT max(capacity), avg(capacity) FROM stadium WHERE name LIKE '%Park%'",
        "SELECT avg(capacity), min(capacity) FROM stadium WHERE name LIKE '%Park%'",
        "SELECT avg(capacity), max(capacity) FROM stadium WHERE name = 'Park'",
        "SELECT avg(capacity), max(capacity) FROM stadium WHERE name NOT LIKE '%Park%'",
    ],
    "SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '2014' "
    "EXCEPT SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '2015'": [
        "SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '2014'",
        "SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '1' "
        "EXCEPT SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '2'",
        "SELECT name FROM stadium WHERE stadium_id IN (SELECT stadium_id FROM concert WHERE year = '2014') "
        "EXCEPT SELECT T2.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id WHERE T1.year = '2015'",
    ],
    "SELECT T1.stadium_id, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
    "GROUP BY T1.stadium_id": [
        "SELECT T2.stadium_id, count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.stadium_id "
        "GROUP BY T2.stadium_id",
        "SELECT stadium_id, count(*) FROM concert GROUP BY stadium_id",
        "SELECT T1.stadium_id, count(*) FROM concert AS T1 JOIN stadium AS T2 GROUP BY T1.stadium_id",
    ],
    "SELECT count(DISTINCT country) FROM singer": [
        "SELECT count(country) FROM singer",
        "SELECT count(DISTINCT name) FROM singer",
        "SELECT COUNT ( DISTINCT country ) FROM singer",
        "SELECT count(DISTINCT country) FROM singer\tconcert_1",
        'SELECT count(DISTINCT "country") FROM singer',
        "SELECT count(*) FROM (SELECT DISTINCT country FROM singer)",
    ],
    "SELECT name, age FROM singer WHERE age > (SELECT avg(age) FROM singer) ORDER BY age DESC, name ASC": [
        "SELECT name, age FROM singer WHERE age > (SELECT avg(age) FROM singer) ORDER BY age, name",
        "SELECT name, age FROM singer WHERE age > (SELECT avg(age) FROM singer) ORDER BY age DESC, name DESC",
        "SELECT name, age FROM singer WHERE age > (SELECT min(age) FROM singer) ORDER BY age DESC, name ASC",
        "SELECT name, age FROM singer WHERE age > 30 ORDER BY age DESC, name ASC",
    ],
    "SELECT location, count(*) FROM stadium WHERE capacity >= 5000 GROUP BY location ORDER BY count(*) DESC LIMIT 3": [
        "SELECT location, count(*) FROM stadium WHERE capacity >= 1 GROUP BY location ORDER BY count(*) DESC LIMIT 10",
        "SELECT location, count(*) FROM stadium WHERE capacity > 5000 GROUP BY location ORDER BY count(*) DESC LIMIT 3",
        "SELECT location, count(*) FROM stadium GROUP BY location ORDER BY count(*) DESC LIMIT 3",
        "SELECT location, count(*) FROM stadium WHERE capacity >= 5000 GROUP BY location ORDER BY count(*) DESC",
    ],
}
UNREADABLE = ["SELEC name FROM singer", "", "SELECT name FROM", "SELECT * FROM singer WHERE name = 'a", "hello"]


def single_pairs() -> list[tuple[str, str]]:
    pairs = [(gold, gold) for gold in CASES]
    pairs += [(gold, pred) for gold, preds in CASES.items() for pred in preds]
    golds = list(CASES)
    pairs += [(golds[k % len(golds)], bad) for k, bad in enumerate(UNREADABLE) if bad]
    return pairs


def multi_sessions(count: int = 30, seed: int = 11) -> list[list[tuple[str, str]]]:
    rng = random.Random(seed)
    pool = single_pairs()
    return [[rng.choice(pool) for _ in range(rng.randint(1, 6))] for _ in range(count)]


def _make_db(path: Path) -> None:
    con = sqlite3.connect(path)
    for table, columns in SCHEMA.items():
        con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns)})")
    con.executemany("INSERT INTO stadium VALUES (?,?,?,?)", [(1, "Park A", 6000, "x"), (2, "Hall", 4000, "y")])
    con.executemany("INSERT INTO singer VALUES (?,?,?,?)", [(1, "ann", "France", 45), (2, "bo", "Spain", 25),
                                                            (3, "cy", "France", 31)])  # fmt: skip
    con.executemany("INSERT INTO concert VALUES (?,?,?,?)", [(1, "c1", 1, "2014"), (2, "c2", 2, "2015")])
    con.executemany("INSERT INTO singer_in_concert VALUES (?,?)", [(1, 1), (1, 3), (2, 1)])
    con.commit()
    con.close()


def tables_json() -> list[dict]:
    tables = list(SCHEMA)
    columns = [[-1, "*"]] + [[tables.index(t), c] for t in tables for c, _ in SCHEMA[t]]
    index = {(tables[t], c): k for k, (t, c) in enumerate(columns) if t >= 0}
    return [{
        "db_id": DB, "table_names_original": tables, "table_names": tables,
        "column_names_original": columns, "column_names": columns,
        "column_types": ["text"] + ["number" if t == "INTEGER" else "text" for tb in tables for _, t in SCHEMA[tb]],
        "primary_keys": [index[(t, SCHEMA[t][0][0])] for t in tables[:3]],
        "foreign_keys": [[index[a], index[b]] for a, b in FOREIGN_KEYS],
    }]  # fmt: skip


def _write(path: Path, sessions: list[list[tuple[str, str]]], side: int) -> None:
    blocks = ["".join(f"{pair[0]}\t{DB}\n" if side == 0 else f"{pair[1]}\n" for pair in s) for s in sessions]
    path.write_text("\n".join(blocks), encoding="utf-8")


def build(root: Path) -> dict[str, list[list[tuple[str, str]]]]:
    folder = Path(root) / "database" / DB
    folder.mkdir(parents=True, exist_ok=True)
    _make_db(folder / f"{DB}.sqlite")
    (Path(root) / "tables.json").write_text(json.dumps(tables_json(), indent=1), encoding="utf-8")
    found = {"single": [single_pairs()], "multi": multi_sessions()}
    for name, sessions in found.items():
        _write(Path(root) / f"{name}_gold.txt", sessions, 0)
        _write(Path(root) / f"{name}_pred.txt", sessions, 1)
    return found


def official_driver(official: Path, root: Path, name: str) -> dict:
    """Run in the official scorer's venv: `evaluate()` with --etype all, each question's results noted."""
    sys.path.insert(0, str(official))
    sys.argv = ["evaluation.py"]
    import evaluation  # the official module, unmodified

    noted: list[dict] = []
    depth = [0]
    hardness, exact, execution = (
        evaluation.Evaluator.eval_hardness,
        evaluation.Evaluator.eval_exact_match,
        evaluation.eval_exec_match,
    )

    def note_hardness(self, sql):
        noted.append({"hardness": hardness(self, sql)})
        return noted[-1]["hardness"]

    def note_exact(self, pred, label):
        depth[0] += 1
        try:
            verdict = exact(self, pred, label)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            noted[-1]["exact"] = int(verdict)
            noted[-1]["partial"] = {k: [v["acc"], v["rec"], v["f1"], v["label_total"], v["pred_total"]]
                                    for k, v in self.partial_scores.items()}  # fmt: skip
        return verdict

    def note_exec(**kwargs):
        noted[-1]["exec"] = int(execution(**kwargs))
        return noted[-1]["exec"]

    evaluation.Evaluator.eval_hardness, evaluation.Evaluator.eval_exact_match = note_hardness, note_exact
    evaluation.eval_exec_match = note_exec
    kmaps = evaluation.build_foreign_key_map_from_json(str(root / "tables.json"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        evaluation.evaluate(str(root / f"{name}_gold.txt"), str(root / f"{name}_pred.txt"), str(root / "database"),
                            "all", kmaps, False, False, False)  # fmt: skip
    text = out.getvalue()
    return {"questions": noted, "tables": text[text.index(" " * 21 + "easy") :]}


def classic_driver(official: Path, root: Path, name: str) -> dict:
    """Run in the classic scorer's venv (taoyds/spider's evaluation.py): `evaluate()` with --etype all, each
    question's results noted, and its `eval_err_num` lines counted."""
    sys.path.insert(0, str(official))
    sys.argv = ["evaluation.py"]
    import evaluation  # the classic module, unmodified

    noted: list[dict] = []
    hardness, exact, execution = (
        evaluation.Evaluator.eval_hardness,
        evaluation.Evaluator.eval_exact_match,
        evaluation.eval_exec_match,
    )

    def note_hardness(self, sql):
        noted.append({"hardness": hardness(self, sql)})
        return noted[-1]["hardness"]

    def note_exact(self, pred, label):
        verdict = exact(self, pred, label)  # IUEN's nested calls end first: the outer call is noted last
        noted[-1]["exact"] = int(verdict)
        noted[-1]["partial"] = {k: [v["acc"], v["rec"], v["f1"], v["label_total"], v["pred_total"]]
                                for k, v in self.partial_scores.items()}  # fmt: skip
        return verdict

    def note_exec(db, p_str, g_str, pred, gold):
        noted[-1]["exec"] = int(bool(execution(db, p_str, g_str, pred, gold)))
        return noted[-1]["exec"]

    evaluation.Evaluator.eval_hardness, evaluation.Evaluator.eval_exact_match = note_hardness, note_exact
    evaluation.eval_exec_match = note_exec
    kmaps = evaluation.build_foreign_key_map_from_json(str(root / "tables.json"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        evaluation.evaluate(str(root / f"{name}_gold.txt"), str(root / f"{name}_pred.txt"), str(root / "database"),
                            "all", kmaps)  # fmt: skip
    text = out.getvalue()
    errors = [line for line in text.splitlines() if line.startswith("eval_err_num:")]
    return {"questions": noted, "eval_err_num": len(errors), "tables": text[text.index(" " * 21 + "easy") :]}


def record(official: Path, python: str, root: Path, driver: str = "driver") -> dict:
    build(root)
    found = {}
    for name in SETS:
        done = subprocess.run([python, __file__, driver, str(official), str(root), name],
                              capture_output=True, text=True, check=True, cwd=official)  # fmt: skip
        found[name] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command in ("driver", "classic-driver"):
        run = official_driver if command == "driver" else classic_driver
        print(json.dumps(run(Path(args[0]), Path(args[1]), args[2])))
    elif command == "record":  # record OFFICIAL PYTHON
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            RECORDED.write_text(json.dumps(record(Path(args[0]).resolve(), args[1], Path(tmp)), indent=0) + "\n")
    elif command == "record-classic":  # record-classic SPIDER PYTHON (taoyds/spider's folder)
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            found = record(Path(args[0]).resolve(), args[1], Path(tmp), "classic-driver")
            RECORDED_CLASSIC.write_text(json.dumps(found, indent=0) + "\n")
