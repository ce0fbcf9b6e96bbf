"""Parity data for `test-suite` against test-suite-sql-eval, and the recorder of the official verdicts.

`build(root, extra_random)` writes a Spider-style folder (two databases per db_id, gold.txt, pred.txt) from
fixed quirk cases and, with `extra_random`, seeded random ones.  The official verdicts for the fixed cases
are recorded in tests/data/parity/testsuite.json, so CI compares without the official code:

    python tests/parity_testsuite.py record --official /path/to/test-suite-sql-eval --python /path/to/python

runs the official `evaluation.py --etype exec` (unmodified; its python needs sqlparse, nltk and tqdm) in
every mode (default, --keep_distinct, --plug_value) and stores each compared pair's verdict, in order.
The driver wraps `exec_eval.eval_exec_match` to note each verdict, and replaces only the parts of
`evaluation.py` that feed exact-set-match and hardness (`get_sql`, `eval_hardness`: they need nltk's punkt
data and do not change an exec verdict).  `compare` grades the same folder with the project and prints the
agreement; `--random N` adds N seeded random cases (not recorded; compared live).
This module imports nothing from `evaluators` at the top: the official driver runs it in another venv.
"""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

DB = "pets_1"
MODES = {"default": [], "keep_distinct": ["--keep_distinct"], "plug_value": ["--plug_value"]}
RECORDED = Path(__file__).parent / "data" / "parity" / "testsuite.json"

PEOPLE = [(1, "ann", 30, 1.5), (2, "bob", 30, 2.0), (3, "cy", 41, 2.0), (4, "dee", 25, None), (5, "a\\", 52, 0.5)]
PETS = [(1, "cat"), (1, "dog"), (2, "cat"), (3, "fish")]

