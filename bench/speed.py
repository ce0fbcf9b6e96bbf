"""Whole-process speed ratios of issue K, each taken within one run (alternating runs, medians).

    python bench/speed.py                       # all three, 5 runs each
    python bench/speed.py floats --runs 7       # one of: floats, plot, small
    python bench/speed.py small --official DIR  # DIR: Spider2's spider2-dbt/evaluation_suite (evaluate.py, eval_utils.py)

floats  One 100,000 x 20 table pair (10 float columns, 3 of them with NULLs; rows shuffled, columns reversed)
        graded by `evaluate.py` under each semantics, against a process that reads the two CSVs with pandas.
plot    `evaluate.py` on the example with the figure against the same run with `--no-plot`.
small   Submissions of 1, 5 and 10 instances (text answers, CSV tables, a DuckDB file) graded by
        `evaluate.py` against the official Spider2 scorer: `--official DIR` names a copy of
        xlang-ai/Spider2's `spider2-dbt/evaluation_suite` (evaluate.py and eval_utils.py, run as they are,
        outside this repository; it needs pandas, duckdb, tqdm and google-cloud-bigquery, all in `.[dev]`).

Results go to bench/results/speed.json; the README quotes them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EVALUATE = [sys.executable, str(ROOT / "evaluate.py")]
SEMANTICS = ("spider2", "spider2-2024", "spider2-lite", "strict")
SMALL_SOURCES = (
    "ex_string",
    "ex_table",
    "ex_number",
    "ex_scrambled",
    "ex_nulls",
    "ex_files",
    "ex_negative",
    "ex_duckdb",
)


def timed_medians(commands: dict[str, list[str]], runs: int, cwd: Path | None = None) -> dict[str, float]:
    """Median wall seconds per command, the commands alternating so machine load falls on all alike."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
            times[name].append(time.perf_counter() - started)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return {name: statistics.median(values) for name, values in times.items()}


# ---------------------------------------------------------------- floats


