"""The shared reference cases: every official preset and strict agree with the reference verdicts.

The 2,535 cases are graded once, by the CLI as a user runs it; the API is held to the CLI's report on a
sample of them (grading them all twice cost a minute of the suite's time and proved nothing more).
"""

import csv
import json
import shutil

import pytest
from conftest import SHARED, requires_shared

from evaluators import grade

CASES = SHARED / "cases" / "dev"
pytestmark = requires_shared(CASES)
EVERY_NTH = 25  # the API's sample: one case in 25, every kind of case in it (they are listed by instance)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from helpers_io import run_cli

    work = tmp_path_factory.mktemp("reference_cases")
    out = work / "cli.json"
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
        work / "w",
    )
    assert result.exit_code == 0, result.output[-2000:]
    return json.loads(out.read_text())


def _rows(name):
    with open(CASES / name, newline="") as handle:
        return {row["instance_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.parametrize("preset", ["spider2", "spider2-2024", "spider2-lite"])
def test_official_presets_reproduce_the_public_scorers(report, preset):
    official = _rows("official_verdicts.csv")
    got = {i["instance_id"]: i["scores"][preset] for i in report["instances"]}
    wrong = [
        (iid, row[preset], got.get(iid))
        for iid, row in official.items()
        if row[preset] != "" and float(row[preset]) != got.get(iid)
    ]
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:5]}"
    assert sum(1 for row in official.values() if row[preset] != "") > 2400


def test_strict_matches_expected(report):
    expected = _rows("expected.csv")
    got = {i["instance_id"]: i["strict_score"] for i in report["instances"]}
    wrong = [
        (iid, row["kind"], row["strict"], got.get(iid))
        for iid, row in expected.items()
        if float(row["strict"]) != got.get(iid)
    ]
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:5]}"


def test_every_case_is_graded_with_a_documented_reason(report):
    from evaluators.reporting.report import REASONS

    assert len(report["instances"]) == len(_rows("expected.csv"))
    assert {i["reason"] for i in report["instances"]} <= set(REASONS)
    assert all(i["detail"] for i in report["instances"])


def test_the_api_gives_the_clis_report_on_a_sample_of_the_cases(report, tmp_path):
    lines = (CASES / "submission" / "results_metadata.jsonl").read_text().splitlines()[::EVERY_NTH]
    sample = tmp_path / "submission"
    sample.mkdir()
    (sample / "results_metadata.jsonl").write_text("\n".join(lines) + "\n")
    ids = [json.loads(line)["instance_id"] for line in lines]
    for iid in ids:
        if (CASES / "submission" / iid).is_dir():  # a missing prediction's case has no folder
            shutil.copytree(CASES / "submission" / iid, sample / iid)
    api = grade(sample, CASES / "gold", semantics="spider2", jobs=1, progress=False).to_dict()

    def key(instances):
        return {
            i["instance_id"]: (i["scores"], i["reason"], i["strict_reason"])
            for i in instances
            if i["instance_id"] in ids
        }

    cli = key(report["instances"])
    assert len(cli) == len(ids) > 100
    assert key(api["instances"]) == cli
