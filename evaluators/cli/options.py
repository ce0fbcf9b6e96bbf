"""Options shared by the subcommands, and the one place errors become exit codes."""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

import click

from evaluators import signals
from evaluators.cwd import absolute
from evaluators.errors import EvalError, UsageError
from evaluators.terminal_safe import json_text, terminal_text


class AbsolutePath(click.Path):
    """Every path option, resolved once, here, against the caller's working directory.

    Workers, pool processes, Ray actors and databases opened later all get the absolute path, so where they
    run from never changes what they read; an error names the option and the resolved path."""

    def __init__(self, **kwargs):
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)

    def convert(self, value, param, ctx):
        if isinstance(value, (str, os.PathLike)) and os.fspath(value) not in ("", "-"):
            value = absolute(value)
        return super().convert(value, param, ctx)


def result_dir_option(fn):
    return click.option(
        "--result-dir",
        "--result_dir",
        "result_dir",
        required=True,
        type=AbsolutePath(exists=True, file_okay=False, path_type=Path),
        help="Submission folder holding results_metadata.jsonl.",
    )(fn)


def gold_dir_option(required=True, exists=True):
    def wrap(fn):
        return click.option(
            "--gold-dir",
            "--gold_dir",
            "gold_dir",
            required=required,
            type=AbsolutePath(exists=exists, file_okay=False, path_type=Path),
            help="Gold folder holding spider2_eval.jsonl.",
        )(fn)

    return wrap


def layout_option(fn):
    return click.option(
        "--layout",
        type=click.Choice(["nested", "flat"]),
        default="nested",
        show_default=True,
        help="nested: results_metadata.jsonl and one folder per instance; flat: Spider2-lite's "
        "<instance_id>.csv / <instance_id>.sql files side by side.",
    )(fn)


def max_file_mb_option(fn):
    return click.option(
        "--max-file-mb",
        type=click.IntRange(1),
        default=2048,
        show_default=True,
        help="Refuse predicted or gold files larger than this (results_metadata.jsonl too, at least 256).",
    )(fn)


class Jobs(click.ParamType):
    """`auto` or a number of processes from 1 to 64."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if value == "auto" or isinstance(value, int):
            return value
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither 'auto' nor a whole number", param, ctx)
        if not 1 <= number <= 64:
            self.fail(f"{number} is not between 1 and 64", param, ctx)
        return number


def jobs_option(what: str, default="auto", auto: bool = True):
    """`--jobs`; `auto=False`: a number only (work that is not shared out by instance)."""
    return click.option(
        "--jobs",
        type=Jobs() if auto else click.IntRange(1, 64),
        default=default,
        show_default=True,
        help=f"{what} in N processes; auto: one per available core when there are enough instances to share out."
        if auto
        else f"{what} in N processes.",
    )


def timeout_option(help: str, *names: str, default: float = 60.0):
    """Seconds before a query (or a phase) is stopped; `names`: the official scripts' spellings."""
    return click.option(
        *(names or ("--timeout",)), type=click.FloatRange(0.1), default=default, show_default=True, help=help
    )


def memory_limit_option(help: str | None = None, minimum: int = 16, default: int = 4096):
    return click.option(
        "--memory-limit-mb", type=click.IntRange(minimum), default=default, show_default=True, help=help
    )


def output_option(help: str):
    return click.option("--output", type=AbsolutePath(dir_okay=False, path_type=Path), help=help)


html_option = click.option(
    "--html", "with_html", is_flag=True, help="With --output: also write the HTML report beside it."
)


def work_dir_option(help: str):
    return click.option("--work-dir", type=AbsolutePath(file_okay=False, path_type=Path), help=help)


allow_gold_errors_option = click.option(
    "--allow-gold-errors",
    is_flag=True,
    help="Exit 0 even when some gold instances are broken (they are still counted apart and named).",
)


def raise_on_gold_errors(report, allowed: bool) -> None:
    """Exit 2 when some instances' gold is broken (invalid_gold, ...), unless the user allowed it."""
    from evaluators.errors import GoldErrors

    gold_errors = report.summary.gold_errors
    if gold_errors and not allowed:
        raise GoldErrors(
            f"{len(gold_errors)} gold error(s) (the gold's problems, not the model's): "
            f"{', '.join(gold_errors[:5])}{' ...' if len(gold_errors) > 5 else ''}",
            hint="fix the gold, or pass --allow-gold-errors",
        )


def postgres_dsn_option(help: str):
    return click.option("--postgres-dsn", help=help)


def mysql_dsn_option(help: str):
    return click.option("--mysql-dsn", help=help)


