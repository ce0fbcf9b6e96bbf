"""Tool-use rewards: no tool message, one, several; and the gold-func registry."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evaluators.matching import registry
from evaluators.rewards import (
    count_tool_messages,
    gold_funcs,
    math_equal_reward,
    math_equal_tool_reward,
    qa_f1_reward,
    qa_f1_tool_reward,
)

USER = {"role": "user", "content": "What is 1/2 as a decimal?"}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
TOOL = {"role": "tool", "tool_call_id": "c1", "content": "0.5"}
FINAL = {"role": "assistant", "content": "0.5"}

NO_TOOL = [USER, FINAL]
ONE_TOOL = [USER, CALL, TOOL, FINAL]
SEVERAL_TOOLS = [USER, CALL, TOOL, CALL, TOOL, CALL, TOOL, FINAL]


@pytest.mark.parametrize(
    "trajectory, expected",
    [
        (None, 0),
        ([], 0),
        (NO_TOOL, 0),
        ([USER, CALL, FINAL], 0),  # a call without a tool reply does not count
        ([USER, {"role": "function", "content": "x"}], 0),  # legacy role ignored
        (ONE_TOOL, 1),
        (SEVERAL_TOOLS, 3),
        ((USER, SimpleNamespace(role="tool", content="x")), 1),  # message objects
    ],
)
def test_count_tool_messages(trajectory, expected):
    assert count_tool_messages(trajectory) == expected


@pytest.mark.parametrize("trajectory", ["tool", {"role": "tool"}, 3])
def test_trajectory_must_be_a_list(trajectory):
    with pytest.raises(ValueError, match="trajectory"):
        count_tool_messages(trajectory)


@pytest.mark.parametrize(
    "trajectory, reward",
    [(NO_TOOL, 0.0), (ONE_TOOL, 2 / 3), (SEVERAL_TOOLS, 2 / 3)],
)
def test_qa_f1_tool_reward(trajectory, reward):
    assert qa_f1_tool_reward("the cat sat", "cat", trajectory) == pytest.approx(reward)


@pytest.mark.parametrize(
    "reward, response",
    [
        (qa_f1_reward, "the cat sat"),
        (math_equal_reward, r"\boxed{0.5}"),
        (qa_f1_tool_reward, "the cat sat"),
        (math_equal_tool_reward, r"\boxed{0.5}"),
    ],
)
@pytest.mark.parametrize("trajectory", [NO_TOOL, ONE_TOOL])
def test_every_reward_returns_a_float(reward, response, trajectory):
    """One type for every reward (docs/rewards.md): a float, as TRL and verl's score want it."""
    result = reward(final_response=response, answer=["0.5", "cat"], trajectory=trajectory)
    assert type(result) is float and 0.0 <= result <= 1.0


@pytest.mark.parametrize(
    "trajectory, response, reward",
    [
        (NO_TOOL, r"\boxed{0.5}", 0.0),
        (NO_TOOL, r"\boxed{0.4}", 0.0),
        (ONE_TOOL, r"\boxed{0.4}", 0.1),
        (ONE_TOOL, r"\boxed{1/2}", 1.0),
        (SEVERAL_TOOLS, r"\boxed{0.4}", 0.1),
        (SEVERAL_TOOLS, r"\boxed{1/2}", 1.0),
        (None, r"\boxed{1/2}", 0.0),
    ],
)
def test_math_equal_tool_reward(trajectory, response, reward):
    assert math_equal_tool_reward(final_response=response, answer="0.5", trajectory=trajectory) == reward


def test_math_tool_reward_validates_even_without_tool_use():
    with pytest.raises(ValueError, match="answer"):
        math_equal_tool_reward("1", 1, NO_TOOL)


def test_registry():
    assert set(registry.names(reward=True)) == {
        "qa_f1",
        "math_equal",
        "qa_f1_tool",
        "math_equal_tool",
        "scienceworld_reward",
    }
    assert set(registry.names(trajectory=True)) == {"qa_f1_tool", "math_equal_tool", "scienceworld_reward"}
    assert registry.grader("qa_f1_tool") is gold_funcs.qa_f1_tool


@pytest.mark.parametrize(
    "name, trajectory, score, detail",
    [
        (
            "qa_f1_tool",
            NO_TOOL,
            0.0,
            "no tool used (no message with role 'tool'): score 0 (without the tool "
            "rule: f1=0.67 (precision 0.50, recall 1.00, em 0) against 'cat')",
        ),
        (
            "qa_f1_tool",
            SEVERAL_TOOLS,
            2 / 3,
            "tool used (3 tool messages); f1=0.67 (precision 0.50, recall 1.00, em 0) against 'cat'",
        ),
        (
            "qa_f1_tool",
            None,
            0.0,
            "no trajectory supplied: score 0 (without the tool rule: "
            "f1=0.67 (precision 0.50, recall 1.00, em 0) against 'cat')",
        ),
    ],
)
def test_qa_tool_gold_func(name, trajectory, score, detail):
    result = registry.grader(name)("the cat sat", {"gold": "cat"}, trajectory)
    assert result[0] == pytest.approx(score)
    assert result[1] == detail


@pytest.mark.parametrize(
    "trajectory, response, score, detail_start",
    [
        (NO_TOOL, "1/2", 0.0, "no tool used"),
        (ONE_TOOL, "0.4", 0.1, "tool used (1 tool message); predicted '0.4' is not"),
        (ONE_TOOL, "1/2", 1.0, "tool used (1 tool message); predicted '1/2' equals"),
    ],
)
def test_math_tool_gold_func(trajectory, response, score, detail_start):
    result = gold_funcs.math_equal_tool(response, {"gold": "0.5"}, trajectory)
    assert result[0] == score
    assert result[1].startswith(detail_start)


def test_tool_gold_funcs_validate_params():
    with pytest.raises(ValueError, match="'percent'"):
        gold_funcs.math_equal_tool("1", {"gold": "1", "percent": True}, ONE_TOOL)
    with pytest.raises(ValueError, match="'answer'"):
        gold_funcs.qa_f1_tool("1", {"answer": "1"}, ONE_TOOL)
    with pytest.raises(ValueError, match="missing required parameter 'gold'"):
        gold_funcs.qa_f1_tool("1", {}, ONE_TOOL)
