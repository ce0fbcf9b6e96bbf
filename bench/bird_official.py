"""A faithful re-implementation of BIRD mini-dev's official EX loop (evaluation_ex.py + evaluation_utils.py),
for the bench only: written here from what the official scripts do, run as their run script runs them.

    python bench/bird_official.py PRED.json GOLD.sql DB_ROOT/ NUM_CPUS META_TIME_OUT [ves ITERATIONS]
    python bench/bird_official.py PRED.json GOLD.sql postgresql://USER:PASSWORD@HOST:PORT/DB NUM_CPUS META_TIME_OUT

One pool of NUM_CPUS processes; for each pair a new writable sqlite3 connection, the prediction then the
gold, `set(pred) == set(gold)`, under func_timeout when it is installed; results sorted by index.  With a
PostgreSQL DSN in place of DB_ROOT, as mini-dev's `--sql_dialect PostgreSQL`: each pair a new psycopg2
connection to that one database (its `connect_postgresql`, every db_id alike), the prediction then the gold
on one cursor, in psycopg2's implicit transaction, then closed.
Prints one line: `EX <percent> <n>` and the per-question verdicts as JSON on the next.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import sqlite3
import sys

SEP = "\t----- bird -----\t"


def connect(db_path):
    if db_path.startswith("postgresql://"):
        import psycopg2

        return psycopg2.connect(db_path)
    return sqlite3.connect(db_path)


def execute_sql(predicted_sql, ground_truth, db_path):
    conn = connect(db_path)
    cursor = conn.cursor()
    cursor.execute(predicted_sql)
    predicted_res = cursor.fetchall()
    cursor.execute(ground_truth)
    ground_truth_res = cursor.fetchall()
    conn.close()
    return 1 if set(predicted_res) == set(ground_truth_res) else 0


def timed(sql, db_path):
    """mini-dev's evaluation_ves.py: connect, execute, fetch, close, all timed."""
    import time

    start = time.time()
    conn = sqlite3.connect(db_path)
    conn.cursor().execute(sql).fetchall()
    conn.close()
    return time.time() - start


def iterated(predicted_sql, ground_truth, db_path, iterate_num):
    import numpy as np

    conn = sqlite3.connect(db_path)
    pred = conn.cursor().execute(predicted_sql).fetchall()
    gold = conn.cursor().execute(ground_truth).fetchall()
    conn.close()
    ratio = 0
    if set(pred) == set(gold):
        diffs = [timed(ground_truth, db_path) / timed(predicted_sql, db_path) for _ in range(iterate_num)]
        mean, std = np.mean(diffs), np.std(diffs)
        kept = [x for x in diffs if mean - 3 * std < x < mean + 3 * std]
        ratio = sum(kept) / len(kept)
    for lower, reward in ((2, 1.25), (1, 1), (0.5, 0.75), (0.25, 0.5)):
        if ratio >= lower:
            return reward
    return 0.25 if ratio else 0


def ves_model(predicted_sql, ground_truth, db_place, idx, meta_time_out, iterate_num):
    try:
        from func_timeout import func_timeout

        reward = func_timeout(
            meta_time_out * iterate_num, iterated, args=(predicted_sql, ground_truth, db_place, iterate_num)
        )
    except ImportError:
        reward = iterated(predicted_sql, ground_truth, db_place, iterate_num)
    except Exception:
        reward = 0
    except BaseException as exc:  # func_timeout's FunctionTimedOut, caught by name in the official code
        if type(exc).__name__ != "FunctionTimedOut":
            raise
        reward = 0
    return {"sql_idx": idx, "res": reward}


def execute_model(predicted_sql, ground_truth, db_place, idx, meta_time_out):
    try:
        from func_timeout import FunctionTimedOut, func_timeout
    except ImportError:
        FunctionTimedOut, func_timeout = None, None
    try:
        if func_timeout is None:
            res = execute_sql(predicted_sql, ground_truth, db_place)
        else:
            res = func_timeout(meta_time_out, execute_sql, args=(predicted_sql, ground_truth, db_place))
    except Exception:
        res = 0
    except BaseException as exc:  # FunctionTimedOut is a BaseException: the official code catches it by name
        if FunctionTimedOut is None or not isinstance(exc, FunctionTimedOut):
            raise
        res = 0
    return {"sql_idx": idx, "res": res}


def main() -> None:
    pred_path, gold_path, db_root, num_cpus, meta_time_out = sys.argv[1:6]
    preds = []
    for value in json.load(open(pred_path)).values():
        if isinstance(value, str):
            try:
                sql, _ = value.split(SEP)
            except ValueError:
                sql = value.strip()
        else:
            sql = " "
        preds.append(sql)
    golds, dbs = [], []
    for line in open(gold_path).readlines():
        sql, db = line.strip().split("\t")
        golds.append(sql)
        dbs.append(db_root if db_root.startswith("postgresql://") else db_root + db + "/" + db + ".sqlite")
    results = []
    ves = sys.argv[6:7] == ["ves"]
    pool = mp.Pool(processes=int(num_cpus))
    for i, pair in enumerate(zip(preds, golds, strict=False)):
        if ves:
            pool.apply_async(
                ves_model, args=(*pair, dbs[i], i, float(meta_time_out), int(sys.argv[7])), callback=results.append
            )
        else:
            pool.apply_async(execute_model, args=(*pair, dbs[i], i, float(meta_time_out)), callback=results.append)
    pool.close()
    pool.join()
    results.sort(key=lambda r: r["sql_idx"])
    verdicts = [r["res"] for r in results]
    if ves:
        print(f"R-VES {sum(r**0.5 * 100 for r in verdicts) / len(verdicts):.2f} {len(verdicts)}")
    else:
        print(f"EX {100 * sum(verdicts) / len(verdicts):.2f} {len(verdicts)}")
    print(json.dumps(verdicts))


if __name__ == "__main__":
    main()
