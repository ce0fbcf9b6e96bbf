"""Parity data for `platinum` against BIRD-Platinum's `evaluation/grade.py`, and the recorder of its verdicts.

`build(root)` writes `<root>/db/shop/shop.sqlite`, the gold `<root>/data.json` (BIRD's dev.json fields,
`grading_method` on the questions that carry a tie annotation) and the predictions
`<root>/results/preds.json` (question_id: SQL, or a list whose first item is the SQL) from CASES.

Recording (tests/data/parity/platinum.json), with the official code unmodified, in a venv of its own
(tqdm: what grade.py imports):

    python tests/parity_platinum.py record --repo /path/to/BIRD-Platinum --python /path/to/venv/bin/python

grade.py is written out of the repository (`git show`) and run as its README says (`--db_base_path`,
`--infer_results results/preds.json`, `--data_path`; it writes `reports/preds_evaluation.json`, whose
per-question verdicts are `official`); a driver imports the same file and calls `grade()` with each
question's `grading_method` (`official-tie-aware`; `"error"` where it raises).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "parity" / "platinum.json"
COMMIT = "d6e0e96"
ROWS = [(1, "pen", 2.5, "a"), (2, "ink", 10.0, "a"), (3, "cap", None, "b"), (4, "pad", 2.5, "c"), (5, "1", 1.0, "c")]
TOP = "SELECT name FROM items ORDER BY price DESC LIMIT 1"
CHEAP = "SELECT name, price FROM items WHERE price = 2.5"
CASES = [  # (gold, grading method or None, prediction: SQL, [SQL, ...] or None for no prediction)
    ("SELECT name FROM items", None, "SELECT name FROM items"),
    ("SELECT name FROM items", None, "SELECT name FROM items WHERE id < 3"),
    ("SELECT name, kind FROM items", None, "SELECT kind, name FROM items"),
    ("SELECT kind FROM items", None, "SELECT DISTINCT kind FROM items"),
    ("SELECT DISTINCT kind FROM items", None, "SELECT kind FROM items"),
    ("SELECT count(*) FROM items", None, "SELECT count(*) * 1.0 FROM items"),
    ("SELECT name FROM items WHERE id = 5", None, "SELECT 1"),
    ("SELECT price FROM items WHERE id = 5", None, "SELECT 1"),
    ("SELECT name FROM items WHERE id > 9", None, "SELECT name FROM items WHERE id > 8"),
    ("SELECT name FROM items WHERE id > 9", None, "SELECT name FROM items"),
    ("SELECT name FROM items", None, "SELECT name FROM items WHERE id > 9"),
    ("SELECT name FROM items", None, "SELECT name FROM nowhere"),
    ("SELECT name FROM nowhere", None, "SELECT name FROM items"),
    ("SELECT id, name FROM items", None, "SELECT id FROM items"),
    ("SELECT name FROM items", None, ["SELECT name FROM items", "SELECT 1"]),
    ("SELECT name FROM items", None, None),
    ("SELECT price FROM items", None, "SELECT price FROM items ORDER BY price"),
    ("SELECT name FROM items", None, "SELECT name FROM items\t----- bird -----\tshop"),
    (CHEAP, "subset,=,1", "SELECT name, price FROM items WHERE id = 1"),
    (CHEAP, "subset,=,1", "SELECT name, price FROM items WHERE id = 4"),
    (CHEAP, "subset,=,1", CHEAP),
    (CHEAP, "subset,=,1", "SELECT name, price FROM items WHERE id = 2"),
    (CHEAP, "subset,>=,1", CHEAP),
    (CHEAP, "subset,>=,2", "SELECT name, price FROM items WHERE id = 1"),
    (CHEAP, "subset,>=,1", "SELECT price, name FROM items WHERE id = 4"),
    (TOP, "subset,=,1", "SELECT name FROM items WHERE price = 10.0"),
    ("SELECT kind FROM items WHERE kind = 'c'", "subset,=,1", "SELECT kind FROM items WHERE id = 4"),
    ("SELECT id FROM items WHERE id < 3", "subset,=,1", "SELECT id * 1.0 FROM items WHERE id = 1"),
    ("SELECT name, price FROM items WHERE id > 3", "subset,=,1", "SELECT name, price FROM items WHERE id = 5"),
    ("SELECT name, price FROM items WHERE id > 3", "subset,=,2", "SELECT name, price FROM items WHERE id = 5"),
    ("SELECT name, price FROM items WHERE id = 3", "subset,=,1", "SELECT name, price FROM items WHERE id = 3"),
    ("SELECT price, price FROM items WHERE id = 3", "subset,=,1", "SELECT price, price FROM items WHERE id = 3"),
    ("SELECT price FROM items WHERE id = 3", "subset,=,1", "SELECT price FROM items WHERE id = 3"),
    ("SELECT name FROM items", "subset,=,x", "SELECT name FROM items WHERE id = 1"),
    ("SELECT name FROM items", "subset,<,1", "SELECT name FROM items WHERE id = 1"),
    ("SELECT name FROM items", "subset", "SELECT name FROM items WHERE id = 1"),
    ("SELECT name FROM items", "list", "SELECT name FROM items"),
    ("SELECT name FROM items", "multiset", "SELECT name FROM items"),
    ("SELECT name FROM items WHERE id > 9", "subset,=,0", "SELECT name FROM items WHERE id > 8"),
    ("SELECT name, kind FROM items WHERE kind = 'a'", "subset,=,1", "SELECT kind, name FROM items WHERE id = 1"),
    ("SELECT name, kind FROM items WHERE kind = 'a'", "subset,>=,1", "SELECT name, kind FROM items WHERE id < 4"),
    ("SELECT name, kind FROM items WHERE kind = 'a'", "subset,>=,1", "SELECT name, kind FROM items"),
    ("SELECT 'a'", None, "SELECT CAST(x'ff61' AS TEXT)"),
    ("SELECT name FROM items WHERE id = 1", None, "SELECT name FROM items WHERE id = 1; SELECT 1"),
]


def random_cases(count: int = 40, seed: int = 5) -> list[tuple]:
    """Seeded literal results: cells drawn from integers, their float twins, their text, NULL and words; the
    prediction a shuffled, cut, duplicated or retyped copy; a tie method on some."""
    import random

    rng = random.Random(seed)
    pool = [1, 2, 1.0, 2.5, "1", "a", "b", None]
    cases = []
    for _ in range(count):
        width = rng.randint(1, 2)
        gold = [tuple(rng.choice(pool) for _ in range(width)) for _ in range(rng.randint(1, 3))]
        pred = [tuple(rng.sample(row, len(row))) for row in gold]
        change = rng.choice(["same", "cut", "twice", "retype", "other"])
        if change == "cut":
            pred = pred[:1]
        elif change == "twice":
            pred = pred + pred[:1]
        elif change in ("retype", "other"):
            pred = [tuple(rng.choice(pool) if rng.random() < 0.5 else c for c in row) for row in pred]
        method = rng.choice([None, None, "subset,=,1", "subset,>=,1", f"subset,=,{len(pred)}"])
        cases.append((_select(gold), method, _select(pred)))
    return cases


def _select(rows: list[tuple]) -> str:
    def literal(cell) -> str:
        return "NULL" if cell is None else f"'{cell}'" if isinstance(cell, str) else repr(cell)

    return " UNION ALL ".join("SELECT " + ", ".join(literal(c) for c in row) for row in rows)


def build(root: Path, cases: list | None = None) -> list[tuple]:
    cases = CASES + random_cases() if cases is None else cases
    (root / "db" / "shop").mkdir(parents=True, exist_ok=True)
    (root / "results").mkdir(exist_ok=True)
    _make_db(root / "db" / "shop" / "shop.sqlite")
    data, preds = [], {}
    for qid, (gold, method, pred) in enumerate(cases):
        item = {"question_id": qid, "db_id": "shop", "question": f"question {qid}", "SQL": gold}
        if method is not None:
            item["grading_method"] = method
        data.append(item)
        if pred is not None:
            preds[str(qid)] = pred
    (root / "data.json").write_text(json.dumps(data, indent=1))
    (root / "results" / "preds.json").write_text(json.dumps(preds, indent=1))
    return cases


def _make_db(path: Path) -> None:
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE items (id INTEGER, name TEXT, price REAL, kind TEXT)")
    con.executemany("INSERT INTO items VALUES (?, ?, ?, ?)", ROWS)
    con.commit()
    con.close()


DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from grade import grade
root = sys.argv[2]
preds = json.load(open(root + '/results/preds.json'))
out = []
for item in json.load(open(root + '/data.json')):
    pred = preds.get(str(item['question_id']))
    if pred is None:
        out.append(None)
        continue
    pred = pred[0] if isinstance(pred, list) else pred
    try:
        out.append(list(grade(root + '/db/shop/shop.sqlite', item['SQL'], pred, item.get('grading_method', 'multiset'))))
    except Exception as error:
        out.append('error')
print(json.dumps(out))
"""


