"""Benchmark: what a role per phase costs `evaluate.py livesql --engine postgresql`, one run.

    python bench/livesql_pg_roles.py [--rounds 15]

On a throwaway server (tests/dbservers.py) with the generated `shop_template` prepared as `db prepare
--template` prepares it, one phase's database work is timed both ways, alternating, `--rounds` times each:
- before: the grader clones the template, connects to the clone itself, runs a query, drops the clone
  (what livesql did until round 4);
- now: `pgclone.answer_clone`: a role made for the phase (with its temp_file_limit), the clone owned by it,
  CONNECT revoked from PUBLIC, the connection as that role, the query, then the clone and the role dropped.
Prints the median of each and their ratio; writes bench/results/livesql_pg_roles.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from livesql_generator import load_postgres  # noqa: E402

ROLE, PASSWORD = "livesql_bench", "bench-pw-1"
QUERY = "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'open')"


def _before(psycopg, pgclone, request, name: str) -> None:
    admin = pgclone.connect(psycopg, request, None, autocommit=True)
    try:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE shop_template')
        with pgclone.connect(psycopg, request, name) as conn:
            conn.execute(QUERY).fetchall()
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        admin.close()


def _now(psycopg, pgclone, request, name: str) -> None:
    with pgclone.answer_clone(psycopg, request, "shop_template", name) as conn:
        conn.execute(QUERY).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    import psycopg
    from dbservers import start_postgres

    from evaluators.execution.backends.base import Request
    from evaluators.livesql import pgclone

    server, stop = start_postgres()
    try:
        with server.admin() as con:
            con.execute(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{PASSWORD}'")
        load_postgres(server.admin, ROLE)
        dsn = f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{server.port}/postgres"
        settings = {"engine": {"dsn": dsn}, "phase_timeout_s": 60.0, "disk_limit_mb": 1024}
        request = Request("postgres", "", "", "shop_template", settings, {}, "inline", trusted=True)
        times: dict = {"before": [], "now": []}
        for k in range(args.rounds):
            for label, phase in (("before", _before), ("now", _now)):
                started = time.perf_counter()
                phase(psycopg, pgclone, request, f"lsq_bench_{label}_{k}")
                times[label].append(time.perf_counter() - started)
    finally:
        stop()
    before, now = statistics.median(times["before"]), statistics.median(times["now"])
    result = {"rounds": args.rounds, "before_s": before, "now_s": now, "ratio": now / before}
    print(f"one phase, median of {args.rounds}: before {before * 1000:.0f} ms, now {now * 1000:.0f} ms, "
          f"ratio {now / before:.3f}")  # fmt: skip
    out = HERE / "results" / "livesql_pg_roles.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
