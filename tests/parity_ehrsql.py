"""Parity data for `ehrsql` against EHRSQL 2024's official scorer, and the recorder of its verdicts.

`build(root)` writes the database `<root>/mimic_iv.sqlite`, the gold `<root>/ref/label.json` and the
predictions `<root>/res/prediction.json` (the scorer's own layout) from CASES.

Recording (tests/data/parity/ehrsql.json), with the official code unmodified, in a venv of its own
(numpy, pandas: what scoring.py imports):

    python tests/parity_ehrsql.py record --repo /path/to/ehrsql-2024 --python /path/to/venv/bin/python

For each preset's commit, `scoring_program/` is written out of the repository (`git show`) into a folder
with the database beside it, as scoring.py expects (`mimic_iv.sqlite` next to the script); scoring.py runs
as the competition ran it (`scoring.py <input> <output>`, its scores.json kept) and a driver imports the same
folder's `scoring_utils` and `postprocessing` and asks `reliability_score(..., return_dict=True)` for each
question's verdict.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

RECORDED = Path(__file__).parent / "data" / "parity" / "ehrsql.json"
PRESETS = {  # preset name: the commit of scoring_program/ it reproduces
    "official": "b2a05a92143d5b28945b4a15e39aba6ca5ad58c6",
    "official-2024-03-21": "e207f57a2d0af32b273d7ed69c37e30fa9862b68",
    "official-round1": "40d045b623dc7ab70c7a9641250e16f0fab8b94f",
}
G_COUNT = "SELECT COUNT(*) FROM patients"
CASES = [  # (gold, prediction)
    (G_COUNT, G_COUNT),
    (G_COUNT, "SELECT COUNT(subject_id) FROM patients"),
    (G_COUNT, "SELECT COUNT(*) FROM patients WHERE gender = 'F'"),
    (G_COUNT, "null"),
    (G_COUNT, "  null \n"),
    (G_COUNT, "NULL"),
    ("null", "null"),
    ("null", " null"),
    ("null", G_COUNT),
    ("null", "NULL"),
    ("null", "SELECT x FROM nowhere"),
    (G_COUNT, "SELECT x FROM nowhere"),
    ("SELECT x FROM nowhere", "SELECT x FROM nowhere"),
    ("SELECT x FROM nowhere", G_COUNT),
    ("SELECT x FROM nowhere", "null"),
    ("SELECT 2.51", "SELECT 2.54"),
    ("SELECT 2.5004", "SELECT 2.5001"),
    ("SELECT 1.23449", "SELECT 1.2345"),
    ("SELECT 3", "SELECT 3.0"),
    ("SELECT 3", "SELECT '3'"),
    ("SELECT '3'", "SELECT ' 3 '"),
    ("SELECT NULL", "SELECT 'None'"),
    ("SELECT 'nan'", "SELECT 'NaN'"),
    ("SELECT 'inf'", "SELECT 'Infinity'"),
    ("SELECT '1_000'", "SELECT 1000"),
    ("SELECT 1e400", "SELECT 'inf'"),
    ("SELECT x'31'", "SELECT 1"),
    ("SELECT subject_id FROM patients ORDER BY subject_id", "SELECT subject_id FROM patients ORDER BY subject_id DESC"),
    ("SELECT DISTINCT gender FROM patients", "SELECT gender FROM patients"),
    ("SELECT subject_id FROM patients", "SELECT subject_id, subject_id FROM patients"),
    ("SELECT subject_id FROM patients WHERE 0", "SELECT gender FROM patients WHERE 0"),
    ("SELECT subject_id FROM patients WHERE 0", ""),
    ("SELECT subject_id FROM patients WHERE 0", "-- nothing"),
    ("SELECT value FROM nums", "SELECT value FROM nums WHERE value NOT IN (5, 6, 7)"),
    ("SELECT value FROM nums", "SELECT value FROM nums WHERE value <> 99"),
    ("SELECT value FROM nums", "SELECT value FROM nums WHERE value <> 59"),
    ("SELECT value FROM nums WHERE value < 100", "SELECT value FROM nums WHERE value <= 100"),
    ("SELECT 'a b'", "SELECT  'a   b'"),
    ("SELECT value FROM nums WHERE value >= 140", "SELECT value FROM nums WHERE value > = 140"),
    (
        "SELECT count(*) FROM admissions WHERE admittime <= current_time",
        "SELECT count(*) FROM admissions WHERE admittime <= '2100-12-31 23:59:00'",
    ),
    (
        "SELECT count(*) FROM admissions WHERE admittime <= current_time",
        "SELECT count(*) FROM admissions WHERE admittime <= NOW()",
    ),
    (
        "SELECT count(*) FROM admissions WHERE admittime <= current_time",
        "SELECT count(*) FROM admissions WHERE admittime <= datetime('now')",
    ),
    (
        "SELECT count(*) FROM admissions WHERE admittime <= '2100-12-31'",
        "SELECT count(*) FROM admissions WHERE admittime <= current_date",
    ),
    (
        "SELECT count(*) FROM admissions WHERE admittime >= datetime(current_time, '-1 year')",
        "SELECT count(*) FROM admissions WHERE admittime >= DATE_SUB(NOW(), INTERVAL 1 YEAR)",
    ),
    (
        "SELECT count(*) FROM admissions WHERE admittime >= datetime(current_time, '-2 months')",
        "SELECT count(*) FROM admissions WHERE admittime >= DATE_SUB(NOW(), INTERVAL 2 MONTH)",
    ),
    (
        "SELECT count(*) FROM vitals WHERE heart_rate > 60.0 AND heart_rate < 100.0",
        "SELECT count(*) FROM vitals WHERE heart_rate > heart_rate_lower AND heart_rate < heart_rate_upper",
    ),
    ("SELECT strftime('%Y', admittime) FROM admissions", "SELECT strftime('%y', admittime) FROM admissions"),
    ("SELECT 1", "SELECT 1; SELECT 2"),
    ("SELECT 1", "SELECT 1;"),
    ("SELECT 'current_time'", "SELECT '2100-12-31 23:59:00'"),
    ("SELECT gender, COUNT(*) FROM patients GROUP BY gender", "SELECT COUNT(*), gender FROM patients GROUP BY gender"),
    ("SELECT 0.1 + 0.2", "SELECT 0.3"),
    ("SELECT -0.0001", "SELECT 0"),
    ("SELECT 'a'", "SELECT CAST(x'ff61' AS TEXT)"),
    ("SELECT value FROM nums WHERE value < 3", "SELECT value FROM nums WHERE value < 3 UNION ALL SELECT NULL"),
]


def random_cases(count: int = 40, seed: int = 7) -> list[tuple]:
    """Seeded results near the rounding edges: a few cells each, the prediction's nudged (by 1e-4, 0.04, 0.5e-3),
    written as text, as an integer, or left as they are."""
    import random

    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        cells = [
            round(rng.uniform(-50, 50), rng.choice([0, 1, 2, 3, 4])) + rng.choice([0, 0.05, 0.0005])
            for _ in range(rng.randint(1, 3))
        ]
        nudged = [_nudge(rng, c) for c in cells]
        cases.append((_select(cells), _select(nudged)))
    return cases


def _nudge(rng, cell: float) -> str:
    kind = rng.choice(["same", "tiny", "tenth", "half_milli", "text", "int"])
    value = {"tiny": cell + 1e-4, "tenth": cell + 0.04, "half_milli": cell + 0.0005}.get(kind, cell)
    if kind == "text":
        return f"'{cell!r}'"
    if kind == "int":
        return str(int(cell))
    return repr(value)


def _select(cells) -> str:
    return " UNION ALL ".join(f"SELECT {c}" for c in cells)


def build(root: Path, cases: list | None = None) -> list[tuple]:
    cases = CASES + random_cases() if cases is None else cases
    root.mkdir(parents=True, exist_ok=True)
    _make_db(root / "mimic_iv.sqlite")
    ids = [f"q{i:03d}" for i in range(len(cases))]
    for folder, side in (("ref", 0), ("res", 1)):
        (root / folder).mkdir(exist_ok=True)
        name = "label.json" if folder == "ref" else "prediction.json"
        (root / folder / name).write_text(json.dumps({k: c[side] for k, c in zip(ids, cases, strict=True)}, indent=1))
    return cases


def _make_db(path: Path) -> None:
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE patients (subject_id INTEGER, gender TEXT)")
    con.executemany("INSERT INTO patients VALUES (?, ?)", [(1, "F"), (2, "M"), (3, "F"), (4, "M"), (5, "M")])
    con.execute("CREATE TABLE admissions (subject_id INTEGER, admittime TEXT)")
    times = ["2099-01-05 10:00:00", "2100-03-01 08:00:00", "2100-11-20 12:00:00", "2100-12-31 23:59:30", "2101-01-01"]
    con.executemany("INSERT INTO admissions VALUES (?, ?)", list(enumerate(times, 1)))
    con.execute("CREATE TABLE vitals (subject_id INTEGER, heart_rate REAL)")
    con.executemany("INSERT INTO vitals VALUES (?, ?)", [(1, 55.0), (2, 72.5), (3, 99.9), (4, 101.0)])
    con.execute("CREATE TABLE nums (value INTEGER)")
    con.executemany("INSERT INTO nums VALUES (?)", [(i,) for i in range(150)])
    con.commit()
    con.close()


DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from postprocessing import post_process_sql
from scoring_utils import execute_all, reliability_score
root = sys.argv[2]
real = json.load(open(root + '/ref/label.json'))
pred = json.load(open(root + '/res/prediction.json'))
real = {k: post_process_sql(v) for k, v in real.items()}
pred = {k: post_process_sql(v) for k, v in pred.items()}
db = sys.argv[1] + '/mimic_iv.sqlite'
_, verdicts = reliability_score(execute_all(real, db, 'real'), execute_all(pred, db, 'pred'), return_dict=True)
print(json.dumps(verdicts))
"""


