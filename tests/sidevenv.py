"""A cached Python 3.11 venv beside the test run, for the trainers' own code: torch, TRL, verl.

Why a side venv: the project's venv (Python 3.12, the `dev` extra) carries no torch, because pip on 3.12 would
download a CUDA build of several GB. A CPU torch 2.13.0 wheel for Python 3.11 lies on the machines' disk
(/opt/wheels), which pip on 3.11 takes without a download. The trainers run in this 3.11 venv and import the
project from the worktree by PYTHONPATH with the project's core dependencies installed beside them, so the
reward functions under test are the project's own code, called by the trainers' own code (the project's code
also runs on 3.11; its supported version stays 3.12). verl is installed `--no-deps` (its full dependency set
is vLLM, flash-attn and more) into a folder per version, with only what its config, reward-manager and reward
loop modules import.

The venv is built once per requirement set, in the temp folder, and reused (a few minutes the first time).
Missing Python 3.11, or a failed install, skips the test on a user's machine and fails it when CI is set.
"""

from __future__ import annotations

import configparser
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from dbservers import unavailable

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = [
    "torch==2.13.0",  # the CPU wheel on disk; any other version means a CUDA download
    "transformers==5.24.0",
    "trl==1.16.0",
    "datasets==5.2.0",
    "accelerate==1.15.0",
]
VERL_IMPORTS = [  # what verl's config, reward managers and reward loop import (verl itself goes in --no-deps)
    "hydra-core==1.3.8",
    "omegaconf==2.3.1",
    "codetiming==1.4.0",
    "tensordict==0.15.3",
    "ray==2.60.0",
    "aiohttp==3.14.5",
    "orjson==3.13.0",
]
VERL_VERSIONS = ("0.6.1", "0.9.1")


def _project_requirements() -> list[str]:
    """The project's core dependencies and its `rewards` extra (math-verify for the math sources)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"] + config["options.extras_require"]["rewards"]
    return [line.strip() for line in lines.splitlines() if line.strip()]


def requirements() -> list[str]:
    return [*TRAINERS, *VERL_IMPORTS, *_project_requirements()]


def _folder() -> Path:
    key = hashlib.sha256("\n".join([*requirements(), *VERL_VERSIONS]).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"spider-grade-side-{key}"


def _python311() -> str:
    found = shutil.which("python3.11")
    candidates = [found] if found else []
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.11*/bin/python3.11"))
    for candidate in candidates:
        probe = subprocess.run(
            [candidate, "-c", "import sys, venv; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYENV_VERSION": "3.11"},
        )
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 11)":
            return candidate
    unavailable("Python 3.11 is not installed (the CPU torch wheel on disk is for 3.11)")
    raise AssertionError  # unavailable() raised


def _run(command: list, what: str) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "PYENV_VERSION": "3.11"}, timeout=1500
    )
    if done.returncode != 0:
        unavailable(f"{what} failed: {done.stderr.strip()[-800:]}")


def side_venv() -> Path:
    """The folder of the built side venv (bin/python inside, verl-<version> folders beside)."""
    folder = _folder()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; the others wait and reuse it
        if not (folder / "complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            _build(folder)
            (folder / "complete").write_text("\n".join(requirements()))
    return folder


def _build(folder: Path) -> None:
    _run([_python311(), "-m", "venv", str(folder / "venv")], "python3.11 -m venv")
    pip = [str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _run([*pip, *requirements()], "pip install of torch, TRL and verl's imports")
    for version in VERL_VERSIONS:
        _run([*pip, "--no-deps", "--target", str(folder / f"verl-{version}"), f"verl=={version}"], f"verl {version}")


def side_python() -> str:
    return str(side_venv() / "venv" / "bin" / "python")


def run_side(script: str, *args: str, verl: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run one of the tests' scripts in the side venv, the worktree (and a verl version) on its path."""
    folder = side_venv()
    path = [str(ROOT), str(ROOT / "tests")] + ([str(folder / f"verl-{verl}")] if verl else [])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(path),
        "HF_HUB_OFFLINE": "1",  # everything is built locally: a hub download is a bug
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "RAY_USAGE_STATS_ENABLED": "0",
        "WANDB_MODE": "disabled",
    }
    env.pop("PYENV_VERSION", None)
    return subprocess.run(
        [str(folder / "venv" / "bin" / "python"), str(ROOT / "tests" / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=str(ROOT),
    )
