"""`bird`: BIRD's official evaluation command line, argument for argument, with our report beside it."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.bird import SQLITE_WORKER_IMPORTS
from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, handle_errors

EPILOG = """\b
Examples (the official scripts' arguments, unchanged):
  python evaluate.py bird --db_root_path ../sqlite/dev_databases/ \\
      --predicted_sql_path ../sql_result/predict_mini_dev_gpt-4-32k_cot_SQLite.json \\
      --ground_truth_path ../sqlite/mini_dev_sqlite_gold.sql --diff_json_path ../sqlite/mini_dev_sqlite.jsonl \\
      --num_cpus 16 --meta_time_out 30.0 --sql_dialect SQLite --output out/bird.json
  python evaluate.py bird --predicted_sql_path exp_result/ --ground_truth_path data/dev/ --data_mode dev \\
      --db_root_path data/dev/dev_databases/ --diff_json_path data/dev/dev.json
"""


def _path(*names, exists: bool = False, **kwargs):
    return click.option(*names, type=AbsolutePath(exists=exists), **kwargs)


@click.command("bird", epilog=EPILOG)
@_path(
    "--predicted_sql_path",
    "--predicted-sql-path",
    "predicted",
    required=True,
    exists=True,
    help="The predictions JSON, or the folder holding predict_<data_mode>.json.",
)
@_path(
    "--ground_truth_path",
    "--ground-truth-path",
    "ground_truth",
    required=True,
    exists=True,
    help="The gold .sql file (SQL<TAB>db_id a line), or the folder holding <data_mode>_gold.sql.",
)
@_path(
    "--db_root_path", "--db-root-path", "db_root", required=True, exists=True, help="Folder of <db_id>/<db_id>.sqlite."
)
@_path(
    "--diff_json_path",
    "--diff-json-path",
    "questions",
    exists=True,
    help="Questions with `difficulty` (JSON array or lines).",
)
@options.sql_dialect_option
@options.jobs_option(
    "Run",
    1,
    False,
    "--num_cpus",
    "--num-cpus",
    help=(
        "Queries at once, as the official pool of processes: more than the cores lets slow queries wait out "
        "their timeout side by side (each runs in its own process; at most 64)."
    ),
)
@click.option("--data_mode", "--data-mode", "data_mode", default="dev", show_default=True)
@_path("--output_log_path", "--output-log-path", "log_path", help="Append the official table here, as the scripts do.")
@options.run_limits("a query", "--meta_time_out", "--meta-time-out", default_timeout=30.0)
@options.report_options()
@click.option(
    "--ves-iterations",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Time each correct answer N times for VES (BIRD dev) and R-VES (mini-dev); BIRD uses 100.",
)
@click.option(
    "--plan-cost",
    is_flag=True,
    help="EXPLAIN cost of gold and prediction, and its rank correlation with the measured time ratio.",
)
@options.postgres_dsn_option
@options.mysql_dsn_option
@fingerprint_option
@handle_errors
def bird(
    predicted,
    ground_truth,
    db_root,
    questions,
    sql_dialect,
    timeout,
    jobs,
    data_mode,
    log_path,
    work_dir,
    ves_iterations,
    plan_cost,
    postgres_dsn,
    mysql_dsn,
    memory_limit_mb,
    fingerprint,
    **tail,
):
    """Grade BIRD predictions in BIRD's own format: the official EX, and strict EX beside it."""
    if sql_dialect.lower() == "sqlite":  # the workers' zygote, if `entry` did not start it, starts now
        from evaluators.execution import worker

        worker.prestart(SQLITE_WORKER_IMPORTS)
    from evaluators.bird.run import BirdBenchmark, BirdOptions

    config = options.exec_config(
        work_dir,
        tail["output"],
        timeout=timeout,
        memory_limit_mb=memory_limit_mb,
        postgres_dsn=postgres_dsn,
        mysql_dsn=mysql_dsn,
    )
    check_fingerprint(fingerprint, db_root, config)
    work_dir = config.output_dir
    bird_options = BirdOptions(  # bird/run.py adds the official drivers' engine settings to these
        db_root,
        sql_dialect,
        config.timeout_s,
        jobs,
        work_dir,
        config.postgres.dsn,
        config.mysql.dsn,
        ves_iterations,
        plan_cost,
        memory_limit_mb=config.memory_limit_mb,
    )
    benchmark = BirdBenchmark(predicted, ground_truth, questions, bird_options, data_mode)
    # The predictions are one file, often beside where people write results; the databases are a folder.
    options.run_benchmark_command(benchmark, jobs, tail, work_dir, {"database": db_root}, then=_log_to(log_path))


def _log_to(log_path: Path | None):
    """--output_log_path: the official EX and Soft F1 tables appended there, as the official scripts do."""
    if log_path is None:
        return None

    def write(report) -> None:
        from evaluators.bird.run import official_table

        table, f1 = official_table(report), official_table(report, metric="Soft-F1", key="soft_f1")
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write("start calculate EX\n" + table + "start calculate Soft-F1\n" + f1)

    return write
