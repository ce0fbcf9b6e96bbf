"""The one registry of gold funcs: the only place that knows their names.

Each entry says what answers the func grades, the parameters it takes (typed, with did-you-mean for
unknown ones), which gold tables it reads, what a temporal gold becomes, the extra it needs, and the
function that grades (imported only when it is used).  Grading, `validate`, `gold lint`, `gold add`, the
self-check and the rewards ask the entry; nothing else compares func names.  Adding a func is one
module with its grading function and one entry here.

A spec is checked against its func's schema before grading: an unknown func (with a "did you mean"), an
unknown parameter or a wrong type becomes that instance's reason, never a crash.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from evaluators.errors import MissingExtra
from evaluators.matching.semantics import did_you_mean


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _text_or_texts(v) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v))


def _number_gold(v) -> bool:
    def scalar(x) -> bool:
        return isinstance(x, (str, float)) or _is_int(x)

    return scalar(v) or (isinstance(v, list) and bool(v) and all(scalar(x) for x in v))


def _texts(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _cols(v) -> bool:
    def flat(x) -> bool:
        return isinstance(x, list) and all(_is_int(i) for i in x)

    return v is None or _is_int(v) or flat(v) or (isinstance(v, list) and all(flat(x) or x is None for x in v))


def _col_lists(v) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, list) and all(_is_int(i) for i in x) for x in v))


def _bools(v) -> bool:
    return v is None or (isinstance(v, list) and all(isinstance(x, bool) for x in v))


def _bool(v) -> bool:
    return isinstance(v, bool)


def _file_name(v) -> bool:
    return isinstance(v, str) and v.lower().endswith(".sql") and bool(v.strip())


def _query_file(v) -> bool:
    return v is None or (isinstance(v, str) and v.lower().endswith((".cypher", ".sql")) and bool(v.strip()))


def _conj(v) -> bool:
    return v in ("or", "and")


REQUIRED = object()


@dataclass(frozen=True)
class FuncInfo:
    name: str
    answers: str  # "answer" (free text), "table" (file or files) or "sql" (a .sql file, run with the gold query)
    params: dict  # name -> (check, default or REQUIRED, words for errors)
    # "module:function" that grades, on this floor or below; its call depends on `answers` and `reward`.  None
    # for `sql` answers: grading/sql_answers runs them beside the gold query (execution_match).
    grader: str | None
    gold_files: tuple = ()  # parameters that name files under <gold_dir>/<instance_id>/
    gold_tables: str | None = None  # "csv" (one table, or variants of it), "csvs" (one per answer file), "duckdb"
    temporal: str | None = None  # what a temporal gold (gold.sql run now) becomes: "table", "number" or "text"
    reward: bool = False  # graded by a reward function (score in [0, 1], detail); it checks its own parameters
    trajectory: bool = False  # grades an agent's trajectory, which a gold alone lacks (no self-check)
    extra: str | None = None  # the pip extra its grader needs
    authorable: bool = False  # `gold add` writes it


TEXT = "text or a non-empty list of texts"
ANSWERS = "evaluators.matching.answers"
TABLES = "evaluators.matching.table_match"
REWARDS = "evaluators.rewards.gold_funcs"
FUNCS: dict[str, FuncInfo] = {
    f.name: f
    for f in (
        FuncInfo(
            "string_match",
            "answer",
            {
                "gold": (_text_or_texts, REQUIRED, TEXT),
                "exclude": (_texts, [], "a list of texts"),
                "conj": (_conj, "or", "'or' or 'and'"),
            },
            f"{ANSWERS}:string_verdicts",
            temporal="text",
            authorable=True,
        ),
        FuncInfo(
            "number_match",
            "answer",
            {
                "gold": (_number_gold, REQUIRED, "a number, numeric text, or a list of them"),
                "percentage": (_bool, False, "true or false"),
                "precision": (_is_int, 4, "an integer"),
                "conj": (_conj, "or", "'or' or 'and'"),
            },
            f"{ANSWERS}:number_verdicts",
            temporal="number",
            authorable=True,
        ),
        FuncInfo(
            "table_match",
            "table",
            {
                "gold": (_text_or_texts, REQUIRED, "a file name or a list of file names"),
                "condition_cols": (_cols, [], "a list of column indices, or one list per gold file"),
                "ignore_order": (_bool, False, "true or false"),
            },
            f"{TABLES}:table_match",
            ("gold",),
            "csv",
            temporal="table",
            authorable=True,
        ),
        FuncInfo(
            "duckdb_match",
            "table",
            {
                "gold": (lambda v: isinstance(v, str), REQUIRED, "a DuckDB file name"),
                "condition_tabs": (lambda v: v is None or _texts(v), None, "a list of table names"),
                "condition_cols": (_col_lists, None, "one list of column indices per table"),
                "ignore_orders": (_bools, None, "one true/false per table"),
            },
            f"{TABLES}:duckdb_match",
            ("gold",),
            "duckdb",
            authorable=True,
        ),
        FuncInfo(
            "tables_match",
            "table",
            {
                "gold": (_texts, REQUIRED, "a list of file names"),
                "condition_cols": (_col_lists, None, "one list of column indices per file"),
                "ignore_orders": (_bools, None, "one true/false per file"),
            },
            f"{TABLES}:tables_match",
            ("gold",),
            "csvs",
            authorable=True,
        ),
        # Runs the predicted .sql and the gold query on one database; see grading/execution_match.py.
        FuncInfo(
            "execution_match",
            "sql",
            {
                "gold_sql": (_file_name, "gold.sql", "the name of a .sql file in the gold folder"),
                "gold_query": (
                    _query_file,
                    None,
                    "the name of a .cypher (or .sql) file in the gold folder; it wins over gold_sql",
                ),
                "db": (
                    lambda v: v is None or (isinstance(v, str) and bool(v.strip())),
                    None,
                    "a database name (it overrides the gold line's db)",
                ),
            },
            None,
            ("gold_sql",),
        ),
        FuncInfo("qa_f1", "answer", {}, f"{REWARDS}:qa_f1", reward=True),
        FuncInfo("math_equal", "answer", {}, f"{REWARDS}:math_equal", reward=True, extra="rewards"),
        FuncInfo("qa_f1_tool", "answer", {}, f"{REWARDS}:qa_f1_tool", reward=True, trajectory=True),
        FuncInfo(
            "math_equal_tool", "answer", {}, f"{REWARDS}:math_equal_tool", reward=True, trajectory=True, extra="rewards"
        ),
        FuncInfo(
            "scienceworld_reward",
            "answer",
            {},
            f"{REWARDS}:scienceworld_reward",
            reward=True,
            trajectory=True,
            extra="scienceworld",
        ),
    )
}
TEMPORAL_FUNCS = tuple(name for name, info in FUNCS.items() if info.temporal)


def lookup(func: str) -> FuncInfo:
    try:
        return FUNCS[func]
    except KeyError:
        raise ValueError(f"unknown func {func!r}; {did_you_mean(func, FUNCS)}") from None


def check_parameters(func: str, params: dict) -> dict:
    """Parameters with defaults filled in; raises ValueError naming every problem."""
    info = lookup(func)
    if info.reward:  # reward funcs validate their own parameters when they grade
        return dict(params)
    problems = [
        f"unknown parameter {k!r} for {func} ({did_you_mean(k, info.params)})" for k in params if k not in info.params
    ]
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


def grader(func: str) -> Callable:
    """The function that grades `func`'s specs, imported now (a missing extra says how to install it)."""
    info = lookup(func)
    if info.grader is None:
        raise ValueError(f"{func} grades a .sql answer by running it (grading/sql_answers.py), not by a function")
    module, _, name = info.grader.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        if info.extra is None or isinstance(exc, MissingExtra):
            raise
        raise MissingExtra(exc.name or module, info.extra) from None


def gold_file_names(func: str, params: dict) -> list[str]:
    """The gold files a checked spec reads, under <gold_dir>/<instance_id>/."""
    info = lookup(func)
    if info.answers == "sql":
        return [params.get("gold_query") or params.get("gold_sql") or "gold.sql"]
    return [n for key in info.gold_files for n in (params[key] if isinstance(params[key], list) else [params[key]])]


def names(**wanted) -> list[str]:
    """Func names whose entries have the given field values, e.g. names(authorable=True)."""
    return [n for n, info in FUNCS.items() if all(getattr(info, k) == v for k, v in wanted.items())]


def gold_tables(func: str) -> str | None:
    return FUNCS[func].gold_tables if func in FUNCS else None


def is_answer_func(func: str) -> bool:
    return func in FUNCS and FUNCS[func].answers == "answer"


def is_sql_func(func: str) -> bool:
    """Funcs that grade only a .sql answer, by running it beside the gold query."""
    return func in FUNCS and FUNCS[func].answers == "sql"
