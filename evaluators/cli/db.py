"""`db load-sqlite`: a SQLite database into a PostgreSQL or MySQL server, so one set of questions runs on three engines;
`db prepare`: the roles the grader uses on PostgreSQL (execution/pg_roles.py)."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli.options import AbsolutePath, echo, handle_errors

EPILOG = """\b
Examples:
  python evaluate.py db load-sqlite dev_databases/california_schools/california_schools.sqlite \\
      --engine postgres --dsn postgresql://admin@127.0.0.1:5432/postgres
  python evaluate.py db load-sqlite shop.sqlite --engine mysql --dsn mysql://root:pw@127.0.0.1:3306 --replace
"""


@click.group()
def db():
    """Prepare databases for the server engines."""


@db.command("load-sqlite", epilog=EPILOG)
@click.argument("sqlite_file", type=AbsolutePath(exists=True, dir_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice(["postgres", "mysql"]), required=True)
@click.option("--dsn", required=True, help="An account that may create databases (never printed).")
@click.option("--database", help="Database name on the server (default: the file's name).")
@click.option("--replace", is_flag=True, help="Drop and load again a database of that name.")
@handle_errors
def load_sqlite(sqlite_file, engine, dsn, database, replace):
    """Copy every table and row of a SQLite file into a new database on the server."""
    from evaluators.errors import MissingExtra, UsageError
    from evaluators.execution.backends.base import redact
    from evaluators.execution.backends.servers import dsn_secrets
    from evaluators.execution.load_sqlite import load_sqlite as load

    try:
        result = load(sqlite_file, engine, dsn, database, replace)
    except ImportError:
        raise MissingExtra("psycopg" if engine == "postgres" else "PyMySQL", engine) from None
    except Exception as exc:  # the driver's error, said once, without the DSN's password
        raise UsageError(redact(f"loading {sqlite_file.name} into {engine} failed: {exc}", dsn_secrets(dsn))) from None
    echo(result.to_text(), nl=False)


PREPARE_EPILOG = """\b
Example:
  python evaluate.py db prepare --engine postgres --dsn postgresql://postgres@127.0.0.1:5432/postgres \\
      --role grader
  then grade with --postgres-dsn postgresql://grader:PASSWORD@127.0.0.1:5432/postgres
  python evaluate.py db prepare --engine postgres --dsn postgresql://postgres@127.0.0.1:5432/postgres \\
      --role grader --template shop_template
  (LiveSQLBench / BIRD-CRITIC: one --template per <db>_template graded; docs/livesql.md)
"""


@db.command("prepare", epilog=PREPARE_EPILOG)
@click.option("--engine", type=click.Choice(["postgres"]), required=True)
@click.option("--dsn", required=True, help="An administrator's connection (never printed).")
@click.option("--role", default="grader", show_default=True, help="The role the grader will connect as.")
@click.option("--password-env", help="Set the role's password from this environment variable.")
@click.option(
    "--read-all/--no-read-all",
    default=True,
    show_default=True,
    help="Let answers read every table (pg_read_all_data); without it, grant SELECT to <role>_answers yourself.",
)
@click.option(
    "--template",
    "templates",
    multiple=True,
    help="A LiveSQL template database (repeatable): owned by the role, its objects by <role>_tables; "
    "the role gets CREATEDB (docs/livesql.md).",
)
@handle_errors
def prepare(engine, dsn, role, password_env, read_all, templates):
    """Create the grader's roles: its own, its answers' group; each answer then runs as a role of its own."""
    import os

    from evaluators.errors import MissingExtra, UsageError
    from evaluators.execution.backends.base import redact
    from evaluators.execution.backends.servers import dsn_secrets

    password = os.environ.get(password_env) if password_env else None
    if password_env and not password:
        raise UsageError(f"--password-env {password_env}: the variable is not set")
    try:
        from evaluators.execution.pg_roles import prepare_postgres

        result = prepare_postgres(dsn, role, password, read_all, templates)
    except ImportError:
        raise MissingExtra("psycopg", engine) from None
    except Exception as exc:  # the driver's error, said once, without a password
        raise UsageError(redact(f"preparing {engine} failed: {exc}", [*dsn_secrets(dsn), password or ""])) from None
    echo(result.to_text(), nl=False)
