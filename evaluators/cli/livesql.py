"""`livesql`: LiveSQLBench and BIRD-CRITIC answers graded by their test cases, with the official harness's
arguments (`--jsonl_file`, `--num_threads`, `--mode`, `--logging`) and our report beside the official figure."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, echo, handle_errors, write_reports
from evaluators.livesql.profiles import PROFILES, scorers_help

EPILOG = """\b
Examples:
  python evaluate.py livesql --jsonl_file post_processed_sql.jsonl --db_root database/ --output out/live.json
  python evaluate.py livesql --jsonl_file preds.jsonl --gold livesqlbench_gt.jsonl --engine postgresql \\
      --postgres-dsn postgresql://root@localhost:5432/postgres --num_threads 8
  python evaluate.py livesql --benchmark critic --jsonl_file critic_preds.jsonl --db_root sqlite_databases/
"""


@click.command("livesql", epilog=EPILOG)
@click.option(
    "--jsonl_file",
    "--jsonl-file",
    "jsonl_file",
    type=AbsolutePath(exists=True, dir_okay=False),
    required=True,
    help="Instances with pred_sqls, as the official post-processing writes them.",
)
@click.option(
    "--gold",
    type=AbsolutePath(exists=True, dir_okay=False),
    help="The gold JSON lines (sol_sql, test_cases, ...), matched by instance_id, when --jsonl_file lacks them.",
)
@click.option(
    "--db_root",
    "--db-root",
    "db_root",
    type=AbsolutePath(exists=True, file_okay=False),
    help="SQLite: the folder of <db>/<db>_template.sqlite.",
)
@click.option("--benchmark", type=click.Choice(["livesql", "critic"]), default="livesql", show_default=True)
@click.option("--engine", type=click.Choice(["sqlite", "postgresql"]), default="sqlite", show_default=True)
@click.option(
    "--scorer",
    type=click.Choice(list(PROFILES)),
    help="The official harness version to reproduce (default: the current one of --benchmark on --engine). "
    + scorers_help(),
)
@options.postgres_dsn_option("PostgreSQL server holding <db>_template databases (never printed).")
@click.option("--num_threads", "--num-threads", "num_threads", type=click.IntRange(1), default=4, show_default=True)
@click.option(
    "--mode", type=click.Choice(["pred", "gold"]), default="pred", show_default=True, help="gold: grade sol_sql."
)
@click.option("--logging", "logging_", default="false", help="Accepted for the official command line; unused.")
@options.timeout_option("Seconds per phase of an instance.")
@options.memory_limit_option(minimum=64, default=2048)
@click.option("--disk-limit-mb", type=click.IntRange(1), default=1024, show_default=True)
@options.output_option("Our JSON report (CSV beside it).")
@options.html_option
@options.work_dir_option("Where private database copies go.")
@options.allow_gold_errors_option
@fingerprint_option
@handle_errors
def livesql(
    jsonl_file,
    gold,
    db_root,
    benchmark,
    engine,
    postgres_dsn,
    num_threads,
    mode,
    logging_,
    timeout,
    memory_limit_mb,
    disk_limit_mb,
    output,
    with_html,
    work_dir,
    allow_gold_errors,
    fingerprint,
    scorer,
):
    """Grade LiveSQLBench / BIRD-CRITIC predictions by their test cases (Query and Management tasks)."""
    from evaluators.errors import UsageError
    from evaluators.livesql.run import LiveSQLOptions, grade_livesql, official_table

    if engine == "sqlite" and db_root is None:
        raise UsageError("--db_root is required with --engine sqlite")
    if engine == "postgresql" and not postgres_dsn:
        raise UsageError("--postgres-dsn is required with --engine postgresql (PG* variables apply too)")
    if work_dir is None:
        work_dir = output.parent / f"{output.stem}_exec" if output else Path(".grade-work")
    options.check_writable_outside({"--output": output, "--work-dir": work_dir}, {"database": db_root})
    check_fingerprint(fingerprint, db_root, work_dir, postgres_dsn)
    run_options = LiveSQLOptions(
        benchmark=benchmark,
        engine=engine,
        db_root=db_root,
        num_threads=num_threads,
        work_dir=work_dir,
        postgres_dsn=postgres_dsn,
        mode=mode,
        instance_timeout_s=timeout,
        memory_limit_mb=memory_limit_mb,
        disk_limit_mb=disk_limit_mb,
        scorer=scorer,
    )
    echo(f"scorer: {run_options.profile.preset}: {run_options.profile.scorer}", err=True)
    report = grade_livesql(jsonl_file, gold, run_options)
    if engine == "sqlite":
        report = _check_db_root(report, db_root)
    options.warn_about_pairing(report)
    echo(report.to_text(), nl=False)
    echo("\nPass rate per category (official, and strict beside it):\n" + official_table(report), nl=False)
    if output:
        echo("wrote " + ", ".join(map(str, write_reports(report, output, with_html))), err=True)
    options.raise_on_gold_errors(report, allow_gold_errors)


def _check_db_root(report, db_root: Path):
    """A --db_root holding none of the instances' databases is exit 2 (`database_folder`), not "0 %"; some
    missing, a problem said at the top.  Checked on the report: every such instance is `no_database` at once,
    before anything of it runs, so nothing was spent grading."""
    from dataclasses import replace

    from evaluators.errors import InstanceError
    from evaluators.livesql.native import sqlite_template
    from evaluators.loading.database_folder import check_database_folder

    def found(db: str) -> bool:
        try:
            return sqlite_template(db_root, db) is not None
        except InstanceError:  # an unsafe name is that instance's verdict already, not a missing database
            return True

    needed = [i.metadata.get("database") for i in report.instances if i.metadata.get("database") not in (None, "?")]
    problem = check_database_folder("--db_root", db_root, needed, found, "{db}/{db}_template.sqlite")
    if problem is None:
        return report
    return replace(report, summary=replace(report.summary, problems=(problem, *report.summary.problems)))
