"""Build small gold and submission folders in a temporary directory, the way users lay them out."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

SEMANTICS = ("spider2", "spider2-2024", "spider2-lite", "strict")


def write_instance(
    root: Path,
    instance_id: str,
    spec,
    answer_type: str,
    answer,
    gold_files: dict | None = None,
    pred_files: dict | None = None,
    metadata: dict | None = None,
) -> None:
    gold, sub = root / "gold", root / "sub"
    for folder, files in ((gold / instance_id, gold_files or {}), (sub / instance_id, pred_files or {})):
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = folder / name
            if isinstance(content, dict):
                _write_duckdb(path, content["sql"])
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
    with open(gold / "spider2_eval.jsonl", "a") as handle:
        handle.write(json.dumps({"instance_id": instance_id, "evaluation": spec, **(metadata or {})}) + "\n")
    if answer is not None:
        with open(sub / "results_metadata.jsonl", "a") as handle:
            handle.write(
                json.dumps({"instance_id": instance_id, "answer_type": answer_type, "answer_or_path": answer}) + "\n"
            )
    else:
        (sub / "results_metadata.jsonl").touch()


def _write_duckdb(path: Path, sql: str) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    try:
        con.execute(sql)
    finally:
        con.close()


CASE_KEYS = {"name", "spec", "expect"}
OPTIONAL_KEYS = {"answer", "answer_type", "gold_files", "pred_files", "why"}


def load_cases(path: Path) -> list[dict]:
    """Read a case table strictly: an unknown key or a missing verdict is an error, not a skipped case."""
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or set(data) != {"matcher", "cases"}:
        raise ValueError(f"{path}: top level must have exactly 'matcher' and 'cases'")
    names = set()
    for index, case in enumerate(data["cases"]):
        where = f"{path}: case {index + 1}"
        unknown = set(case) - CASE_KEYS - OPTIONAL_KEYS
        if unknown or not CASE_KEYS <= set(case):
            raise ValueError(f"{where}: unknown keys {sorted(unknown)} or missing {sorted(CASE_KEYS - set(case))}")
        if set(case["expect"]) != set(SEMANTICS) or not all(v in (0, 1) for v in case["expect"].values()):
            raise ValueError(f"{where}: expect must give 0 or 1 for each of {SEMANTICS}")
        if case["spec"].get("func") != data["matcher"]:
            raise ValueError(f"{where}: spec func {case['spec'].get('func')!r} is not {data['matcher']!r}")
        if case["name"] in names:
            raise ValueError(f"{where}: duplicate case name {case['name']!r}")
        names.add(case["name"])
    return data["cases"]
