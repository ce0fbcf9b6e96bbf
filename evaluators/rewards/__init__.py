"""Answer-level rewards and query-text similarity for agent training.

Everything here is pure (no I/O) and importable without the optional
``rewards`` extra; the heavy libraries (math-verify, sacrebleu, rouge-score,
rapidfuzz) are imported only by the functions that need them.
See docs/rewards.md for the conventions.

The trainer-facing modules are imported on their own and do I/O: `rewards.verl` (verl's
custom and batch reward, SQL run through the execution layer), `rewards.trl` (TRL GRPO),
`rewards.scienceworld` and `rewards.environments` (environment rewards); see docs/rl.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

from evaluators.errors import MissingExtra

INSTALL_HINT = "pip install '.[rewards]'"


def import_optional(module: str) -> ModuleType:
    """Import an optional dependency, or explain how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(module, "rewards") from None


def answer_list(answer: object, name: str = "answer") -> list[str]:
    """Return the acceptable answers as a non-empty list of strings.

    A bare string is one acceptable answer; a list or tuple lists several.
    Anything else is rejected rather than coerced, so that a gold of ``5``
    (int) or ``None`` is caught where it was written instead of silently
    becoming the string ``"5"`` or ``"None"``.
    """
    if isinstance(answer, str):
        return [answer]
    if isinstance(answer, Sequence) and not isinstance(answer, (bytes, bytearray)):
        items = list(answer)
        if not items:
            raise ValueError(f"{name} must not be an empty list")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise ValueError(f"{name}[{i}] must be a string, got {type(item).__name__}")
        return items
    raise ValueError(f"{name} must be a string or a list of strings, got {type(answer).__name__}")


def require_str(value: object, name: str) -> str:
    """Reject non-string predictions early with a message naming them."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return value


# The helpers above are defined before these imports on purpose: the
# submodules import them from the package while it is still initialising.
from evaluators.rewards.mathequal import extract_final_answer, math_equal, math_equal_reward  # noqa: E402
from evaluators.rewards.qa import normalize_answer, qa_f1, qa_f1_reward  # noqa: E402
from evaluators.rewards.similarity import jaccard, llmetric_q, query_similarity, sql_tokens  # noqa: E402
from evaluators.rewards.tooluse import count_tool_messages, math_equal_tool_reward, qa_f1_tool_reward  # noqa: E402

__all__ = [
    "INSTALL_HINT",
    "count_tool_messages",
    "extract_final_answer",
    "jaccard",
    "llmetric_q",
    "math_equal",
    "math_equal_reward",
    "math_equal_tool_reward",
    "normalize_answer",
    "qa_f1",
    "qa_f1_reward",
    "qa_f1_tool_reward",
    "query_similarity",
    "sql_tokens",
]