def option_stack(*options):
    """Several options as one decorator, in the order written (as --help lists them)."""

    def wrap(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn

    return wrap


def echo(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Every line the CLI prints: file names, instance ids and engine messages in it come from submissions and
    databases, so control characters are shown escaped (`terminal_safe`), on a terminal or piped."""
    click.echo(terminal_text(text), err=err, nl=nl)


def echo_json(text: str) -> None:
    """A JSON document on stdout, still the same JSON, with no raw control character (`terminal_safe.json_text`)."""
    click.echo(json_text(text))


def handle_errors(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EvalError as exc:
            echo(f"{exc.label}{exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            stop_interrupted()

    return run


def stop_interrupted() -> None:
    """A signal (or Ctrl-C) came: stop every query and server, say so in one line, exit 128 + its number."""
    code = signals.cleaning_up()
    _stop_workers()
    echo("interrupted: every query was stopped and no report was written", err=True)
    sys.exit(code)


def _stop_workers() -> None:
    worker = sys.modules.get("evaluators.execution.worker")  # loaded only if some SQL ran
    if worker is not None:
        worker.kill_all()
    graphs = sys.modules.get("evaluators.execution.graphs")  # loaded only if some Cypher ran
    if graphs is not None:
        graphs.stop_all()


execution_options = option_stack(
    click.option(
        "--db-dir",
        type=AbsolutePath(exists=True, file_okay=False, path_type=Path),
        help="Folder of DuckDB/SQLite files named by the gold's `db` (default: GOLD/databases).",
    ),
    click.option(
        "--backend",
        type=click.Choice(["duckdb", "sqlite", "bigquery", "snowflake", "postgres", "mysql", "cypher"]),
        help="Run every instance on this backend, whatever the gold's `type` says.",
    ),
    click.option("--db", "db_override", help="Run every instance on this database reference."),
    timeout_option("Seconds a query may run before it is stopped."),
    memory_limit_option(
        "Memory one query may use: DuckDB's and SQLite's own cap (DuckDB spills past it), the graph "
        "server's per query, and its worker's with the rows it fetches (docs/security.md)."
    ),
    click.option(
        "--max-result-rows",
        type=click.IntRange(1),
        default=1_000_000,
        show_default=True,
        help="Rows a Cypher query may return; past it the answer is 'result_too_large'.",
    ),
    click.option(
        "--max-gb-billed",
        type=click.FloatRange(0),
        default=10.0,
        show_default=True,
        help="BigQuery cost cap per query, in GiB (checked by a dry run first).",
    ),
    click.option("--refresh-gold", is_flag=True, help="Re-run temporal gold queries instead of using the cache."),
    click.option(
        "--ves-iterations",
        type=click.IntRange(0),
        default=10,
        show_default=True,
        help="execution_match: time gold and prediction alternately N times each for VES (BIRD uses 100); 0 skips VES.",
    ),
    work_dir_option("Result CSVs and the gold cache (default: beside --output, else ./.grade-work)."),
    click.option(
        "--credentials-dir",
        type=AbsolutePath(file_okay=False, path_type=Path),
        default=Path("credentials"),
        show_default=True,
    ),
    click.option("--bigquery-endpoint", help="BigQuery API endpoint (an emulator, say)."),
    click.option("--bigquery-project", help="BigQuery project for unqualified datasets."),
    click.option("--snowflake-host"),
    click.option("--snowflake-port", type=int),
    click.option("--snowflake-protocol", type=click.Choice(["https", "http"])),
    postgres_dsn_option(
        "PostgreSQL connection (libpq string or URL); PG* variables and ~/.pgpass apply too. Never printed."
    ),
    mysql_dsn_option(
        "MySQL/MariaDB URL mysql://user:password@host:port/db; MYSQL_* variables and ~/.my.cnf apply too. Never printed."
    ),
)
"""Where and how SQL runs: predicted `.sql` answers and temporal golds."""


def check_writable_outside(targets: dict, protected: dict) -> None:
    """Before any grading: every place we will write ({flag: path}) is writable and outside the folders we only
    read ({name: folder}); UsageError (exit 2) otherwise."""
    for flag, path in targets.items():
        if path is None:
            continue
        resolved = Path(path).resolve()
        for name, folder in protected.items():
            if folder is not None and resolved.is_relative_to(Path(folder).resolve()):
                raise UsageError(
                    f"{flag} {path} is inside the {name} folder {folder}, which is never written to",
                    hint=f"choose a {flag} outside {folder}",
                )
    output = targets.get("--output")
    if output is not None:
        _check_writable(Path(output))


def _check_writable(output: Path) -> None:
    if output.is_dir():
        raise UsageError(f"--output {output} is a folder; name the report file", hint="e.g. out/report.json")
    parent = output.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{output.name}.check."):
            pass
    except OSError as exc:
        raise UsageError(f"--output {output}: cannot write there ({exc.strerror or exc})") from None


def warn_about_pairing(report) -> None:
    """Predictions that may be paired with the wrong gold lines, and databases missing from the folder given,
    said on stderr before the figures (they are in the report's problems too): a low score for those reasons
    is not the model's."""
    from evaluators.loading import database_folder, pairing

    for text in database_folder.warnings(report.summary.problems) + pairing.warnings(report.summary.problems):
        echo(f"warning: {text}", err=True)


def write_reports(report, output: Path, with_html: bool = False) -> list[Path]:
    """The JSON report at `output`, its CSV beside it (and its HTML with `with_html`); the paths written."""
    from evaluators.reporting.report import write_atomic

    written = [output, output.with_suffix(".csv")]
    write_atomic(output, report.to_json())
    write_atomic(written[1], report.to_csv())
    if with_html:
        written.append(output.with_suffix(".html"))
        write_atomic(written[2], report.to_html())
    return written
