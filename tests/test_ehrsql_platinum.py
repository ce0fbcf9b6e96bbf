"""EHRSQL 2024 and BIRD-Platinum: the scorers' rules on hand-made inputs, and both commands as a user runs them.

Verdict-for-verdict agreement with the official scorers is in tests/test_parity_official.py."""

import json

import pytest
from helpers_io import run_cli

from evaluators.ehrsql.rewrite import rewrite
from evaluators.ehrsql.rules import PRESETS, cell_text, is_abstention, result_text
from evaluators.metrics.ehrsql import reliability, reliability_scores
from evaluators.platinum.rules import OfficialError, bird_verdict, official_strict, ours


def test_reliability_is_plus_one_zero_or_minus_one_as_the_scorer_scores():
    assert reliability(False, False, True) == 1
    assert reliability(False, True, False) == 0
    assert reliability(False, False, False) == -1
    assert reliability(True, True, False) == 1
    assert reliability(True, False, True) == -1


def test_rs_n_weighs_a_wrong_answer_by_the_number_of_questions():
    figures = reliability_scores([1, 1, 0, -1])
    assert figures == {"accuracy0": 50.0, "accuracy5": -75.0, "accuracy10": -200.0, "accuracyN": -50.0}
    assert reliability_scores([])["accuracy0"] is None


def test_the_abstention_is_null_after_the_rewrite_strips_its_spaces():
    preset = PRESETS["official"]
    assert is_abstention(" null\n", preset) and not is_abstention("NULL", preset)


def test_the_2024_08_rewrite_reads_mysql_dates_the_2024_03_one_does_not():
    sql = "SELECT DATE_SUB(NOW(), INTERVAL 1 YEAR), DATE_ADD(CURDATE(), INTERVAL 2 MONTH)"
    assert rewrite(sql) == ("SELECT datetime('2100-12-31 23:59:00', '-1 year'), datetime('2100-12-31', '+2 months')")
    assert rewrite(sql, "2024-03") == sql


def test_the_rewrite_fills_one_vitals_range_and_collapses_spaces_even_in_literals():
    assert rewrite("SELECT  'a   b' WHERE x > heart_rate_lower AND x < heart_rate_upper") == (
        "SELECT 'a b' WHERE x > 60.0 AND x < 100.0"
    )


def test_cells_go_through_float_where_python_reads_them():
    assert [cell_text(c, 3) for c in (3, "3", " 3 ", "1_000", b"1", None, "nan", 10**400)] == [
        "3.0",
        "3.0",
        "3.0",
        "1000.0",
        "1.0",
        "None",
        "nan",
        str(10**400),
    ]
    assert cell_text(2.54, 1) == cell_text(2.51, 1) != cell_text(2.51, 3)


def test_only_the_first_100_rows_sorted_as_strings_count():
    rows = [(i,) for i in range(150)]
    assert result_text(rows, 3) == result_text([r for r in rows if r[0] != 99], 3)  # '99.0' sorts last
    assert result_text(rows, 3) != result_text(rows[1:], 3)


def test_platinum_bird_is_set_equality_and_strict_compares_cells_as_strings():
    assert bird_verdict([(1,), (1,)], [(1.0,)]) and not official_strict([(1,)], [(1.0,)], "multiset")[0]
    assert official_strict([("a", 1)], [(1, "a")], "multiset")[0]
    assert official_strict([(1,)], [("1",)], "multiset")[0] and not ours([(1,)], [("1",)], "multiset")[0]


def test_platinum_tie_aware_gold_takes_any_n_rows_of_the_tie_set():
    ties = [("pen", "a"), ("ink", "a")]
    assert official_strict(ties, [("a", "pen")], "subset,=,1")[0]
    assert not official_strict(ties, ties, "subset,=,1")[0]
    assert official_strict(ties, ties, "subset,>=,1")[0]
    assert not official_strict(ties, [("cap", "b")], "subset,>=,1")[0]


@pytest.mark.parametrize("row", [("pen", 2.5), (None, 1), (None, None)])
def test_platinum_subset_raises_where_cells_cannot_be_sorted_and_ours_grades(row):
    with pytest.raises(OfficialError):
        official_strict([row], [row], "subset,=,1")
    assert ours([row], [row], "subset,=,1") == (
        True,
        "every predicted row is in the gold's tie set (cells compared by type)",
    )
    assert official_strict([row], [row], "multiset")[0]


def test_ehrsql_command_from_the_scorers_folders(tmp_path, monkeypatch):
    import parity_ehrsql

    parity_ehrsql.build(tmp_path / "input")
    monkeypatch.chdir(tmp_path)
    args = ["ehrsql", "--gold", "input/ref", "--pred", "input/res/prediction.json", "--db", "input/mimic_iv.sqlite"]
    assert run_cli(*args).exit_code == 2  # four golds fail: gold errors, as on every command
    args = [*args, "--allow-gold-errors"]
    result = run_cli(*args, "--preset", "official-round1", "--output", "out/e.json")
    assert result.exit_code == 0, result.output
    recorded = parity_ehrsql.RECORDED.read_text()
    assert "Scores:\n" + str(json.loads(recorded)["official-round1"]["scores"]) in result.output
    report = json.loads((tmp_path / "out" / "e.json").read_text())
    assert report["summary"]["execution_metrics"]["ehrsql_scorer"].startswith("glee4810/ehrsql-2024")
    assert run_cli(*args, "--fail-under", "0.9").exit_code == 1


