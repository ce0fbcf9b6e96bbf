"""Engine-level execution metrics: BIRD EX, VES/R-VES, pass@k, attempt-based
refinement metrics, Valid@k.  See docs/execution-metrics.md.

Figures from results only: the probes that ask an engine (validity and plan cost by
EXPLAIN, KG Valid) are `evaluators.execution.probes`.
"""

# Each name from its module, imported when it is first asked for: `import evaluators.metrics.soft_f1` (a SQL
# worker's comparison, the report's intervals) does not load every metric and what they import.
_WHERE = {
    "UNGROUPED": "attempts",
    "AttemptMetrics": "attempts",
    "AttemptReport": "attempts",
    "select_score": "attempts",
    "summarize_attempts": "attempts",
    "bird_ex": "bird",
    "outermost_has_order_by": "bird",
    "mean_pass_at_k": "passk",
    "pass_at_k": "passk",
    "REASONS": "validity",
    "ValidityResult": "validity",
    "ValiditySummary": "validity",
    "summarize_validity": "validity",
    "valid_at_k": "validity",
    "TIME_FLOOR_S": "ves",
    "VesInstance": "ves",
    "VesSummary": "ves",
    "aggregate_ves": "ves",
    "filter_outliers": "ves",
    "rves_reward": "ves",
    "score_instance": "ves",
    "time_alternately": "ves",
    "time_ratio": "ves",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
