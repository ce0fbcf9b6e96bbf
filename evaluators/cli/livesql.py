"""`livesql`: LiveSQLBench and BIRD-CRITIC answers graded by their test cases, with the official harness's
arguments (`--jsonl_file`, `--num_threads`, `--mode`, `--logging`) and our report beside the official figure."""

from __future__ import annotations

import click

from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, echo, handle_errors
from evaluators.livesql.profiles import PROFILES, scorers_help

EPILOG = """\b
Examples:
  python evaluate.py livesql --jsonl_file post_processed_sql.jsonl --db_root database/ --output out/live.json
  python evaluate.py livesql --jsonl_file preds.jsonl --gold livesqlbench_gt.jsonl --engine postgresql \\
      --postgres-dsn postgresql://root@localhost:5432/postgres --num_threads 8
  python evaluate.py livesql --benchmark critic --jsonl_file critic_preds.jsonl --db_root sqlite_databases/
"""


def sandbox_limits(what: str):
    """--timeout, --memory-limit-mb, --work-dir (options.run_limits) and --disk-limit-mb of a run on livesql's
    sandbox (`livesql`, `interact`): a worker running a whole instance needs 64 MB at least."""
    return options.option_stack(
        options.run_limits(what, minimum_memory=64),
        click.option(
            "--disk-limit-mb",
            type=click.IntRange(1),
            default=1024,
            show_default=True,
            help="Disk a private database copy may grow by.",
        ),
    )


def sandbox_place(db_root_help: str = "SQLite: the folder of <db>/<db>_template.sqlite."):
    """--db_root, --engine and --postgres-dsn: where livesql's sandbox finds the databases (`livesql`, `interact`
    and their `doctor` ceilings); `check_engine` checks them."""
    return options.option_stack(
        click.option(
            "--db_root", "--db-root", "db_root", type=AbsolutePath(exists=True, file_okay=False), help=db_root_help
        ),
        click.option("--engine", type=click.Choice(["sqlite", "postgresql"]), default="sqlite", show_default=True),
        options.postgres_dsn_option,
    )


def check_engine(engine: str, db_root, postgres_dsn) -> None:
    """SQLite needs --db_root, PostgreSQL a server (exit 2 before anything runs)."""
    from evaluators.errors import UsageError

    if engine == "sqlite" and db_root is None:
        raise UsageError("--db_root is required with --engine sqlite")
    if engine == "postgresql" and not postgres_dsn:
        raise UsageError("--postgres-dsn is required with --engine postgresql (PG* variables apply too)")


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
@sandbox_place()
@click.option("--benchmark", type=click.Choice(["livesql", "critic"]), default="livesql", show_default=True)
@options.jobs_option("Run", 4, False, "--num_threads", "--num-threads", help="Instances graded at once.")
@click.option(
    "--mode", type=click.Choice(["pred", "gold"]), default="pred", show_default=True, help="gold: grade sol_sql."
)
@click.option("--logging", "logging_", default="false", help="Accepted for the official command line; unused.")
@sandbox_limits("a phase of an instance")
@options.report_options()
@fingerprint_option
@click.option(
    "--scorer",
    type=click.Choice(list(PROFILES)),
    help="The official harness version to reproduce (default: the current one of --benchmark on --engine). "
    + scorers_help(),
)
@handle_errors
def livesql(
    jsonl_file,
    gold,
    db_root,
    benchmark,
    engine,
    postgres_dsn,
    jobs,
    mode,
    logging_,
    timeout,
    memory_limit_mb,
    disk_limit_mb,
    work_dir,
    fingerprint,
    scorer,
    **tail,
):
    """Grade LiveSQLBench / BIRD-CRITIC predictions by their test cases (Query and Management tasks)."""
    from evaluators.livesql.run import LiveSQLBenchmark, LiveSQLOptions

    check_engine(engine, db_root, postgres_dsn)
    config = options.exec_config(
        work_dir, tail["output"], timeout=timeout, memory_limit_mb=memory_limit_mb, postgres_dsn=postgres_dsn
    )
    check_fingerprint(fingerprint, db_root, config)
    work_dir = config.output_dir
    run_options = LiveSQLOptions(  # the sandbox's own settings (livesql/run.py), from the run's config
        benchmark=benchmark,
        engine=engine,
        db_root=db_root,
        num_threads=jobs,
        work_dir=work_dir,
        postgres_dsn=config.postgres.dsn,
        mode=mode,
        instance_timeout_s=config.timeout_s,
        memory_limit_mb=config.memory_limit_mb,
        disk_limit_mb=disk_limit_mb,
        scorer=scorer,
    )
    echo(f"scorer: {run_options.profile.preset}: {run_options.profile.scorer}", err=True)
    run = LiveSQLBenchmark(jsonl_file, gold, run_options)
    options.run_benchmark_command(run, jobs, tail, work_dir, {"database": db_root})
