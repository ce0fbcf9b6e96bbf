"""Rewards for RL training: answer rewards (each returns a float) and query-text similarity, and the
trainer-facing rewards that run SQL.

What this package exports (qa_f1, math_equal, the tool-use variants, similarity) is pure (no I/O) and
importable without the optional ``rewards`` extra; the heavy libraries (math-verify,
rapidfuzz) are imported only by the functions that need them.  See docs/rewards.md.

The package as a whole does I/O: its trainer-facing modules, imported on their own, run SQL through the
execution layer and read databases (`rewards.verl`: verl's custom and batch reward; `rewards.trl`: TRL
GRPO; `rewards.rayshards`: the batch on Ray actors), and `rewards.scienceworld` and
`rewards.environments` step environments; see docs/rl.md.
"""

from __future__ import annotations

from evaluators.metrics.similarity import jaccard, llmetric_q, query_similarity, sql_tokens
from evaluators.rewards.inputs import INSTALL_HINT, answer_list, import_optional, require_str
from evaluators.rewards.mathequal import extract_final_answer, math_equal, math_equal_reward
from evaluators.rewards.qa import normalize_answer, qa_f1, qa_f1_reward
from evaluators.rewards.tooluse import count_tool_messages, math_equal_tool_reward, qa_f1_tool_reward

__all__ = [
    "INSTALL_HINT",
    "answer_list",
    "import_optional",
    "require_str",
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