def test_ehrsql_command_says_when_ids_differ_and_stops_on_an_unknown_preset(tmp_path):
    import parity_ehrsql

    parity_ehrsql.build(tmp_path)
    preds = json.loads((tmp_path / "res" / "prediction.json").read_text())
    preds.pop("q000")
    (tmp_path / "res" / "prediction.json").write_text(json.dumps(preds))
    args = ["ehrsql", "--gold", tmp_path / "ref", "--pred", tmp_path / "res", "--db", tmp_path / "mimic_iv.sqlite"]
    args.append("--allow-gold-errors")
    result = run_cli(*args, "--output", tmp_path / "e.json")
    assert result.exit_code == 0, result.output
    problems = json.loads((tmp_path / "e.json").read_text())["summary"]["problems"]
    assert [p["message"].split(":")[0] for p in problems] == ["IDs do not match (1 missing, 0 unknown)"]
    assert run_cli(*args, "--preset", "latest").exit_code == 2


def test_platinum_command_prints_grade_py_lines_for_each_grading(tmp_path, monkeypatch):
    import parity_platinum

    parity_platinum.build(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["platinum", "--db_base_path", "db", "--infer_results", "results/preds.json", "--data_path", "data.json"]
    args.append("--allow-gold-errors")
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    recorded = json.loads(parity_platinum.RECORDED.read_text())
    bird, strict = recorded["official_accuracy"]
    total = len(recorded["official"])
    tie_aware = sum(1 for v in recorded["official-tie-aware"] if isinstance(v, list) and v[1])
    raised = recorded["official-tie-aware"].count("error")
    assert f"Bird Accuracy: {bird:.4f} ({round(bird * total)}/{total})" in result.output
    assert f"Strict Accuracy: {strict:.4f} ({round(strict * total)}/{total})" in result.output
    result = run_cli(*args, "--grading", "official-tie-aware")
    assert f"Strict Accuracy: {tie_aware / total:.4f} ({tie_aware}/{total})" in result.output
    assert f"grade() raises on {raised} question(s)" in result.output


def test_every_reason_the_two_commands_give_is_explained(tmp_path):
    import parity_ehrsql
    import parity_platinum

    from evaluators.reporting.report import REASONS

    parity_ehrsql.build(tmp_path / "e")
    parity_platinum.build(tmp_path / "p")
    reports = [parity_ehrsql.project_report(tmp_path / "e", tmp_path / "w", "official")]
    reports.append(parity_platinum.project_report(tmp_path / "p", tmp_path / "w", "official-tie-aware"))
    reasons = {r for report in reports for i in report.instances for r in (i.reason, i.strict_reason)}
    assert reasons <= set(REASONS) and "internal_error" not in reasons


def test_files_that_are_not_the_scorers_formats_stop_with_the_format_named(tmp_path):
    import parity_ehrsql
    import parity_platinum

    parity_ehrsql.build(tmp_path / "e", parity_ehrsql.CASES[:2])
    (tmp_path / "e" / "ref" / "label.json").write_text("[1, 2]")
    args = [
        "--gold",
        tmp_path / "e" / "ref",
        "--pred",
        tmp_path / "e" / "res",
        "--db",
        tmp_path / "e" / "mimic_iv.sqlite",
    ]
    result = run_cli("ehrsql", *args)
    assert result.exit_code == 2 and 'label.json: the file must be a JSON object {"id": "SQL or null"' in result.output
    parity_platinum.build(tmp_path / "p", parity_platinum.CASES[:2])
    (tmp_path / "p" / "data.json").write_text('[{"question_id": 1, "db_id": "shop", "SQL": "SELECT 1"}, {"SQL": "x"}]')
    data = ["--data_path", tmp_path / "p" / "data.json", "--infer_results", tmp_path / "p" / "results" / "preds.json"]
    result = run_cli("platinum", "--db_base_path", tmp_path / "p" / "db", *data)
    assert result.exit_code == 2 and "item 2 lacks question_id, db_id or SQL" in result.output


def test_platinum_a_missing_database_is_no_database_and_a_number_is_no_sql(tmp_path):
    import parity_platinum

    from evaluators.reporting.report import REASONS

    cases = [("SELECT 1", None, "SELECT 1"), ("SELECT 1", None, 7), ("SELECT 1", None, "SELECT 1")]
    parity_platinum.build(tmp_path, cases)
    data = json.loads((tmp_path / "data.json").read_text())
    data[2]["db_id"] = "gone"
    (tmp_path / "data.json").write_text(json.dumps(data))
    files = ["--data_path", tmp_path / "data.json", "--infer_results", tmp_path / "results" / "preds.json"]
    result = run_cli("platinum", "--db_base_path", tmp_path / "db", *files, "--output", tmp_path / "p.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "p.json").read_text())
    assert [i["reason"] for i in report["instances"]] == ["match", "invalid_answer", "no_database"]
    assert all(i["reason"] in REASONS for i in report["instances"])
    messages = [p["message"] for p in report["summary"]["problems"]]
    assert any("1 of the 2 database(s) the gold needs are not in this folder" in m for m in messages), messages
