"""Rewards in TRL's GRPO shape: `reward_func(completions, **dataset_columns) -> list[float]`.

    from evaluators.rewards.trl import sql_execution_reward
    GRPOTrainer(model=..., reward_funcs=[sql_execution_reward], train_dataset=dataset, ...)

TRL passes every dataset column as a keyword list beside the completions; this reads
`ground_truth` (the gold SQL, or the answer for qa/math), and the database columns `db_path`,
or `db_id` with `db_root`, plus optional `data_source` and `timeout_s`.  Conversational
completions (lists of messages) are scored on their last message's content.  The scoring is
verl.compute_score_batch, so it is parallel, cached and safe in the same way.
"""

from __future__ import annotations

from evaluators.rewards.verl import compute_score_batch

_INFO_COLUMNS = ("db_path", "db_id", "db_root", "timeout_s", "backend", "trajectory")


def sql_execution_reward(
    completions: list, ground_truth: list, data_source: list | None = None, **columns
) -> list[float]:
    """BIRD EX of each completion's SQL (1.0 or 0.0); data_source defaults to "text2sql"."""
    count = len(completions)
    sources = list(data_source) if data_source is not None else ["text2sql"] * count
    infos = [{name: columns[name][i] for name in _INFO_COLUMNS if columns.get(name) is not None} for i in range(count)]
    results = compute_score_batch(sources, [_text(c) for c in completions], list(ground_truth), infos)
    return [r["score"] for r in results]


def _text(completion) -> str:
    if isinstance(completion, list):  # conversational: [{"role": "assistant", "content": "..."}]
        return str(completion[-1].get("content", "")) if completion else ""
    return str(completion)
