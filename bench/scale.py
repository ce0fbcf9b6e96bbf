"""Scale benchmark: grading time and peak memory against rows, beside the time and memory of reading.

    python bench/scale.py                        # 10^5, 3*10^5, 10^6 rows, every shape and semantics
    python bench/scale.py --max-rows 1e7         # also 3*10^6 and 10^7 rows: docs/scale_bench.* (about 20 min)
    python bench/scale.py --shapes repeated --semantics strict --rows 1e5,1e6
    python bench/scale.py --whole --shapes repeated --rows 1e5,1e6,3.3e6   # as a user runs it (below)

Each (shape, rows, semantics) runs in its own child process, which reads both CSVs with pandas
(timed; its peak resident set is the reading's memory), resets the kernel's peak mark and grades
the frames under one semantics with fresh caches (timed; peak resident set).  Ratios divide by the
read figures of the same child, and times are the process's CPU seconds (wall seconds are in the
JSON too): on a machine shared with other work, wall time swings several-fold between two runs.  Shapes: `bench/shapes.py`.
`--whole` times what a user waits for instead: `evaluate.py --result_dir SUB --gold_dir GOLD` with default
flags (every official preset and strict, `ignore_order`) as one process, against a process that only
reads both CSVs with pandas, alternating, `--repeats` times; wall seconds, CPU seconds and the peak resident
set of each process (`ru_maxrss` of a fresh parent per run), ratios of the medians, and the machine's load
average before and after each row count's runs.  Results:
bench/results/scale_whole.json.

Results: docs/scale_bench.json (with a summary per shape and semantics: worst time and memory ratios and
the log-log slope of grade time on rows, each against the issue's targets) and docs/scale_bench.png (one
column per semantics: times and memory log-log, then both ratios with the target line).  The exit status
is 1 when a shape misses a target.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench import shapes  # noqa: E402

SEMANTICS = ("spider2", "spider2-2024", "spider2-lite", "strict")
DEFAULT_ROWS = (100_000, 300_000, 1_000_000)
LARGE_ROWS = (3_000_000, 10_000_000)
CHILD_TIMEOUT = 1200
TIME_TARGET = 3.0  # grade CPU seconds per read CPU second (issue 27)
MEMORY_TARGET = 2.0  # grade peak per read peak, above the process's start
SLOPE_TARGET = 1.15  # log-log slope of grade time on rows: linear, with room for measurement noise


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", help="comma-separated row counts (default 1e5,3e5,1e6)")
    parser.add_argument("--max-rows", type=float, default=1e6, help="add 3e6 and 1e7 up to this many rows")
    parser.add_argument("--shapes", default=",".join(shapes.SHAPES))
    parser.add_argument("--semantics", default=",".join(SEMANTICS))
    parser.add_argument("--data", type=Path, default=HERE / "results" / "scale-data", help="where tables are kept")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for scale_bench.json/.png")
    parser.add_argument("--name", default="scale_bench", help="file name of the JSON and PNG (default scale_bench)")
    parser.add_argument("--whole", action="store_true", help="evaluate.py with default flags against a pandas read")
    parser.add_argument("--repeats", type=int, default=3, help="--whole: runs of each, medians")
    parser.add_argument("--child", nargs=3, metavar=("GOLD", "PRED", "SEMANTICS"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _status(field: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def child(gold_path: Path, pred_path: Path, semantics: str) -> dict:
    """Read, then grade under one semantics; times and peak resident sets of each."""
    from bench.measure import compare, read_pair

    gc.collect()
    base = _status("VmRSS")
    started, cpu = time.perf_counter(), time.process_time()
    gold, pred = read_pair(gold_path, pred_path)
    read_s, read_cpu = time.perf_counter() - started, time.process_time() - cpu
    read_peak = _status("VmHWM")
    with open("/proc/self/clear_refs", "w") as marks:
        marks.write("5")  # the peak mark starts again from the current resident set
    started, cpu = time.perf_counter(), time.process_time()
    verdict = compare(semantics, gold, pred, gold_path, pred_path)
    grade_s, grade_cpu = time.perf_counter() - started, time.process_time() - cpu
    grade_peak = _status("VmHWM")
    return {
        "read_s": read_s,
        "grade_s": grade_s,
        "read_cpu_s": read_cpu,
        "grade_cpu_s": grade_cpu,
        "grade_per_read": grade_cpu / read_cpu,
        "base_rss": base,
        "read_peak_rss": read_peak,
        "grade_peak_rss": grade_peak,
        "memory_per_read": (grade_peak - base) / max(read_peak - base, 1),
        "verdict": bool(verdict),
    }


def _run_child(gold: Path, pred: Path, semantics: str) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(gold), str(pred), semantics]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"error": f"over {CHILD_TIMEOUT} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rows(args) -> list[int]:
    if args.rows:
        return [int(float(r)) for r in args.rows.split(",")]
    return [r for r in DEFAULT_ROWS + LARGE_ROWS if r <= args.max_rows]


READER = "import sys, pandas; pandas.read_csv(sys.argv[1]); pandas.read_csv(sys.argv[2])"
# Runs one command in a fresh process and prints its wall, CPU and peak resident set (the largest of any
# process it waited for: the grader's workers included).
MEASURE = (
    "import json, resource, subprocess, sys, time; started = time.perf_counter(); "
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(json.dumps({'wall_s': time.perf_counter() - started, 'cpu_s': r.ru_utime + r.ru_stime, "
    "'peak_rss': r.ru_maxrss * 1024}))"
)


def _measured(command: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _folders(data: Path, shape: str, rows: int) -> tuple[Path, Path, Path, Path]:
    """A gold folder and a submission folder holding the pair as one `table_match` instance, ignore_order."""
    import os
    import shutil

    gold_csv, pred_csv = shapes.write(data, shape, rows)
    root = data / f"whole-{shape}-{rows}"
    gold, sub = root / "gold", root / "sub"
    for folder, source in ((gold, gold_csv), (sub, pred_csv)):
        (folder / "big").mkdir(parents=True, exist_ok=True)
        target = folder / "big" / "result.csv"
        if not target.exists():
            try:
                os.link(source, target)  # a second name of a regular file: the submission's own file
            except OSError:
                shutil.copyfile(source, target)
    spec = {"func": "table_match", "parameters": {"gold": "result.csv", "ignore_order": True}}
    (gold / "spider2_eval.jsonl").write_text(json.dumps({"instance_id": "big", "evaluation": spec}) + "\n")
    line = {"instance_id": "big", "answer_type": "file", "answer_or_path": "result.csv"}
    (sub / "results_metadata.jsonl").write_text(json.dumps(line) + "\n")
    return gold, sub, gold_csv, pred_csv


def whole(args) -> int:
    import os
    import statistics

    from bench.installed import byte_compiled

    byte_compiled()  # as a user's installed copy runs (bench/installed.py)
    results = []
    for shape in args.shapes.split(","):
        for rows in _rows(args):
            gold, sub, gold_csv, pred_csv = _folders(args.data, shape, rows)
            report = gold.parent / "report.json"
            ours_cmd = [sys.executable, str(ROOT / "evaluate.py"), "--result_dir", str(sub), "--gold_dir", str(gold)]
            ours_cmd += ["--output", str(report)]
            reads, grades = [], []
            load = os.getloadavg()[0]  # the machine's 1-minute load average: how shared the cores were
            for _ in range(args.repeats):
                reads.append(_measured([sys.executable, "-c", READER, str(gold_csv), str(pred_csv)]))
                grades.append(_measured(ours_cmd))
            score = json.loads(report.read_text())["instances"][0]["score"]
            row = {"shape": shape, "rows": rows, "score": score, "read": reads, "grade": grades}
            row["load_average"] = [load, os.getloadavg()[0]]  # before and after the runs
            for key in ("wall_s", "cpu_s", "peak_rss"):
                row[f"read_{key}"] = statistics.median(run[key] for run in reads)
                row[f"grade_{key}"] = statistics.median(run[key] for run in grades)
                row[f"{key}_ratio"] = row[f"grade_{key}"] / row[f"read_{key}"]
            row["repeat_ratios"] = [
                {key: ours[key] / theirs[key] for key in ("wall_s", "cpu_s", "peak_rss")}
                for ours, theirs in zip(grades, reads, strict=True)
            ]  # each run against the read just before it: the figures of one minute of a shared machine
            results.append(row)
            print(
                f"{shape:10} {rows:>10,} rows  read {row['read_wall_s']:6.2f} s {row['read_peak_rss'] / 2**20:6.0f} MB"
                f"  evaluate.py {row['grade_wall_s']:6.2f} s {row['grade_peak_rss'] / 2**20:6.0f} MB"
                f"  wall {row['wall_s_ratio']:.2f}x  CPU {row['cpu_s_ratio']:.2f}x  memory {row['peak_rss_ratio']:.2f}x"
                f"  score {score}  load {row['load_average'][0]:.1f}-{row['load_average'][1]:.1f}",
                flush=True,
            )
            for k, ratio in enumerate(row["repeat_ratios"]):
                print(
                    f"{'':10} {'':>10}       run {k + 1}: wall {ratio['wall_s']:.2f}x  CPU {ratio['cpu_s']:.2f}x"
                    f"  memory {ratio['peak_rss']:.2f}x",
                    flush=True,
                )
    out = HERE / "results" / "scale_whole.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    targets = {"wall_per_read": TIME_TARGET, "memory_per_read": MEMORY_TARGET}
    out.write_text(json.dumps({"targets": targets, "results": results}, indent=1) + "\n")
    ok = all(r["wall_s_ratio"] <= TIME_TARGET and r["peak_rss_ratio"] <= MEMORY_TARGET for r in results)
    return 0 if ok else 1


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.whole:
        return whole(args)
    if args.child:
        gold, pred, semantics = args.child
        print(json.dumps(child(Path(gold), Path(pred), semantics)))
        return 0
    results = []
    for shape in args.shapes.split(","):
        for rows in _rows(args):
            gold, pred = shapes.write(args.data, shape, rows)
            for semantics in args.semantics.split(","):
                figures = _run_child(gold, pred, semantics)
                results.append({"shape": shape, "rows": rows, "semantics": semantics, **figures})
                print(_line(results[-1]), flush=True)
    verdicts = summary(results)
    for line in verdicts:
        print(_summary_line(line))
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"targets": {"time_per_read": TIME_TARGET, "memory_per_read": MEMORY_TARGET, "slope": SLOPE_TARGET}}
    payload |= {"summary": verdicts, "results": results}
    (args.out / f"{args.name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    plot(results, args.out / f"{args.name}.png")
    return 0 if all(v["ok"] for v in verdicts) else 1


def summary(results: list[dict]) -> list[dict]:
    """Per shape and semantics: the worst ratios over the row counts and the log-log slope of the grade's
    CPU time against rows (1.0 is linear), each held against the issue's targets."""
    out = []
    for shape in dict.fromkeys(r["shape"] for r in results):
        for sem in dict.fromkeys(r["semantics"] for r in results):
            runs = sorted(
                (r for r in results if r["shape"] == shape and r["semantics"] == sem), key=lambda r: r["rows"]
            )
            good = [r for r in runs if "error" not in r]
            if not runs:
                continue
            line = {
                "shape": shape,
                "semantics": sem,
                "rows": [r["rows"] for r in runs],
                "errors": len(runs) - len(good),
            }
            line["time_per_read"] = max((r["grade_per_read"] for r in good), default=None)
            line["memory_per_read"] = max((r["memory_per_read"] for r in good), default=None)
            line["slope"] = _slope(good)
            line["verdicts_match"] = all(r["verdict"] for r in good)
            line["ok"] = bool(
                good
                and not line["errors"]
                and line["verdicts_match"]
                and line["time_per_read"] <= TIME_TARGET
                and line["memory_per_read"] <= MEMORY_TARGET
                and (line["slope"] is None or line["slope"] <= SLOPE_TARGET)
            )
            out.append(line)
    return out


