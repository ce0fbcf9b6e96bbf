"""The shared reference cases: every official preset and strict agree with the reference verdicts."""

import csv

import pytest
from conftest import SHARED, requires_shared

from evaluators import grade

CASES = SHARED / "cases" / "dev"
pytestmark = requires_shared(CASES)


@pytest.fixture(scope="module")
def report():
    return grade(CASES / "submission", CASES / "gold", semantics="spider2", jobs=2, progress=False)


def _rows(name):
    with open(CASES / name, newline="") as handle:
        return {row["instance_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.parametrize("preset", ["spider2", "spider2-2024", "spider2-lite"])
def test_official_presets_reproduce_the_public_scorers(report, preset):
    official = _rows("official_verdicts.csv")
    got = {i.instance_id: i.scores[preset] for i in report.instances}
    wrong = [
        (iid, row[preset], got.get(iid))
        for iid, row in official.items()
        if row[preset] != "" and float(row[preset]) != got.get(iid)
    ]
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:5]}"
    assert sum(1 for row in official.values() if row[preset] != "") > 2400


def test_strict_matches_expected(report):
    expected = _rows("expected.csv")
    got = {i.instance_id: i.strict_score for i in report.instances}
    wrong = [
        (iid, row["kind"], row["strict"], got.get(iid))
        for iid, row in expected.items()
        if float(row["strict"]) != got.get(iid)
    ]
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:5]}"


def test_every_case_is_graded_with_a_documented_reason(report):
    from evaluators.reporting.report import REASONS

    assert len(report.instances) == len(_rows("expected.csv"))
    assert {i.reason for i in report.instances} <= set(REASONS)
    assert all(i.detail for i in report.instances)


def test_the_cli_gives_the_apis_report_on_the_reference_cases(report, tmp_path):
    import json

    from helpers_io import run_cli

    out = tmp_path / "cli.json"
    result = run_cli(
        "--result-dir",
        CASES / "submission",
        "--gold-dir",
        CASES / "gold",
        "--output",
        out,
        "--no-plot",
        "--jobs",
        "2",
        "--work-dir",
        tmp_path / "w",
    )
    assert result.exit_code == 0, result.output[-2000:]
    cli = json.loads(out.read_text())
    api = report.to_dict()

    def key(d):
        return [(i["instance_id"], i["scores"], i["reason"], i["strict_reason"]) for i in d["instances"]]

    assert key(cli) == key(api)
    assert cli["summary"]["scores"] == api["summary"]["scores"]
    assert list(cli["summary"]["score_ci95"]) == list(api["summary"]["score_ci95"])
