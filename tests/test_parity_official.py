"""Verdict-for-verdict agreement with the official scorers, on data from the generators in tests/parity_*.py.

The official verdicts were recorded by running the official scripts unmodified (see each generator's
docstring for the command); CI compares against the recorded JSON in tests/data/parity/.
"""

import json

import parity_testsuite
import pytest

pytest.importorskip("sqlparse")


@pytest.fixture(scope="module")
def spider_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity_ts")
    parity_testsuite.build(root)
    return root


@pytest.mark.parametrize("mode", list(parity_testsuite.MODES))
def test_test_suite_verdicts_equal_the_official(spider_folder, tmp_path, mode):
    official = json.loads(parity_testsuite.RECORDED.read_text())[mode]
    ours = parity_testsuite.project_verdicts(spider_folder, tmp_path, mode)
    differ = [
        (i, parity_testsuite.FIXED[i], ours[i], official[i]) for i in range(len(official)) if ours[i] != official[i]
    ]
    assert len(ours) == len(official) and not differ


def test_plug_value_never_runs_past_its_cap(spider_folder, tmp_path):
    from evaluators.testsuite.run import grade_test_suite

    report = grade_test_suite(
        spider_folder / "gold.txt",
        spider_folder / "pred.txt",
        spider_folder / "database",
        tmp_path,
        plug_value=True,
        plug_value_cap=1,
    )
    plugged = [i.execution["plug_value"] for i in report.instances if "plug_value" in (i.execution or {})]
    assert plugged and all(p["tried"] <= 1 for p in plugged)
    capped = [p for p in plugged if p["variants"] > 1]
    assert capped and all("cap" in p.get("cap_hit", "") or "matched" in p for p in capped)


def test_the_cli_says_when_the_plug_value_cap_is_hit(spider_folder, tmp_path):
    from helpers_io import run_cli

    out = tmp_path / "ts.json"
    args = ["--gold", spider_folder / "gold.txt", "--pred", spider_folder / "pred.txt", "--db"]
    result = run_cli(
        "test-suite", *args, spider_folder / "database", "--plug-value", "--plug-value-cap", "2", "--output", out
    )
    assert result.exit_code == 0, result.output
    assert "--plug-value-cap 2 hit on" in result.output
    capped = [i for i in json.loads(out.read_text())["instances"] if "cap_hit" in i["execution"].get("plug_value", {})]
    assert capped and all("the official search would go on" in i["detail"] for i in capped)


# ---------------------------------------------------------------- BIRD (tests/parity_bird.py)

import parity_bird  # noqa: E402

BIRD = json.loads(parity_bird.RECORDED.read_text())


def _bird_differences(ours: list[dict], official_ex: list, official_f1: list, cases: list) -> list:
    return [
        (k, cases[k][1], ours[k], official_ex[k], official_f1[k])
        for k in range(len(official_ex))
        if ours[k]["ex"] != official_ex[k] or ours[k]["soft_f1"] != official_f1[k]
    ]


def test_bird_sqlite_mini_dev_ex_and_soft_f1_equal_the_official(tmp_path):
    cases = parity_bird.build(tmp_path / "data")
    ours = parity_bird.project_results(tmp_path / "data", tmp_path / "w", "SQLite", "mini")
    assert len(ours) == len(BIRD["SQLite"]["ex"])
    assert not _bird_differences(ours, BIRD["SQLite"]["ex"], BIRD["SQLite"]["f1"], cases)


def test_bird_dev_runs_on_the_predictions_database_as_dev_does(tmp_path):
    parity_bird.build(tmp_path / "data")
    ours = [r["ex"] for r in parity_bird.project_results(tmp_path / "data", tmp_path / "w", "SQLite", "dev")]
    assert ours == BIRD["SQLite"]["dev"]


def test_a_file_dev_cannot_score_is_graded_and_said(tmp_path):
    from evaluators.bird.run import BirdOptions, grade_bird

    root = tmp_path / "data"
    parity_bird.build(root)
    report = grade_bird(root / "dev_crash", root / "dev_crash", None, BirdOptions(root / "db", work_dir=tmp_path / "w"))
    assert any("gives no figure for this file" in p.message for p in report.summary.problems)
    assert len(report.instances) == len(parity_bird.cases("SQLite"))


@pytest.mark.parametrize("dialect", ["PostgreSQL", "MySQL"])
def test_bird_servers_ex_and_soft_f1_equal_the_official(request, tmp_path, dialect):
    server = request.getfixturevalue("postgres_server" if dialect == "PostgreSQL" else "mariadb_server")
    root = tmp_path / "data"
    cases = parity_bird.build(root, dialect)
    dsn, _ = parity_bird.load_server(root, dialect, server, server)
    ours = parity_bird.project_results(root, tmp_path / "w", dialect, "mini", dsn)
    differ = _bird_differences(ours, BIRD[dialect]["ex"], BIRD[dialect]["f1"], cases)
    assert [d[1] for d in differ] == KNOWN_SERVER_DIFFERENCES[dialect]
    assert _item_count(server, dialect) == len(parity_bird.ITEMS), "the statements run changed nothing"