FIXED = [
    # first statement only (sqlparse.parse(s)[0]) unless --keep_distinct
    ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age = 30; SELECT 1"),
    ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age = 30;;"),
    ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age = 30;"),
    ("SELECT name FROM people", "SELECT 1; SELECT name FROM people"),
    # DISTINCT as sqlparse reads it: a quoted name is a name
    ('SELECT "distinct" FROM kw', "SELECT [distinct] FROM kw"),
    ('SELECT "distinct" FROM kw', "SELECT kw.[distinct] FROM kw"),
    ('SELECT "distinct" FROM kw', "SELECT `distinct` FROM kw"),
    ('SELECT "distinct" FROM kw', 'SELECT DISTINCT "distinct" FROM kw'),
    ("SELECT kind FROM pets", "SELECT DISTINCT kind FROM pets"),
    ("SELECT count(DISTINCT kind) FROM pets", "SELECT count(kind) FROM pets"),
    ("SELECT name FROM people WHERE name = 'a\\'", "SELECT DISTINCT name FROM people WHERE name = 'a\\'"),
    ("SELECT age FROM people WHERE name = 'a\\' OR name = 'distinct'", "SELECT age FROM people WHERE age = 52"),
    ("SELECT DISTINCT age FROM people", "SELECT age FROM people WHERE name != 'x\\' OR DISTINCT = 1"),
    ("SELECT name FROM people WHERE name = 'distinct'", "SELECT name FROM people WHERE 0"),
    # lines as readlines() splits them
    ("SELECT name FROM people", "SELECT name\x0cFROM people"),
    ("SELECT name FROM people WHERE id = 1", "SELECT name FROM people WHERE name = 'ann' OR name = 'x\u2028y'"),
    ("SELECT age FROM people WHERE id = 2", "SELECT age FROM people WHERE id = 2\x1c"),
    ("SELECT name FROM people WHERE id = 3", "SELECT name FROM people WHERE id = 3 \x85"),
    # values, for --plug_value
    ("SELECT name FROM people WHERE age > 30", "SELECT name FROM people WHERE age > 1"),
    ("SELECT name FROM people WHERE name = 'cy'", "SELECT name FROM people WHERE name = 'zed'"),
    (
        "SELECT T1.name FROM people AS T1 JOIN pets AS T2 ON T1.id = T2.owner WHERE T2.kind = 'fish'",
        "SELECT T1.name FROM people AS T1 JOIN pets AS T2 ON T1.id = T2.owner WHERE T2.kind = 'value'",
    ),
    ("SELECT count(*) FROM people WHERE score > 1.5", "SELECT count(*) FROM people WHERE score > 0.5"),
    ("SELECT name FROM people WHERE age BETWEEN 26 AND 35", "SELECT name FROM people WHERE age BETWEEN 1 AND 2"),
    ("SELECT name FROM people WHERE age = 30 AND id < 3", "SELECT name FROM people WHERE age = 41 AND id < 9"),
    ("SELECT name FROM people WHERE name IN ('ann', 'cy')", "SELECT name FROM people WHERE name IN ('bob','x')"),
    ("SELECT name FROM people WHERE age = 41", "SELECT name FROM people WHERE age = value"),
    ("SELECT name FROM people WHERE name LIKE 'a%'", 'SELECT name FROM people WHERE name LIKE "b%"'),
    ("SELECT T1.* FROM people AS T1 WHERE T1.age = 41", "SELECT t1.* FROM people AS t1 WHERE t1.age = 30"),
    ("SELECT name FROM people WHERE age > -1", "SELECT name FROM people WHERE age > -5"),
    ("SELECT name FROM people WHERE score = 2.0", "SELECT name FROM people WHERE score = 1.5"),
    (
        "SELECT name FROM people WHERE name = 'ann' AND age = 30",
        "SELECT name FROM people WHERE name = 'bob' AND age = 41",
    ),
    ("SELECT name FROM people WHERE age IN (30, 41)", "SELECT name FROM people WHERE age IN (1,2)"),
    ('SELECT name FROM people WHERE name = "cy"', "SELECT name FROM people WHERE name = 'x'"),
    ("SELECT count(*) FROM people WHERE age > 26", "SELECT count(*) FROM people WHERE age >= 26;"),
    ("SELECT DISTINCT T2.kind FROM pets AS T2 WHERE T2.owner = 1", "SELECT T2.kind FROM pets AS T2 WHERE T2.owner = 2"),
    ("SELECT name FROM people WHERE age = 30 LIMIT 1", "SELECT name FROM people WHERE age = 41 LIMIT 3"),
    ("SELECT max(age) FROM people WHERE id != 5", "SELECT max(age) FROM people WHERE id != 3"),
    ("SELECT name FROM people WHERE name LIKE '%n%'", "SELECT name FROM people WHERE name LIKE 'value'"),
    ("SELECT avg(score) FROM people WHERE age < 35", "SELECT avg(score) FROM people WHERE age < 99 AND id > 0"),
    # the rest of the rule
    ("SELECT name, age FROM people", "SELECT age, name FROM people"),
    ("SELECT name FROM people ORDER BY age", "SELECT name FROM people ORDER BY age DESC"),
    ("SELECT name FROM people ORDER  BY age", "SELECT name FROM people ORDER BY age DESC"),
    ("SELECT name FROM people WHERE id < 3", "SELECT name FROM people WHERE age = 30"),
    ("SELECT avg(age) FROM people", "SELECT avg(age) + 0.0 FROM people"),
    ("SELECT name FROM people WHERE age > 100", "SELECT kind, owner FROM pets WHERE owner > 100"),
    ("SELECT name FROM people", "SELECT nme FROM people"),
    ("SELECT 2020 - age FROM people", "SELECT YEAR(CURDATE()) - age FROM people"),
    ("SELECT name FROM people WHERE age > = 30", "SELECT name FROM people WHERE age >= 30"),
    ("SELECT id, name, age, score FROM people", "SELECT score, age, name, id FROM people"),
]


def _make_db(path: Path, people: list, pets: list) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE people (id INTEGER, name TEXT, age INTEGER, score REAL)")
    con.execute("CREATE TABLE pets (owner INTEGER, kind TEXT)")
    con.execute('CREATE TABLE kw (id INTEGER, "distinct" TEXT)')
    con.executemany("INSERT INTO people VALUES (?,?,?,?)", people)
    con.executemany("INSERT INTO pets VALUES (?,?)", pets)
    con.executemany("INSERT INTO kw VALUES (?,?)", [(1, "x"), (2, "x"), (3, "y")])
    con.commit()
    con.close()


