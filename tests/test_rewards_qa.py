"""SQuAD/HotpotQA F1 and exact match, with hand-checked tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.rewards import gold_funcs, normalize_answer, qa_f1, qa_f1_reward

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("U.S.", "us"),  # punctuation is deleted, not replaced by a space
        ("3.14", "314"),
        ("The  Cat!", "cat"),
        ("an apple a day", "apple day"),
        ("Theater", "theater"),  # articles only as whole words
        ("A", ""),
        ("  Hello,\tWorld \n", "hello world"),
        ("don't", "dont"),
        ("x\u2013y", "x\u2013y"),  # en dash is not ASCII punctuation: kept
        ("a-b", "ab"),  # hyphen deleted first, so "ab" is no longer an article
    ],
)
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


# (prediction, gold, f1, precision, recall, em) -- each worked out by hand.
F1_TABLE = [
    ("the cat sat", "cat", 2 / 3, 0.5, 1.0, 0.0),  # 1 shared of 2 / of 1
    ("New York City", "new york", 0.8, 2 / 3, 1.0, 0.0),
    ("cat cat dog", "cat dog dog", 2 / 3, 2 / 3, 2 / 3, 0.0),  # bag overlap 2
    ("U.S.", "US", 1.0, 1.0, 1.0, 1.0),
    ("3.14", "314", 1.0, 1.0, 1.0, 1.0),
    ("3.14", "3 14", 0.0, 0.0, 0.0, 0.0),  # "314" shares no token
    ("Yes.", "yes", 1.0, 1.0, 1.0, 1.0),
    ("yes", "no", 0.0, 0.0, 0.0, 0.0),
    ("yes it is", "yes", 0.0, 0.0, 0.0, 0.0),  # would be 0.5 without the rule
    ("no answer", "noanswer", 0.0, 0.0, 0.0, 0.0),
    ("", "cat", 0.0, 0.0, 0.0, 0.0),  # empty prediction
    ("cat", "", 0.0, 0.0, 0.0, 0.0),
    ("the", "a", 1.0, 1.0, 1.0, 1.0),  # both normalise to empty
    ("dog cat", "cat dog", 1.0, 1.0, 1.0, 0.0),  # F1 is order-blind, EM not
]


@pytest.mark.parametrize("pred, gold, f1, precision, recall, em", F1_TABLE)
def test_qa_f1_table(pred, gold, f1, precision, recall, em):
    scores = qa_f1(pred, gold)
    assert scores["f1"] == pytest.approx(f1)
    assert scores["precision"] == pytest.approx(precision)
    assert scores["recall"] == pytest.approx(recall)
    assert scores["em"] == em


def test_best_of_several_golds():
    scores = qa_f1("Barack Obama", ["president", "Obama", "Barack Obama"])
    assert scores["f1"] == 1.0 and scores["gold"] == "Barack Obama"


def test_tie_on_f1_is_broken_by_exact_match():
    scores = qa_f1("cat dog", ["dog cat", "cat dog"])
    assert (scores["f1"], scores["em"], scores["gold"]) == (1.0, 1.0, "cat dog")


def test_reward_is_the_f1_as_a_float_and_takes_the_keywords():
    result = qa_f1_reward(final_response="the cat sat", answer=["cat"], trajectory=[])
    assert isinstance(result, float) and result == qa_f1("the cat sat", ["cat"])["f1"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "response, answer",
    [("x", 5), ("x", []), ("x", ["a", 3]), ("x", None), (None, "a"), (b"x", "a")],
)
def test_invalid_inputs_raise(response, answer):
    with pytest.raises(ValueError):
        qa_f1_reward(response, answer)


@given(st.text(max_size=30), st.text(max_size=30))
def test_f1_is_symmetric_and_bounded(a, b):
    forward, backward = qa_f1(a, b), qa_f1(b, a)
    assert forward["f1"] == pytest.approx(backward["f1"])
    assert 0.0 <= forward["f1"] <= 1.0
    if forward["em"] == 1.0:
        assert forward["f1"] == 1.0


@given(st.text(max_size=30))
def test_answer_matches_itself(text):
    assert qa_f1(text, text)["f1"] == 1.0


def test_gold_func_detail():
    score, detail = gold_funcs.qa_f1("the cat sat", {"gold": "cat"}, None)
    assert score == pytest.approx(2 / 3)
    assert detail == "f1=0.67 (precision 0.50, recall 1.00, em 0) against 'cat'"


def test_gold_func_reports_the_best_gold_and_stays_one_line():
    score, detail = gold_funcs.qa_f1("Paris", {"gold": ["London", "Paris\n"]}, None)
    assert score == 1.0
    assert detail.endswith("against 'Paris\\n'") and "\n" not in detail


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"gold": "a", "gould": "b"}, "'gould'"),
        ({}, "'gold'"),
        ({"gold": 3}, "'gold'"),
        ({"gold": []}, "'gold'"),
        ({"gold": "a", "percent_equals_fraction": True}, "'percent_equals_fraction'"),
        (["gold"], "mapping"),
    ],
)
def test_gold_func_rejects_bad_params(params, needle):
    with pytest.raises(ValueError, match=needle):
        gold_funcs.qa_f1("a", params, None)


def test_importing_the_package_loads_no_heavy_library():
    code = (
        "import sys, evaluators.rewards, evaluators.rewards.gold_funcs\n"
        "heavy = ('math_verify', 'sacrebleu', 'rouge_score', 'rapidfuzz', 'sympy')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.stdout.strip() == ""
