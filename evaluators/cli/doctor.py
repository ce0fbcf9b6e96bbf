"""`doctor`: the benchmark's own health: `doctor fingerprint` (docs/doctor.md)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click

from evaluators.cli import options
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
    """The benchmark's health: fingerprints of its databases."""


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
@options.postgres_dsn_option("PostgreSQL connection (libpq string or URL); PG* variables apply too. Never printed.")
@options.mysql_dsn_option("MySQL/MariaDB URL; MYSQL_* variables apply too. Never printed.")
@options.output_option("Write the fingerprint file here (JSON).")
@click.option(
    "--check",
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Check the databases against this fingerprint file instead (exit 2 on a mismatch, naming the tables).",
)
@options.timeout_option("Seconds one database may take to read.", default=3600.0)
@options.memory_limit_option("Memory one database's reading may use.")
@handle_errors
def fingerprint(db_dir, engine, databases, postgres_dsn, mysql_dsn, output, check, timeout, memory_limit_mb):
    """Write (or --check) each database's schema, row counts and a content checksum."""
    from evaluators.health import fingerprint as prints

    work = Path(tempfile.mkdtemp(prefix="spider-grade-fingerprint-"))
    try:
        config = _config(work, db_dir, postgres_dsn, mysql_dsn, timeout, memory_limit_mb)
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


def _config(work: Path, db_dir, postgres_dsn, mysql_dsn, timeout, memory_limit_mb):
    from evaluators.execution.executor import ExecConfig

    return ExecConfig(
        output_dir=work,
        db_dir=db_dir,
        timeout_s=timeout,
        memory_limit_mb=memory_limit_mb,
        postgres_dsn=postgres_dsn,
        mysql_dsn=mysql_dsn,
    )


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
