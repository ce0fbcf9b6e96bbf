"""Out-of-core bench: a CSV pair far bigger than --memory-limit-mb, graded in DuckDB (issue 27).

    python bench/out_of_core.py --rows 1e7,3e7 --memory-limit-mb 2048 --work /tmp/ooc
    python bench/out_of_core.py --rows 1e8                       # the issue's target (tens of minutes)

For each row count, DuckDB writes gold.csv and pred.csv (COPY ... TO) into the work folder: ten
columns of categories, small integers, rounded floats and years, 10 % duplicate rows; the prediction
holds the same rows in another order, its columns permuted and renamed.  A child process then grades
the pair with `table_match` under every semantics and a spill plan of --memory-limit-mb (so every
official preset goes out of core, and strict decides its identical rows), and reports its peak resident set
(ru_maxrss), the wall and CPU seconds of loading the two CSVs into DuckDB (the out-of-core "read")
and of the whole grading.  The CSVs are deleted afterwards.  Results: docs/out_of_core_bench.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLUMNS = (
    "'name' || ((k * 7919) % 17) AS cat0",
    "(k * 31) % 1000 AS n1",
    "round(((k * 7) % 20000) / 100.0 + 0.5, 1) AS f2",
    "1990 + (k % 35) AS y3",
    "round(((k * 13) % 1000) / 100.0 + 0.01, 2) AS r4",
    "'name' || ((k * 104729) % 23) AS cat5",
    "(k * 17) % 5000 AS n6",
    "round(((k * 3) % 30000) / 10.0 + 0.5, 1) AS f7",
    "1990 + (k % 29) AS y8",
    "round(((k * 11) % 997) / 100.0 + 0.01, 2) AS r9",
)
PERMUTATION = (3, 7, 0, 9, 5, 1, 8, 2, 6, 4)
UNLIMITED = 1 << 62


def write_pair(folder: Path, rows: int) -> tuple[Path, Path]:
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    gold, pred = folder / "gold.csv", folder / "pred.csv"
    distinct = rows - rows // 10
    source = f"(SELECT i % {distinct} AS k, i FROM range({rows}) t(i))"
    con = duckdb.connect(config={"memory_limit": "1GB", "temp_directory": str(folder / "gen_tmp")})
    con.execute(f"COPY (SELECT {', '.join(COLUMNS)} FROM {source} ORDER BY i) TO '{gold}' (HEADER)")
    renamed = [COLUMNS[j].rsplit(" AS ", 1)[0] + f" AS c{n}" for n, j in enumerate(PERMUTATION)]
    con.execute(f"COPY (SELECT {', '.join(renamed)} FROM {source} ORDER BY hash(i)) TO '{pred}' (HEADER)")
    con.close()
    shutil.rmtree(folder / "gen_tmp", ignore_errors=True)
    return gold, pred


def child(folder: Path, memory_limit_mb: int) -> dict:
    from evaluators.matching import table_match
    from evaluators.matching.semantics import PRESETS
    from evaluators.tables.read import TableReader
    from evaluators.tables.spill import SpillPlan, SpillTables

    plan = SpillPlan(memory_limit_mb, folder / "work")
    # The operator grading tables this big raises --max-file-mb; the default limit would refuse them.
    reader = TableReader("unreadable_prediction", max_bytes=UNLIMITED)
    job = table_match.TableJob(folder, tuple(PRESETS.values()), reader, spill=plan)
    pred = folder / "pred.csv"
    assert job.too_big(pred, folder / "gold.csv")
    start, cpu = time.perf_counter(), time.process_time()
    job._spilled = SpillTables(plan)  # the job's own spill tables, loaded here to time the load alone
    job._spilled.table(pred, "unreadable_prediction")
    job._spilled.table(folder / "gold.csv", "unreadable_gold")
    read = (time.perf_counter() - start, time.process_time() - cpu)
    verdicts = table_match.table_match(job, pred, {"gold": "gold.csv", "condition_cols": [], "ignore_order": True})
    total = (time.perf_counter() - start, time.process_time() - cpu)
    job.close()
    return {
        "verdicts": {name: [v.score, v.reason] for name, v in verdicts.items()},
        "load_wall_s": read[0],
        "load_cpu_s": read[1],
        "grade_wall_s": total[0],
        "grade_cpu_s": total[1],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1e7,3e7")
    parser.add_argument("--memory-limit-mb", type=int, default=2048)
    parser.add_argument("--work", type=Path, default=Path("/tmp/out_of_core_bench"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "out_of_core_bench.json")
    parser.add_argument("--keep", action="store_true", help="keep the CSV pair (written again only when missing)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.memory_limit_mb)))
        return
    results = json.loads(args.out.read_text()) if args.out.exists() else []
    for rows in (int(float(r)) for r in args.rows.split(",")):
        folder = args.work / f"pair-{rows}"
        start = time.perf_counter()
        gold, pred = folder / "gold.csv", folder / "pred.csv"
        if not (args.keep and gold.exists() and pred.exists()):
            gold, pred = write_pair(folder, rows)
        made = time.perf_counter() - start
        size = gold.stat().st_size + pred.stat().st_size
        try:
            run = subprocess.run(
                [sys.executable, __file__, "--child", str(folder), "--memory-limit-mb", str(args.memory_limit_mb)],
                capture_output=True,
                text=True,
            )
            if run.returncode != 0:
                raise SystemExit(f"the grading child stopped with exit {run.returncode}:\n{run.stderr[-4000:]}")
        finally:
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
        result = {"rows": rows, "csv_bytes": size, "memory_limit_mb": args.memory_limit_mb, "generate_s": made}
        result |= json.loads(run.stdout.strip().splitlines()[-1])
        result["grade_over_load_wall"] = result["grade_wall_s"] / result["load_wall_s"]
        print(json.dumps(result), flush=True)
        if any(reason != "match" for _, reason in result["verdicts"].values()):
            print(f"not every semantics matched at {rows:,} rows: {result['verdicts']}", file=sys.stderr)
        results = [r for r in results if r["rows"] != rows] + [result]
        args.out.write_text(json.dumps(sorted(results, key=lambda r: r["rows"]), indent=1) + "\n")


if __name__ == "__main__":
    main()
