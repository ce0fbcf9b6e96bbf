"""Shared helpers for the validate / gold tools / bad input tests: small folders, raw files, hashes, the CLI."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from casefolders import write_instance
from click.testing import CliRunner

from evaluators.cli import main

TABLE = "a,b,c\n1,x,2.5\n2,y,3.5\n"
TABLE_SPEC = {"func": "table_match", "parameters": {"gold": "g.csv", "condition_cols": [0, 2], "ignore_order": True}}
DUCKDB_SQL = "CREATE TABLE customers AS SELECT 1 AS id, 'ann' AS name; CREATE TABLE audit AS SELECT 7 AS n;"


def run_cli(*args):
    """Invoke the CLI in-process; returns click's Result (exit_code, output)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def clean_folders(root: Path) -> tuple[Path, Path]:
    """A gold and a submission that validate cleanly and all pass: text, number, table, files, DuckDB."""
    write_instance(root, "s1", {"func": "string_match", "parameters": {"gold": "Paris"}}, "answer", "It is Paris.")
    write_instance(root, "n1", {"func": "number_match", "parameters": {"gold": ["17.5"]}}, "answer", "17.5")
    write_instance(root, "t1", TABLE_SPEC, "file", "r.csv", {"g.csv": TABLE}, {"r.csv": TABLE})
    write_instance(
        root,
        "f1",
        {"func": "tables_match", "parameters": {"gold": ["d.csv", "w.csv"]}},
        "files",
        ["d.csv", "w.csv"],
        {"d.csv": TABLE, "w.csv": "k\n1\n"},
        {"d.csv": TABLE, "w.csv": "k\n1\n"},
    )
    write_instance(
        root,
        "d1",
        {"func": "duckdb_match", "parameters": {"gold": "g.duckdb", "condition_tabs": ["customers", "audit"]}},
        "file",
        "r.duckdb",
        {"g.duckdb": {"sql": DUCKDB_SQL}},
        {"r.duckdb": {"sql": DUCKDB_SQL}},
    )
    return root / "sub", root / "gold"


def write_lines(path: Path, lines: list, newline: str = "\n") -> Path:
    """Write jsonl lines: dicts are dumped, strings written as they are (to make broken lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((json.dumps(x) if isinstance(x, dict) else x) + newline for x in lines)
    path.write_text(text, newline="")
    return path


def add_submission_line(sub: Path, obj) -> int:
    """Append one line to results_metadata.jsonl; returns its line number."""
    path = sub / "results_metadata.jsonl"
    existing = path.read_text().splitlines() if path.exists() else []
    with open(path, "a") as handle:
        handle.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    return len(existing) + 1


def tree_hash(root: Path) -> str:
    """A hash of every name, file content, mode and symlink target under root (links are not followed)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            path = Path(dirpath) / name
            digest.update(str(path.relative_to(root)).encode())
            if path.is_symlink():
                digest.update(b"->" + os.readlink(path).encode())
            else:
                digest.update(oct(path.stat().st_mode).encode() + path.read_bytes())
        digest.update(b"dirs:" + ",".join(dirnames).encode())
    return digest.hexdigest()
