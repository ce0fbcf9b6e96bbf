"""Rewards in TRL's GRPO shape: `reward_func(completions, **dataset_columns) -> list[float]`.

    from evaluators.rewards.trl import sql_execution_reward
    GRPOTrainer(model=..., reward_funcs=[sql_execution_reward], train_dataset=dataset, ...)

TRL passes every dataset column as a keyword list beside the completions; this reads
`ground_truth` (the gold SQL, or the answer for qa/math), and the database columns `db_path`,
or `db_id` with `db_root`, plus optional `data_source`, `timeout_s`, `backend` and `trajectory`.
A column that only some rows carry arrives as None on the others (HF datasets fills the gaps):
None means the default.  Conversational completions (lists of messages) are scored on the last
assistant message (a tool-calling completion may end with a tool's message); content given as a
list of parts has its text parts joined.  The scoring is verl.compute_score_batch, so it is
parallel, cached and safe in the same way.  When TRL passes `log_extra` / `log_metric` (TRL 1.x),
each completion's `error` and `format_ok` go to the completions table and the share of each error
kind to the metrics (every kind at every step, 0 when absent), as verl users see `reward_extra_info`.
"""

from __future__ import annotations

import logging
from collections import Counter

from evaluators.rewards.verl import ERROR_KINDS, compute_score_batch, error_kind

_INFO_COLUMNS = ("db_path", "db_id", "db_root", "timeout_s", "backend", "trajectory")
NO_ASSISTANT = "no_assistant_message"
_log = logging.getLogger(__name__)
_told: set[str] = set()
_SETUP_KINDS = ("internal", "gold_", "no_database", "unknown_data_source", "bad_input", NO_ASSISTANT)
# Every kind is logged at every step, 0 when absent: a metric logged only at the steps it occurs draws as a
# line through its few points (wandb, TensorBoard) and hides how rarely it happens.
METRIC_KINDS = (*ERROR_KINDS, NO_ASSISTANT)


def sql_execution_reward(
    completions: list,
    ground_truth: list,
    data_source: list | None = None,
    log_extra=None,
    log_metric=None,
    **columns,
) -> list[float]:
    """BIRD EX of each completion's SQL (1.0 or 0.0); data_source defaults to "text2sql"."""
    results = score_completions(completions, ground_truth, data_source, columns)
    _report(results, log_extra, log_metric)
    return [r["score"] for r in results]


def score_completions(completions: list, ground_truth: list, data_source, columns: dict) -> list[dict]:
    """verl-shaped results (score, format_ok, executed, error, f1, em) for each completion."""
    count = len(completions)
    sources = [s if s is not None else "text2sql" for s in (data_source or [None] * count)]
    infos = [_info(columns, i) for i in range(count)]
    texts = [completion_text(c) for c in completions]
    results = compute_score_batch(sources, [t or "" for t in texts], list(ground_truth), infos)
    missing = {"score": 0.0, "format_ok": False, "executed": False, "error": NO_ASSISTANT, "f1": 0.0, "em": 0.0}
    return [r if t is not None else {**r, **missing} for r, t in zip(results, texts, strict=True)]


def _info(columns: dict, row: int) -> dict:
    values = {name: columns[name][row] for name in _INFO_COLUMNS if columns.get(name) is not None}
    return {name: value for name, value in values.items() if value is not None}


def completion_text(completion) -> str | None:
    """The text to grade: a plain completion, or the last assistant message's text; None when there is none."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, list):
        return None if completion is None else str(completion)
    for message in reversed(completion):
        if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
            return _content_text(message.get("content"))
    return None


def _content_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": "..."}, {"type": "image", ...}]
        parts = [part.get("text") if isinstance(part, dict) else part for part in content]
        return "".join(part for part in parts if isinstance(part, str))
    return str(content)


def _report(results: list[dict], log_extra, log_metric) -> None:
    """The reasons where a TRL user looks: the completions table and the metrics.  A kind that is no fault of
    the model (the data set or the set-up: no database, a failing gold, no assistant message, an internal error)
    is also a warning, once per kind, since a reward that is silently 0 ruins a run."""
    errors = [r["error"] for r in results]
    if log_extra is not None:
        log_extra("error", errors)
        log_extra("format_ok", [r["format_ok"] for r in results])
    if log_metric is not None:
        log_metric("spider_grade/format_ok", sum(r["format_ok"] for r in results) / max(len(results), 1))
        counts = Counter(error_kind(e) for e in errors)
        for kind in (*METRIC_KINDS, *sorted(counts.keys() - set(METRIC_KINDS))):
            log_metric(f"spider_grade/error/{kind}", counts[kind] / max(len(results), 1))
    for error in errors:
        kind = error_kind(error)
        if kind.startswith(_SETUP_KINDS) and kind not in _told:
            _told.add(kind)
            _log.warning(
                "spider-grade reward: a completion scored 0 for a reason that is not the model's: %s", error[:300]
            )
