"""`evaluate.py bird`: BIRD's files as they ship, every verdict equal to an independent oracle of the official
loop (mini-dev's evaluation_ex.py: split, writable connection, prediction then gold, set comparison)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from helpers_io import run_cli, tree_hash

from evaluators.bird.run import BirdOptions, grade_bird

SEP = "\t----- bird -----\t"


def _db(path):
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE schools (id INTEGER, name TEXT, city TEXT, score REAL, zip TEXT)")
    con.executemany(
        "INSERT INTO schools VALUES (?,?,?,?,?)",
        [
            (1, "Ash", "Oakland", 91.5, "00070"),
            (2, "Birch", "Fresno", 78.0, "93701"),
            (3, "Cedar", "Oakland", None, "94601"),
            (4, "Dune", "Fresno", 78.0, None),
        ],
    )
    con.execute("CREATE TABLE empty_t (x INTEGER)")
    con.commit()
    con.close()


CASES = [  # (gold, prediction value, difficulty)
    ("SELECT name FROM schools WHERE city = 'Oakland'", "SELECT name FROM schools WHERE city = 'Oakland'", "simple"),
    ("SELECT name FROM schools WHERE city = 'Oakland'", "SELECT name FROM schools WHERE score > 90", "simple"),
    ("SELECT count(*) FROM schools", "SELECT count(*) * 1.0 FROM schools", "simple"),  # 4 == 4.0
    ("SELECT city FROM schools", "SELECT DISTINCT city FROM schools", "moderate"),  # sets: duplicates ignored
    ("SELECT name FROM schools ORDER BY id", "SELECT name FROM schools ORDER BY id DESC", "moderate"),
    ("SELECT name, city FROM schools", "SELECT city, name FROM schools", "moderate"),  # column order matters
    ("SELECT zip FROM schools WHERE id = 1", "SELECT CAST(zip AS INTEGER) FROM schools WHERE id = 1", "moderate"),
    ("SELECT score FROM schools WHERE id = 3", "SELECT '' FROM schools WHERE id = 3", "challenging"),
    ("SELECT name FROM schools", "```sql\nSELECT name FROM schools\n```", "challenging"),  # fences are not unwrapped
    ("SELECT x FROM empty_t", "", "simple"),  # an empty prediction matches a gold without rows
    ("SELECT x FROM empty_t", 0, "simple"),  # so does a value that is not a string
    ("SELECT 1", "SELECT 1;;", "simple"),
    ("SELECT 1", "SELECT 1; SELECT 2", "simple"),
    (
        "SELECT name FROM schools WHERE id = 2",
        "SELECT name FROM schools WHERE id = 2 -----bird----- california",
        "simple",
    ),
    ("SELECT name FROM schools WHERE city = 'Nowhere'", "DELETE FROM schools WHERE city = 'Nowhere'", "moderate"),
    ("SELECT name FROM schools WHERE city = 'Fresno'", "DELETE FROM schools WHERE city = 'Fresno'", "moderate"),
    (
        "SELECT name FROM schools WHERE city = 'Fresno'",
        "UPDATE schools SET city = 'X' WHERE city = 'Fresno'",
        "challenging",
    ),
    ("SELECT count(*) FROM schools", "INSERT INTO schools (id) VALUES (9)", "challenging"),
    ("SELECT count(*) FROM empty_t", "CREATE TABLE t2 (a INTEGER)", "challenging"),
    ("SELECT name FROM schools", "DELETE FROM schools RETURNING name", "challenging"),
    ("SELECT nme FROM schools", "SELECT name FROM schools", "simple"),  # a gold that fails: a gold problem
    ("SELECT name FROM schools", "SELECT name FROM nowhere", "simple"),
]


@pytest.fixture
def bird_files(tmp_path):
    db_root = tmp_path / "dev_databases"
    _db(db_root / "california" / "california.sqlite")
    preds = {
        str(i): (p + SEP + "california" if isinstance(p, str) and "-----bird-----" not in p and p else p)
        for i, (_, p, _) in enumerate(CASES)
    }
    (tmp_path / "predict_dev.json").write_text(json.dumps(preds, indent=2))
    (tmp_path / "dev_gold.sql").write_text("".join(f"{g}\tcalifornia\n" for g, _, _ in CASES))
    (tmp_path / "dev.json").write_text(
        json.dumps(
            [{"question_id": 100 + 2 * i, "db_id": "california", "difficulty": d} for i, (_, _, d) in enumerate(CASES)]
        )
    )
    return tmp_path, db_root, preds


def _oracle(db_root, preds: dict, tmp_path, dev: bool = True) -> list:
    """BIRD dev's loop (these files are dev's layout), one question at a time, on a throwaway copy (it opens
    the database writable).  Dev runs on the prediction's db_id (`financial`, absent here, for a non-string)
    and crashes on a value without the separator; that one is graded as mini-dev does."""
    out = []
    for (gold, _, _), value in zip(CASES, preds.values(), strict=False):
        if isinstance(value, str):
            try:
                sql, _ = value.split(SEP)
            except ValueError:
                sql = value.strip()
        elif dev:
            out.append(0)  # dev: " " on financial, which does not exist
            continue
        else:
            sql = " "  # mini-dev: " " on the gold's database
        copy = tmp_path / "oracle.sqlite"
        shutil.copyfile(db_root / "california" / "california.sqlite", copy)
        try:
            conn = sqlite3.connect(copy)
            cursor = conn.cursor()
            cursor.execute(sql)
            predicted = cursor.fetchall()
            cursor.execute(gold)
            truth = cursor.fetchall()
            conn.close()
            out.append(int(set(predicted) == set(truth)))
        except Exception:
            out.append(0)
        copy.unlink()
    return out


def test_every_ex_bird_equals_the_official_loop(bird_files, tmp_path):
    root, db_root, preds = bird_files
    before = tree_hash(root / "dev_databases")
    report = grade_bird(root, root, root / "dev.json", BirdOptions(db_root, num_cpus=2, work_dir=tmp_path / "w"))
    assert tree_hash(root / "dev_databases") == before, "the databases are only read"
    expected = _oracle(db_root, preds, tmp_path)
    assert [int(i.score) for i in report.instances] == expected
    assert 0 < sum(expected) < len(expected)
    by = dict(enumerate(report.instances))  # by position; each named by its question_id (100, 102, ...)
    assert [i.instance_id for i in report.instances] == [str(100 + 2 * k) for k in range(len(CASES))]
    assert by[15].score == 1 and by[15].execution["ran"].startswith("private copy"), "a DELETE can score 1"
    assert by[17].score == 0 and by[18].score == 0 and by[19].score == 0  # INSERT, DDL, DELETE ... RETURNING
    assert by[20].reason == "unreadable_gold"
    assert by[6].execution["ex_strict"] is False and by[7].execution["ex_strict"] is False  # '00070' vs 70; NULL vs ''
    assert by[2].execution["ex_strict"] is True  # numbers by value
    assert by[0].metadata == {"question_id": 100, "db_id": "california", "difficulty": "simple"}


def test_cli_prints_the_official_table_and_writes_the_report(bird_files, tmp_path):
    root, db_root, preds = bird_files
    out = tmp_path / "out" / "bird.json"
    result = run_cli(
        "bird",
        "--predicted_sql_path",
        root / "predict_dev.json",
        "--ground_truth_path",
        root / "dev_gold.sql",
        "--db_root_path",
        str(db_root) + "/",
        "--diff_json_path",
        root / "dev.json",
        "--num_cpus",
        "16",
        "--meta_time_out",
        "30.0",
        "--sql_dialect",
        "SQLite",
        "--output",
        out,
        "--output_log_path",
        tmp_path / "log.txt",
        "--allow-gold-errors",  # a case's gold fails on purpose: exit 2 without this, as on every command
    )
    assert result.exit_code == 0, result.output
    expected = _oracle(db_root, preds, tmp_path, dev=False)
    levels = {"simple": [], "moderate": [], "challenging": []}
    for (_, _, d), ok in zip(CASES, expected, strict=False):
        levels[d].append(ok)
    counts = [len(levels[k]) for k in levels] + [len(CASES)]
    assert "{:20} {:<20} {:<20} {:<20} {:<20}".format("count", *counts) in result.output
    scores = [100 * sum(v) / len(v) for v in levels.values()] + [100 * sum(expected) / len(expected)]
    assert "{:20} {:<20.2f} {:<20.2f} {:<20.2f} {:<20.2f}".format("EX", *scores) in result.output
    assert "start calculate EX" in (tmp_path / "log.txt").read_text()
    data = json.loads(out.read_text())
    assert [i["instance_id"] for i in data["instances"]] == [str(100 + 2 * k) for k in range(len(CASES))]
    assert all("ex_bird" in i["execution"] and "ex_strict" in i["execution"] for i in data["instances"])


def test_mini_dev_layout_and_bad_input_are_clear(tmp_path):
    db_root = tmp_path / "dbs"
    _db(db_root / "california" / "california.sqlite")
    (tmp_path / "mini_dev_sqlite_gold.sql").write_text("SELECT 1\tcalifornia\nbroken line\nSELECT 2\tnowhere\n")
    (tmp_path / "pred.json").write_text(
        json.dumps(
            {"0": "SELECT 1" + SEP + "california", "1": "SELECT 1", "2": "SELECT 2" + SEP + "nowhere", "3": "SELECT 3"}
        )
    )
    (tmp_path / "mini_dev_sqlite.jsonl").write_text('{"difficulty": "simple"}\n{"difficulty": "simple"}\n')
    report = grade_bird(
        tmp_path / "pred.json",
        tmp_path / "mini_dev_sqlite_gold.sql",
        tmp_path / "mini_dev_sqlite.jsonl",
        BirdOptions(db_root, work_dir=tmp_path / "w"),
    )
    reasons = [i.reason for i in report.instances]
    assert reasons == ["match", "invalid_gold", "no_database"]
    texts = [str(p) for p in report.summary.problems]
    assert any(":2:" in t and "expected SQL<TAB>db_id" in t for t in texts)
    assert any("4 prediction(s) for 3 gold line(s)" in t for t in texts)
    assert any("2 question(s) for 3 gold line(s)" in t for t in texts)
    assert report.summary.unknown_submitted == ("3",)


def test_ves_and_rves_by_their_official_definitions_and_plan_cost(bird_files, tmp_path):
    from evaluators.metrics.ves import official_rves, official_ves

    root, db_root, _ = bird_files
    report = grade_bird(
        root, root, root / "dev.json", BirdOptions(db_root, work_dir=tmp_path / "w", ves_iterations=5, plan_cost=True)
    )
    metrics = report.summary.execution_metrics
    compared = [i for i in report.instances if i.answer_type is not None]
    ratios = [(i.execution.get("bird_ves") or {}).get("time_ratio", 0.0) if i.score >= 1 else 0.0 for i in compared]
    assert any(r > 0 for r in ratios)
    assert metrics["ves"] == pytest.approx(official_ves(ratios))
    assert metrics["r_ves"] == pytest.approx(official_rves(ratios))
    assert "plan_cost_vs_time_spearman" in metrics and metrics["ves_timed"] > 0
    timed = next(i for i in compared if i.execution.get("bird_ves", {}).get("time_ratio"))
    assert timed.execution["plan_cost"]["pred"] is not None
    # the ves scripts' tables per difficulty, as BIRD dev's and mini-dev's print them
    from evaluators.bird.run import official_lines

    lines = official_lines(report).splitlines()
    dev, mini = lines.index("=" * 41 + "    VES   " + "=" * 40), lines.index("=" * 38 + "    R-VES    " + "=" * 37)
    assert lines[dev - 2].split() == ["simple", "moderate", "challenging", "total"]
    assert lines[dev - 1].split()[-1] == str(len(compared)) == lines[mini - 1].split()[-1]
    assert lines[dev + 1].split()[0] == "ves" and float(lines[dev + 1].split()[-1]) == round(metrics["ves"], 2)
    assert lines[mini + 1].split()[0] == "R-VES" and float(lines[mini + 1].split()[-1]) == round(metrics["r_ves"], 2)
    assert lines[dev + 1][:21] == "ves" + " " * 18  # the scripts' {:20} columns
    # BIRD dev's evaluation.py prints the same EX table under ACCURACY, its row `accuracy`
    dev_lines = official_lines(report, "dev").splitlines()
    banner = dev_lines.index("=" * 38 + "    ACCURACY    " + "=" * 37)
    assert dev_lines[banner + 1].split()[0] == "accuracy" and "    EX    " not in official_lines(report, "dev")


@pytest.mark.parametrize(
    "gold, pred, expected",
    [
        ([2.0, 2.2, 1.8], [1.0, 1.0, 1.0], 2.0),  # per-iteration ratios, not a ratio of means
        ([1.0, 1.0], [1.0, 1.0], 0.0),  # sigma 0: nothing within the strict bounds, the scripts fail: 0
        ([1.0, 3.0], [1.0, 1.0], 2.0),
    ],
)
def test_official_time_ratio(gold, pred, expected):
    from evaluators.metrics.ves import official_time_ratio

    assert official_time_ratio(gold, pred) == pytest.approx(expected)


def test_rves_buckets_and_ves():
    from evaluators.metrics.ves import official_rves, official_ves

    assert official_ves([4.0, 0.0]) == pytest.approx(100.0)  # (200 + 0) / 2
    assert official_rves([2.0, 1.0, 0.5, 0.25, 0.1, 0.0]) == pytest.approx(
        (125**0.5 * 10 + 100 + 75**0.5 * 10 + 50**0.5 * 10 + 25**0.5 * 10 + 0) / 6
    )


def test_instances_are_named_by_question_id_when_every_question_has_its_own():
    from evaluators.bird.run import question_names

    assert question_names([{"question_id": 7}, {"question_id": 3}], 2) == ["7", "3"]
    assert question_names([{"question_id": 7}, {"question_id": 7}], 2) == ["0", "1"]  # not unique: positions
    assert question_names([{"question_id": 7}, {}], 2) == ["0", "1"]
    assert question_names([{"question_id": 7}], 2) == ["0", "1"]  # fewer questions than gold lines


_WITHOUT_SQLGLOT = """
import json, sys
from pathlib import Path
from evaluators.bird.run import BirdOptions, grade_bird
root = Path(sys.argv[1])
report = grade_bird(root / "pred.json", root / "gold.sql", None, BirdOptions(root / "db", num_cpus=2, work_dir=root / "w"))
print(json.dumps([[i.score, i.strict_score, i.reason] for i in report.instances]))
print("sqlglot" in sys.modules)
"""


def test_plain_golds_and_predictions_that_do_not_compile_grade_without_sqlglot(tmp_path):
    """Most of a BIRD run's own time on small queries was importing sqlglot (a fifth of a second) to read
    the gold's ORDER BY and whether a failing prediction might write: neither needs it for plain SQL."""
    import subprocess
    import sys

    _db(tmp_path / "db" / "california" / "california.sqlite")
    pairs = [
        ("SELECT name FROM schools ORDER BY id", "SELECT name FROM schools ORDER BY id DESC"),  # ordered gold
        ("SELECT name FROM schools WHERE id < 3 ORDER BY id", "SELECT name FROM schools WHERE id <= 2"),
        ("SELECT name FROM schools", "SELECT nme FROM schools"),  # no such column
        ("SELECT name FROM schools", "SELECT name FROM nowhere"),  # no such table
        ("SELECT name FROM schools", "SELECT name FROM schools WHERE"),  # a syntax error
        ("SELECT 1", "SELECT nme FROM schools; DELETE FROM schools"),  # two statements, the first fails
    ]
    (tmp_path / "pred.json").write_text(json.dumps({str(i): p + SEP + "california" for i, (_, p) in enumerate(pairs)}))
    (tmp_path / "gold.sql").write_text("".join(f"{g}\tcalifornia\n" for g, _ in pairs))
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SQLGLOT, str(tmp_path)], capture_output=True, text=True, check=True
    )
    verdicts, loaded = done.stdout.splitlines()
    assert json.loads(verdicts) == [
        [1.0, 0.0, "match"],
        [1.0, 1.0, "match"],
        [0.0, 0.0, "exec_error"],
        [0.0, 0.0, "exec_error"],
        [0.0, 0.0, "exec_error"],
        [0.0, 0.0, "exec_error"],
    ]
    assert loaded == "False", "sqlglot was imported"
