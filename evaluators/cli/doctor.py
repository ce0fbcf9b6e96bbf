"""`doctor`: the benchmark's own health: `doctor fingerprint` (docs/doctor.md)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.livesql import sandbox_place
from evaluators.cli.options import AbsolutePath, echo, handle_errors
from evaluators.errors import UsageError

FINGERPRINT_EPILOG = """\b
Examples:
  python evaluate.py doctor fingerprint --db-dir test_suite_database --output suite.fingerprint.json
  python evaluate.py doctor fingerprint --check suite.fingerprint.json --db-dir test_suite_database
  python evaluate.py test-suite --gold gold.txt --pred pred.txt --db test_suite_database --fingerprint suite.fingerprint.json
\b
Servers: --engine postgres --postgres-dsn DSN --database NAME (repeat; templates too), or --engine mysql
--mysql-dsn URL --database NAME.  --fingerprint FILE works on grade, bird, test-suite and livesql.
"""


@click.group("doctor")
def doctor():
    """The benchmark's health: the achievable ceiling of each command, fingerprints of its databases."""


@doctor.command("fingerprint", epilog=FINGERPRINT_EPILOG)
@click.option(
    "--db-dir",
    type=AbsolutePath(exists=True, file_okay=False, path_type=Path),
    help="Folder of SQLite/DuckDB files (searched below; .db is SQLite unless --engine duckdb).",
)
@click.option(
    "--engine",
    type=click.Choice(["sqlite", "duckdb", "postgres", "mysql"]),
    help="Only this engine's files under --db-dir, or the server the --database names live on.",
)
@click.option("--database", "databases", multiple=True, help="A server database (or template) to fingerprint; repeat.")
@options.postgres_dsn_option
@options.mysql_dsn_option
@options.output_option("Write the fingerprint file here (JSON).")
@click.option(
    "--check",
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Check the databases against this fingerprint file instead (exit 2 on a mismatch, naming the tables).",
)
@options.timeout_option("one database's reading", default=3600.0)
@options.memory_limit_option()
@handle_errors
def fingerprint(db_dir, engine, databases, postgres_dsn, mysql_dsn, output, check, timeout, memory_limit_mb):
    """Write (or --check) each database's schema, row counts and a content checksum."""
    from evaluators.health import fingerprint as prints

    work = Path(tempfile.mkdtemp(prefix="spider-grade-fingerprint-"))
    try:
        config = options.exec_config(
            work,
            None,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            db_dir=db_dir,
            postgres_dsn=postgres_dsn,
            mysql_dsn=mysql_dsn,
        )
        if check is not None:
            echo(f"fingerprint: {prints.verify(check, db_dir, config)} database(s) match {check.name}")
            return
        targets = _targets(db_dir, engine, databases)
        if output is None:
            raise UsageError("--output is required to write a fingerprint (or give --check FILE)")
        contents = prints.take(targets, config)
        prints.write(output, contents)
        tables = sum(len(entry["tables"]) for entry in contents["databases"].values())
        echo(f"fingerprint: {len(targets)} database(s), {tables} table(s) written to {output}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _targets(db_dir, engine, databases) -> list:
    from evaluators.health.fingerprint import SERVERS, local_targets, server_targets

    if databases:
        if engine not in SERVERS:
            raise UsageError("--database names a server database: give --engine postgres or --engine mysql")
        return server_targets(engine, list(databases))
    if engine in SERVERS:
        raise UsageError(f"--engine {engine}: name the databases to fingerprint with --database")
    if db_dir is None:
        raise UsageError("give --db-dir (SQLite/DuckDB files) or --engine postgres|mysql with --database")
    targets = local_targets(db_dir, engine)
    if not targets:
        raise UsageError(
            f"--db-dir {db_dir}: no SQLite or DuckDB file (.sqlite, .sqlite3, .db, .duckdb, .ddb) below it"
        )
    return targets


REFERENCE_DATE = click.option(
    "--reference-date",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Run the golds as if today were this day (CURRENT_DATE, NOW(), 'now'); the ceiling is then NOT official.",
)
CEILING_EPILOG = """\b
Every gold runs as the prediction under the command's official rule; the report gives the achievable
ceiling over every gold instance and over the scoreable ones, and each unscoreable instance with its cause
(docs/doctor.md).
"""


def _report(ceiling, output, with_html) -> None:
    from evaluators.atomic import write_text

    echo(ceiling.to_text(), nl=False)
    if output:
        write_text(output, ceiling.to_json())
        written = [output]
        if with_html:
            write_text(output.with_suffix(".html"), ceiling.to_html())
            written.append(output.with_suffix(".html"))
        echo("wrote " + ", ".join(map(str, written)), err=True)


def _day(reference_date) -> str | None:
    return reference_date.strftime("%Y-%m-%d") if reference_date else None


_work = options.work_dir_for


@doctor.command("bird", epilog=CEILING_EPILOG)
@click.option("--ground_truth_path", "--ground-truth-path", "gold", required=True, type=AbsolutePath(exists=True))
@click.option(
    "--db_root_path", "--db-root-path", "db_root", required=True, type=AbsolutePath(exists=True, file_okay=False)
)
@click.option("--diff_json_path", "--diff-json-path", "questions", type=AbsolutePath(exists=True, dir_okay=False))
@options.sql_dialect_option
@options.timeout_option("a query", "--meta_time_out", "--meta-time-out", default=30.0)
@click.option("--data_mode", "--data-mode", "data_mode", default="dev", show_default=True)
@options.postgres_dsn_option
@options.mysql_dsn_option
@REFERENCE_DATE
@options.output_option("The ceiling report (JSON).")
@options.html_option
@options.work_dir_option
@handle_errors
def doctor_bird(
    gold,
    db_root,
    questions,
    sql_dialect,
    timeout,
    data_mode,
    postgres_dsn,
    mysql_dsn,
    reference_date,
    output,
    with_html,
    work_dir,
):
    """BIRD's achievable ceiling: every gold as its own prediction under BIRD's EX."""
    from evaluators.bird.run import BirdOptions
    from evaluators.health.gold_runs import bird_ceiling

    bird_options = BirdOptions(
        db_root,
        sql_dialect,
        timeout,
        work_dir=_work(work_dir, output),
        postgres_dsn=postgres_dsn,
        mysql_dsn=mysql_dsn,
    )
    _report(bird_ceiling(gold, questions, bird_options, data_mode, _day(reference_date)), output, with_html)


@doctor.command("test-suite", epilog=CEILING_EPILOG)
@click.option("--gold", "gold", required=True, type=AbsolutePath(exists=True, dir_okay=False))
@click.option("--db", "--db-dir", "db_dir", required=True, type=AbsolutePath(exists=True, file_okay=False))
@click.option("--keep-distinct", "--keep_distinct", "keep_distinct", is_flag=True)
@options.timeout_option()
@REFERENCE_DATE
@options.output_option("The ceiling report (JSON).")
@options.html_option
@options.work_dir_option
@handle_errors
def doctor_test_suite(gold, db_dir, keep_distinct, timeout, reference_date, output, with_html, work_dir):
    """test-suite's achievable ceiling: every gold as its own prediction under the suite's execution accuracy."""
    from evaluators.health.gold_runs import testsuite_ceiling

    ceiling = testsuite_ceiling(gold, db_dir, _work(work_dir, output), timeout, keep_distinct, _day(reference_date))
    _report(ceiling, output, with_html)


@doctor.command("livesql", epilog=CEILING_EPILOG)
@click.option(
    "--jsonl_file", "--jsonl-file", "jsonl_file", required=True, type=AbsolutePath(exists=True, dir_okay=False)
)
@click.option("--gold", type=AbsolutePath(exists=True, dir_okay=False))
@sandbox_place()
@click.option("--benchmark", type=click.Choice(["livesql", "critic"]), default="livesql", show_default=True)
@options.timeout_option("a phase of an instance")
@REFERENCE_DATE
@options.output_option("The ceiling report (JSON).")
@options.html_option
@options.work_dir_option
@handle_errors
def doctor_livesql(
    jsonl_file, gold, db_root, benchmark, engine, postgres_dsn, timeout, reference_date, output, with_html, work_dir
):
    """LiveSQLBench / BIRD-CRITIC's achievable ceiling: sol_sql graded by its own test cases (the official --mode gold)."""
    from evaluators.health.gold_runs import livesql_ceiling
    from evaluators.livesql.run import LiveSQLOptions

    if engine == "sqlite" and db_root is None:
        raise UsageError("--db_root is required with --engine sqlite")
    run_options = LiveSQLOptions(
        benchmark=benchmark,
        engine=engine,
        db_root=db_root,
        work_dir=_work(work_dir, output),
        postgres_dsn=postgres_dsn,
        instance_timeout_s=timeout,
    )
    _report(livesql_ceiling(jsonl_file, gold, run_options, _day(reference_date)), output, with_html)


@doctor.command("grade", epilog=CEILING_EPILOG)
@options.gold_dir_option()
@click.option(
    "--semantics",
    type=click.Choice(["spider2", "spider2-2024", "spider2-lite"]),
    default="spider2",
    show_default=True,
    help="The official preset whose ceiling is reported.",
)
@options.output_option("The ceiling report (JSON).")
@options.html_option
@options.work_dir_option
@handle_errors
def doctor_grade(gold_dir, semantics, output, with_html, work_dir):
    """Spider2 folders' achievable ceiling: every gold file graded as the answer to itself (gold lint's self-check)."""
    from evaluators.health.gold_runs import grade_ceiling

    _report(grade_ceiling(gold_dir, semantics, _work(work_dir, output)), output, with_html)


@doctor.command("interact", epilog=CEILING_EPILOG)
@click.option("--tasks", required=True, type=AbsolutePath(exists=True, dir_okay=False), help="The tasks' JSON lines.")
@click.option("--gt", type=AbsolutePath(exists=True, dir_okay=False), help="The GT lines, laid over the tasks.")
@sandbox_place("SQLite: the folder of <db>/<db>_template.sqlite (else <db>/<db>.sqlite).")
@options.timeout_option("a submit (set-up, the SQL, the test cases)")
@options.output_option("The ceiling report (JSON).")
@options.html_option
@options.work_dir_option
@handle_errors
def doctor_interact(tasks, gt, db_root, engine, postgres_dsn, timeout, output, with_html, work_dir):
    """BIRD-Interact's achievable ceiling: the gold submitted in every phase (`interact --oracle`)."""
    from evaluators.cli.livesql import check_engine
    from evaluators.health.gold_runs import interact_ceiling
    from evaluators.interact.run import InteractOptions

    check_engine(engine, db_root, postgres_dsn)
    run_options = InteractOptions(
        engine=engine, db_root=db_root, postgres_dsn=postgres_dsn, work_dir=_work(work_dir, output), timeout_s=timeout
    )
    _report(interact_ceiling(tasks, gt, run_options), output, with_html)
