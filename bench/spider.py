"""Benchmark: `evaluate.py test-suite --etype all` against test-suite-sql-eval's `evaluation.py --etype all`,
a Spider dev-sized run (1,034 questions), whole processes, side by side.

    python bench/spider.py --official /path/to/test-suite-sql-eval --python /path/to/its/python \\
        --nltk-data /path/to/nltk_data                 # medians of 3 runs each
    python bench/spider.py ... --n 300 --repeats 1 --variants 4

The questions are tests/parity_exact.py's single-turn set (gold queries of every hardness level, each with
right, wrong, unreadable and same-meaning predictions) repeated to N lines, one Spider file without blank
lines, on its concert_1 database (`--variants K` adds K-1 copies as a test suite). Both scorers run with
their default flags and `--etype all`; the official one unmodified, in its own python (nltk with
`punkt_tab` at --nltk-data, sqlparse, tqdm). They are timed as whole processes (start-up included),
alternating, with the CPU seconds of every process of the run beside the wall time, and the `all` column
of both printed tables (execution, exact match) is compared. Results: bench/results/spider.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "tests")]

import parity_exact  # noqa: E402  (the generated parity set, tests/parity_exact.py)
from bird import timed  # noqa: E402  (wall and CPU seconds of a whole process, as bench/bird.py times)


def make_inputs(folder: Path, n: int, variants: int) -> None:
    built = parity_exact.build(folder)
    pairs = [pair for session in built["single"] for pair in session]
    chosen = [pairs[k % len(pairs)] for k in range(n)]
    (folder / "dev_gold.sql").write_text("".join(f"{g}\t{parity_exact.DB}\n" for g, _ in chosen), encoding="utf-8")
    (folder / "pred.txt").write_text("".join(f"{p}\n" for _, p in chosen), encoding="utf-8")
    database = folder / "database" / parity_exact.DB
    for k in range(1, variants):
        shutil.copy(database / f"{parity_exact.DB}.sqlite", database / f"{parity_exact.DB}_{k}.sqlite")


def all_column(printed: str) -> tuple[str, str]:
    """The `all` figures of the execution and exact match rows, as printed."""
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line.startswith(("execution", "exact"))}
    return rows["execution"][5], rows["exact"][6]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", type=Path, required=True, help="test-suite-sql-eval's folder")
    parser.add_argument("--python", required=True, help="a python with nltk, sqlparse and tqdm")
    parser.add_argument("--nltk-data", type=Path, required=True, help="a folder holding tokenizers/punkt_tab")
    parser.add_argument("--n", type=int, default=1034, help="questions (Spider dev has 1,034)")
    parser.add_argument("--variants", type=int, default=1, help="databases in the suite of each question")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    work = HERE / "results" / "spider"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    make_inputs(work, args.n, args.variants)
    files = ["--gold", work / "dev_gold.sql", "--pred", work / "pred.txt", "--db", work / "database"]
    files += ["--table", work / "tables.json", "--etype", "all"]
    official = [args.python, args.official.resolve() / "evaluation.py", *map(str, files)]
    ours = [sys.executable, ROOT / "evaluate.py", "test-suite", *files, "--output", work / "out.json"]
    os.environ["NLTK_DATA"] = str(args.nltk_data.resolve())  # the official scorer's punkt_tab, for its process
    runs: dict[str, list] = {"official": [], "ours": []}
    printed = {}
    for _ in range(args.repeats):
        for name, command in (("official", official), ("ours", ours)):
            wall, out, cpu = timed([str(c) for c in command])
            runs[name].append({"wall_s": round(wall, 2), "cpu_s": round(cpu, 2)})
            printed[name] = all_column(out)
    if printed["official"] != printed["ours"]:
        raise SystemExit(f"the tables differ: official {printed['official']}, ours {printed['ours']}")
    medians = {name: statistics.median(r["wall_s"] for r in found) for name, found in runs.items()}
    result = {
        "questions": args.n,
        "variants": args.variants,
        "runs": runs,
        "median_wall_s": medians,
        "median_cpu_s": {name: statistics.median(r["cpu_s"] for r in found) for name, found in runs.items()},
        "ratio_wall_ours_over_official": round(medians["ours"] / medians["official"], 2),
        "all_column_execution_exact": printed["ours"],
    }
    (HERE / "results" / "spider.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
