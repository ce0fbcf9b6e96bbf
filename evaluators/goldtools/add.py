"""`gold add`: one new gold instance, checked before anything is written.

The spec is built from the options, checked by `registry.check_parameters`,
its files are staged in a hidden folder inside the gold folder and linted
there (structure and self-check), and only then moved into `<gold>/<id>/`,
after which the jsonl is rewritten atomically.  An interrupted add leaves at
worst unreferenced files, never a broken or half-written spider2_eval.jsonl.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.errors import Location, UsageError
from evaluators.goldtools.jsonl_edit import rewrite_jsonl, to_line
from evaluators.goldtools.lint import lint_instance
from evaluators.goldtools.structure import TEMPORAL_SQL
from evaluators.loading.paths import unsafe_instance_id
from evaluators.loading.specs import GOLD_FILE, load_gold
from evaluators.matching import registry
from evaluators.specs import GoldInstance, Spec
from evaluators.tables.read import DEFAULT_MAX_BYTES


@dataclass(frozen=True)
class NewGold:
    instance_id: str
    func: str
    files: tuple[Path, ...] = ()
    answers: tuple[str, ...] = ()
    condition_cols: tuple[tuple[int, ...], ...] = ()  # one tuple per --condition-cols
    ignore_order: bool = False
    condition_tabs: tuple[str, ...] = ()
    percentage: bool | None = None
    precision: int | None = None
    exclude: tuple[str, ...] = ()
    conj: str | None = None
    temporal: bool = False
    sql: Path | None = None
    metadata: dict = field(default_factory=dict)


def build_spec(new: NewGold) -> dict:
    """The `evaluation` object; options a func does not take are left in, for check_parameters to name."""
    kind = registry.gold_tables(new.func)
    if kind:
        if new.answers or not new.files:
            raise UsageError(f"{new.func} takes gold tables: give --file (not --answer)")
        params = _table_parameters(new)
    else:
        if new.files or not new.answers:
            raise UsageError(f"{new.func} takes gold text: give --answer (not --file)")
        params = {"gold": new.answers[0] if len(new.answers) == 1 else list(new.answers)}
        if new.condition_cols:  # not a parameter of text funcs: left in for check_parameters to name
            params["condition_cols"] = [list(c) for c in new.condition_cols]
        if new.ignore_order:
            params["ignore_order"] = True
    extras = {
        "exclude": list(new.exclude) or None,
        "percentage": new.percentage,
        "precision": new.precision,
        "conj": new.conj,
    }
    params.update({k: v for k, v in extras.items() if v is not None})
    if new.condition_tabs and kind != "duckdb":
        params["condition_tabs"] = list(new.condition_tabs)
    spec: dict[str, Any] = {"func": new.func, "parameters": params}
    if new.temporal:
        if new.sql is None:
            raise UsageError("--temporal needs --sql: a temporal gold is the result of running that query")
        spec["temporal"] = True
    return spec


def _table_parameters(new: NewGold) -> dict:
    names = [p.name for p in new.files]
    cols = [list(c) for c in new.condition_cols]
    n = len(names)
    kind = registry.gold_tables(new.func)
    if kind == "duckdb":
        return _duckdb_parameters(new, names, cols)
    if len(cols) > 1 and len(cols) != n:
        raise UsageError(f"{len(cols)} --condition-cols for {n} --file: give one, or one per file in order")
    if kind == "csvs":
        per_file = cols * n if len(cols) == 1 else cols or None
        return {"gold": names, "condition_cols": per_file, "ignore_orders": [new.ignore_order] * n}
    if n == 1:
        return {"gold": names[0], "condition_cols": cols[0] if cols else [], "ignore_order": new.ignore_order}
    # One list repeated for every variant: the presets read a flat list with several files differently.
    per_file = cols * n if len(cols) == 1 else cols
    return {"gold": names, "condition_cols": per_file, "ignore_order": new.ignore_order}


def _duckdb_parameters(new: NewGold, names: list, cols: list) -> dict:
    if len(names) != 1:
        raise UsageError("duckdb_match takes exactly one --file (a DuckDB file)")
    tabs = list(new.condition_tabs)
    if (cols or new.ignore_order) and not tabs:
        raise UsageError("--condition-cols and --ignore-order apply per table: name the tables with --condition-tabs")
    if cols and len(cols) != len(tabs):
        raise UsageError(f"{len(tabs)} table(s) in --condition-tabs but {len(cols)} --condition-cols")
    return {
        "gold": names[0],
        "condition_tabs": tabs or None,
        "condition_cols": cols or None,
        "ignore_orders": [new.ignore_order] * len(tabs) if tabs else None,
    }


def add_gold(gold_dir, new: NewGold, replace: bool = False, max_file_bytes: int = DEFAULT_MAX_BYTES) -> Path:
    """Add (or with `replace`, overwrite) one instance; returns the jsonl path. Raises `UsageError`."""
    gold_dir = Path(gold_dir)
    problem = unsafe_instance_id(new.instance_id)
    if problem:
        raise UsageError(problem)
    spec = build_spec(new)
    try:
        registry.check_parameters(spec["func"], spec["parameters"])
    except ValueError as exc:
        raise UsageError(f"invalid spec: {exc}") from None
    _check_sources(new)
    jsonl = gold_dir / GOLD_FILE
    if jsonl.exists() and new.instance_id in load_gold(gold_dir).records and not replace:
        raise UsageError(f"{new.instance_id!r} is already in {jsonl}", hint="pass --replace to overwrite it")
    gold_dir.mkdir(parents=True, exist_ok=True)
    line = to_line({"instance_id": new.instance_id, "evaluation": spec, **new.metadata})
    staging = Path(tempfile.mkdtemp(prefix=".gold-add-", dir=gold_dir))
    try:
        _stage(new, staging / new.instance_id)
        _lint_staged(new, spec, staging, max_file_bytes)
        _commit(staging / new.instance_id, gold_dir / new.instance_id)
        rewrite_jsonl(jsonl, {new.instance_id: line})
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return jsonl


def _check_sources(new: NewGold) -> None:
    names = [p.name for p in new.files] + ([TEMPORAL_SQL] if new.sql else [])
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise UsageError(f"two files would have the same name in the instance folder: {clashes}")
    for path in [*new.files, *([new.sql] if new.sql else [])]:
        if not Path(path).is_file():
            raise UsageError(f"{path}: file not found")
    bad_keys = {"instance_id", "evaluation"} & set(new.metadata)
    if bad_keys:
        raise UsageError(f"--metadata may not set {sorted(bad_keys)}")


def _stage(new: NewGold, folder: Path) -> None:
    folder.mkdir()
    for path in new.files:
        shutil.copyfile(path, folder / Path(path).name)
    if new.sql:
        shutil.copyfile(new.sql, folder / TEMPORAL_SQL)


def _lint_staged(new: NewGold, spec: dict, staging: Path, max_file_bytes: int) -> None:
    gold = GoldInstance(
        new.instance_id,
        (Spec(spec["func"], spec["parameters"], spec.get("temporal", False)),),
        new.metadata,
        Location(f"new spec for {new.instance_id}"),
    )
    errors, _ = lint_instance(gold, staging, max_file_bytes)
    if errors:
        listed = "\n  ".join(p.message for p in errors)
        raise UsageError(f"not added, the new gold does not check out:\n  {listed}")


def _commit(staged: Path, folder: Path) -> None:
    files = sorted(staged.iterdir())
    if files:
        folder.mkdir(exist_ok=True)  # text golds have no files, and get no folder
    for path in files:
        os.replace(path, folder / path.name)  # same file system: each file appears whole
