"""Names of gold funcs, what answers they grade, and the parameters they accept.

A spec is checked against its func's schema before grading: an unknown func
(with a "did you mean"), an unknown parameter or a wrong type becomes that
instance's reason, never a crash.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from evaluators.matching.semantics import did_you_mean


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _text_or_texts(v) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v))


def _number_gold(v) -> bool:
    scalar = (lambda x: isinstance(x, (str, float)) or _is_int(x))
    return scalar(v) or (isinstance(v, list) and bool(v) and all(scalar(x) for x in v))


def _texts(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _cols(v) -> bool:
    flat = (lambda x: isinstance(x, list) and all(_is_int(i) for i in x))
    return v is None or _is_int(v) or flat(v) or (isinstance(v, list) and all(flat(x) or x is None for x in v))


def _col_lists(v) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, list) and all(_is_int(i) for i in x) for x in v))


def _bools(v) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, bool) for x in v))


def _bool(v) -> bool:
    return isinstance(v, bool)


def _file_name(v) -> bool:
    return isinstance(v, str) and v.lower().endswith(".sql") and bool(v.strip())


def _conj(v) -> bool:
    return v in ("or", "and")


REQUIRED = object()


@dataclass(frozen=True)
class FuncInfo:
    name: str
    answers: str  # "answer" (free text), "table" (file or files) or "sql" (a .sql file, run with the gold query)
    params: dict  # name -> (check, default or REQUIRED, words for errors)
    gold_files: tuple = ()  # parameters that name files under <gold_dir>/<instance_id>/


TEXT = "text or a non-empty list of texts"
FUNCS: dict[str, FuncInfo] = {
    f.name: f
    for f in (
        FuncInfo("string_match", "answer", {
            "gold": (_text_or_texts, REQUIRED, TEXT),
            "exclude": (_texts, [], "a list of texts"),
            "conj": (_conj, "or", "'or' or 'and'")}),
        FuncInfo("number_match", "answer", {
            "gold": (_number_gold, REQUIRED, "a number, numeric text, or a list of them"),
            "percentage": (_bool, False, "true or false"),
            "precision": (_is_int, 4, "an integer"),
            "conj": (_conj, "or", "'or' or 'and'")}),
        FuncInfo("table_match", "table", {
            "gold": (_text_or_texts, REQUIRED, "a file name or a list of file names"),
            "condition_cols": (_cols, [], "a list of column indices, or one list per gold file"),
            "ignore_order": (_bool, False, "true or false")}, ("gold",)),
        FuncInfo("duckdb_match", "table", {
            "gold": (lambda v: isinstance(v, str), REQUIRED, "a DuckDB file name"),
            "condition_tabs": (lambda v: v is None or _texts(v), None, "a list of table names"),
            "condition_cols": (_col_lists, None, "one list of column indices per table"),
            "ignore_orders": (_bools, None, "one true/false per table")}, ("gold",)),
        FuncInfo("tables_match", "table", {
            "gold": (_texts, REQUIRED, "a list of file names"),
            "condition_cols": (_col_lists, None, "one list of column indices per file"),
            "ignore_orders": (_bools, None, "one true/false per file")}, ("gold",)),
        # Runs the predicted .sql and the gold query on one database; see grading/execution_match.py.
        FuncInfo("execution_match", "sql", {
            "gold_sql": (_file_name, "gold.sql", "the name of a .sql file in the gold folder"),
            "db": (lambda v: v is None or (isinstance(v, str) and bool(v.strip())), None,
                   "a database name (it overrides the gold line's db)")}, ("gold_sql",)),
        FuncInfo("qa_f1", "answer", {}),
        FuncInfo("math_equal", "answer", {}),
        FuncInfo("qa_f1_tool", "answer", {}),
        FuncInfo("math_equal_tool", "answer", {}),
        FuncInfo("scienceworld_reward", "answer", {}),
    )
}
# Reward funcs validate their own parameters (evaluators.rewards.gold_funcs).
SELF_CHECKED = {"qa_f1", "math_equal", "qa_f1_tool", "math_equal_tool", "scienceworld_reward"}


def lookup(func: str) -> FuncInfo:
    try:
        return FUNCS[func]
    except KeyError:
        raise ValueError(f"unknown func {func!r}; {did_you_mean(func, FUNCS)}") from None


def check_parameters(func: str, params: dict) -> dict:
    """Parameters with defaults filled in; raises ValueError naming every problem."""
    info = lookup(func)
    if func in SELF_CHECKED:
        return dict(params)
    problems = [f"unknown parameter {k!r} for {func} ({did_you_mean(k, info.params)})"
                for k in params if k not in info.params]
    filled = {}
    for name, (check, default, words) in info.params.items():
        if name not in params:
            if default is REQUIRED:
                problems.append(f"{func} needs parameter {name!r} ({words})")
            else:
                filled[name] = default
        elif not check(params[name]):
            problems.append(f"{func} parameter {name!r} must be {words}, got {params[name]!r}")
        else:
            filled[name] = params[name]
    if problems:
        raise ValueError("; ".join(problems))
    return filled


def is_answer_func(func: str) -> bool:
    return func in FUNCS and FUNCS[func].answers == "answer"


def is_sql_func(func: str) -> bool:
    """Funcs that grade only a .sql answer, by running it beside the gold query."""
    return func in FUNCS and FUNCS[func].answers == "sql"


GradeFn = Callable[..., dict]