def random_cases(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """Seeded random (gold, prediction) pairs built from the quirks above."""
    rng = random.Random(seed)
    cols = ["name", "age", "id", "score", "DISTINCT name", "count(DISTINCT age)", "[distinct]", '"distinct"']
    wheres = ["", " WHERE age > 30", " WHERE age = 30", " WHERE name = 'ann'", " WHERE name != 'a\\'", " WHERE 0"]
    tails = ["", " ORDER BY age", " ORDER BY id DESC", ";", ";;", "; SELECT 1", " LIMIT 2", "\x0c", " \u2028"]
    out = []
    for _ in range(count):
        table = "kw" if rng.random() < 0.15 else "people"
        pick = [c for c in cols if (("distinct]" in c or '"distinct"' in c) == (table == "kw")) or c == "id"]
        gold = f"SELECT {rng.choice(pick)} FROM {table}{rng.choice(wheres) if table == 'people' else ''}"
        gold += rng.choice(["", " ORDER BY id"])
        pred = f"SELECT {rng.choice(pick)} FROM {table}{rng.choice(wheres) if table == 'people' else ''}"
        out.append((gold, pred + rng.choice(tails)))
    return out


def build(root: Path, extra_random: int = 0) -> list[tuple[str, str]]:
    folder = Path(root) / "database" / DB
    folder.mkdir(parents=True, exist_ok=True)
    _make_db(folder / f"{DB}.sqlite", PEOPLE, PETS)
    _make_db(folder / f"{DB}_variant.sqlite", [*PEOPLE[:1], (2, "bob", 31, 2.0), *PEOPLE[2:]], [*PETS, (4, "cat")])
    cases = FIXED + random_cases(extra_random)
    with open(Path(root) / "gold.txt", "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(f"{gold}\t{DB}\n" for gold, _ in cases))
    with open(Path(root) / "pred.txt", "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(f"{pred}\n" for _, pred in cases))
    return cases


def official_driver(official: Path, root: Path, flags: list[str]) -> list[int]:
    """Run in the official scorer's venv: its `evaluate()` on the folder, each exec verdict noted in order."""
    sys.path.insert(0, str(official))
    sys.argv = ["evaluation.py"]
    import evaluation  # the official module, unmodified

    verdicts: list[int] = []
    original = evaluation.eval_exec_match

    def noted(**kwargs):
        verdicts.append(int(original(**kwargs)))
        return verdicts[-1]

    evaluation.eval_exec_match = noted
    evaluation.get_sql = lambda schema, query: {}  # only feeds hardness and exact match
    evaluation.Evaluator.eval_hardness = lambda self, sql: "easy"
    evaluation.evaluate(
        str(root / "gold.txt"), str(root / "pred.txt"), str(root / "database"), "exec", None,
        "--plug_value" in flags, "--keep_distinct" in flags, False,
    )  # fmt: skip
    return verdicts


def record(official: Path, python: str, root: Path, extra_random: int = 0) -> dict:
    build(root, extra_random)
    out = {}
    for mode, flags in MODES.items():
        done = subprocess.run(
            [python, __file__, "driver", str(official), str(root), *flags],
            capture_output=True,
            text=True,
            check=True,
            cwd=official,
        )
        out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def project_verdicts(root: Path, work: Path, mode: str) -> list[int]:
    from evaluators.testsuite.run import grade_test_suite

    report = grade_test_suite(
        root / "gold.txt",
        root / "pred.txt",
        root / "database",
        work,
        keep_distinct=mode == "keep_distinct",
        plug_value=mode == "plug_value",
    )
    return [int(i.score) for i in report.instances if i.answer_type is not None]


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "driver":
        print(json.dumps(official_driver(Path(args[0]), Path(args[1]), args[2:])))
    elif command == "record":  # record OFFICIAL PYTHON [--random N]
        import tempfile

        extra = int(args[args.index("--random") + 1]) if "--random" in args else 0
        with tempfile.TemporaryDirectory() as tmp:
            found = record(Path(args[0]).resolve(), args[1], Path(tmp), extra)
            if extra:
                sys.path.insert(0, str(Path(__file__).parent.parent))
                for mode, official in found.items():
                    ours = project_verdicts(Path(tmp), Path(tmp) / "work", mode)
                    agree = sum(a == b for a, b in zip(ours, official, strict=True))
                    print(f"{mode}: {agree}/{len(official)} agree", file=sys.stderr)
            else:
                RECORDED.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
