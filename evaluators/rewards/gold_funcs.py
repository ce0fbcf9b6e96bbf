"""Adapters that let the grading engine use the rewards as gold funcs.

Contract: ``func(answer, params, trajectory) -> (score, detail)`` where
``answer`` is the submission's answer text, ``params`` is the gold spec's
"parameters" dict and ``trajectory`` is the agent's message list (or None).
``score`` is in [0, 1] and ``detail`` is one human-readable line.
Parameters are validated strictly so a typo in a gold file fails loudly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evaluators.rewards.inputs import answer_list, require_str
from evaluators.rewards.mathequal import extract_final_answer, matching_gold
from evaluators.rewards.qa import qa_f1 as _qa_scores
from evaluators.rewards.tooluse import TOOL_USED_WRONG_ANSWER, count_tool_messages

GoldFunc = Callable[[str, dict, list | None], tuple[float, str]]

_QA_PARAMS = frozenset({"gold"})
_MATH_PARAMS = frozenset({"gold", "percent_equals_fraction"})


def _quote(text: str, limit: int = 60) -> str:
    """repr() keeps the detail on one line; long answers are shortened."""
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


def _validate(func: str, params: object, allowed: frozenset[str]) -> dict:
    """Check parameter names and types; return gold list and options."""
    if not isinstance(params, Mapping):
        raise ValueError(f"{func}: parameters must be a mapping, got {type(params).__name__}")
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"{func}: unknown parameter {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")
    if "gold" not in params:
        raise ValueError(f"{func}: missing required parameter 'gold'")
    options: dict[str, Any] = {"gold": answer_list(params["gold"], name=f"{func}: parameter 'gold'")}
    if "percent_equals_fraction" in allowed:
        flag = params.get("percent_equals_fraction", False)
        if not isinstance(flag, bool):
            raise ValueError(
                f"{func}: parameter 'percent_equals_fraction' must be true or false, got {type(flag).__name__}"
            )
        options["percent_equals_fraction"] = flag
    return options


def _gold_label(golds: list[str], chosen: str | None = None) -> str:
    label = _quote(chosen if chosen is not None else golds[0])
    if chosen is None and len(golds) > 1:
        label += f" (or {len(golds) - 1} more)"
    return label


def _tool_note(trajectory: list | None) -> tuple[int, str]:
    if trajectory is None:
        return 0, "no trajectory supplied"
    count = count_tool_messages(trajectory)
    if count == 0:
        return 0, "no tool used (no message with role 'tool')"
    return count, f"tool used ({count} tool message{'s' if count != 1 else ''})"


def _qa(answer: str, options: dict) -> tuple[float, str]:
    s = _qa_scores(require_str(answer, "answer"), options["gold"])
    detail = (
        f"f1={s['f1']:.2f} (precision {s['precision']:.2f}, recall {s['recall']:.2f}, "
        f"em {s['em']:.0f}) against {_quote(s['gold'])}"
    )
    return s["f1"], detail


def _math(answer: str, options: dict) -> tuple[bool, str]:
    golds = options["gold"]
    found = matching_gold(
        require_str(answer, "answer"),
        golds,
        percent_equals_fraction=options["percent_equals_fraction"],
    )
    predicted = _quote(extract_final_answer(answer))
    if found is None:
        return False, f"predicted {predicted} is not equal to {_gold_label(golds)}"
    return True, f"predicted {predicted} equals {_gold_label(golds, found)}"


def qa_f1(answer: str, params: dict, trajectory: list | None = None) -> tuple[float, str]:
    """Best SQuAD F1 against the gold answers."""
    return _qa(answer, _validate("qa_f1", params, _QA_PARAMS))


def math_equal(answer: str, params: dict, trajectory: list | None = None) -> tuple[float, str]:
    """1.0 when the answer is mathematically equal to a gold answer."""
    equal, detail = _math(answer, _validate("math_equal", params, _MATH_PARAMS))
    return (1.0 if equal else 0.0), detail


def qa_f1_tool(answer: str, params: dict, trajectory: list | None) -> tuple[float, str]:
    """F1 when at least one tool message is in the trajectory, else 0.0."""
    options = _validate("qa_f1_tool", params, _QA_PARAMS)
    count, note = _tool_note(trajectory)
    f1, detail = _qa(answer, options)
    if count == 0:
        return 0.0, f"{note}: score 0 (without the tool rule: {detail})"
    return f1, f"{note}; {detail}"


def math_equal_tool(answer: str, params: dict, trajectory: list | None) -> tuple[float, str]:
    """0.0 without a tool, 0.1 with a tool and a wrong answer, 1.0 when right."""
    options = _validate("math_equal_tool", params, _MATH_PARAMS)
    count, note = _tool_note(trajectory)
    equal, detail = _math(answer, options)
    if count == 0:
        return 0.0, f"{note}: score 0 (without the tool rule: {detail})"
    return (1.0 if equal else TOOL_USED_WRONG_ANSWER), f"{note}; {detail}"


_SCIENCEWORLD_PARAMS = frozenset({"task", "variation", "timeout_s"})


def trajectory_actions(answer: str, trajectory: list | None) -> list[str]:
    """The actions of an environment trajectory: strings, {"action": ...} steps, or the assistant
    messages of a message list; without a trajectory, the answer's non-empty lines."""
    if trajectory is None:
        return [line.strip() for line in require_str(answer, "answer").splitlines() if line.strip()]
    actions = []
    for step in trajectory:
        if isinstance(step, str):
            actions.append(step)
        elif isinstance(step, Mapping) and isinstance(step.get("action"), str):
            actions.append(step["action"])
        elif isinstance(step, Mapping) and step.get("role") == "assistant" and isinstance(step.get("content"), str):
            actions.append(step["content"].strip())
    return actions


def scienceworld_reward(answer: str, params: dict, trajectory: list | None) -> tuple[float, str]:
    """ScienceWorld's own final score of the submitted trajectory, as max(0, score) / 100."""
    if not isinstance(params, Mapping):
        raise ValueError(f"scienceworld_reward: parameters must be a mapping, got {type(params).__name__}")
    unknown = sorted(set(params) - _SCIENCEWORLD_PARAMS)
    if unknown:
        raise ValueError(
            f"scienceworld_reward: unknown parameter {unknown[0]!r} "
            f"(allowed: {', '.join(sorted(_SCIENCEWORLD_PARAMS))})"
        )
    task, variation = params.get("task"), params.get("variation", 0)
    if not isinstance(task, str) or not task:
        raise ValueError("scienceworld_reward: parameter 'task' must be a ScienceWorld task name")
    if not isinstance(variation, int) or isinstance(variation, bool) or variation < 0:
        raise ValueError("scienceworld_reward: parameter 'variation' must be a non-negative integer")
    from evaluators.rewards.scienceworld import DEFAULT_TIMEOUT_S, scienceworld_replay

    actions = trajectory_actions(answer, trajectory)
    replay = scienceworld_replay(task, variation, actions, float(params.get("timeout_s", DEFAULT_TIMEOUT_S)))
    state = "done" if replay.done else "not done"
    note = f"; {replay.error}" if replay.error else ""
    return replay.reward, (
        f"ScienceWorld {task} variation {variation}: reward {replay.reward:.2f} after "
        f"{replay.steps} of {len(actions)} actions ({state}){note}"
    )
