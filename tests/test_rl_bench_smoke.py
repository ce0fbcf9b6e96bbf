"""bench/rl_rewards.py at a tiny size: both sides agree, the timeouts are reported, nothing keeps running.

Timings are not checked (benchmarks are not tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rl_bench_runs_and_both_sides_agree(tmp_path):
    out = tmp_path / "rl.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "rl_rewards.py"),
            "--calls",
            "80",
            "--golds",
            "8",
            "--rows",
            "3000",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    report = json.loads(out.read_text())
    assert report["calls"] == 80 and report["distinct_golds"] == 8
    assert report["same_verdicts"] and 0 < report["right_answers"] < 80
    assert report["timeouts"] == ["timeout"] * 3
    assert report["cpu_s_burnt_in_2s_after_3_timeouts"]["batch"] < 0.3
