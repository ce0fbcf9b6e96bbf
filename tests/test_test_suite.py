"""Spider 1 test-suite accuracy: `evaluate.py test-suite` against an independent oracle of the official loop.

The oracle below follows test-suite-sql-eval's `eval_exec_match` as published (its own words in the
comments): it opens the databases directly with sqlite3, cuts DISTINCT with a plain word rule, and prunes
column permutations with 20 random rows, as the scorer does.  The cases are built to hit every quirk.
"""

import json
import random
import re
import sqlite3
from collections import Counter
from itertools import product

import pytest
from helpers_io import run_cli, tree_hash

from evaluators.matching.typed_rows import strict_rows
from evaluators.testsuite.rules import remove_distinct
from evaluators.testsuite.run import grade_test_suite


def _make_db(path, people, pets):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE people (id INTEGER, name TEXT, age INTEGER, score REAL)")
    con.execute("CREATE TABLE pets (owner INTEGER, kind TEXT)")
    con.executemany("INSERT INTO people VALUES (?,?,?,?)", people)
    con.executemany("INSERT INTO pets VALUES (?,?)", pets)
    con.commit()
    con.close()


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("spider")
    db = root / "database" / "pets_1"
    db.mkdir(parents=True)
    people = [(1, "ann", 30, 1.5), (2, "bob", 30, 2.0), (3, "cy", 41, 2.0), (4, "dee", 25, None)]
    pets = [(1, "cat"), (1, "dog"), (2, "cat"), (3, "fish")]
    _make_db(db / "pets_1.sqlite", people, pets)
    # A variant where ages differ, so a query that only happens to agree on the original fails.
    _make_db(
        db / "pets_1_variant.sqlite",
        [(1, "ann", 30, 1.5), (2, "bob", 31, 2.0), (3, "cy", 41, 2.0)],
        pets + [(4, "cat")],
    )
    cases = [
        ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age = 30"),
        ("SELECT name, age FROM people", "SELECT age, name FROM people"),  # columns permuted
        ("SELECT name FROM people ORDER BY age", "SELECT name FROM people ORDER BY age DESC"),
        ("SELECT count(DISTINCT kind) FROM pets", "SELECT count(kind) FROM pets"),  # DISTINCT removed: passes
        ("SELECT DISTINCT kind FROM pets", "SELECT kind FROM pets"),
        ("SELECT name FROM people WHERE age > = 30", "SELECT name FROM people WHERE age >= 30"),
        ("SELECT name FROM people WHERE id < 3", "SELECT name FROM people WHERE age = 30"),  # variant tells
        ("SELECT avg(age) FROM people", "SELECT avg(age) + 0.0 FROM people"),
        ("SELECT count(*) FROM people", "SELECT count(*) * 1.0 FROM people"),  # 4 == 4.0
        ("SELECT name FROM people WHERE age > 100", "SELECT kind, owner FROM pets WHERE owner > 100"),  # empty
        ("SELECT name FROM people", "SELECT nme FROM people"),  # an error
        ("SELECT name FROM people", "SELECT name FROM people UNION ALL SELECT name FROM people"),  # bag
        ("SELECT id, name, age, score FROM people", "SELECT score, age, name, id FROM people"),  # > 3 columns
        ("SELECT name FROM (SELECT * FROM people ORDER BY age) WHERE age > 20", "SELECT name FROM people"),
        ("SELECT 2020 - age FROM people", "SELECT YEAR(CURDATE()) - age FROM people"),
        ("SELECT score FROM people WHERE id = 4", "SELECT '' FROM people WHERE id = 4"),
        ("SELECT age FROM people WHERE id = 1", "SELECT '30' FROM people WHERE id = 1"),
        ("SELECT 1 FROM people WHERE id = 1", "SELECT value FROM people WHERE id = 1"),  # 'value' becomes 1
        ("SELECT name FROM people", ""),  # an empty prediction line is skipped: shifts nothing at the end
    ]
    gold = root / "gold.txt"
    pred = root / "pred.txt"
    gold.write_text("".join(f"{g}\tpets_1\n" for g, _ in cases))
    pred.write_text("".join(f"{p}\n" for _, p in cases[:-1]))
    return root, cases


# ---------------------------------------------------------------- the oracle


def _oracle_remove_distinct(s):
    # The scorer drops every token whose lower-cased text is 'distinct' (sqlparse); quotes are kept.
    parts = re.split(r"('(?:[^']|'')*'|\"[^\"]*\")", s)
    return "".join(p if i % 2 else re.sub(r"(?i)\bdistinct\b", "", p) for i, p in enumerate(parts))