def record(repo: Path, python: str) -> dict:
    recorded = {}
    for preset, commit in PRESETS.items():
        with tempfile.TemporaryDirectory() as tmp:
            data, program, out = Path(tmp) / "input", Path(tmp) / "program", Path(tmp) / "output"
            build(data)
            _checkout(repo, commit, program)
            (data / "mimic_iv.sqlite").rename(program / "mimic_iv.sqlite")
            out.mkdir()
            subprocess.run([python, str(program / "scoring.py"), str(data), str(out)], check=True, cwd=tmp)
            done = subprocess.run(
                [python, "-c", DRIVER, str(program), str(data)], check=True, capture_output=True, text=True, cwd=tmp
            )
            verdicts = json.loads(done.stdout.strip().splitlines()[-1])
            recorded[preset] = {
                "commit": commit,
                "verdicts": [verdicts[k] for k in sorted(verdicts)],
                "scores": json.loads((out / "scores.json").read_text()),
            }
    RECORDED.write_text(json.dumps(recorded, indent=1) + "\n")
    return recorded


def _checkout(repo: Path, commit: str, folder: Path) -> None:
    folder.mkdir()
    for name in ("scoring.py", "scoring_utils.py", "postprocessing.py"):
        text = subprocess.run(
            ["git", "-C", str(repo), "show", f"{commit}:scoring_program/{name}"], check=True, capture_output=True
        ).stdout
        (folder / name).write_bytes(text)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["record"]:
        repo = Path(args[args.index("--repo") + 1])
        print(json.dumps(record(repo, args[args.index("--python") + 1]), indent=1))


def project_report(root: Path, work: Path, preset: str):
    from evaluators.ehrsql.run import EhrsqlBenchmark, EhrsqlOptions
    from evaluators.grading.benchmark import run_benchmark

    options = EhrsqlOptions(root / "mimic_iv.sqlite", preset, work_dir=work)
    return run_benchmark(EhrsqlBenchmark(root / "ref", root / "res", options))


def project_verdicts(report) -> list[int]:
    return [i.execution["reliability"] for i in sorted(report.instances, key=lambda i: i.instance_id)]
