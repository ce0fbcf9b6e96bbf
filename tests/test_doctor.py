"""`evaluate.py doctor bird|test-suite|livesql`: every gold run as its own prediction under the command's
official rule; each cause of an unscoreable instance injected on a synthetic database, and the ceilings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers_io import run_cli

PEOPLE = [(1, "Ann", "2010-01-01"), (2, "Bob", "2011-05-02"), (3, "Cy", "2012-07-03")]
GOLDS = [
    ("SELECT name FROM people WHERE id = 1", "shop"),  # scoreable
    ("SELECT nope FROM people", "shop"),  # does not run
    ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n", "shop"),  # timeout
    ("SELECT name FROM people WHERE joined > date(CURRENT_DATE, '-10 years')", "shop"),  # empty today
    ("SELECT name FROM people", "nowhere"),  # its database is missing
]


@pytest.fixture
def world(tmp_path):
    for folder in ("dbs", "suite"):
        path = tmp_path / folder / "shop" / "shop.sqlite"
        path.parent.mkdir(parents=True)
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE people (id INTEGER, name TEXT, joined TEXT)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?)", PEOPLE)
        con.commit()
        con.close()
    (tmp_path / "gold.sql").write_text("".join(f"{sql}\t{db}\n" for sql, db in GOLDS))
    return tmp_path


def _bird(world, *extra):
    args = ["doctor", "bird", "--ground_truth_path", world / "gold.sql", "--db_root_path", world / "dbs"]
    args += ["--meta_time_out", "5", "--output", world / "out" / "ceiling.json", "--html", *extra]
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return json.loads((world / "out" / "ceiling.json").read_text()), result.output


def test_bird_names_each_cause_and_both_ceilings(world):
    report, printed = _bird(world)
    assert report["official"] is True and report["rule"] == "bird"
    causes = {u["instance_id"]: u["cause"] for u in report["unscoreable"]}
    assert causes == {"1": "gold_error", "2": "gold_timeout", "3": "empty_gold", "4": "gold_missing"}
    assert (report["gold_instances"], report["achievable"], report["scoreable"]) == (5, 2, 1)
    assert report["ceiling"] == pytest.approx(0.4) and report["ceiling_scoreable"] == pytest.approx(1.0)
    assert "ceiling 0.4000 = 2/5 gold instances" in printed
    page = (world / "out" / "ceiling.html").read_text()
    assert "gold_timeout" in page and "2/5" in page


def test_a_reference_date_runs_the_golds_on_that_day_and_is_not_official(world):
    report, printed = _bird(world, "--reference-date", "2015-01-01")
    assert report["official"] is False and report["reference_date"] == "2015-01-01"
    causes = {u["instance_id"]: u["cause"] for u in report["unscoreable"]}
    assert "3" not in causes  # on 2015-01-01 the gold finds the people who joined since 2005
    assert "NOT OFFICIAL: golds run at 2015-01-01" in printed


def test_test_suite_names_each_cause(world):
    target = world / "out" / "suite.json"
    args = ["doctor", "test-suite", "--gold", world / "gold.sql", "--db", world / "suite", "--timeout", "5"]
    result = run_cli(*args, "--output", target)
    assert result.exit_code == 0, result.output
    report = json.loads(target.read_text())
    causes = {u["instance_id"]: u["cause"] for u in report["unscoreable"]}
    assert causes == {"1": "gold_error", "2": "gold_timeout", "3": "empty_gold", "4": "gold_missing"}
    assert report["rule"] == "test-suite" and report["ceiling"] == pytest.approx(0.4)


def test_livesql_names_each_cause_on_the_generated_sets(tmp_path):
    from livesql_generator import write

    generated = write(tmp_path / "gen")
    lines = generated["livesql"].read_text().splitlines()
    base = json.loads(lines[0])
    distinct = "SELECT name FROM customers WHERE city IS NOT DISTINCT FROM 'Rome';"  # remove_distinct: IS NOT FROM
    lines.append(json.dumps({**base, "instance_id": "q_not_distinct", "sol_sql": [distinct], "pred_sqls": [distinct]}))
    generated["livesql"].write_text("\n".join(lines) + "\n")
    found = {}
    for benchmark in ("livesql", "critic"):
        target = tmp_path / f"{benchmark}.json"
        args = ["doctor", "livesql", "--jsonl_file", generated[benchmark], "--db_root", generated["root"]]
        result = run_cli(*args, "--benchmark", benchmark, "--output", target)
        assert result.exit_code == 0, result.output
        found[benchmark] = json.loads(target.read_text())
    causes = {u["instance_id"]: u["cause"] for u in found["livesql"]["unscoreable"]}
    assert causes["q_not_distinct"] == "broken_by_preprocessing"
    assert causes["q_empty_gold"] == "empty_gold"  # official ex_base fails an empty gold whatever the answer
    assert causes["m_temp_table"] == "fails_own_tests"
    assert found["livesql"]["rule"] == "livesql-sqlite" and found["livesql"]["gold_instances"] == 32
    assert (found["livesql"]["achievable"], found["livesql"]["scoreable"]) == (26, 26)
    critic = {u["instance_id"]: u["cause"] for u in found["critic"]["unscoreable"]}
    assert critic["c_issue_passes"] == "issue_sql_passes"


def test_every_official_preset_names_its_scorer_in_the_report_and_in_help(tmp_path):
    from evaluators.matching.semantics import OFFICIAL, PRESETS

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "r.json"
    args = ["--result_dir", root / "example_submission_folder", "--gold_dir", root / "gold", "--no-plot"]
    result = run_cli(*args, "--output", out, "--work-dir", tmp_path / "work")
    assert result.exit_code == 0, result.output
    scorers = json.loads(out.read_text())["summary"]["provenance"]["scorers"]
    assert set(scorers) == set(OFFICIAL)
    assert "spider2-dbt/evaluation_suite/eval_utils.py at 90985da3" in scorers["spider2"]
    assert "spider2/evaluation_suite/eval_utils.py at e9d20327" in scorers["spider2-2024"]
    helped = "".join(run_cli("grade", "--help").output.split())  # wrapped, at spaces and hyphens
    assert all("".join(PRESETS[name].scorer.split()) in helped for name in OFFICIAL)


def test_grade_folders_name_a_missing_gold_file_and_a_gold_the_official_rule_rejects(tmp_path):
    import shutil

    gold = tmp_path / "gold"
    shutil.copytree(Path(__file__).resolve().parents[1] / "gold", gold)
    (gold / "ex_table" / "result.csv").rename(gold / "ex_table" / "Result.csv")  # misnamed
    lines = (gold / "spider2_eval.jsonl").read_text().splitlines()
    exponent = {"func": "number_match", "parameters": {"gold": ["1e5"]}}  # the official pattern reads 1 and 5
    lines.append(json.dumps({"instance_id": "ex_exponent", "evaluation": exponent}))
    lines.append(json.dumps({"instance_id": "ex_typo", "evaluation": {"func": "string_mach", "parameters": {}}}))
    (gold / "spider2_eval.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "grade.json"
    result = run_cli("doctor", "grade", "--gold-dir", gold, "--output", target)
    assert result.exit_code == 0, result.output
    report = json.loads(target.read_text())
    causes = {u["instance_id"]: u["cause"] for u in report["unscoreable"]}
    assert causes == {"ex_table": "gold_missing", "ex_exponent": "fails_official_rule", "ex_typo": "gold_error"}
    assert (report["gold_instances"], report["achievable"], report["scoreable"]) == (13, 10, 10)
    assert report["provenance"]["sql_golds_not_run"] == 1  # ex_temporal: its gold.sql is not run


def test_a_gold_revision_excludes_instances_with_the_reason_shown(tmp_path):
    import shutil

    gold = tmp_path / "gold"
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "gold", gold)
    lines = [json.loads(line) for line in (gold / "spider2_eval.jsonl").read_text().splitlines()]
    for line in lines:
        if line["instance_id"] == "ex_string":
            line["excluded"] = "revoked share (Spider2-E revision)"
    (gold / "spider2_eval.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "r.json"
    args = ["--result_dir", root / "example_submission_folder", "--gold_dir", gold, "--no-plot"]
    result = run_cli(*args, "--output", out, "--work-dir", tmp_path / "work")
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["gold_instances"] == 10  # 11 gold lines, one excluded
    assert "ex_string: excluded by the gold revision: revoked share (Spider2-E revision)" in summary["problems"]
    assert summary["provenance"]["excluded"] == {"ex_string": "revoked share (Spider2-E revision)"}
    ceiling = tmp_path / "ceiling.json"
    assert run_cli("doctor", "grade", "--gold-dir", gold, "--output", ceiling).exit_code == 0
    report = json.loads(ceiling.read_text())
    assert report["gold_instances"] == 10 and "ex_string" in report["provenance"]["excluded"]


def test_interact_runs_the_oracle_and_names_each_cause(tmp_path):
    import interact_generator

    interact_generator.build(tmp_path)
    lines = (tmp_path / "tasks.jsonl").read_text().splitlines()
    broken = {**json.loads(lines[0]), "instance_id": "q_gold_bad", "sol_sql": ["SELECT nope FROM customers"]}
    (tmp_path / "tasks.jsonl").write_text("\n".join([*lines, json.dumps(broken)]) + "\n")
    target = tmp_path / "out" / "interact.json"
    args = ["doctor", "interact", "--tasks", tmp_path / "tasks.jsonl", "--db_root", tmp_path, "--output", target]
    result = run_cli(*args, "--html")
    assert result.exit_code == 0, result.output
    found = json.loads(target.read_text())
    causes = {u["instance_id"]: u["cause"] for u in found["unscoreable"]}
    assert causes["q_gold_bad"] == "gold_error"  # the injected defect
    assert causes["q_empty_gold"] == "empty_gold"
    assert causes["m_bad_preprocess"] == "gold_error"  # phase 2's set-up fails
    assert "q_first" not in causes and found["gold_instances"] == len(lines) + 1
    assert found["scoreable"] == found["gold_instances"] - len(causes) == found["achievable"]
    assert "doctor interact" in result.output and target.with_suffix(".html").exists()


def test_grade_runs_sql_golds_and_names_a_failing_and_an_empty_one(tmp_path):
    import shutil

    gold = tmp_path / "gold"
    shutil.copytree(Path(__file__).resolve().parents[1] / "gold", gold)
    lines = (gold / "spider2_eval.jsonl").read_text().splitlines()
    golds = {
        "sql_passes": "SELECT COUNT(*) FROM orders",
        "sql_fails": "SELECT nope FROM orders",
        "sql_empty": "SELECT * FROM orders WHERE 1 = 0",
    }
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    for instance_id, sql in golds.items():
        (gold / instance_id).mkdir()
        (gold / instance_id / "gold.sql").write_text(sql)
        lines.append(json.dumps({"instance_id": instance_id, "evaluation": spec, "type": "SQLite", "db": "shop"}))
    (gold / "spider2_eval.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "out" / "grade.json"
    result = run_cli("doctor", "grade", "--gold-dir", gold, "--output", target)
    assert result.exit_code == 0, result.output
    report = json.loads(target.read_text())
    causes = {u["instance_id"]: u["cause"] for u in report["unscoreable"]}
    assert causes["sql_fails"] == "gold_error" and causes["sql_empty"] == "empty_gold"
    assert "sql_passes" not in causes
    assert (report["gold_instances"], report["achievable"], report["scoreable"]) == (14, 13, 12)  # empty passes
