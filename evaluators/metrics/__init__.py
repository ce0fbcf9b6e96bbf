"""Engine-level execution metrics: BIRD EX, VES/R-VES, pass@k, attempt-based
refinement metrics, Valid@k.  See docs/execution-metrics.md.

Figures from results only: the probes that ask an engine (validity and plan cost by
EXPLAIN, KG Valid) are `evaluators.execution.probes`.
"""

from evaluators.metrics.attempts import UNGROUPED, AttemptMetrics, AttemptReport, select_score, summarize_attempts
from evaluators.metrics.bird import bird_ex, outermost_has_order_by
from evaluators.metrics.passk import mean_pass_at_k, pass_at_k
from evaluators.metrics.validity import (
    REASONS,
    ValidityResult,
    ValiditySummary,
    summarize_validity,
    valid_at_k,
)
from evaluators.metrics.ves import (
    TIME_FLOOR_S,
    VesInstance,
    VesSummary,
    aggregate_ves,
    filter_outliers,
    rves_reward,
    score_instance,
    time_alternately,
    time_ratio,
)

__all__ = [
    "UNGROUPED",
    "AttemptMetrics",
    "AttemptReport",
    "select_score",
    "summarize_attempts",
    "bird_ex",
    "outermost_has_order_by",
    "mean_pass_at_k",
    "pass_at_k",
    "REASONS",
    "ValidityResult",
    "ValiditySummary",
    "summarize_validity",
    "valid_at_k",
    "TIME_FLOOR_S",
    "VesInstance",
    "VesSummary",
    "aggregate_ves",
    "filter_outliers",
    "rves_reward",
    "score_instance",
    "time_alternately",
    "time_ratio",
]
