"""`bird`: BIRD's official evaluation command line, argument for argument, with our report beside it."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, echo, handle_errors, write_reports

# Queries at once: the official pool has --num_cpus processes whatever the cores, and a query waiting for its
# timeout holds a slot without using a core.  The bound keeps a typo from starting thousands of processes.
MAX_QUERY_SLOTS = 64

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
@click.option(
    "--sql_dialect",
    "--sql-dialect",
    "sql_dialect",
    default="SQLite",
    show_default=True,
    type=click.Choice(["SQLite", "PostgreSQL", "MySQL"], case_sensitive=False),
)
@options.timeout_option("Seconds per query.", "--meta_time_out", "--meta-time-out", "meta_time_out", default=30.0)
@click.option(
    "--num_cpus",
    "--num-cpus",
    "num_cpus",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help=(
        "Queries at once, as the official pool of processes: more than the cores lets slow queries wait out "
        "their timeout side by side (each runs in its own process; at most 64)."
    ),
)
@click.option("--data_mode", "--data-mode", "data_mode", default="dev", show_default=True)
@_path("--output_log_path", "--output-log-path", "log_path", help="Append the official table here, as the scripts do.")
@options.output_option("Our JSON report (CSV beside it).")
@options.work_dir_option("Where database copies and scratch files go (default: beside --output).")
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
@options.postgres_dsn_option("PostgreSQL connection for --sql_dialect PostgreSQL (never printed).")
@options.mysql_dsn_option("MySQL connection for --sql_dialect MySQL (never printed).")
@options.memory_limit_option(
    "Memory one query may use: the engine's, its worker's and its fetched rows' cap (docs/security.md)."
)
@fingerprint_option
@handle_errors
def bird(
    predicted,
    ground_truth,
    db_root,
    questions,
    sql_dialect,
    meta_time_out,
    num_cpus,
    data_mode,
    log_path,
    output,
    work_dir,
    ves_iterations,
    plan_cost,
    postgres_dsn,
    mysql_dsn,
    memory_limit_mb,
    fingerprint,
):
    """Grade BIRD predictions in BIRD's own format: the official EX, and strict EX beside it."""
    from evaluators.bird.run import BirdOptions, grade_bird, official_table

    if work_dir is None:
        work_dir = output.parent / f"{output.stem}_exec" if output else Path(".grade-work")
    # The predictions are one file, often beside where people write results; the databases are a folder.
    options.check_writable_outside({"--output": output, "--work-dir": work_dir}, {"database": db_root})
    check_fingerprint(fingerprint, db_root, work_dir, postgres_dsn, mysql_dsn)
    bird_options = BirdOptions(
        db_root,
        _dialect(sql_dialect),
        meta_time_out,
        min(num_cpus, MAX_QUERY_SLOTS),
        work_dir,
        postgres_dsn,
        mysql_dsn,
        ves_iterations,
        plan_cost,
        memory_limit_mb=memory_limit_mb,
    )
    report = grade_bird(predicted, ground_truth, questions, bird_options, data_mode)
    table = official_table(report)
    options.warn_about_pairing(report)
    echo(report.to_text(), nl=False)
    echo("\nAs the official script prints it (over the pairs it compares):\n" + table, nl=False)
    strict = official_table(_strict_view(report), metric="EX strict")
    echo(strict.splitlines()[-1] + "\n", nl=False)
    f1 = official_table(report, metric="Soft-F1", key="soft_f1")
    echo("\nSoft F1 (mini-dev's evaluation_f1.py, rows compared by position):\n" + f1, nl=False)
    unordered = official_table(report, metric="Soft-F1 unordered", key="soft_f1_unordered")
    echo(unordered.splitlines()[-1] + "  (ours: rows paired by content)\n", nl=False)
    metrics = report.summary.execution_metrics or {}
    if metrics.get("ves") is not None:
        echo(
            f"VES (BIRD dev) {metrics['ves']:.2f}   R-VES (mini-dev) {metrics['r_ves']:.2f}   "
            f"({metrics['ves_iterations']} iterations; median ratio CV {metrics['ves_ratio_cv_median']})"
        )
        if metrics.get("ves_warning"):
            echo("warning: " + metrics["ves_warning"], err=True)
    if "plan_cost_vs_time_spearman" in metrics:
        echo(
            f"plan cost vs time ratio: Spearman {metrics['plan_cost_vs_time_spearman']} over "
            f"{metrics['plan_cost_pairs']} question(s)"
        )
    if log_path:
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write("start calculate EX\n" + table + "start calculate Soft-F1\n" + f1)
    if output:
        echo("wrote " + ", ".join(map(str, write_reports(report, output))), err=True)


def _dialect(value: str) -> str:
    return {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mysql": "MySQL"}[value.lower()]


def _strict_view(report):
    from dataclasses import replace

    return replace(report, instances=tuple(replace(i, score=i.strict_score) for i in report.instances))