def _item_count(server, dialect: str) -> int:
    if dialect == "PostgreSQL":
        with server.admin("shop") as con:
            return con.execute("SELECT count(*) FROM items").fetchone()[0]
    con = server.admin("shop")
    try:
        cursor = con.cursor()
        cursor.execute("SELECT count(*) FROM items")
        return cursor.fetchone()[0]
    finally:
        con.close()


# Deliberate differences (docs/bird.md, "Where we differ on purpose"): MariaDB runs the text of an
# executable comment, which the grader refuses (another statement could hide there).
KNOWN_SERVER_DIFFERENCES: dict[str, list] = {
    "PostgreSQL": [],
    "MySQL": ["SELECT name FROM items WHERE id = 1 /*! AND 1 */"],
}


# ---------------------------------------------------------------- Spider2-dbt duckdb_match (tests/parity_dbt.py)

import parity_dbt  # noqa: E402


def test_duckdb_match_reads_table_names_unquoted_as_the_official_scorer(tmp_path):
    parity_dbt.build(tmp_path)
    official = json.loads(parity_dbt.RECORDED.read_text())
    ours = parity_dbt.project_verdicts(tmp_path, tmp_path / "w")
    assert {k: v["spider2"] for k, v in ours.items()} == official
    assert ours["spaced"]["strict"] == 1 and ours["reserved"]["strict"] == 1  # strict quotes names


# ---------------------------------------------------------------- EHRSQL 2024 (tests/parity_ehrsql.py)

import parity_ehrsql  # noqa: E402

EHRSQL = json.loads(parity_ehrsql.RECORDED.read_text())


@pytest.fixture(scope="module")
def ehrsql_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity_ehrsql")
    parity_ehrsql.build(root)
    return root


@pytest.mark.parametrize("preset", list(parity_ehrsql.PRESETS))
def test_ehrsql_reliability_equals_the_official_scorer_of_each_version(ehrsql_folder, tmp_path, preset):
    report = parity_ehrsql.project_report(ehrsql_folder, tmp_path, preset)
    ours, official = parity_ehrsql.project_verdicts(report), EHRSQL[preset]["verdicts"]
    cases = parity_ehrsql.CASES + parity_ehrsql.random_cases()
    differ = [(k, cases[k], ours[k], official[k]) for k in range(len(official)) if ours[k] != official[k]]
    assert len(ours) == len(official) and not differ
    assert report.summary.execution_metrics["reliability"] == EHRSQL[preset]["scores"]


def test_the_ehrsql_versions_differ_where_their_scorers_do():
    """The recorded verdicts themselves: rounding to 1 decimal (2.51 = 2.54) and the 2024-08 rewrite (NOW())."""
    rounding = parity_ehrsql.CASES.index(("SELECT 2.51", "SELECT 2.54"))
    now = next(i for i, c in enumerate(parity_ehrsql.CASES) if "<= NOW()" in c[1])
    assert [EHRSQL[p]["verdicts"][rounding] for p in parity_ehrsql.PRESETS] == [-1, -1, 1]
    assert [EHRSQL[p]["verdicts"][now] for p in parity_ehrsql.PRESETS] == [1, -1, -1]


# ---------------------------------------------------------------- BIRD-Platinum (tests/parity_platinum.py)

import parity_platinum  # noqa: E402

PLATINUM = json.loads(parity_platinum.RECORDED.read_text())


@pytest.fixture(scope="module")
def platinum_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity_platinum")
    parity_platinum.build(root)
    return root


@pytest.mark.parametrize("grading", ["official", "official-tie-aware"])
def test_platinum_verdicts_equal_grade_py(platinum_folder, tmp_path, grading):
    report = parity_platinum.project_report(platinum_folder, tmp_path, grading)
    ours, official = parity_platinum.project_verdicts(report), PLATINUM[grading]
    cases = parity_platinum.CASES + parity_platinum.random_cases()
    differ = [(k, cases[k], ours[k], official[k]) for k in range(len(official)) if ours[k] != official[k]]
    assert len(ours) == len(official) and not differ
    if grading == "official":
        figures = report.summary.execution_metrics
        accuracy = [figures["bird_correct"] / figures["total"], figures["strict_correct"] / figures["total"]]
        assert accuracy == PLATINUM["official_accuracy"]


def test_platinum_questions_grade_py_cannot_grade_are_graded_by_strict(platinum_folder, tmp_path):
    report = parity_platinum.project_report(platinum_folder, tmp_path, "official-tie-aware")
    errors = [i for i in report.instances if i.reason == "official_error"]
    assert len(errors) == PLATINUM["official-tie-aware"].count("error")
    assert all("no official verdict" in i.detail and i.strict_reason in ("match", "value_mismatch") for i in errors)
    assert any(i.strict_score == 1 for i in errors)
