"""Tool-use variants of the answer rewards.

The trajectory is an OpenAI-style message list
(``[{"role": "user" | "assistant" | "tool" | ..., "content": ...}, ...]``).
A tool counts as used when at least one message has role ``"tool"``: that
message is the tool's reply, so its presence proves a call was executed, and
one call is what "the agent used a tool" means. Requiring more than one call
(as some reference code variants do) would penalise an agent that needed a
single lookup. See docs/rewards.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluators.rewards.inputs import answer_list, require_str
from evaluators.rewards.mathequal import math_equal
from evaluators.rewards.qa import qa_f1_reward

TOOL_ROLE = "tool"
# Partial credit for using a tool but answering wrongly: enough to reward
# trying the tool, small enough that a right answer always dominates.
TOOL_USED_WRONG_ANSWER = 0.1


def _role(message: object) -> object:
    """The role of a dict message or of a message object (e.g. pydantic)."""
    if isinstance(message, Mapping):
        return message.get("role")
    return getattr(message, "role", None)


def count_tool_messages(trajectory: Sequence | None) -> int:
    """Number of messages with role ``"tool"``; a None trajectory has none."""
    if trajectory is None:
        return 0
    if isinstance(trajectory, (str, bytes)) or not isinstance(trajectory, Sequence):
        raise ValueError(f"trajectory must be a list of messages, got {type(trajectory).__name__}")
    return sum(1 for message in trajectory if _role(message) == TOOL_ROLE)


def qa_f1_tool_reward(
    final_response: str,
    answer: str | list[str],
    trajectory: Sequence | None,
) -> float:
    """``qa_f1_reward``, or 0.0 unless a tool was used (``qa_f1`` still gives the real F1 for logging)."""
    tool_messages = count_tool_messages(trajectory)
    reward = qa_f1_reward(final_response, answer)  # validates the inputs even without tool use
    return reward if tool_messages else 0.0


def math_equal_tool_reward(
    final_response: str,
    answer: str | list[str],
    trajectory: Sequence | None,
    *,
    percent_equals_fraction: bool = False,
) -> float:
    """0.0 without tool use, 0.1 with a tool but a wrong answer, 1.0 when right."""
    # Validate even when no tool was used, so bad inputs never pass silently.
    require_str(final_response, "final_response")
    answer_list(answer)
    if count_tool_messages(trajectory) == 0:
        return 0.0
    equal = math_equal(final_response, answer, percent_equals_fraction=percent_equals_fraction)
    return 1.0 if equal else TOOL_USED_WRONG_ANSWER