def _slope(runs: list[dict]) -> float | None:
    """Least-squares slope of log(grade CPU s) on log(rows); None with fewer than two row counts."""
    import math

    points = [(math.log(r["rows"]), math.log(max(r["grade_cpu_s"], 1e-9))) for r in runs]
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def _summary_line(v: dict) -> str:
    def fig(x, unit="x"):
        return "   -  " if x is None else f"{x:5.2f}{unit}"

    return (
        f"{'ok  ' if v['ok'] else 'OVER'} {v['shape']:>9} {v['semantics']:>12}  rows {v['rows'][0]:,}-{v['rows'][-1]:,}"
        f"  worst time {fig(v['time_per_read'])}  worst memory {fig(v['memory_per_read'])}  slope {fig(v['slope'], '')}"
        + (f"  errors {v['errors']}" if v["errors"] else "")
        + ("" if v["verdicts_match"] else "  VERDICT CHANGED")
    )


def _line(r: dict) -> str:
    head = f"{r['shape']:>9} {r['rows']:>10,} {r['semantics']:>12}"
    if "error" in r:
        return f"{head}  error: {r['error']}"
    return (
        f"{head}  read {r['read_cpu_s']:7.2f} s  grade {r['grade_cpu_s']:7.2f} s  ({r['grade_per_read']:4.1f}x)"
        f"  peak {r['grade_peak_rss'] / 2**20:7.0f} MB ({r['memory_per_read']:3.1f}x read)  match={r['verdict']}"
    )


