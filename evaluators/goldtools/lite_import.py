"""`gold import-spider2-lite`: a Spider2-lite/snow gold folder in this project's format.

The source holds `exec_result/<id>.csv` or `<id>_a.csv`, `<id>_b.csv`, ...
(alternative answers; the lite scorer takes every file matching
`^<id>(_[a-z])?\\.csv$`), `spider2lite_eval.jsonl` or `spider2snow_eval.jsonl`
(`instance_id`, `condition_cols`, `ignore_order`), and optionally
`sql/<id>.sql`.  Each instance becomes one `table_match` spec whose files are
copied into `<to>/<id>/`; the source is only read.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import registry
from ..errors import Location, UsageError
from ..paths import unsafe_instance_id
from ..specs import GOLD_FILE, Problem, iter_json_lines, load_gold
from .jsonl_edit import default_file_mode, rewrite_jsonl, to_line
from .structure import TEMPORAL_SQL

EVAL_FILES = ("spider2lite_eval.jsonl", "spider2snow_eval.jsonl")
LITE_KEYS = ("instance_id", "condition_cols", "ignore_order", "evaluation")  # not copied as metadata


@dataclass(frozen=True)
class ImportResult:
    target: Path
    instances: int
    files: int
    sqls: int
    problems: tuple[Problem, ...]

    def to_text(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.append(f"imported {self.instances} instance(s), {self.files} gold file(s) and {self.sqls} gold.sql "
                     f"into {self.target}; {len(self.problems)} problem(s)")
        if self.problems:
            lines.append(f"next: python evaluate.py gold lint --gold-dir {self.target.parent}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Planned:
    instance_id: str
    line: str
    files: tuple[str, ...]  # names inside exec_result/
    sql: Path | None


def import_spider2_lite(source, target, replace: bool = False, eval_file: str | None = None) -> ImportResult:
    source, target = Path(source), Path(target)
    eval_path, exec_dir = _source_paths(source, eval_file)
    if target.resolve() == source.resolve():
        raise UsageError("--to must be a new folder, not the source")
    existing = load_gold(target).records if (target / GOLD_FILE).exists() else {}
    names = set(os.listdir(exec_dir))
    problems: list[Problem] = []
    planned: dict[str, _Planned] = {}
    for where, obj, error in iter_json_lines(eval_path):
        if error:
            problems.append(Problem(where, error, hint="one JSON object per line"))
            continue
        plan = _plan(obj, where, names, source / "sql", problems)
        if plan is None:
            continue
        if plan.instance_id in existing and not replace:
            problems.append(Problem(where, f"{plan.instance_id!r} is already in {target / GOLD_FILE}; not imported",
                                    plan.instance_id, hint="pass --replace to overwrite it"))
            continue
        if plan.instance_id in planned:
            problems.append(Problem(where, f"duplicate instance_id {plan.instance_id!r}: this later line wins",
                                    plan.instance_id))
        planned[plan.instance_id] = plan
    copied, sqls = _copy_files(planned.values(), exec_dir, target)
    rewrite_jsonl(target / GOLD_FILE, {iid: p.line for iid, p in planned.items()})
    return ImportResult(target / GOLD_FILE, len(planned), copied, sqls, tuple(problems))


def _source_paths(source: Path, eval_file: str | None) -> tuple[Path, Path]:
    exec_dir = source / "exec_result"
    if not exec_dir.is_dir():
        raise UsageError(f"{exec_dir} is not a folder", hint="--from names the gold folder holding exec_result/")
    candidates = [eval_file] if eval_file else [n for n in EVAL_FILES if (source / n).is_file()]
    if len(candidates) != 1 or not (source / candidates[0]).is_file():
        found = "both" if len(candidates) > 1 else "neither"
        raise UsageError(f"{source}: expected one of {list(EVAL_FILES)}, found {found}",
                         hint="name it with --eval-file")
    return source / candidates[0], exec_dir


def gold_files_for(instance_id: str, names: set) -> list[str]:
    """The lite scorer's gold files for an id, sorted: `<id>.csv` and `<id>_<letter>.csv`."""
    pattern = re.compile(rf"^{re.escape(instance_id)}(_[a-z])?\.csv$")
    return sorted(n for n in names if pattern.match(n))


def _plan(obj, where: Location, names: set, sql_dir: Path, problems: list) -> _Planned | None:
    iid = obj.get("instance_id") if isinstance(obj, dict) else None
    if not isinstance(iid, str) or not iid.strip():
        problems.append(Problem(where, "not an object with a text 'instance_id'"))
        return None
    if unsafe_instance_id(iid):
        problems.append(Problem(where, unsafe_instance_id(iid), iid))
        return None
    files = gold_files_for(iid, names)
    if not files:
        problems.append(Problem(where, f"{iid}: no gold file in exec_result/ ({iid}.csv or {iid}_<letter>.csv); "
                                f"the spec names {iid}.csv, which does not exist", iid,
                                hint="add the file, or remove the instance"))
    spec = {"func": "table_match", "parameters": lite_parameters(files or [f"{iid}.csv"], obj)}
    try:
        registry.check_parameters(spec["func"], spec["parameters"])
    except ValueError as exc:
        problems.append(Problem(where, f"{iid}: {exc}; not imported", iid))
        return None
    metadata = {k: v for k, v in obj.items() if k not in LITE_KEYS}
    sql = sql_dir / f"{iid}.sql"
    line = to_line({"instance_id": iid, "evaluation": spec, **metadata})
    return _Planned(iid, line, tuple(files), sql if sql.is_file() else None)


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
    """Copy through a temporary name, so a file in the gold is whole or absent; permissions are not copied."""
    fd, tmp = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.chmod(tmp, default_file_mode())  # mkstemp's file is private; a gold file is not
        os.replace(tmp, destination)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
