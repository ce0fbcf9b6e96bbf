"""No command is slower: `grade`, `bird`, `test-suite` and `livesql` as whole processes, at two commits.

    git worktree add /tmp/before <commit>          # e.g. the parent of the runner move (grading/benchmark.py)
    python bench/commands.py /tmp/before [rounds]  # 7 rounds by default; this tree is the other side

Each command runs as a user runs it (`python evaluate.py ...` from the folder of its inputs, relative paths)
on the small generated sets of tests/test_every_command.py, the two trees alternating within each round so
that machine load falls on both alike, with the same interpreter (each tree's own `evaluate.py` imports its own
`evaluators`).  The figure is the ratio of medians, now / before: above 1 is slower.

Measured 2026-11-28 on a 2-core machine shared with other jobs (load 5 to 18, so +-15% is noise; rerun the
command that stands out alone to tell), against the parent of the runner move (8bfd230^), 9 rounds:
grade 1.02, bird 0.79, test-suite 0.88, livesql 1.20 (3 instances: the runner's provenance and intervals,
~0.1 s of imports); against main before the execution settings change (4fae437), 7 rounds: livesql was 1.19
through importing the executor (and sqlglot) to build its config, fixed by `execution/config.py`; after it
grade 0.74, bird 1.18 (alone, 10 rounds: 0.77), test-suite 1.02, livesql 0.98.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from test_every_command import COMMANDS, INPUTS  # noqa: E402  (the sets the command tests build)

from bench.installed import byte_compiled  # noqa: E402


def _which(tree: Path, folder: Path) -> str:
    """The `evaluators` package a tree's evaluate.py imports, to be sure each side runs its own code."""
    probe = f"import sys; sys.path.insert(0, {str(tree)!r}); import evaluators; print(evaluators.__file__)"
    return subprocess.run([sys.executable, "-c", probe], cwd=folder, capture_output=True, text=True).stdout.strip()


def _time(tree: Path, folder: Path, args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(tree / "evaluate.py"), *args], cwd=folder, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
    return seconds


def main(before: Path, rounds: int = 7) -> dict:
    trees = {"before": before.resolve(), "now": ROOT}
    times: dict = {(command, side): [] for command in COMMANDS for side in trees}
    with tempfile.TemporaryDirectory(prefix="bench-commands-") as scratch:
        inputs = {}
        for command in COMMANDS:
            folder = Path(scratch) / command
            folder.mkdir()
            inputs[command] = (folder, INPUTS[command](folder, False))
        for side, tree in trees.items():
            byte_compiled(tree)  # both as a user's installed copy runs (bench/installed.py)
            print(f"{side}: {tree} imports {_which(tree, Path(scratch))}", file=sys.stderr)
        for _ in range(rounds):
            for command, (folder, args) in inputs.items():
                for side, tree in trees.items():
                    times[(command, side)].append(_time(tree, folder, args))
    print("| command | before (median) | now (median) | now / before |\n|---|---|---|---|")
    ratios = {}
    for command in COMMANDS:
        old, new = (statistics.median(times[(command, side)]) for side in trees)
        ratios[command] = new / old
        print(f"| {command} | {old * 1000:.0f} ms | {new * 1000:.0f} ms | {new / old:.2f} |")
    return ratios


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 7)
