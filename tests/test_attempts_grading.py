"""Submission lines with `attempts`: every attempt graded, the report's attempt metrics."""

import json

import pytest
from casefolders import write_instance

from evaluators import grade
from evaluators.grading.instance import Options


def _three_instances(tmp_path):
    spec = {"func": "string_match", "parameters": {"gold": "paris"}}
    for iid in ("recovered", "regressed", "steady"):
        write_instance(
            tmp_path, iid, spec, "answer", "x", metadata={"difficulty": "easy" if iid != "steady" else "hard"}
        )
    lines = [
        {"instance_id": "recovered", "answer_type": "answer", "attempts": ["rome", "berlin", "Paris"]},
        {"instance_id": "regressed", "answer_type": "answer", "attempts": ["Paris", "paris?", "rome"]},
        {"instance_id": "steady", "answer_type": "answer", "attempts": ["oslo", "oslo", "oslo"]},
    ]
    (tmp_path / "sub" / "results_metadata.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_three_attempts_with_a_recovery_and_a_regression(tmp_path):
    _three_instances(tmp_path)
    report = grade(tmp_path / "sub", tmp_path / "gold")
    scores = {i.instance_id: i.score for i in report.instances}
    assert scores == {"recovered": 1.0, "regressed": 0.0, "steady": 0.0}  # the last attempt counts
    assert [a["score"] for a in next(i for i in report.instances if i.instance_id == "regressed").attempts] == [1, 1, 0]
    overall = report.summary.attempts["score"]["overall"]
    assert overall["pass_at_1"] == pytest.approx(1 / 3)
    assert overall["pass_at_final"] == pytest.approx(1 / 3)
    assert overall["refinement_gain"] == pytest.approx(0.0)
    assert overall["recovery_rate"] == pytest.approx(1 / 2)  # 1 of the 2 that failed at first
    assert overall["n_regressions"] == 1
    # unbiased pass@k with n=3: c = 1, 2, 0 -> pass@1 = (1/3 + 2/3 + 0) / 3
    assert overall["pass_at_k"][1] == pytest.approx(1 / 3)
    assert overall["pass_at_k"][3] == pytest.approx(2 / 3)
    assert report.summary.attempts["score"]["by_difficulty"]["hard"]["pass_at_final"] == 0.0
    assert "Pass@1 33.33%" in report.to_text()


def test_best_attempt_policy(tmp_path):
    _three_instances(tmp_path)
    report = grade(tmp_path / "sub", tmp_path / "gold", options=Options(attempt_score="best"))
    assert {i.instance_id: i.score for i in report.instances} == {"recovered": 1.0, "regressed": 1.0, "steady": 0.0}


def test_no_attempts_no_attempt_section(tmp_path):
    write_instance(tmp_path, "one", {"func": "string_match", "parameters": {"gold": "a"}}, "answer", "a")
    report = grade(tmp_path / "sub", tmp_path / "gold")
    assert report.summary.attempts is None and "Attempts" not in report.to_text()
