"""Reward gold funcs (qa_f1, math_equal and the tool variants) graded through the normal run."""

import json

import pytest
from casefolders import write_instance

from evaluators import grade


def _grade_one(tmp_path, spec, answer, trajectory=None):
    write_instance(
        tmp_path,
        "q",
        spec,
        "answer",
        answer,
        pred_files={"trajectory.json": json.dumps(trajectory)} if trajectory is not None else None,
    )
    if trajectory is not None:
        line = {"instance_id": "q", "answer_type": "answer", "answer_or_path": answer, "trajectory": "trajectory.json"}
        (tmp_path / "sub" / "results_metadata.jsonl").write_text(json.dumps(line) + "\n")
    (instance,) = grade(tmp_path / "sub", tmp_path / "gold").instances
    return instance


def test_qa_f1_gives_a_fractional_score(tmp_path):
    inst = _grade_one(tmp_path, {"func": "qa_f1", "parameters": {"gold": "the big red cat"}}, "a big cat")
    assert inst.score == pytest.approx(0.8)  # tokens {big, cat} vs {big, red, cat}: p=1, r=2/3
    assert inst.reason == "partial" and "f1=" in inst.detail


def test_math_equal_boxed_fraction(tmp_path):
    inst = _grade_one(tmp_path, {"func": "math_equal", "parameters": {"gold": "0.5"}}, r"so \boxed{1/2}")
    assert inst.score == 1.0 and inst.strict_score == 1.0


@pytest.mark.parametrize(
    "messages, expected",
    [
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "Paris"}], 0.0),
        ([{"role": "user", "content": "q"}, {"role": "tool", "content": "Paris is the capital"}], 1.0),
    ],
)
def test_qa_f1_tool_reads_the_trajectory_file(tmp_path, messages, expected):
    inst = _grade_one(tmp_path, {"func": "qa_f1_tool", "parameters": {"gold": "Paris"}}, "Paris", messages)
    assert inst.score == expected


def test_math_equal_tool_wrong_answer_with_a_tool(tmp_path):
    messages = [{"role": "tool", "content": "42"}]
    inst = _grade_one(tmp_path, {"func": "math_equal_tool", "parameters": {"gold": "42"}}, "41", messages)
    assert inst.score == pytest.approx(0.1)


def test_bad_reward_parameters_are_the_instance_reason(tmp_path):
    inst = _grade_one(tmp_path, {"func": "qa_f1", "parameters": {"gold": "x", "golds": "y"}}, "x")
    assert inst.reason == "invalid_spec" and "golds" in inst.detail
