"""`gold import-spider2-lite`: a Spider2-lite/snow gold folder in this project's format.

The source holds `exec_result/<id>.csv` or `<id>_a.csv`, `<id>_b.csv`, ...
(alternative answers; the lite scorer takes every file matching
`^<id>(_[a-z])?\\.csv$`), `spider2lite_eval.jsonl` or `spider2snow_eval.jsonl`
(`instance_id`, `condition_cols`, `ignore_order`), and optionally
`sql/<id>.sql`.  Each instance becomes one `table_match` spec whose files are
copied into `<to>/<id>/`; the source is only read.  The task file
(`spider2-lite.jsonl` / `spider2-snow.jsonl`, see `lite_tasks`) gives each line
its engine (`type`) and database (`db`); every file that is not brought in is a
listed problem.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.atomic import atomic_path
from evaluators.errors import Location, UsageError
from evaluators.goldtools.jsonl_edit import rewrite_jsonl, to_line
from evaluators.goldtools.lite_tasks import Route, find_task_file, load_routes, sql_file_for
from evaluators.goldtools.structure import TEMPORAL_SQL
from evaluators.loading.paths import unsafe_instance_id
from evaluators.loading.specs import GOLD_FILE, iter_json_lines, load_gold
from evaluators.matching import registry
from evaluators.specs import Problem

EVAL_FILES = ("spider2lite_eval.jsonl", "spider2snow_eval.jsonl")
LITE_KEYS = ("instance_id", "condition_cols", "ignore_order", "evaluation")  # not copied as metadata


@dataclass(frozen=True)
class ImportResult:
    target: Path
    instances: int
    files: int
    sqls: int
    problems: tuple[Problem, ...]
    routed: dict = field(default_factory=dict)  # engine -> instances
    task_file: Path | None = None

    def to_text(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.append(
            f"imported {self.instances} instance(s), {self.files} gold file(s) and {self.sqls} gold.sql "
            f"into {self.target}; {len(self.problems)} problem(s)"
        )
        if self.task_file is not None:
            engines = ", ".join(f"{n} on {engine}" for engine, n in sorted(self.routed.items()))
            lines.append(f"routed by {self.task_file}: {engines or 'none'}")
        if self.problems:
            lines.append(f"next: python evaluate.py gold lint --gold-dir {self.target.parent}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Planned:
    instance_id: str
    line: str
    files: tuple[str, ...]  # names inside exec_result/
    sql: Path | None
    route: Route | None


def import_spider2_lite(
    source, target, replace: bool = False, eval_file: str | None = None, tasks: str | Path | None = None
) -> ImportResult:
    source, target = Path(source), Path(target)
    eval_path, exec_dir = _source_paths(source, eval_file)
    if target.resolve() == source.resolve():
        raise UsageError("--to must be a new folder, not the source")
    existing = load_gold(target).records if (target / GOLD_FILE).exists() else {}
    names = set(os.listdir(exec_dir))
    problems: list[Problem] = []
    task_file = Path(tasks) if tasks else find_task_file(source, eval_path.name)
    routes = _routes(task_file, eval_path, problems)
    lines = [(where, obj, error) for where, obj, error in iter_json_lines(eval_path)]
    ids = {
        obj["instance_id"]
        for _, obj, error in lines
        if not error and isinstance(obj, dict) and isinstance(obj.get("instance_id"), str)
    }
    sql_dir = source / "sql"
    sql_names = {n for n in os.listdir(sql_dir) if n.endswith(".sql")} if sql_dir.is_dir() else set()
    planned: dict[str, _Planned] = {}
    for where, obj, error in lines:
        if error:
            problems.append(Problem(where, error, hint="one JSON object per line"))
            continue
        sql_name = sql_file_for(obj.get("instance_id", ""), sql_names, ids) if isinstance(obj, dict) else None
        plan = _plan(obj, where, names, sql_dir / sql_name if sql_name else None, routes, problems)
        if plan is None:
            continue
        if plan.instance_id in existing and not replace:
            problems.append(
                Problem(
                    where,
                    f"{plan.instance_id!r} is already in {target / GOLD_FILE}; not imported",
                    plan.instance_id,
                    hint="pass --replace to overwrite it",
                )
            )
            continue
        if plan.instance_id in planned:
            problems.append(
                Problem(where, f"duplicate instance_id {plan.instance_id!r}: this later line wins", plan.instance_id)
            )
        planned[plan.instance_id] = plan
    problems += _unused_sql_files(sql_dir, sql_names, planned.values())
    copied, sqls = _copy_files(planned.values(), exec_dir, target)
    rewrite_jsonl(target / GOLD_FILE, {iid: p.line for iid, p in planned.items()})
    routed: dict[str, int] = {}
    for plan in planned.values():
        if plan.route is not None:
            routed[plan.route.type] = routed.get(plan.route.type, 0) + 1
    return ImportResult(target / GOLD_FILE, len(planned), copied, sqls, tuple(problems), routed, task_file)


def _routes(task_file: Path | None, eval_path: Path, problems: list[Problem]) -> dict[str, Route] | None:
    if task_file is None:
        problems.append(
            Problem(
                Location(str(eval_path)),
                "no task file found, so the imported lines name no engine "
                "or database and a .sql answer would run on an empty DuckDB",
                hint="pass --tasks spider2-lite.jsonl (or spider2-snow.jsonl)",
            )
        )
        return None
    if not task_file.is_file():
        raise UsageError(f"--tasks {task_file}: no such file")
    return load_routes(task_file, "snow" in eval_path.name, problems)


def _unused_sql_files(sql_dir: Path, sql_names: set[str], plans) -> list[Problem]:
    used = {plan.sql.name for plan in plans if plan.sql is not None}
    return [
        Problem(
            Location(str(sql_dir / name)),
            f"{name} belongs to no imported instance; not imported",
            hint="name it <instance_id>.sql",
        )
        for name in sorted(sql_names - used)
    ]


def _source_paths(source: Path, eval_file: str | None) -> tuple[Path, Path]:
    exec_dir = source / "exec_result"
    if not exec_dir.is_dir():
        raise UsageError(f"{exec_dir} is not a folder", hint="--from names the gold folder holding exec_result/")
    candidates = [eval_file] if eval_file else [n for n in EVAL_FILES if (source / n).is_file()]
    if len(candidates) != 1 or not (source / candidates[0]).is_file():
        found = "both" if len(candidates) > 1 else "neither"
        raise UsageError(
            f"{source}: expected one of {list(EVAL_FILES)}, found {found}", hint="name it with --eval-file"
        )
    return source / candidates[0], exec_dir


def gold_files_for(instance_id: str, names: set) -> list[str]:
    """The lite scorer's gold files for an id, sorted: `<id>.csv` and `<id>_<letter>.csv`."""
    pattern = re.compile(rf"^{re.escape(instance_id)}(_[a-z])?\.csv$")
    return sorted(n for n in names if pattern.match(n))