def float_heavy_pair(rows: int = 100_000, cols: int = 20, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    data = {}
    for c in range(cols):
        if c % 2 == 0:
            values = np.round(rng.normal(1e4, 3e3, rows), 4)
            if c % 6 == 0:
                values[rng.random(rows) < 0.05] = np.nan
            data[f"f{c}"] = values
        elif c % 4 == 1:
            data[f"i{c}"] = rng.integers(0, 1000, rows)
        else:
            data[f"t{c}"] = [f"name {v}" for v in rng.integers(0, rows // 2, rows).tolist()]
    gold = pd.DataFrame(data)
    pred = gold.sample(frac=1.0, random_state=seed + 1).iloc[:, ::-1]
    return gold, pred


def write_instance(root: Path, gold: pd.DataFrame, pred: pd.DataFrame) -> tuple[Path, Path]:
    gold_dir, sub_dir = root / "gold", root / "sub"
    (gold_dir / "floats").mkdir(parents=True)
    (sub_dir / "floats").mkdir(parents=True)
    gold.to_csv(gold_dir / "floats" / "gold.csv", index=False)
    pred.to_csv(sub_dir / "floats" / "pred.csv", index=False)
    spec = {"func": "table_match", "parameters": {"gold": "gold.csv", "condition_cols": [], "ignore_order": True}}
    (gold_dir / "spider2_eval.jsonl").write_text(json.dumps({"instance_id": "floats", "evaluation": spec}) + "\n")
    line = {"instance_id": "floats", "answer_type": "file", "answer_or_path": "pred.csv"}
    (sub_dir / "results_metadata.jsonl").write_text(json.dumps(line) + "\n")
    return gold_dir, sub_dir


def floats(runs: int, work: Path) -> dict:
    gold_dir, sub_dir = write_instance(work, *float_heavy_pair())
    read = (
        "import pandas as pd, sys; pd.read_csv(sys.argv[1], low_memory=False); "
        "pd.read_csv(sys.argv[2], low_memory=False)"
    )
    commands = {
        "read both CSVs": [
            sys.executable,
            "-c",
            read,
            str(gold_dir / "floats" / "gold.csv"),
            str(sub_dir / "floats" / "pred.csv"),
        ]
    }
    for semantics in SEMANTICS:
        commands[semantics] = [
            *EVALUATE,
            "--result-dir",
            str(sub_dir),
            "--gold-dir",
            str(gold_dir),
            "--semantics",
            semantics,
            "--output",
            str(work / f"out-{semantics}.json"),
            "--jobs",
            "1",
            "--no-plot",
        ]
    medians = timed_medians(commands, runs)
    for semantics in SEMANTICS:
        report = json.loads((work / f"out-{semantics}.json").read_text())
        assert report["summary"]["score"] == 1.0 and report["summary"]["strict_score"] == 1.0, semantics
    base = medians["read both CSVs"]
    return {"seconds": medians, "ratios": {s: medians[s] / base for s in SEMANTICS}}


# ---------------------------------------------------------------- plot


def plot(runs: int, work: Path) -> dict:
    common = [
        *EVALUATE,
        "--result-dir",
        str(ROOT / "example_submission_folder"),
        "--gold-dir",
        str(ROOT / "gold"),
        "--jobs",
        "1",
    ]
    commands = {
        "without figure": [*common, "--output", str(work / "plain.json"), "--no-plot"],
        "with figure": [*common, "--output", str(work / "pictured.json")],
    }
    medians = timed_medians(commands, runs)
    figure = sorted(p.name for p in work.iterdir() if p.stem == "pictured" and p.suffix not in (".json", ".csv"))
    return {"seconds": medians, "figure_files": figure, **_figure_alone(work)}


def _figure_alone(work: Path) -> dict:
    """The figure's own cost in a fresh process (its imports included), SVG and PNG, against the whole run."""
    script = work / "figure_alone.py"
    script.write_text(FIGURE_ALONE)
    out = {}
    for fmt in ("svg", "png"):
        times = []
        for _ in range(3):
            done = subprocess.run(
                [sys.executable, str(script), str(ROOT), str(work / f"alone.{fmt}")],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(json.loads(done.stdout.strip().splitlines()[-1]))
        out[f"{fmt}_s"] = statistics.median(t["figure"] for t in times)
        out[f"{fmt}_share_of_run"] = statistics.median(t["figure"] / (t["figure"] + t["grade"]) for t in times)
    return out


FIGURE_ALONE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
started = time.perf_counter()
from evaluators import grade
report = grade(sys.argv[1] + "/example_submission_folder", sys.argv[1] + "/gold")
graded = time.perf_counter()
from evaluators.reporting.plots import plot_report
plot_report(report, sys.argv[2])
print(json.dumps({"grade": graded - started, "figure": time.perf_counter() - graded}))
"""


# ---------------------------------------------------------------- small


def small_submission(n: int, root: Path) -> tuple[Path, Path]:
    gold_lines = {json.loads(x)["instance_id"]: json.loads(x) for x in (ROOT / "gold" / "spider2_eval.jsonl").open()}
    sub_lines = {
        json.loads(x)["instance_id"]: json.loads(x)
        for x in (ROOT / "example_submission_folder" / "results_metadata.jsonl").open()
    }
    gold_dir, sub_dir = root / f"gold{n}", root / f"sub{n}"
    gold_dir.mkdir()
    sub_dir.mkdir()
    gold_out, sub_out = [], []
    for k in range(n):
        source = SMALL_SOURCES[k % len(SMALL_SOURCES)]
        iid = f"{source}_{k}"
        for src, dst in (
            (ROOT / "gold" / source, gold_dir / iid),
            (ROOT / "example_submission_folder" / source, sub_dir / iid),
        ):
            if src.is_dir():
                shutil.copytree(src, dst)
        gold_out.append(json.dumps({**gold_lines[source], "instance_id": iid}))
        sub_out.append(json.dumps({**sub_lines[source], "instance_id": iid}))
    (gold_dir / "spider2_eval.jsonl").write_text("\n".join(gold_out) + "\n")
    (sub_dir / "results_metadata.jsonl").write_text("\n".join(sub_out) + "\n")
    return gold_dir, sub_dir


def small(runs: int, work: Path, official: Path | None) -> dict:
    if official is None or not (official / "evaluate.py").is_file():
        raise SystemExit("small: --official DIR must name Spider2's spider2-dbt/evaluation_suite folder")
    scorer = [sys.executable, str(official / "evaluate.py")]
    out: dict = {"scorer": str(official / "evaluate.py")}
    for n in (1, 5, 10):
        gold_dir, sub_dir = small_submission(n, work)
        commands = {
            "official": [*scorer, "--result_dir", str(sub_dir), "--gold_dir", str(gold_dir)],
            "evaluate.py": [*EVALUATE, "--result_dir", str(sub_dir), "--gold_dir", str(gold_dir)],
        }
        medians = timed_medians(commands, runs, cwd=work)  # the official scorer writes log.txt in its cwd
        out[str(n)] = {"seconds": medians, "ratio": medians["evaluate.py"] / medians["official"]}
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("which", nargs="*", choices=["floats", "plot", "small"], help="what to measure (all three)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--official", type=Path, default=None, help="Spider2's spider2-dbt/evaluation_suite folder")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "speed.json")
    args = parser.parse_args(argv)
    args.which = args.which or ["floats", "plot", "small"]
    results: dict = json.loads(args.out.read_text()) if args.out.is_file() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for which in args.which:
            work = Path(tmp) / which
            work.mkdir()
            if which == "small":
                results[which] = small(args.runs, work, args.official)
            else:
                results[which] = {"floats": floats, "plot": plot}[which](args.runs, work)
            results[which]["runs"] = args.runs
            print(which, json.dumps(results[which], indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return results


if __name__ == "__main__":
    main()