def plot(results: list[dict], path: Path) -> None:
    """Four rows per semantics: grade and read CPU seconds (log-log), peak MB (log-log), then the two ratios
    on a linear axis from 0 with the issue's target drawn, so "under the line" is read at a glance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    semantics = sorted({r["semantics"] for r in results}, key=SEMANTICS.index)
    shape_names = list(dict.fromkeys(r["shape"] for r in results))
    fig, axes = plt.subplots(4, len(semantics), figsize=(4.2 * len(semantics), 14), squeeze=False)
    colours = plt.get_cmap("tab10")
    for col, sem in enumerate(semantics):
        for k, shape in enumerate(shape_names):
            rows = [r for r in results if r["semantics"] == sem and r["shape"] == shape and "error" not in r]
            if rows:
                _plot_shape(axes, col, rows, shape, colours(k))
        _label_column(axes, col, sem)
    axes[0][0].legend(fontsize=7)
    axes[2][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def _plot_shape(axes, col: int, rows: list[dict], shape: str, colour) -> None:
    x = [r["rows"] for r in rows]
    axes[0][col].plot(x, [r["grade_cpu_s"] for r in rows], "o-", color=colour, label=f"{shape} grade")
    axes[0][col].plot(x, [r["read_cpu_s"] for r in rows], ":", color=colour, label=f"{shape} read")
    axes[1][col].plot(x, [(r["grade_peak_rss"] - r["base_rss"]) / 2**20 for r in rows], "o-", color=colour)
    axes[1][col].plot(x, [(r["read_peak_rss"] - r["base_rss"]) / 2**20 for r in rows], ":", color=colour)
    axes[2][col].plot(x, [r["grade_per_read"] for r in rows], "o-", color=colour, label=shape)
    axes[3][col].plot(x, [r["memory_per_read"] for r in rows], "o-", color=colour)


def _label_column(axes, col: int, sem: str) -> None:
    axes[0][col].set_title(sem)
    axes[0][col].set_ylabel("CPU seconds (solid: grade, dotted: read)")
    axes[1][col].set_ylabel("peak MB above start (solid: grade, dotted: read)")
    axes[2][col].set_ylabel("grade CPU / read CPU")
    axes[3][col].set_ylabel("grade peak / read peak")
    for row, target in ((2, TIME_TARGET), (3, MEMORY_TARGET)):
        axes[row][col].axhline(target, color="red", linestyle="--", linewidth=1, label=f"target {target:g}x")
        axes[row][col].set_ylim(bottom=0, top=max(axes[row][col].get_ylim()[1], target * 1.5))
    for row in range(4):
        axes[row][col].set_xscale("log")
        if row < 2:
            axes[row][col].set_yscale("log")
        axes[row][col].set_xlabel("rows")
        axes[row][col].grid(True, which="both", alpha=0.3)


if __name__ == "__main__":
    raise SystemExit(main())