def record(repo: Path, python: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root, program = Path(tmp), Path(tmp) / "program"
        build(root)
        program.mkdir()
        source = subprocess.run(
            ["git", "-C", str(repo), "show", f"{COMMIT}:evaluation/grade.py"], check=True, capture_output=True
        ).stdout
        (program / "grade.py").write_bytes(source)
        (root / "reports").mkdir()
        command = [
            python,
            str(program / "grade.py"),
            "--db_base_path",
            "db",
            "--infer_results",
            "results/preds.json",
            "--data_path",
            "data.json",
        ]
        subprocess.run(command, check=True, cwd=root, capture_output=True)
        report = json.loads((root / "reports" / "preds_evaluation.json").read_text())
        by_id = {int(r["question_id"]): [r["bird_grading"], r["strict_grading"]] for r in report["detailed_results"]}
        done = subprocess.run(
            [python, "-c", DRIVER, str(program), str(root)], check=True, capture_output=True, text=True, cwd=root
        )
        recorded = {
            "commit": COMMIT,
            "official": [by_id.get(i) for i in range(len(CASES) + len(random_cases()))],
            "official_accuracy": [report["bird_accuracy"], report["strict_accuracy"]],
            "official-tie-aware": json.loads(done.stdout.strip().splitlines()[-1]),
        }
    RECORDED.write_text(json.dumps(recorded, indent=1) + "\n")
    return recorded


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["record"]:
        repo = Path(args[args.index("--repo") + 1])
        print(json.dumps(record(repo, args[args.index("--python") + 1])))


def project_report(root: Path, work: Path, grading: str):
    from evaluators.grading.benchmark import run_benchmark
    from evaluators.platinum.run import PlatinumBenchmark, PlatinumOptions

    options = PlatinumOptions(root / "db", grading, work_dir=work)
    return run_benchmark(PlatinumBenchmark(root / "data.json", root / "results" / "preds.json", options))


def project_verdicts(report) -> list:
    """Each question as the recorder holds it: [bird, strict], "error" where grade() raises, None unsubmitted."""

    def one(instance):
        if instance.reason == "missing_prediction":
            return None
        if instance.reason == "official_error":
            return "error"
        return [instance.metadata["bird"], instance.score >= 1]

    return [one(i) for i in report.instances]
