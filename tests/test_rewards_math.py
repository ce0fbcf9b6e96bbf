"""math_equal: boxed extraction, numeric/symbolic equality, percent option."""

from __future__ import annotations

import sys
import threading

import pytest

from evaluators.rewards import extract_final_answer, gold_funcs, math_equal, math_equal_reward

pytest.importorskip("math_verify")


@pytest.mark.parametrize(
    "text, expected",
    [
        (r"so \boxed{\frac{1}{2}}.", r"\frac{1}{2}"),  # nested braces
        (r"\boxed{3} then \boxed{4}", "4"),  # the last box wins
        (r"\boxed{\{1, 2\}}", r"\{1, 2\}"),  # escaped braces do not close
        (r"\boxed{7} and \boxed{42", "7"),  # truncated last box is skipped
        (r"\fbox{5}", "5"),
        ("  42 \n", "42"),  # no box: the whole text, stripped
        (r"\boxed{42", r"\boxed{42"),
    ],
)
def test_extract_final_answer(text, expected):
    assert extract_final_answer(text) == expected


# (prediction, gold, equal by default, equal with percent_equals_fraction)
MATH_TABLE = [
    (r"\boxed{1/2}", "0.5", True, True),
    (r"The answer is \boxed{\frac{1}{2}}.", "1/2", True, True),
    (r"\boxed{3} then \boxed{4}", "3", False, False),
    (r"\frac{\sqrt{2}}{2}", r"1/\sqrt{2}", True, True),  # symbolic
    (r"\boxed{\frac{\sqrt{2}}{2}}", r"\frac{1}{\sqrt{2}}", True, True),
    ("x^2+2x+1", "(x+1)^2", True, True),
    ("0.333333", "1/3", True, True),  # numeric, 6 decimal places
    ("3.14", r"\pi", False, False),
    ("1,000", "1000", True, True),
    ("1e3", "1000", True, True),
    ("2x", "2", False, False),
    ("The answer is 42.", "42", True, True),
    ("", "0", False, False),
    ("yes", "yes", True, True),  # identical text needs no parsing
    ("50%", "0.5", False, True),
    (r"\boxed{50\%}", "0.5", False, True),
    ("0.5", r"\boxed{50\%}", False, True),
    ("50%", "50", True, True),  # the sign alone is dropped
    ("12.5%", "0.125", False, True),
    ("-50%", "-0.5", False, True),
    ("The answer is 50%.", "0.5", False, True),  # percent inside prose
]


@pytest.mark.parametrize("pred, gold, default, with_option", MATH_TABLE)
def test_math_equal_table(pred, gold, default, with_option):
    assert math_equal(pred, gold) is default
    assert math_equal(pred, gold, percent_equals_fraction=True) is with_option


def test_gold_goes_first_to_math_verify():
    # math-verify compares a relation gold with an interval prediction but not
    # the other way round, so this pair shows which side is passed as gold.
    assert math_equal("(1,2)", "1<x<2") is True
    assert math_equal("1<x<2", "(1,2)") is False


def test_reward_is_a_float_and_accepts_a_gold_list():
    assert math_equal_reward(final_response=r"\boxed{4}", answer=["3", "4"]) == 1.0
    result = math_equal_reward(r"\boxed{5}", ["3", "4"])
    assert result == 0.0 and isinstance(result, float)


def test_works_outside_the_main_thread():
    # math-verify's signal-based timeout raises in threads unless disabled.
    results: list = []
    worker = threading.Thread(target=lambda: results.append(math_equal("1/2", "0.5")))
    worker.start()
    worker.join()
    assert results == [True]


@pytest.mark.parametrize("response, answer", [("1", 1), ("1", []), (None, "1")])
def test_invalid_inputs_raise(response, answer):
    with pytest.raises(ValueError):
        math_equal_reward(response, answer)


def test_missing_math_verify_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "math_verify", None)
    with pytest.raises(ImportError, match=r"pip install '\.\[rewards\]'"):
        math_equal("1", "1.0")


def test_gold_func_details():
    assert gold_funcs.math_equal(r"\boxed{1/2}", {"gold": ["0.4", "0.5"]}, None) == (
        1.0,
        "predicted '1/2' equals '0.5'",
    )
    assert gold_funcs.math_equal("0.3", {"gold": ["0.4", "0.5"]}, None) == (
        0.0,
        "predicted '0.3' is not equal to '0.4' (or 1 more)",
    )


def test_gold_func_percent_option():
    params = {"gold": "0.5", "percent_equals_fraction": True}
    assert gold_funcs.math_equal("50%", params, None)[0] == 1.0
    assert gold_funcs.math_equal("50%", {"gold": "0.5"}, None)[0] == 0.0


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"gold": "1", "percent_equals_fractions": True}, "'percent_equals_fractions'"),
        ({"gold": "1", "percent_equals_fraction": "yes"}, "'percent_equals_fraction'"),
        ({"gold": "1", "percent_equals_fraction": 1}, "'percent_equals_fraction'"),
        ({"gold": 0.5}, "'gold'"),
        ({"percent_equals_fraction": False}, "'gold'"),
    ],
)
def test_gold_func_rejects_bad_params(params, needle):
    with pytest.raises(ValueError, match=needle):
        gold_funcs.math_equal("1", params, None)
