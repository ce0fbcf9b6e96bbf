"""Engine-level execution metrics: BIRD EX, VES/R-VES, pass@k, attempt-based
refinement metrics, SQL validity and plan cost.  See docs/execution-metrics.md.
"""

from evaluators.metrics.attempts import UNGROUPED, AttemptMetrics, AttemptReport, select_score, summarize_attempts
from evaluators.metrics.bird import bird_ex, outermost_has_order_by
from evaluators.metrics.passk import mean_pass_at_k, pass_at_k
from evaluators.metrics.plan_cost import (
    PlanCost,
    duckdb_cost_from_explain,
    duckdb_plan_cost,
    plan_cost,
    sqlite_cost_from_details,
    sqlite_plan_cost,
)
from evaluators.metrics.validity import (
    REASONS,
    ValidityResult,
    ValiditySummary,
    check_duckdb_validity,
    check_sqlite_validity,
    check_validity,
    open_read_only,
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
    "PlanCost",
    "duckdb_cost_from_explain",
    "duckdb_plan_cost",
    "plan_cost",
    "sqlite_cost_from_details",
    "sqlite_plan_cost",
    "REASONS",
    "ValidityResult",
    "ValiditySummary",
    "check_duckdb_validity",
    "check_sqlite_validity",
    "check_validity",
    "open_read_only",
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
