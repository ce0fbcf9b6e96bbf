"""Benchmark: `evaluate.py livesql` against the official LiveSQLBench SQLite harness, side by side, one run.

    python bench/livesql.py --official MINI_DEV/live_sql_bench_sqlite/evaluation [--copies 20] [--threads 4]

The generated set (tests/livesql_generator.py: 28 Query and Management instances, repeated `--copies`
times) is graded twice, as whole processes, start-up included:
- official: what `wrapper_evaluation_sqlite.py` does once its two bugs are set aside (it cannot grade
  predictions as published: docs/livesql.md): `single_instance_eval_sqlite.py --mode pred` unmodified, one
  process per instance, `--threads` at a time (its default is 4), each thread on its own ephemeral copy
  (the wrapper shares copies between threads, which changes verdicts);
- ours: `evaluate.py livesql --num_threads THREADS`.
Prints instances per second for both, their ratio, and how many verdicts agree; writes
bench/results/livesql.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))

from livesql_generator import write  # noqa: E402


def official_run(script_dir: Path, jsonl: Path, db_root: Path, threads: int, scratch: Path) -> dict:
    lines = jsonl.read_text().splitlines()
    slots = []
    for k in range(threads):  # one ephemeral copy per thread and database, as the wrapper makes them
        slot = scratch / f"slot{k}"
        for db in {json.loads(line)["selected_database"] for line in lines}:
            (slot / db).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(db_root / db / f"{db}_template.sqlite", slot / db / f"{db}_template.sqlite")
        slots.append(slot)
    free = list(range(threads))

    def one(index_line):
        index, line = index_line
        slot = slots[free.pop()]
        try:
            instance = json.loads(line)
            db = instance["selected_database"]
            ephemeral = slot / db / f"{db}_ephemeral_1.sqlite"
            shutil.copyfile(slot / db / f"{db}_template.sqlite", ephemeral)
            source, answer = slot / f"in{index}.jsonl", slot / f"out{index}.json"
            source.write_text(line + "\n")
            command = [sys.executable, "single_instance_eval_sqlite.py", "--jsonl_file", str(source)]
            command += ["--output_file", str(answer), "--mode", "pred", "--logging", "false"]
            env = {**os.environ, "EPHEMERAL_DB_PATH": str(ephemeral)}
            subprocess.run(command, cwd=script_dir, env=env, capture_output=True, check=False)
            return instance["instance_id"], json.loads(answer.read_text())["status"] == "success"
        finally:
            free.append(slots.index(slot))

    with ThreadPoolExecutor(threads) as pool:
        return dict(pool.map(one, enumerate(lines)))


def our_run(jsonl: Path, db_root: Path, threads: int, scratch: Path) -> dict:
    out = scratch / "ours.json"
    command = [sys.executable, str(ROOT / "evaluate.py"), "livesql", "--jsonl_file", str(jsonl)]
    command += ["--db_root", str(db_root), "--num_threads", str(threads), "--output", str(out)]
    subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, check=True)
    report = json.loads(out.read_text())
    return {i["instance_id"]: i["score"] == 1 for i in report["instances"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, required=True, help="live_sql_bench_sqlite/evaluation")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--output", type=Path, default=HERE / "results" / "livesql.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        files = write(scratch / "set", args.copies)
        started = time.perf_counter()
        official = official_run(args.official.resolve(), files["livesql"], files["root"], args.threads, scratch)
        official_s = time.perf_counter() - started
        started = time.perf_counter()
        ours = our_run(files["livesql"], files["root"], args.threads, scratch)
        ours_s = time.perf_counter() - started
    n = len(official)
    result = {
        "instances": n,
        "threads": args.threads,
        "official_s": round(official_s, 2),
        "ours_s": round(ours_s, 2),
        "official_per_s": round(n / official_s, 1),
        "ours_per_s": round(n / ours_s, 1),
        "speedup": round(official_s / ours_s, 2),
        "verdicts_agree": sum(official[k] == ours.get(k) for k in official),
        "cpus": os.cpu_count(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
