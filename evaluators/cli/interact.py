"""`interact`: BIRD-Interact graded offline from a recorded run (the official agents' output lines): every
submit's official verdict, the phase rewards and budgets, strict beside them; `--oracle` grades the gold."""

from __future__ import annotations

import click

from evaluators.cli import options
from evaluators.cli.livesql import check_engine, sandbox_limits, sandbox_place
from evaluators.cli.options import AbsolutePath, handle_errors

EPILOG = """\b
Examples:
  python evaluate.py interact --tasks mini_interact.jsonl --gt mini_interact_gt.jsonl --run results.jsonl \\
      --db_root mini_interact/ --output out/interact.json
  python evaluate.py interact --tasks mini_interact.jsonl --gt mini_interact_gt.jsonl --oracle --db_root mini_interact/

bird-interact-lite/full: the same with --engine postgresql --postgres-dsn DSN in place of --db_root.
"""


@click.command("interact", epilog=EPILOG)
@click.option(
    "--tasks",
    type=AbsolutePath(exists=True, dir_okay=False),
    required=True,
    help="The tasks' JSON lines (public fields; with --gt, the GT file is laid over them).",
)
@click.option(
    "--gt", type=AbsolutePath(exists=True, dir_okay=False), help="The GT lines, merged as combine_public_with_gt.py."
)
@click.option(
    "--run",
    "run_file",
    type=AbsolutePath(exists=True, dir_okay=False),
    help="The recorded run: the official batch loop's output lines (one status per task).",
)
@click.option("--oracle", is_flag=True, help="Submit the gold in every phase; list the tasks it does not solve.")
@sandbox_place("SQLite: the folder of <db>/<db>_template.sqlite (else <db>/<db>.sqlite).")
@click.option(
    "--patience",
    type=click.FloatRange(0),
    help="The user-patience part of the budget (default: from each record's total_budget, else 10).",
)
@options.jobs_option("Run", 4, False, "--num_threads", "--num-threads", help="Tasks graded at once.")
@sandbox_limits("a submit (set-up, the SQL, the test cases)")
@options.report_options()
@handle_errors
def interact(
    tasks,
    gt,
    run_file,
    oracle,
    db_root,
    engine,
    postgres_dsn,
    patience,
    jobs,
    timeout,
    memory_limit_mb,
    disk_limit_mb,
    work_dir,
    **tail,
):
    """Grade a recorded BIRD-Interact run (mini-interact on SQLite, bird-interact-lite/full on PostgreSQL)."""
    from evaluators.errors import UsageError
    from evaluators.interact.run import Interact, InteractOptions

    check_engine(engine, db_root, postgres_dsn)
    if run_file is None and not oracle:
        raise UsageError("give --run (a recorded run) or --oracle (grade the gold)")
    config = options.exec_config(
        work_dir, tail["output"], timeout=timeout, memory_limit_mb=memory_limit_mb, postgres_dsn=postgres_dsn
    )
    work_dir = config.output_dir
    run_options = InteractOptions(
        engine=engine,
        db_root=db_root,
        postgres_dsn=config.postgres.dsn,
        patience=patience,
        oracle=oracle,
        work_dir=work_dir,
        timeout_s=config.timeout_s,
        memory_limit_mb=config.memory_limit_mb,
        disk_limit_mb=disk_limit_mb,
    )
    run = Interact(tasks, gt, run_file, run_options)
    options.run_benchmark_command(run, jobs, tail, work_dir, {"database": db_root})