def _plan(
    obj, where: Location, names: set, sql: Path | None, routes: dict[str, Route] | None, problems: list
) -> _Planned | None:
    iid = obj.get("instance_id") if isinstance(obj, dict) else None
    if not isinstance(iid, str) or not iid.strip():
        problems.append(Problem(where, "not an object with a text 'instance_id'"))
        return None
    if unsafe := unsafe_instance_id(iid):
        problems.append(Problem(where, unsafe, iid))
        return None
    files = gold_files_for(iid, names)
    if not files:
        problems.append(
            Problem(
                where,
                f"{iid}: no gold file in exec_result/ ({iid}.csv or {iid}_<letter>.csv); "
                f"the spec names {iid}.csv, which does not exist",
                iid,
                hint="add the file, or remove the instance",
            )
        )
    parameters = lite_parameters(files or [f"{iid}.csv"], obj)
    spec = {"func": "table_match", "parameters": parameters}
    try:
        registry.check_parameters("table_match", parameters)
    except ValueError as exc:
        problems.append(Problem(where, f"{iid}: {exc}; not imported", iid))
        return None
    metadata = {k: v for k, v in obj.items() if k not in LITE_KEYS}
    route = None if routes is None else routes.get(iid)
    if routes is not None and route is None:
        problems.append(Problem(where, f"{iid}: not in the task file, so it names no engine or database", iid))
    if route is not None:
        metadata = {"type": route.type, **({"db": route.db} if route.db is not None else {}), **metadata}
    line = to_line({"instance_id": iid, "evaluation": spec, **metadata})
    return _Planned(iid, line, tuple(files), sql if sql is not None and sql.is_file() else None, route)


def lite_parameters(files: list[str], obj: dict) -> dict:
    """table_match parameters meaning what the lite scorer means by this line."""
    cols = obj.get("condition_cols", [])
    if cols is None or cols == [None] or cols == [[]]:
        cols = []
    per_file = isinstance(cols, list) and bool(cols) and all(isinstance(c, list) for c in cols)
    params = {"gold": files, "condition_cols": cols, "ignore_order": obj.get("ignore_order", False)}
    if len(files) > 1:
        if cols and not per_file:
            params["condition_cols"] = [cols for _ in files]  # the lite scorer repeats a flat list for each file
        return params
    if per_file and len(cols) == 1:
        params["condition_cols"], per_file = cols[0], False
    if not per_file:
        params["gold"] = files[0]  # one file, one flat list; lists that do not fit stay for `gold lint` to report
    return params


def _copy_files(plans, exec_dir: Path, target: Path) -> tuple[int, int]:
    copied = sqls = 0
    for plan in plans:
        folder = target / plan.instance_id
        folder.mkdir(parents=True, exist_ok=True)
        for name in plan.files:
            _copy(exec_dir / name, folder / name)
            copied += 1
        if plan.sql is not None:
            _copy(plan.sql, folder / TEMPORAL_SQL)
            sqls += 1
    return copied, sqls


def _copy(source: Path, destination: Path) -> None:
    """Copy atomically (`atomic.atomic_path`), so a file in the gold is whole or absent; permissions are not copied."""
    with atomic_path(destination) as tmp:
        shutil.copyfile(source, tmp)