def _oracle_exec(path, query):
    query = re.sub(r"YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*", "2020", query, flags=re.IGNORECASE)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = lambda b: b.decode(errors="ignore")
    try:
        return "result", con.execute(query).fetchall()
    except Exception as exc:  # the scorer catches everything
        return "exception", exc
    finally:
        con.close()


def _oracle_result_eq(r1, r2, order_matters):
    if len(r1) == 0 and len(r2) == 0:
        return True
    if len(r1) != len(r2):
        return False
    n = len(r1[0])
    if len(r2[0]) != n:
        return False

    def unorder(row):
        return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))

    s1, s2 = [unorder(r) for r in r1], [unorder(r) for r in r2]
    if (s1 != s2) if order_matters else (set(s1) != set(s2)):
        return False
    sets = [{row[i] for row in r1} for i in range(n)]
    cons = [set(range(n)) for _ in range(n)]
    if n > 3:
        for _ in range(20):
            row = random.choice(r2)
            for i in range(n):
                for j in set(cons[i]):
                    if row[j] not in sets[i]:
                        cons[i].remove(j)
    for perm in product(*cons):
        if len(perm) != len(set(perm)):
            continue
        r2p = r2 if n == 1 else [tuple(e[i] for i in perm) for e in r2]
        if order_matters:
            if r1 == r2p:
                return True
        elif set(r1) == set(r2p) and Counter(r1) == Counter(r2p):
            return True
    return False


def _oracle(db_dir, gold_sql, pred_sql):
    pred_sql = pred_sql.replace("value", "1")  # evaluation.py, before eval_exec_match
    gold_sql, pred_sql = (
        q.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=") for q in (gold_sql, pred_sql)
    )
    gold_sql, pred_sql = _oracle_remove_distinct(gold_sql), _oracle_remove_distinct(pred_sql)
    order_matters = "order by" in gold_sql.lower()
    for path in sorted(db_dir.iterdir()):
        if ".sqlite" not in path.name:
            continue
        g_flag, g_rows = _oracle_exec(path, gold_sql)
        assert g_flag != "exception"
        p_flag, p_rows = _oracle_exec(path, pred_sql)
        if p_flag == "exception" or not _oracle_result_eq(g_rows, p_rows, order_matters):
            return 0
    return 1


# ---------------------------------------------------------------- tests


def test_every_verdict_equals_the_official_loop(suite, tmp_path):
    root, cases = suite
    before = tree_hash(root)
    report = grade_test_suite(root / "gold.txt", root / "pred.txt", root / "database", tmp_path / "work", jobs=2)
    assert tree_hash(root) == before, "the databases and files are only read"
    db_dir = root / "database" / "pets_1"
    expected = [_oracle(db_dir, g, p) for g, p in cases[:-1]]
    got = [i.score for i in report.instances[:-1]]
    assert got == expected
    assert 0 < sum(expected) < len(expected), "the cases have both verdicts"
    last = report.instances[-1]
    assert (last.reason, last.answer_type) == ("missing_prediction", None)
    assert any("18 prediction(s) for 19 gold line(s)" in p.message for p in report.summary.problems)


def test_quirks_are_the_scorers_and_strict_disagrees_where_it_should(suite, tmp_path):
    root, cases = suite
    report = grade_test_suite(root / "gold.txt", root / "pred.txt", root / "database", tmp_path / "work")
    by_pred = {p: i for (_, p), i in zip(cases, report.instances, strict=False)}
    count_distinct = by_pred["SELECT count(kind) FROM pets"]
    assert count_distinct.score == 1 and count_distinct.strict_score == 0, "DISTINCT cut by the scorer only"
    subquery_order = by_pred["SELECT name FROM people"]
    assert subquery_order.execution["order_matters"] is True, "a subquery's ORDER BY counts for the scorer"
    assert (subquery_order.score, subquery_order.strict_score) == (0, 1), "strict reads the outermost query only"
    assert by_pred["SELECT count(*) * 1.0 FROM people"].score == 1  # 4 == 4.0 for both rules
    assert by_pred["SELECT count(*) * 1.0 FROM people"].strict_score == 1
    assert by_pred["SELECT '30' FROM people WHERE id = 1"].strict_score == 0, "'30' is not 30 under strict"
    assert by_pred["SELECT '' FROM people WHERE id = 4"].strict_score == 0, "NULL is not ''"
    assert by_pred["SELECT name FROM people WHERE age = 30"].reason == "value_mismatch", "the variant tells"
    assert by_pred["SELECT nme FROM people"].reason == "exec_error"
    assert by_pred["SELECT YEAR(CURDATE()) - age FROM people"].score == 1
    assert by_pred["SELECT value FROM people WHERE id = 1"].score == 1


