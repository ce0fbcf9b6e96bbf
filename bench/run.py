"""Benchmark: comparing table pairs under each semantics, against reading them with pandas.

    python bench/run.py            # 10^3..10^6 rows x 10, 20, 30 columns, corpus self-grade, memory (~25 min)
    python bench/run.py --quick    # 10^3 and 10^4 rows x 20 columns, one repeat, no corpus, no memory
    python bench/run.py --sizes 10000,100000 --cols 20 --repeats 5 --baseline-max-rows 10000 --no-corpus

Tables are generated (seeded, `bench/gen.py`) and cached under bench/results/data/.
For each size it times the pandas read of both files, each semantics' comparison on
the frames already read, the four together, end-to-end `table_match` (reads
included), and `bench/baseline.py` (the public scorer's loop) up to
--baseline-max-rows; larger baseline figures are extrapolated from a log-log fit
and marked as such.  Figures are medians of --repeats runs; ratios divide by the
read time measured in the same run; the table shows process CPU time by default
(--clock wall for elapsed time; the JSON holds both).  Results go to bench/results/bench.json and
bench/results/bench.png (and docs/ with --docs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import gen, measure, report  # noqa: E402
from bench.corpus import CORPUS, build_self_grade, time_self_grade  # noqa: E402
from evaluators.grading.jobs import resolve_jobs  # noqa: E402

GENERATOR_VERSION = 1  # bump when gen.py changes what it writes, to refresh cached tables


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="row counts, comma-separated")
    parser.add_argument("--cols", default="10,20,30", help="column counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure; the median is kept")
    parser.add_argument(
        "--baseline-max-rows",
        type=int,
        default=10000,
        help="largest size the baseline runs at (it needs two sizes to extrapolate from)",
    )
    parser.add_argument("--noise", action="store_true", help="also time predictions with floats nudged by 1e-12")
    parser.add_argument("--no-corpus", action="store_true", help="skip the corpus self-grade")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="a Spider2-lite corpus (holds gold/)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child process")
    parser.add_argument("--memory-rows", type=int, default=None, help="rows for the memory figure (largest size)")
    parser.add_argument("--quick", action="store_true", help="small and fast: a smoke run of everything cheap")
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "results",
        help="where bench.json, bench.png and the cached tables go (git-ignored)",
    )
    parser.add_argument("--docs", action="store_true", help="copy bench.png and bench.json to docs/")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated tables")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the table and plot show (both are saved): process CPU time is steadier "
        "on a shared machine; the work measured is single-threaded",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.cols, args.repeats = "1000,10000", "20", 1
        args.no_corpus, args.no_memory = True, True
    args.sizes = [int(float(s)) for s in str(args.sizes).split(",")]
    args.cols = [int(c) for c in str(args.cols).split(",")]
    return args


def table_files(out: Path, rows: int, cols: int, seed: int, noise: bool) -> tuple[Path, Path]:
    folder = out / "data" / f"v{GENERATOR_VERSION}_r{rows}_c{cols}_s{seed}{'_noise' if noise else ''}"
    gold, pred = folder / "gold.csv", folder / "pred.csv"
    if not (gold.is_file() and pred.is_file()):
        gen.write_pair(folder, rows, cols, seed, noise)
    return gold, pred


def bench_pair(rows: int, cols: int, args, noise: bool = False) -> dict:
    gold_path, pred_path = table_files(args.out, rows, cols, args.seed, noise)
    r = args.repeats
    wall, cpu, (gold, pred) = measure.timed(lambda: measure.read_pair(gold_path, pred_path), r)
    entry = {"rows": rows, "cols": cols, "noise": noise, "read": {"wall": wall, "cpu": cpu}, "compare": {}, "e2e": {}}
    for s in measure.SEMANTICS:
        wall, cpu, ok = measure.timed(lambda s=s: measure.compare(s, gold, pred, gold_path, pred_path), r)
        entry["compare"][s] = {"wall": wall, "cpu": cpu, "ok": ok}
    wall, cpu, oks = measure.timed(lambda: measure.compare_all(gold, pred, gold_path, pred_path), r)
    entry["all4"] = {"wall": wall, "cpu": cpu, "ok": all(oks.values())}
    for s in measure.SEMANTICS:
        wall, cpu, scores = measure.timed(lambda s=s: measure.end_to_end(gold_path, pred_path, (s,)), r)
        entry["e2e"][s] = {"wall": wall, "cpu": cpu, "ok": scores[s] == 1.0}
    wall, cpu, scores = measure.timed(lambda: measure.end_to_end(gold_path, pred_path, measure.SEMANTICS), r)
    entry["e2e"]["all4"] = {"wall": wall, "cpu": cpu, "ok": all(v == 1.0 for v in scores.values())}
    if rows <= args.baseline_max_rows:
        reps = 1 if rows * cols > 200_000 else r  # the baseline is slow; one run is enough for its size
        wall, cpu, ok = measure.timed(lambda: measure.baseline_verdict("spider2", gold, pred), reps)
        entry["baseline"] = {"wall": wall, "cpu": cpu, "ok": ok, "extrapolated": False}
    print(report.pair_line(entry, args.clock), flush=True)
    return entry


def equal_columns(args) -> dict:
    """The strict rule on 30 columns holding the same few values (a trap for permutation search)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for permuted in (False, True):
            gold, pred = gen.equal_columns_table(rows=2000, cols=30, seed=args.seed, permuted=permuted)
            scrambled = pred.copy()
            scrambled.iloc[:, 0] = scrambled.iloc[::-1, 0].to_numpy()
            kind = "columns shuffled apart" if permuted else "columns equal"
            for name, frame in (("same rows", pred), ("one column scrambled", scrambled)):
                paths = Path(tmp) / "g.csv", Path(tmp) / f"{len(out)}.csv"
                gold.to_csv(paths[0], index=False)
                frame.to_csv(paths[1], index=False)
                wall, cpu, ok = measure.timed(
                    lambda gold=gold, frame=frame, paths=paths: measure.compare("strict", gold, frame, *paths),
                    args.repeats,
                )
                out[f"{kind}, {name}"] = {"wall": wall, "cpu": cpu, "ok": ok}
    return out


