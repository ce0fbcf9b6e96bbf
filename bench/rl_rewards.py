"""Benchmark: verl's batch reward (compute_score_batch) against the reward code public RL repos write.

    python bench/rl_rewards.py                 # 2,000 calls, 40 distinct golds (about 2 minutes)
    python bench/rl_rewards.py --calls 400     # a quicker look
    python bench/rl_rewards.py --busy 1        # under load: one busy-loop process holds a core meanwhile

The baseline (`hand_rolled_reward` below) does what public text-to-SQL RL repositories do:
`sqlite3.connect` per call, the prediction then the gold on that connection, a thread-based
timeout (join with a timeout; the query keeps running), serial, no cache of gold results.
Databases and queries are generated (seeded); each query takes 10 to 50 ms.  Both sides get the
same 2,000 (completion, gold, database) calls, mixed right and wrong.  Then three runaway
queries go through each side with a 1 s timeout, and the CPU burnt afterwards is measured:
the baseline's threads keep their queries running, the batch reward leaves nothing behind.
Results go to bench/results/rl_rewards.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))

from processes import busy_descendants  # noqa: E402

PRODUCTS = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "yuzu"]
# Finite, but far longer than the timeout: the baseline's abandoned threads do finish in the end.
RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 60000000) SELECT count(*) FROM r"


def make_database(path: Path, seed: int, rows: int) -> Path:
    rng = random.Random(seed)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product TEXT, qty INTEGER, price REAL)")
    con.executemany(
        "INSERT INTO orders VALUES (?,?,?,?,?)",
        (
            (i, rng.randrange(5000), rng.choice(PRODUCTS), rng.randint(1, 9), round(rng.uniform(1, 50), 2))
            for i in range(rows)
        ),
    )
    con.commit()
    con.close()
    return path


def gold_queries(seed: int, count: int) -> list[tuple[str, str, str]]:
    """(gold, a rewrite with the same rows, a near miss) for `count` golds."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        qty, product = rng.randint(2, 8), rng.choice(PRODUCTS)
        if n % 2:
            gold = f"SELECT product, sum(qty), count(*) FROM orders WHERE qty >= {qty} GROUP BY product"
            right = f"SELECT product, sum(qty), count(id) FROM orders WHERE NOT qty < {qty} GROUP BY 1 ORDER BY 2"
            wrong = f"SELECT product, sum(qty), count(*) FROM orders WHERE qty > {qty} GROUP BY product"
        else:
            gold = (
                f"SELECT customer, max(price) FROM orders WHERE product = '{product}' AND qty = {qty} GROUP BY customer"
            )
            right = (
                f"SELECT customer, max(price) FROM orders WHERE qty = {qty} AND product = '{product}' "
                f"GROUP BY customer ORDER BY customer DESC"
            )
            wrong = (
                f"SELECT customer, min(price) FROM orders WHERE product = '{product}' AND qty = {qty} GROUP BY customer"
            )
        out.append((gold, right, wrong))
    return out


def completion(sql: str) -> str:
    return f"<think>orders has product and qty</think>\n```sql\n{sql}\n```"


# ---------------------------------------------------------------- the hand-rolled baseline


def _extract(text: str) -> str | None:
    if "```sql" in text:
        return text.rsplit("```sql", 1)[1].split("```", 1)[0].strip()
    return text.rsplit("</think>", 1)[1].strip() if "</think>" in text else None


def hand_rolled_reward(solution: str, gold: str, db_path: str, timeout_s: float) -> float:
    sql = _extract(solution)
    if not sql:
        return 0.0
    box: dict = {}

    def work() -> None:
        con = sqlite3.connect(db_path, check_same_thread=False)
        try:
            predicted = con.execute(sql).fetchall()
            expected = con.execute(gold).fetchall()
            box["score"] = 1.0 if set(predicted) == set(expected) else 0.0
        except Exception:
            box["score"] = 0.0
        finally:
            con.rollback()
            con.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return box.get("score", 0.0)  # a timed-out query's thread is left running


def baseline_batch(calls: list, timeout_s: float) -> list[float]:
    return [hand_rolled_reward(s, g, info["db_path"], timeout_s) for s, g, info in calls]


def process_cpu_burn(window_s: float) -> float:
    """CPU this process burns over the window while its own main thread sleeps (abandoned threads)."""
    before = time.process_time()
    time.sleep(window_s)
    return time.process_time() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--golds", type=int, default=40)
    parser.add_argument("--rows", type=int, default=170_000, help="rows per database (sets the query time)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "rl_rewards.json")
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes running while both sides are timed")
    args = parser.parse_args()

    from evaluators.rewards.verl import close_pool, compute_score_batch

    folder = Path(tempfile.mkdtemp(prefix="rl-bench-"))
    databases = [str(make_database(folder / f"shop{seed}.sqlite", seed, args.rows)) for seed in (1, 2)]
    per_db = args.golds // len(databases)
    golds = [(db, triple) for n, db in enumerate(databases) for triple in gold_queries(n, per_db)]
    rng = random.Random(0)
    calls = []
    for i in range(args.calls):
        db, (gold, right, wrong) = golds[i % len(golds)]
        calls.append((completion(right if rng.random() < 0.5 else wrong), gold, {"db_path": db, "timeout_s": 30}))
    rng.shuffle(calls)
    query_ms = _query_times(databases[0], [g for _, (g, _, _) in golds[:per_db]])

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        started = time.perf_counter()
        baseline = baseline_batch(calls, 30)
        baseline_s = time.perf_counter() - started

        started = time.perf_counter()
        ours = [
            r["score"]
            for r in compute_score_batch(
                ["bird"] * len(calls), [c[0] for c in calls], [c[1] for c in calls], [c[2] for c in calls]
            )
        ]
        ours_s = time.perf_counter() - started
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()

    runaway = [(completion(RUNAWAY), "SELECT 1", {"db_path": databases[0], "timeout_s": 1.0})] * 3
    results = compute_score_batch(["bird"] * 3, *zip(*runaway, strict=True))
    ours_left = busy_descendants(2.0)
    close_pool()
    baseline_batch(runaway, 1.0)
    baseline_left = process_cpu_burn(2.0)
    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared with other work while measured)",
        "busy_loop_processes_while_timed": args.busy,
        "calls": len(calls),
        "distinct_golds": len(golds),
        "right_answers": int(sum(baseline)),
        "query_ms_min_median_max": query_ms,
        "baseline_s": round(baseline_s, 2),
        "batch_s": round(ours_s, 2),
        "ratio": round(ours_s / baseline_s, 3),
        "same_verdicts": ours == baseline,
        "timeouts": [r["error"] for r in results],
        "cpu_s_burnt_in_2s_after_3_timeouts": {"batch": round(ours_left, 2), "baseline": round(baseline_left, 2)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def _query_times(db: str, queries: list[str]) -> list[float]:
    con = sqlite3.connect(db)
    times = []
    for sql in queries:
        started = time.perf_counter()
        con.execute(sql).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    con.close()
    times.sort()
    return [round(times[0], 1), round(times[len(times) // 2], 1), round(times[-1], 1)]


if __name__ == "__main__":
    main()
