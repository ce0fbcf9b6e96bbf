"""Where a report comes from: the project and library versions, the command, the time, and the gold it read.

`gold_sha256` hashes every file of the gold folder (databases over 64 MiB are named by size instead, so a
report stays quick to make); `gold_digest` is one hash over all of them, which `compare` checks.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

LIBRARIES = ("pandas", "numpy", "duckdb", "pyarrow", "sqlglot", "click")
HASH_LIMIT = 64 * 1024 * 1024


def provenance(gold_dir: Path | None, argv: list[str] | None = None) -> dict:
    hashes = gold_hashes(Path(gold_dir)) if gold_dir is not None else {}
    return {
        "project_version": _version("spider-grade"),
        "command": shlex.join(argv if argv is not None else sys.argv),
        "utc_time": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
        "gold_sha256": hashes,
        "gold_digest": digest(hashes),
    }


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def gold_hashes(gold_dir: Path) -> dict:
    out = {}
    for folder, dirs, files in os.walk(gold_dir):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            relative = path.relative_to(gold_dir).as_posix()
            size = path.stat().st_size
            out[relative] = _sha256(path) if size <= HASH_LIMIT else f"size:{size}"
    return out


def _sha256(path: Path) -> str:
    digest_ = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest_.update(block)
    return digest_.hexdigest()


def digest(hashes: dict) -> str:
    return hashlib.sha256("\n".join(f"{k}\t{v}" for k, v in sorted(hashes.items())).encode()).hexdigest()