def memory(args) -> dict:
    import subprocess

    rows = args.memory_rows or max(args.sizes)
    gold_path, pred_path = table_files(args.out, rows, 20, args.seed, False)
    done = subprocess.run(
        [sys.executable, str(HERE / "memory.py"), str(gold_path), str(pred_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def corpus(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="selfgrade-"))
    try:
        gold_dir, result_dir, n = build_self_grade(args.corpus, work)
        runs = [time_self_grade(gold_dir, result_dir, work) for _ in range(max(1, min(args.repeats, 3)))]
        result = {
            k: sorted(r[k] for r in runs)[len(runs) // 2] if isinstance(runs[0][k], float) else runs[-1][k]
            for k in runs[0]
        }
        result["runs"] = len(runs)
        result["jobs"] = resolve_jobs("auto", n)  # what the CLI's default --jobs auto uses here
        jobs = [time_self_grade(gold_dir, result_dir, work, jobs="auto") for _ in range(len(runs))]
        result["ours_jobs_wall"] = sorted(r["ours_wall"] for r in jobs)[len(jobs) // 2]
        result["ours_jobs_cpu"] = sorted(r["ours_cpu"] for r in jobs)[len(jobs) // 2]
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine() -> dict:
    import numpy
    import pandas
    import pyarrow

    cpu = (
        next(
            (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    memory_kb = (
        next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
        if Path("/proc/meminfo").exists()
        else 0
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(memory_kb / 1024**2, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
        "pyarrow": pyarrow.__version__,
        "load_average_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def main(argv=None) -> dict:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    results = {
        "machine": machine(),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "pairs": [],
    }
    print(report.HEADER, flush=True)
    for cols in args.cols:
        for rows in args.sizes:
            results["pairs"].append(bench_pair(rows, cols, args))
            if args.noise:
                results["pairs"].append(bench_pair(rows, cols, args, noise=True))
    report.extrapolate_baseline(results["pairs"])
    results["equal_columns"] = equal_columns(args)
    if not args.no_memory:
        results["memory"] = memory(args)
    if not args.no_corpus and (args.corpus / "gold").is_dir():
        results["corpus"] = corpus(args)
    text = report.summary(results)
    print(text)
    (args.out / "bench.json").write_text(json.dumps(results, indent=1, default=str))
    report.plot(results, args.out / "bench.png")
    if args.docs:
        docs = HERE.parent / "docs"
        shutil.copyfile(args.out / "bench.png", docs / "bench.png")
        shutil.copyfile(args.out / "bench.json", docs / "bench.json")
    print(f"wrote {args.out / 'bench.json'} and {args.out / 'bench.png'}")
    return results


if __name__ == "__main__":
    main()
