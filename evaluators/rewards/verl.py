"""Rewards in verl's custom-reward shape, and its batch reward manager's shape.

    compute_score(data_source, solution_str, ground_truth, extra_info=None) -> dict with "score"
    compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos) -> list of dicts

Text-to-SQL (data_source "text2sql", or beginning with "synsql", "bird", "spider"): the SQL is
the last fenced ```sql block of the completion, else the text after the last `</think>`; it
runs through the project's execution layer (a worker process, the database opened read-only
with writes refused, a timeout that stops the query) and scores 1.0 when its rows equal the
gold's as sets (BIRD EX).  "qa" and "math"/"gsm8k" use the answer rewards of this package, with
AgentFly's tool-use variants when `extra_info` carries a "trajectory".  See docs/rl.md.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import threading
import warnings
from pathlib import Path

from evaluators.cwd import absolute
from evaluators.errors import InstanceError, UsageError
from evaluators.execution.backends.base import REASONS as EXECUTION_REASONS
from evaluators.execution.executor import resolve_database
from evaluators.execution.row_queries import RowQuery, RowResult, RowRunner
from evaluators.execution.sqlite_readonly import WRITE_REFUSED
from evaluators.rewards.mathequal import math_equal_reward
from evaluators.rewards.qa import qa_f1, qa_f1_reward
from evaluators.rewards.tooluse import math_equal_tool_reward, qa_f1_tool_reward
from evaluators.sqltext import read_only_problem
from evaluators.terminal_safe import one_line

SQL_SOURCES = ("text2sql", "synsql", "bird", "spider")
QA_SOURCES = ("qa", "hotpotqa", "squad", "nq", "triviaqa")
MATH_SOURCES = ("math", "gsm8k")
DEFAULT_TIMEOUT_S = 30.0
_FENCE = re.compile(r"```[ \t]*sql(?:[ \t]*\n|[ \t]+)(.*?)```", re.S | re.I)  # "```sql" then a space or a line
_THINK_END = "</think>"

_runner: RowRunner | None = None
_runner_lock = threading.Lock()


def extract_sql(completion: str) -> str | None:
    """The last closed ```sql fence, else the text after the last </think>; None when neither holds SQL."""
    if not isinstance(completion, str):
        return None
    blocks = _FENCE.findall(completion)
    if blocks:
        text = blocks[-1]
    elif _THINK_END in completion:
        text = completion.rsplit(_THINK_END, 1)[1]
    else:
        return None
    text = text.strip().rstrip(";").strip()
    return text or None


# Keyword arguments verl's reward loop passes to every call (0.7+ with a reward model): not ours to use.
_VERL_CALL_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer"})
# `custom_reward_function.reward_kwargs` this reward reads: defaults for every sample's extra_info.
_INFO_DEFAULTS = ("db_root", "timeout_s", "backend")
_warned: set[str] = set()
_warned_sources: set[str] = set()

# The kinds a sample's `error` can have ("<kind>" or "<kind>: <words>"; "none" for no error): a closed list,
# so that a trainer can log every kind at every step (rewards/trl.py).
UNKNOWN_SOURCE = "unknown_data_source"
_OWN_KINDS = ("none", "no_sql", "write", "multiple_statements", "bad_input", "internal", UNKNOWN_SOURCE)
_RUN_KINDS = tuple(reason for reason in EXECUTION_REASONS if reason != "ok")
ERROR_KINDS = _OWN_KINDS + _RUN_KINDS + tuple(f"gold_{reason}" for reason in _RUN_KINDS)


def error_kind(error: str) -> str:
    """The kind of a sample's `error`: its code before the first colon, "none" when empty."""
    return error.split(":", 1)[0] if error else "none"


class VerlScore(dict):
    """One sample's result: a dict for the managers that log its keys (naive, batch, dapo, the 0.7+ reward
    loop), and `result[0]` is the score for the prime manager, which reads a number or a tuple's first item."""

    def __missing__(self, key):
        if key == 0:
            return self["score"]
        raise KeyError(key)


def compute_score(
    data_source=None, solution_str=None, ground_truth=None, extra_info: dict | None = None, **kwargs
) -> dict:
    """verl's custom reward function: a dict whose "score" is the reward (always run here, never on Ray:
    one sample is not worth a round trip).

    The same name serves verl's batch manager, which calls it with `data_sources=`, `solution_strs=`,
    `ground_truths=`, `extra_infos=`: then it is compute_score_batch.  Other keyword arguments are
    `custom_reward_function.reward_kwargs` (db_root, timeout_s and backend are defaults for every
    sample) or what verl's reward loop adds (reward_router_address, reward_model_tokenizer: ignored)."""
    if "solution_strs" in kwargs:
        return compute_score_batch(**kwargs)  # type: ignore[return-value]
    info = with_defaults(with_absolute_paths(extra_info), kwargs)
    return VerlScore(local_batch([data_source], [solution_str], [ground_truth], [info])[0])


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs) -> list[dict]:
    """verl's batch reward manager shape; SQL rewards run in parallel, the gold results cached.

    Under a running Ray instance (`ray.is_initialized()`), the batch is spread over Ray actors
    (rewards/rayshards.py); results are the same."""
    count = len(solution_strs)
    given = list(extra_infos) if extra_infos is not None else [None] * count
    infos = [with_defaults(with_absolute_paths(i), kwargs) for i in given]
    if _ray_running():
        from evaluators.rewards.rayshards import spread_batch

        return spread_batch(LOCAL_BATCH, list(data_sources), list(solution_strs), list(ground_truths), infos)
    return local_batch(list(data_sources), list(solution_strs), list(ground_truths), infos)


def with_defaults(extra_info, kwargs: dict):
    """extra_info with the reward_kwargs this reward reads as defaults; unknown ones are named once, not fatal."""
    for name in kwargs.keys() - _VERL_CALL_KWARGS - set(_INFO_DEFAULTS) - _warned:
        _warned.add(name)
        warnings.warn(f"spider-grade's verl reward ignores the keyword argument {name!r}", stacklevel=3)
    defaults = {name: kwargs[name] for name in _INFO_DEFAULTS if kwargs.get(name) is not None}
    _check_db_root(defaults.get("db_root"))
    if not defaults:
        return extra_info
    info = extra_info if isinstance(extra_info, dict) else {}
    return with_absolute_paths({**defaults, **{k: v for k, v in info.items() if v is not None}})


def _check_db_root(db_root) -> None:
    """The trainer's `reward_kwargs.db_root` is its set-up, not a sample: a folder that does not exist would give
    every sample 0 (`no_database`) and read as a model that learns nothing, so it stops the run (UsageError)."""
    if db_root is None or Path(absolute(str(db_root))).is_dir():
        return
    raise UsageError(
        f"reward_kwargs db_root {absolute(str(db_root))}: no such folder; every SQL sample would score 0",
        hint="point custom_reward_function.reward_kwargs.db_root at the folder of <db_id>/<db_id>.sqlite",
    )


def with_absolute_paths(extra_info):
    """The caller's relative database paths made absolute here, at the edge, before a Ray actor (whose
    working directory is another) or a worker sees them."""
    if not isinstance(extra_info, dict):
        return extra_info
    found = {key: extra_info[key] for key in ("db_path", "db_root") if isinstance(extra_info.get(key), str)}
    return {**extra_info, **{key: str(absolute(value)) for key, value in found.items() if value}}


def local_batch(data_sources: list, solution_strs: list, ground_truths: list, extra_infos: list) -> list[dict]:
    items = list(zip(data_sources, solution_strs, ground_truths, extra_infos, strict=True))
    return runner().map(lambda item: _guarded(*item), items)


LOCAL_BATCH = f"{__name__}:local_batch"  # what a Ray actor runs (rewards/rayshards.py), named, not imported there


def runner() -> RowRunner:
    """The process's pool: its workers and gold cache live until close_pool() or exit."""
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = RowRunner()
        return _runner


def close_pool() -> None:
    global _runner
    with _runner_lock:
        if _runner is not None:
            _runner.close()
            _runner = None


atexit.register(close_pool)


def _forget_pool_in_child() -> None:
    """A forked child (verl's prime manager scores in a ProcessPoolExecutor) must not share the parent's worker
    pipes or a lock held at the fork: it starts its own pool when it first scores."""
    global _runner, _runner_lock
    _runner = None
    _runner_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)


def _guarded(data_source, solution_str, ground_truth, extra_info) -> dict:
    """One sample's score; an unexpected error is that sample's error, never the batch's end (a missing
    extra still raises, with its pip hint: it is the trainer's set-up, not the sample)."""
    try:
        return _score_one(data_source, solution_str, ground_truth, extra_info)
    except ImportError:
        raise
    except Exception as exc:
        return _result(0.0, False, False, f"internal: {type(exc).__name__}: {exc}"[:300])


def _score_one(data_source, solution_str, ground_truth, extra_info) -> dict:
    source = str(data_source or "").lower()
    info = extra_info if isinstance(extra_info, dict) else {}
    if hasattr(ground_truth, "tolist"):  # verl reads a parquet list column as a numpy array
        ground_truth = ground_truth.tolist()
    if source.startswith(SQL_SOURCES):
        return sql_score(solution_str, ground_truth, info)
    if source.startswith(QA_SOURCES):
        return _qa_score(solution_str, ground_truth, info)
    if source.startswith(MATH_SOURCES):
        return _math_score(solution_str, ground_truth, info)
    return _result(0.0, False, False, _unknown_source("" if data_source is None else str(data_source)))


def _unknown_source(data_source: str) -> str:
    """The error of a sample whose data source names no reward, warned once per source: a misspelt source
    would otherwise train on a reward that is always 0."""
    known = ", ".join(SQL_SOURCES + QA_SOURCES + MATH_SOURCES)
    error = f"{UNKNOWN_SOURCE}: {one_line(data_source)[:80] or '(empty)'} (known prefixes: {known})"
    if data_source not in _warned_sources:
        _warned_sources.add(data_source)
        warnings.warn(f"spider-grade reward: {error}; such samples score 0", stacklevel=2)
    return error


def _result(score: float, format_ok: bool, executed: bool, error: str = "", f1: float | None = None) -> dict:
    """verl stacks every key over the batch (and its 0.7+ reward loop takes the first sample's keys as the
    batch's), so every source gives the same keys with one type: f1 and em are qa's token F1 and exact
    match, and for the other sources 1.0 when the answer matched (score 1.0), else 0.0."""
    matched = 1.0 if float(score) >= 1.0 else 0.0
    f1_value = matched if f1 is None else float(f1)
    return {
        "score": float(score),
        "format_ok": format_ok,
        "executed": executed,
        "error": error,
        "f1": f1_value,
        "em": matched,
    }


def sql_score(solution_str: str, gold_sql: str, info: dict) -> dict:
    """The database is looked up before the SQL: a wrong `db_path` is the set-up's fault and must say so even
    while the model writes no SQL yet (early in training), not hide behind `no_sql`."""
    sql = extract_sql(solution_str)
    try:
        backend = str(info.get("backend") or "sqlite")  # None (a column absent from this row) means the default
        database = _database(backend, info)
    except InstanceError as exc:
        return _result(0.0, sql is not None, False, f"{exc.reason}: {exc.detail}")
    if sql is None:
        return _result(0.0, False, False, "no_sql")
    refused = _text_refusal(sql, backend)
    if refused:
        return _result(0.0, True, False, refused)
    timeout = float(info["timeout_s"]) if info.get("timeout_s") is not None else DEFAULT_TIMEOUT_S
    pool = runner()
    gold = pool.gold(RowQuery(backend, database, str(gold_sql).strip().rstrip(";"), timeout))
    if not gold.ok:
        return _result(0.0, True, False, f"gold_{gold.reason}")
    predicted = pool.run(RowQuery(backend, database, sql, timeout))
    if not predicted.ok:
        return _result(0.0, True, False, _error_kind(predicted))
    return _result(1.0 if set(predicted.rows) == set(gold.rows) else 0.0, True, True)


def _database(backend: str, info: dict) -> str | None:
    if info.get("db_path"):
        return resolve_database(backend, str(info["db_path"]), None)
    if info.get("db_id") is not None:
        root = info.get("db_root")
        return resolve_database(backend, str(info["db_id"]), Path(root) if root else None)
    raise InstanceError("no_database", "extra_info names no database (db_path, or db_id with db_root)")


@functools.lru_cache(maxsize=4096)  # a GRPO group's completions often repeat a query: parse each text once
def _text_refusal(sql: str, backend: str) -> str:
    """The error kind ("write", "multiple_statements") when sqlglot's parser sees that the text is no single query.

    Text the parser cannot read, and PRAGMAs, go to the engine, whose read-only guard decides
    (execution/sqlite_readonly.py): a reading PRAGMA such as table_info runs."""
    problem = read_only_problem(sql, "sqlite" if backend == "sqlite" else backend, unparsed_ok=True)
    if problem is None or problem.startswith("a PRAGMA"):
        return ""
    return "multiple_statements" if "statements;" in problem else "write"


def _error_kind(result: RowResult) -> str:
    if result.reason == "exec_error" and result.detail.startswith(WRITE_REFUSED):
        return "write"
    return result.reason


def _answer_reward(plain, with_tool, solution_str: str, answer, info: dict):
    """The reward (a float), with the tool rule when the sample carries a trajectory; a string on bad input."""
    trajectory = info.get("trajectory")
    try:
        return plain(solution_str, answer) if trajectory is None else with_tool(solution_str, answer, trajectory)
    except ValueError as exc:
        return f"bad_input: {exc}"


def _qa_score(solution_str: str, answer, info: dict) -> dict:
    reward = _answer_reward(qa_f1_reward, qa_f1_tool_reward, solution_str, answer, info)
    if isinstance(reward, str):
        return _result(0.0, False, False, reward)
    scores = qa_f1(solution_str, answer)  # the F1 and EM logged beside the reward (the tool rule may zero it)
    return {**_result(reward, True, True, f1=scores["f1"]), "em": float(scores["em"])}


def _math_score(solution_str: str, answer, info: dict) -> dict:
    score = _answer_reward(math_equal_reward, math_equal_tool_reward, solution_str, answer, info)
    if isinstance(score, str):
        return _result(0.0, False, False, score)
    return _result(score, True, True)


def _ray_running() -> bool:
    import sys

    ray = sys.modules.get("ray")  # never imported here: only a caller that uses Ray has it loaded
    return bool(ray is not None and ray.is_initialized() and not _inside_ray_shard())


def _inside_ray_shard() -> bool:
    from evaluators.execution.ray_actors import inside_shard

    return inside_shard()
