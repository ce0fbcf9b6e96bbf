"""The habits CI holds: ruff (lint and format) and mypy are clean on the whole tree."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# mypy's incremental cache outside the checkout, so that a fresh clone at the same place (CI) starts warm:
# a file whose mtime differs from its cache entry's is hashed and rechecked when it changed, so a stale entry
# costs time, not findings. One cache per checkout folder: two worktrees never share entries whose size and
# mtime could agree while their text does not.
_CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
MYPY_CACHE = _CACHE_HOME / "spider-grade" / "mypy" / hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]


def _run(*command: str) -> subprocess.CompletedProcess:
    if command[0] == "mypy":
        command = (*command, "--cache-dir", str(MYPY_CACHE))
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",)],
    ids=["ruff check", "ruff format", "mypy"],
)
def test_the_tree_is_clean(command):
    done = _run(*command)
    assert done.returncode == 0, f"{' '.join(command)} found problems:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"


def test_the_checks_can_fail(tmp_path):
    """ruff and mypy, as configured here, do report a problem (so a green run means something)."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f(x: int) -> str:\n    return x\n")
    lint = _run("ruff", "check", "--config", str(ROOT / ".ruff.toml"), str(bad))
    types = _run("mypy", "--config-file", str(ROOT / "setup.cfg"), str(bad))
    assert lint.returncode != 0 and "F401" in lint.stdout
    assert types.returncode != 0 and "Incompatible return value type" in types.stdout
