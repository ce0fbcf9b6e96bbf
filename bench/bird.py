"""Benchmark: `evaluate.py bird` against the official BIRD mini-dev EX loop, side by side, whole processes.

    python bench/bird.py                  # 1,000 predictions, 3 databases, medians of 3 runs
    python bench/bird.py --n 200 --repeats 1
    python bench/bird.py --timeouts 6 --meta-time-out 5   # 6 predictions run into the timeout
    python bench/bird.py --small --timeouts 6 --meta-time-out 1 --repeats 5
        # 1,000 small fast questions on four databases of 500 rows: the scorers' own costs per question
    python bench/bird.py --postgres --timeouts 4 --meta-time-out 5 --repeats 5
        # the same questions on PostgreSQL (a server started here, password logins): the official mini-dev
        # PostgreSQL scorer (psycopg2, a Pool) against `evaluate.py bird --sql_dialect PostgreSQL`

Generates (seeded) three SQLite databases of 10^4 to 10^5 rows, 40 gold queries and N predictions of
mixed kinds (right, wrong, a failing column, heavier joins), then times the official loop as its run
script runs it (16 processes, `bench/bird_official.py`) and ours with the same arguments. Both are timed
as whole processes (start-up included), alternating, and the verdicts are compared question by question.
With `--small` the databases are four of 500 rows and every query takes well under a millisecond, so what
is timed is each scorer's own cost per question (start-up, workers, the comparison), not SQLite's.
CPU seconds (every process of the run, `RUSAGE_CHILDREN`) are kept beside the wall times.
Both scorers run as an installed package runs: the project's modules are byte-compiled first (`compileall`,
as `pip install` does), since an editable install under PYTHONDONTWRITEBYTECODE=1 (this sandbox's setting)
compiles every module again in every process, the parent and each worker (about 1 CPU second a run).
Results: bench/results/bird.json (bird_small*.json) and a line for the README.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.installed import byte_compiled  # noqa: E402

SEP = "\t----- bird -----\t"
DATABASES = {"shop": 100_000, "school": 30_000, "city": 10_000}


def _new_database(root: Path, name: str) -> sqlite3.Connection | None:
    """A connection to the new file `root/name/name.sqlite`, or None when it was made before (kept)."""
    path = root / name / f"{name}.sqlite"
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return sqlite3.connect(path)


def make_databases(root: Path) -> None:
    rng = random.Random(7)
    for name, rows in DATABASES.items():
        con = _new_database(root, name)
        if con is None:
            continue
        con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, grp INTEGER, label TEXT, price REAL, day TEXT)")
        con.execute("CREATE TABLE groups (grp INTEGER PRIMARY KEY, name TEXT, region TEXT)")
        con.executemany(
            "INSERT INTO items VALUES (?,?,?,?,?)",
            [
                (
                    i,
                    rng.randrange(200),
                    f"l{rng.randrange(5000)}",
                    round(rng.uniform(1, 500), 2),
                    f"2020-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                )
                for i in range(rows)
            ],
        )
        con.executemany(
            "INSERT INTO groups VALUES (?,?,?)",
            [(g, f"g{g}", rng.choice(["north", "south", "east", "west"])) for g in range(200)],
        )
        con.commit()
        con.close()


def queries(rng: random.Random) -> list[tuple[str, str]]:
    """40 gold queries of four kinds, each a template: `{i}` makes every question's text its own (a filter
    that keeps every row), as a benchmark's questions are, so no scorer reuses another question's run."""
    out = []
    for k in range(40):
        db = list(DATABASES)[k % 3]
        kind = k % 4
        if kind == 0:
            out.append((db, f"SELECT count(*) FROM items WHERE grp = {k} AND id >= -{{i}}"))
        elif kind == 1:
            out.append(
                (
                    db,
                    f"SELECT g.region, avg(i.price) FROM items i JOIN groups g ON i.grp = g.grp "
                    f"WHERE i.price > {k * 5} AND i.id >= -{{i}} GROUP BY g.region",
                )
            )
        elif kind == 2:
            out.append(
                (
                    db,
                    f"SELECT label FROM items WHERE day LIKE '2020-0{1 + k % 9}%' AND grp < {k} "
                    "AND id >= -{i} ORDER BY price DESC LIMIT 20",
                )
            )
        else:
            out.append(
                (
                    db,
                    f"SELECT grp, count(*) FROM items WHERE id >= -{{i}} GROUP BY grp HAVING count(*) > {k} ORDER BY grp",
                )
            )
    return out


# A prediction that runs far past any timeout of the bench (tens of seconds of SQLite work), then ends.
SLOW = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000000) SELECT count(*) FROM c"


def make_inputs(folder: Path, n: int, timeouts: int = 0) -> None:
    rng = random.Random(11)
    golds = queries(rng)
    preds, lines = {}, []
    for i in range(n):
        db, template = golds[rng.randrange(len(golds))]
        gold = template.format(i=i)
        roll = rng.random()
        if roll < 0.55:
            pred = gold
        elif roll < 0.8:
            pred = gold.replace("items", "items AS x", 1) if "JOIN" not in gold else gold.replace("avg", "sum")
            pred = pred.replace("> ", ">= ", 1)
        elif roll < 0.9:
            pred = gold.replace("price", "prize", 1)
        else:
            pred = f"SELECT count(*) FROM items a JOIN items b ON a.id = b.id WHERE a.grp = {i % 200}"
        if timeouts and i % max(n // timeouts, 1) == 0 and i // max(n // timeouts, 1) < timeouts:
            pred = SLOW  # spread evenly, so they do not all land on one worker
        preds[str(i)] = pred + SEP + db
        lines.append(f"{gold}\t{db}\n")
    (folder / "pred.json").write_text(json.dumps(preds))
    (folder / "gold.sql").write_text("".join(lines))


SMALL_DATABASES = ("alpha", "beta", "gamma", "delta")


def make_small_databases(root: Path) -> None:
    rng = random.Random(5)
    for name in SMALL_DATABASES:
        con = _new_database(root, name)
        if con is None:
            continue
        con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, name TEXT, v REAL)")
        con.executemany("INSERT INTO t VALUES (?,?,?,?)", small_rows(rng))
        con.commit()
        con.close()


def small_rows(rng: random.Random) -> list[tuple]:
    return [(i, rng.randrange(20), f"n{rng.randrange(300)}", round(rng.uniform(0, 100), 2)) for i in range(500)]


def make_small_inputs(folder: Path, n: int, timeouts: int = 0, postgres: bool = False) -> None:
    """Gold queries of four kinds on 60 settings, each question's text its own (a filter that keeps every
    row, `id >= -i`), as a benchmark's questions are: no scorer can reuse another question's run.
    Predictions right (60 %), changed (25 %) or failing (15 %).  On PostgreSQL each database is a table of
    the one database, and the slow ones sleep (the server's CPU stays out of the comparison)."""
    rng = random.Random(5)
    kinds = (
        "SELECT count(*) FROM {t} WHERE g = {k} AND id >= -{i}",
        "SELECT name, v FROM {t} WHERE id < {k} AND id >= -{i}",
        "SELECT g, max(v) FROM {t} WHERE id >= -{i} GROUP BY g ORDER BY g",
        "SELECT name FROM {t} WHERE v > {k} AND id >= -{i} ORDER BY v LIMIT 5",
    )
    settings = [(k, SMALL_DATABASES[k % 4], k % 20 if k % 4 == 0 else k) for k in range(60)]
    slow = "SELECT pg_sleep(60)" if postgres else SLOW
    preds, lines = {}, []
    step = max(n // timeouts, 1) if timeouts else 0
    for i in range(n):
        k, db, value = settings[rng.randrange(len(settings))]
        gold = kinds[k % 4].format(t=db if postgres else "t", k=value, i=i)
        roll = rng.random()
        if roll < 0.6:
            pred = gold
        elif roll < 0.85:
            pred = gold.replace("count(*)", "count(id)").replace("<", "<=")
        else:
            pred = gold.replace("name", "nme")
        if step and i % step == 0 and i // step < timeouts:
            pred = slow
        preds[str(i)] = pred + SEP + db
        lines.append(f"{gold}\t{db}\n")
    (folder / "pred.json").write_text(json.dumps(preds))
    (folder / "gold.sql").write_text("".join(lines))


def fill_postgres(con) -> None:
    """The small databases as four tables of the one database, the same rows."""
    rng = random.Random(5)
    for name in SMALL_DATABASES:
        con.execute(f"CREATE TABLE {name} (id integer PRIMARY KEY, g integer, name text, v double precision)")
        with con.cursor().copy(f"COPY {name} FROM STDIN") as copy:
            for row in small_rows(rng):
                copy.write_row(row)


def timed(command: list[str]) -> tuple[float, str, float]:
    """Wall seconds, stdout, and CPU seconds of the process and every child it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, done.stdout, cpu


def plot(result: dict, path: Path) -> None:
    """Each run's wall time, both scorers, from zero: the bars are the medians, the dots every run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    names = [f"official loop\n({result['num_cpus']} processes)", "evaluate.py bird"]
    medians = [result["official_s"], result["ours_s"]]
    ax.bar(names, medians, color=["#999999", "#3a7bd5"], width=0.5)
    for x, runs in enumerate((result["official_runs"], result["ours_runs"])):
        ax.scatter([x] * len(runs), runs, color="black", s=12, zorder=3)
    for x, value in enumerate(medians):
        ax.text(x + 0.27, value, f"median\n{value:.2f} s", ha="left", va="center")  # beside the run dots
    ax.set_ylim(0, max(max(result["official_runs"]), max(result["ours_runs"])) * 1.2)
    ax.set_xlim(-0.5, 1.9)
    ax.set_ylabel("wall time, whole process (s)")
    ax.set_title(f"BIRD {result.get('mode', 'EX')} on {result['n']} predictions ({result['agreement']} agree)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--num-cpus", type=int, default=16)
    parser.add_argument("--timeouts", type=int, default=0, help="predictions that run into the timeout")
    parser.add_argument("--meta-time-out", type=float, default=30.0, help="seconds per query, both scorers")
    parser.add_argument(
        "--docs", action="store_true", help="also write docs/<set>_bench.png (e.g. docs/bird_small_timeouts_bench.png)"
    )
    parser.add_argument("--small", action="store_true", help="four 500-row databases, sub-millisecond queries")
    parser.add_argument("--postgres", action="store_true", help="the small set on a PostgreSQL server started here")
    parser.add_argument(
        "--ves",
        type=int,
        default=0,
        metavar="N",
        help="time R-VES with N iterations instead of EX (the official VES loop against ours)",
    )
    args = parser.parse_args(argv)
    args.small = args.small or args.postgres
    work = HERE / "results" / ("bird_pg" if args.postgres else "bird_small" if args.small else "bird")
    (work / "dbs").mkdir(parents=True, exist_ok=True)
    if args.small:
        if not args.postgres:
            make_small_databases(work / "dbs")
        make_small_inputs(work, args.n, args.timeouts, postgres=args.postgres)
    else:
        make_databases(work / "dbs")
        make_inputs(work, args.n, args.timeouts)
    if args.postgres:
        from bird_pg import postgres_server

        with postgres_server(fill_postgres) as server:
            result = measure(args, work, server.grader_dsn, ["--sql_dialect", "PostgreSQL"], server.grader_dsn)
    else:
        result = measure(args, work, str(work / "dbs") + "/", [], None)
    name = "bird_ves" if args.ves else ("bird_timeouts" if args.timeouts else "bird")
    if args.small:
        name = name.replace("bird", "bird_pg" if args.postgres else "bird_small", 1)
    (HERE / "results" / f"{name}.json").write_text(json.dumps(result, indent=2))
    plot(result, HERE / "results" / f"{name}.png")
    if args.docs:
        plot(result, ROOT / "docs" / f"{name}_bench.png")
    print(
        f"| {args.n} predictions | official {result['official_s']:.2f} s | ours {result['ours_s']:.2f} s | "
        f"ratio {result['ratio']:.2f} (pairs {', '.join(f'{r:.2f}' for r in result['pair_ratios'])}) | "
        f"CPU {result['official_cpu_s']:.1f} s / {result['ours_cpu_s']:.1f} s | verdicts {result['agreement']} |"
    )


def measure(args, work: Path, official_db: str, dialect: list[str], postgres_dsn: str | None) -> dict:
    """Both scorers, alternating, `args.repeats` times; the medians, each pair's ratio, the verdicts compared."""
    official_cmd = [
        sys.executable,
        str(HERE / "bird_official.py"),
        str(work / "pred.json"),
        str(work / "gold.sql"),
        official_db,
        str(args.num_cpus),
        str(args.meta_time_out),
    ] + (["ves", str(args.ves)] if args.ves else [])
    ours_cmd = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        "bird",
        "--predicted_sql_path",
        str(work / "pred.json"),
        "--ground_truth_path",
        str(work / "gold.sql"),
        "--db_root_path",
        str(work / "dbs") + "/",
        *dialect,
        "--num_cpus",
        str(args.num_cpus),
        "--meta_time_out",
        str(args.meta_time_out),
        "--output",
        str(work / "ours.json"),
    ]
    if postgres_dsn:
        ours_cmd += ["--postgres-dsn", postgres_dsn]
    if args.ves:
        ours_cmd += ["--ves-iterations", str(args.ves)]
    byte_compiled()  # as an installed copy runs (bench/installed.py)
    official_times, ours_times, official_cpu, ours_cpu, ratios = [], [], [], [], []
    for _ in range(args.repeats):
        seconds, official_out, cpu = timed(official_cmd)
        official_times.append(seconds)
        official_cpu.append(cpu)
        seconds, _, cpu = timed(ours_cmd)
        ours_times.append(seconds)
        ours_cpu.append(cpu)
        ratios.append(ours_times[-1] / official_times[-1])  # each pair in the same minute: the machine is shared
    official_verdicts = json.loads(official_out.splitlines()[1])
    ours = json.loads((work / "ours.json").read_text())["instances"]
    if args.ves:  # R-VES rewards depend on timings; compare which questions were timed (correct) instead
        official_verdicts = [int(v > 0) for v in official_verdicts]
    agree = sum(int(i["score"]) == v for i, v in zip(ours, official_verdicts, strict=False))
    result = {
        "n": args.n,
        "num_cpus": args.num_cpus,
        "timeouts": args.timeouts,
        "meta_time_out": args.meta_time_out,
        "engine": "PostgreSQL" if postgres_dsn else "SQLite",
        "official_s": statistics.median(official_times),
        "ours_s": statistics.median(ours_times),
        "official_runs": official_times,
        "ours_runs": ours_times,
        "agreement": f"{agree}/{len(official_verdicts)}",
        "official_cpu_s": statistics.median(official_cpu),
        "ours_cpu_s": statistics.median(ours_cpu),
        "pair_ratios": ratios,
        "ratio": statistics.median(ratios),
    }
    result["mode"] = f"R-VES, {args.ves} iterations" if args.ves else "EX"
    if postgres_dsn:
        result["mode"] += " on PostgreSQL"
    if args.timeouts:
        result["mode"] += f", {args.timeouts} timeouts of {args.meta_time_out:g} s"
    return result


if __name__ == "__main__":
    main()
