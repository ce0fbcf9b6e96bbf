"""Benchmark: `evaluate.py livesql` against the official LiveSQLBench SQLite harness, side by side, one run.

    python bench/livesql.py --official MINI_DEV/live_sql_bench_sqlite/evaluation [--copies 20] [--threads 4]
    python bench/livesql.py --official-postgres LIVESQLBENCH/evaluation/src --python PY_WITH_PSYCOPG2

The generated set (tests/livesql_generator.py: 31 Query and Management instances, repeated `--copies`
times) is graded twice, as whole processes, start-up included:
- official: what `wrapper_evaluation_sqlite.py` does once its two bugs are set aside (it cannot grade
  predictions as published: docs/livesql.md): `single_instance_eval_sqlite.py --mode pred` unmodified, one
  process per instance, `--threads` at a time (its default is 4), each thread on its own ephemeral copy
  (the wrapper shares copies between threads, which changes verdicts);
- ours: `evaluate.py livesql --num_threads THREADS`.
With `--official-postgres`, the PostgreSQL set instead, on a throwaway server (tests/dbservers.py):
LiveSQLBench's `evaluation.py --num_threads THREADS` as published (run by `--python`, which has psycopg2
and tqdm; `--logging true`, which writes the per-instance status we compare) against `evaluate.py livesql
--engine postgresql --num_threads THREADS`.
Prints instances per second for both, their ratio, and how many verdicts agree; writes
bench/results/livesql.json (livesql_pg.json for PostgreSQL).
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

from livesql_generator import load_postgres, write, write_postgres  # noqa: E402

PG_ROLE, PG_PASSWORD = "livesql_bench", "bench-pw-1"


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


def our_run(jsonl: Path, db_root: Path | None, threads: int, scratch: Path, extra: tuple | list = ()) -> dict:
    out = scratch / "ours.json"
    command = [sys.executable, str(ROOT / "evaluate.py"), "livesql", "--jsonl_file", str(jsonl)]
    command += (["--db_root", str(db_root)] if db_root else []) + [*extra]
    command += ["--num_threads", str(threads), "--output", str(out)]
    subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, check=True)
    report = json.loads(out.read_text())
    return {i["instance_id"]: i["score"] == 1 for i in report["instances"]}


def postgres_runs(lsb_src: Path, python: str, copies: int, threads: int, scratch: Path) -> tuple:
    from dbservers import start_postgres

    jsonl = write_postgres(scratch / "set", copies)["livesql_pg"]
    server, stop = start_postgres()
    try:
        with server.admin() as con:
            con.execute("CREATE ROLE root SUPERUSER LOGIN PASSWORD '123123'")
            con.execute(f"CREATE ROLE {PG_ROLE} LOGIN CREATEDB PASSWORD '{PG_PASSWORD}'")
        load_postgres(server.admin, PG_ROLE)
        started = time.perf_counter()
        command = [python, "evaluation.py", "--jsonl_file", str(jsonl), "--num_threads", str(threads)]
        command += ["--logging", "true", "--db_host", "127.0.0.1", "--db_port", str(server.port)]
        command += ["--output_dir", str(scratch / "official")]
        env = {**os.environ, "PGPASSWORD": "123123"}
        subprocess.run(command, cwd=lsb_src, env=env, capture_output=True, check=False)
        official_s = time.perf_counter() - started
        lines = (scratch / "official" / "livesql_pg" / "output_with_status.jsonl").read_text().splitlines()
        official = {d["instance_id"]: d["status"] == "success" for d in map(json.loads, lines)}
        dsn = f"postgresql://{PG_ROLE}:{PG_PASSWORD}@127.0.0.1:{server.port}/postgres"
        started = time.perf_counter()
        ours = our_run(jsonl, None, threads, scratch, ["--engine", "postgresql", "--postgres-dsn", dsn])
        ours_s = time.perf_counter() - started
    finally:
        stop()
    return official, official_s, ours, ours_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    official_dirs = parser.add_mutually_exclusive_group(required=True)
    official_dirs.add_argument("--official", type=Path, help="live_sql_bench_sqlite/evaluation")
    official_dirs.add_argument("--official-postgres", type=Path, help="livesqlbench evaluation/src")
    parser.add_argument("--python", default=sys.executable, help="PostgreSQL: a Python with psycopg2 and tqdm")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    name = "livesql_pg.json" if args.official_postgres else "livesql.json"
    args.output = args.output or HERE / "results" / name
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if args.official_postgres:
            lsb = args.official_postgres.resolve()
            official, official_s, ours, ours_s = postgres_runs(lsb, args.python, args.copies, args.threads, scratch)
        else:
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
        "engine": "postgresql" if args.official_postgres else "sqlite",
        "cpus": os.cpu_count(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
