"""Routing for imported Spider2-lite/snow gold: which engine and database each instance runs on.

The official suites decide the engine from the instance id's prefix when they
*build* their runs (`bq*`/`ga*` on BigQuery, `local*` on SQLite, `sf*` on
Snowflake; every Spider2-snow instance on Snowflake).  This project decides it
once, at import, and writes it into the gold line as `type` and `db`, so grading
never guesses from an id.  The database name comes from the task file
(`spider2-lite.jsonl`: `db`; `spider2-snow.jsonl`: `db_id`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.loading.specs import iter_json_lines
from evaluators.specs import Problem

TASK_FILES = {"spider2lite_eval.jsonl": "spider2-lite.jsonl", "spider2snow_eval.jsonl": "spider2-snow.jsonl"}
LITE_PREFIXES = (("bq", "BigQuery"), ("ga", "BigQuery"), ("local", "SQLite"), ("sf", "Snowflake"))


@dataclass(frozen=True)
class Route:
    type: str
    db: str | None


def find_task_file(source: Path, eval_name: str) -> Path | None:
    """The task file where the official repository keeps it: beside the suite, two levels up, or one."""
    name = TASK_FILES.get(eval_name)
    if name is None:
        return None
    # Spider2/spider2-lite/evaluation_suite/gold -> Spider2/spider2-lite/spider2-lite.jsonl
    for folder in (source, source.parent, source.parent.parent):
        if (folder / name).is_file():
            return folder / name
    return None


def engine_for(instance_id: str, snow: bool) -> str | None:
    """The official convention: every snow instance on Snowflake; lite instances by their id's prefix."""
    if snow:
        return "Snowflake"
    return next((engine for prefix, engine in LITE_PREFIXES if instance_id.startswith(prefix)), None)


def load_routes(task_file: Path, snow: bool, problems: list[Problem]) -> dict[str, Route]:
    """instance_id -> Route for every task line; unreadable lines become problems."""
    routes: dict[str, Route] = {}
    for where, obj, error in iter_json_lines(task_file):
        iid = obj.get("instance_id") if isinstance(obj, dict) else None
        if error or not isinstance(iid, str):
            problems.append(Problem(where, error or "not an object with a text 'instance_id'"))
            continue
        engine = engine_for(iid, snow)
        if engine is None:
            problems.append(
                Problem(where, f"{iid}: no engine for this id (expected a bq, ga, local or sf prefix)", iid)
            )
            continue
        db = obj.get("db_id", obj.get("db"))
        routes[iid] = Route(engine, str(db) if db is not None else None)
    return routes


def sql_file_for(instance_id: str, sql_names: set[str], instance_ids: set[str]) -> str | None:
    """The gold SQL file of an instance: `<id>.sql`, or for `sf_<x>` the official repo's `<x>.sql`.

    Six files of the official Spider2-lite gold (`bq078.sql`, ...) are named without the `sf_` of
    their instances; `<x>.sql` belongs to `sf_<x>` only when no instance `<x>` exists.
    """
    own = f"{instance_id}.sql"
    if own in sql_names:
        return own
    if instance_id.startswith("sf_"):
        bare = instance_id[3:]
        if bare not in instance_ids and f"{bare}.sql" in sql_names:
            return f"{bare}.sql"
    return None
