"""Start-up: `evaluate.py --help` and `evaluate.py validate --help` against `python -c "import click"`.

    python bench/startup.py            # 15 alternating runs each, medians

Whole processes, alternating, so machine load falls on all three alike; the figure is the ratio of medians.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "import click": [sys.executable, "-c", "import click"],
    "evaluate.py --help": [sys.executable, str(ROOT / "evaluate.py"), "--help"],
    "evaluate.py validate --help": [sys.executable, str(ROOT / "evaluate.py"), "validate", "--help"],
}


def main(runs: int = 15) -> dict:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(runs):
        for name, command in COMMANDS.items():
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True)
            times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["import click"]
    for name, value in medians.items():
        print(f"| {name} | {value * 1000:.0f} ms | {value / base:.2f}x |")
    return medians


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