def test_blank_lines_are_sessions_as_for_the_scorer(suite, tmp_path):
    root, _ = suite
    (tmp_path / "gold.txt").write_text("SELECT 1\tpets_1\nSELECT 2\tpets_1\n\nSELECT 3\tpets_1\n")
    (tmp_path / "pred.txt").write_text("SELECT 1\n\nSELECT 3\n")
    report = grade_test_suite(tmp_path / "gold.txt", tmp_path / "pred.txt", root / "database", tmp_path / "w")
    assert [(i.reason, i.answer_type) for i in report.instances] == [
        ("match", "sql"),
        ("missing_prediction", None),
        ("match", "sql"),
    ]
    assert "session 1: 1 prediction(s) for 2 gold line(s)" in report.summary.problems[0].message
    (tmp_path / "pred.txt").write_text("SELECT 1\nSELECT 2\nSELECT 3\n")  # one session for two: the scorer stops
    report = grade_test_suite(tmp_path / "gold.txt", tmp_path / "pred.txt", root / "database", tmp_path / "w")
    assert [i.reason for i in report.instances] == ["match", "match", "match"]
    assert "the official scorer stops here" in report.summary.problems[0].message


def test_a_prediction_line_is_stripped_before_its_tab_as_the_scorer_reads_it(suite, tmp_path):
    """The scorer reads `l.strip().split('\\t')[0]`: a line starting with a tab or spaces is its SQL, not empty."""
    root, _ = suite
    (tmp_path / "gold.txt").write_text("SELECT 1\tpets_1\nSELECT 2\tpets_1\n")
    (tmp_path / "pred.txt").write_text("\tSELECT 1\tpets_1\n  \t SELECT 2\n")
    report = grade_test_suite(tmp_path / "gold.txt", tmp_path / "pred.txt", root / "database", tmp_path / "w")
    assert [i.reason for i in report.instances] == ["match", "match"]


def test_cli_prints_accuracy_and_writes_the_report(suite, tmp_path):
    root, _ = suite
    out = tmp_path / "ts.json"
    result = run_cli(
        "test-suite",
        "--gold",
        root / "gold.txt",
        "--pred",
        root / "pred.txt",
        "--db",
        root / "database",
        "--output",
        out,
        "--jobs",
        "1",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert "over the 18 pairs it compares" in result.output and "score over all 19 gold lines" in result.output
    assert data["summary"]["semantics"] == "test-suite" and len(data["instances"]) == 19
    assert set(data["summary"]["scores"]) == {"test-suite", "strict"}


def test_a_bad_gold_line_is_a_gold_problem(tmp_path):
    (tmp_path / "database").mkdir()
    (tmp_path / "gold.txt").write_text("SELECT 1\n")
    (tmp_path / "pred.txt").write_text("SELECT 1\n")
    report = grade_test_suite(tmp_path / "gold.txt", tmp_path / "pred.txt", tmp_path / "database", tmp_path / "w")
    assert report.instances[0].reason == "invalid_gold"
    assert str(report.summary.problems[0]).startswith(f"{tmp_path / 'gold.txt'}:1:")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("SELECT DISTINCT a FROM t", "SELECT  a FROM t"),
        ("SELECT count(distinct a) FROM t", "SELECT count( a) FROM t"),
        ("SELECT 'distinct' FROM t", "SELECT 'distinct' FROM t"),
    ],
)
def test_remove_distinct_keeps_the_rest_of_the_text(text, expected):
    assert remove_distinct(text) == expected


@pytest.mark.parametrize(
    "gold, pred, ordered, ok",
    [
        ([(1, "a")], [("a", 1)], False, True),
        ([(1,)], [(1.0,)], False, True),
        ([(42,)], [("42",)], False, False),
        ([(None,)], [("",)], False, False),
        ([(1,), (2,)], [(2,), (1,)], True, False),
        ([(1,), (1,), (2,)], [(1,), (2,), (2,)], False, False),  # multisets, not sets
        ([(0.1 + 0.2,)], [(0.3,)], False, True),
        ([(1, 2)], [(1, 2, 3)], False, False),  # an extra column is wrong
        ([(True,)], [(1,)], False, False),
    ],
)
def test_strict_rows(gold, pred, ordered, ok):
    assert strict_rows(gold, pred, ordered).passed is ok
