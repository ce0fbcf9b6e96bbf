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

# `grade`'s examples, shown under `evaluate.py --help` too (grade is the default command)
GRADE_EPILOG = """\b
Examples:
  python evaluate.py --result_dir example_submission_folder --gold_dir gold
  python evaluate.py --result-dir sub --gold-dir gold --semantics strict --output out/report.json
  python evaluate.py grade --result-dir sub --gold-dir gold --jobs 2 --fail-under 0.5
  python evaluate.py grade --result-dir lite_csvs --gold-dir lite_gold --layout flat
  python evaluate.py grade --result-dir sub --gold-dir gold --db-dir dbs --ves-iterations 100
  python evaluate.py grade --result-dir sub --gold-dir gold --ray auto
"""


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


def jobs_option(what: str, default="auto", auto: bool = True, *official: str, help: str | None = None):
    """`--jobs`; `auto=False`: a number only (work that is not shared out by instance); `official`: the
    official scripts' spellings of the same option (`--num_cpus`, `--num_threads`)."""
    return click.option(
        "--jobs",
        *official,
        "jobs",
        type=Jobs() if auto else click.IntRange(1, 64),
        default=default,
        show_default=True,
        help=help
        or (
            f"{what} in N processes; auto: one per available core when there are enough instances to share out."
            if auto
            else f"{what} in N processes."
        ),
    )


def timeout_option(what: str = "a query", *official: str, default: float = 60.0):
    """`--timeout` of every command, one help: seconds before `what` (a query, a phase of an instance, ...) is
    stopped; `official`: the official scripts' spellings, and their default (BIRD's --meta_time_out 30)."""
    return click.option(
        "--timeout",
        *official,
        "timeout",
        type=click.FloatRange(0.1),
        default=default,
        show_default=True,
        help=f"Seconds {what} may run before it is stopped.",
    )


MEMORY_HELP = (
    "Memory one query may use: DuckDB's and SQLite's own cap (DuckDB spills past it), the graph server's per "
    "query, and its worker's with the rows it fetches (docs/security.md)."
)


def memory_limit_option(minimum: int = 16):
    """`--memory-limit-mb` of every command; `minimum`: a worker running a whole instance (livesql's sandbox)
    needs more than a query's engine."""
    return click.option(
        "--memory-limit-mb", type=click.IntRange(minimum), default=4096, show_default=True, help=MEMORY_HELP
    )


def output_option(help: str):
    return click.option("--output", type=AbsolutePath(dir_okay=False, path_type=Path), help=help)


html_option = click.option(
    "--html", "with_html", is_flag=True, help="With --output: also write the HTML report beside it."
)


work_dir_option = click.option(
    "--work-dir",
    type=AbsolutePath(file_okay=False, path_type=Path),
    help="Result CSVs, private database copies and scratch files (default: <output stem>_exec beside --output, "
    "else ./.grade-work).",
)


def run_limits(what: str = "a query", *official: str, default_timeout: float = 60.0, minimum_memory: int = 16):
    """--timeout, --memory-limit-mb and --work-dir, as every command that runs queries declares them."""
    return option_stack(
        timeout_option(what, *official, default=default_timeout), memory_limit_option(minimum_memory), work_dir_option
    )


def work_dir_for(work_dir: Path | None, output: Path | None) -> Path:
    """--work-dir, or its default: `<output stem>_exec` beside --output, else ./.grade-work."""
    if work_dir is not None:
        return work_dir
    return output.parent / f"{output.stem}_exec" if output else Path(".grade-work")


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


postgres_dsn_option = click.option(
    "--postgres-dsn",
    help="PostgreSQL connection (libpq string or URL); PG* variables and ~/.pgpass apply too. Never printed.",
)
mysql_dsn_option = click.option(
    "--mysql-dsn",
    help="MySQL/MariaDB URL mysql://user:password@host:port/db; MYSQL_* variables and ~/.my.cnf apply too. "
    "Never printed.",
)
sql_dialect_option = click.option(
    "--sql_dialect",
    "--sql-dialect",
    "sql_dialect",
    default="SQLite",
    show_default=True,
    type=click.Choice(["SQLite", "PostgreSQL", "MySQL"], case_sensitive=False),
    help="BIRD's dialect: SQLite files under the database folder, or the server of --postgres-dsn / --mysql-dsn.",
)


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
    run_limits(),
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
    postgres_dsn_option,
    mysql_dsn_option,
)
"""Where and how SQL runs: predicted `.sql` answers and temporal golds."""


def exec_config(
    work_dir: Path | None,
    output: Path | None,
    *,
    timeout: float,
    memory_limit_mb: int,
    db_dir: Path | None = None,
    backend: str | None = None,
    db_override: str | None = None,
    credentials_dir: Path = Path("credentials"),
    refresh_gold: bool = False,
    postgres_dsn: str | None = None,
    mysql_dsn: str | None = None,
    max_result_rows: int | None = None,
    max_gb_billed: float | None = None,
    bigquery_endpoint: str | None = None,
    bigquery_project: str | None = None,
    snowflake_host: str | None = None,
    snowflake_port: int | None = None,
    snowflake_protocol: str | None = None,
    **quirks: dict,
):
    """The one place a command's execution options become an `ExecConfig`, for every command: the common
    settings (the work folder's default by `work_dir_for`), then each engine's own; `quirks`: a benchmark's
    engine settings beyond the options, by engine (`sqlite={"decode_errors": "ignore"}` for test-suite)."""
    from dataclasses import replace

    from evaluators.execution.backends import settings as engines
    from evaluators.execution.config import ExecConfig

    config = ExecConfig(
        output_dir=work_dir_for(work_dir, output),
        db_dir=db_dir,
        credentials_dir=credentials_dir,
        backend_override=backend,
        db_override=db_override,
        timeout_s=timeout,
        memory_limit_mb=memory_limit_mb,
        refresh_gold=refresh_gold,
        postgres=engines.PostgresSettings(postgres_dsn),
        mysql=engines.MySQLSettings(mysql_dsn),
        bigquery=engines.BigQuerySettings(
            bigquery_endpoint,
            bigquery_project,
            engines.DEFAULT_MAX_BYTES_BILLED if max_gb_billed is None else int(max_gb_billed * 1024**3),
        ),
        snowflake=engines.SnowflakeSettings(snowflake_host, snowflake_port, snowflake_protocol),
        cypher=engines.CypherSettings(max_result_rows or engines.DEFAULT_MAX_RESULT_ROWS),
    )
    return replace(config, **{engine: replace(getattr(config, engine), **fields) for engine, fields in quirks.items()})


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


def warn_about_pairing(report, more=()) -> None:
    """Predictions that may be paired with the wrong gold lines, and databases missing from the folder given,
    said on stderr before the figures (they are in the report's problems too): a low score for those reasons
    is not the model's.  `more`: the command's own warnings, each said once."""
    from evaluators.loading import database_folder, pairing

    problems = report.summary.problems
    texts = [*database_folder.warnings(problems), *pairing.warnings(problems), *map(str, more)]
    for text in dict.fromkeys(texts):
        echo(f"warning: {text}", err=True)


def write_reports(report, output: Path, with_html: bool = False, plot: str | None = None) -> list[Path]:
    """The report files of every command, each written atomically; the paths written.

    By --output's suffix: `.html` the HTML report, `.csv` the CSV, anything else the JSON with the CSV beside it
    (and the HTML with `with_html`, the figure with `plot`: svg or png)."""
    from evaluators.reporting.report import write_atomic

    suffix = output.suffix.lower()
    if suffix in (".html", ".htm"):
        write_atomic(output, report.to_html())
        return [output]
    if suffix == ".csv":
        write_atomic(output, report.to_csv())
        return [output]
    written = [output, output.with_suffix(".csv")]
    write_atomic(output, report.to_json())
    write_atomic(written[1], report.to_csv())
    if with_html:
        written.append(output.with_suffix(".html"))
        write_atomic(written[-1], report.to_html())
    if plot:
        from evaluators.errors import MissingExtra
        from evaluators.reporting.plots import plot_report

        try:
            written.append(plot_report(report, output.with_suffix(f".{plot}")))
        except MissingExtra as exc:
            echo(f"note: no {plot.upper()} plot: {exc}", err=True)
    return written


class FailUnder(click.ParamType):
    """A score from 0 to 1, or a percent above 1 (55 is 0.55): BIRD and LiveSQLBench print percents."""

    name = "SCORE"

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if number < 0:
            self.fail(f"{number} is below 0", param, ctx)
        return number / 100 if number > 1 else number


def report_options(output_help: str = "Write the JSON report here, with a CSV beside it"):
    """The tail every grading command shares, declared once: --output, --html, --format, --fail-under,
    --allow-gold-errors, --progress.  The command hands them to `finish` as they come (`**tail`)."""
    return option_stack(
        output_option(f"{output_help} (a name ending in .html writes the HTML report instead, .csv the CSV alone)."),
        html_option,
        click.option(
            "--format",
            "output_format",
            type=click.Choice(["text", "json"]),
            default="text",
            show_default=True,
            help="json: the report on stdout and nothing else there (messages, progress and the official "
            "tables on stderr).",
        ),
        click.option(
            "--fail-under",
            type=FailUnder(),
            help="Exit 1 when the score is below this: a fraction (0.55) or a percent (55).",
        ),
        allow_gold_errors_option,
        click.option("--progress/--no-progress", default=None, help="Progress bar (default: only on a terminal)."),
    )


def write_beside(output: Path, files: dict) -> list[Path]:
    """An official script's report files beside ours, `<output stem>.<name>`, each written atomically."""
    from evaluators.reporting.report import write_atomic

    written = []
    for name, text in files.items():
        written.append(output.with_name(f"{output.stem}.{name}"))
        write_atomic(written[-1], text)
    return written


def finish(
    report,
    *,
    output: Path | None,
    with_html: bool,
    output_format: str,
    fail_under: float | None,
    allow_gold_errors: bool,
    progress=None,
    official: str = "",
    warnings: tuple | list = (),
    plot: str | None = None,
    official_files: dict | None = None,
) -> None:
    """Every command's end, the same everywhere: warnings, the report (text or JSON) and the official lines,
    the report files, then the exit code (2 gold errors, 1 instances not graded or a score below --fail-under)."""
    from evaluators.errors import Failed

    warn_about_pairing(report, warnings)
    if output_format == "json":
        echo_json(report.to_json())
        if official:
            echo("\n" + official, err=True, nl=False)
    else:
        echo(report.to_text(), nl=False)
        if official:
            echo("\n" + official, nl=False)
    if output:
        written = write_reports(report, output, with_html, plot) + write_beside(output, official_files or {})
        echo("wrote " + ", ".join(map(str, written)), err=True)
    raise_on_gold_errors(report, allow_gold_errors)
    broken = [i.instance_id for i in report.instances if i.reason == "internal_error"]
    if broken:  # the figure is not the submission's: some instances were never really graded
        raise Failed(
            f"{len(broken)} instance(s) could not be graded (internal_error, see the report): "
            f"{', '.join(broken[:5])}{' ...' if len(broken) > 5 else ''}"
        )
    if fail_under is not None and report.summary.score < fail_under:
        raise Failed(f"score {report.summary.score:.4f} is below --fail-under {fail_under}")


def run_benchmark_command(benchmark, jobs, tail: dict, work_dir: Path, protected: dict, then=None) -> None:
    """A benchmark command after its flags: --output and --work-dir checked (writable, outside the `protected`
    folders), the run (grading/benchmark.py), `then(report)` if given, then `finish`."""
    from evaluators.grading.benchmark import run_benchmark
    from evaluators.grading.jobs import resolve_jobs

    check_writable_outside({"--output": tail["output"], "--work-dir": work_dir}, protected)
    report = run_benchmark(benchmark, resolve_jobs(jobs, 10**6), progress_bar(tail.get("progress")))
    if then is not None:
        then(report)
    official, files = benchmark.official_lines(report), benchmark.official_files(report)
    finish(report, official=official, official_files=files, warnings=benchmark.warnings(report), **tail)


def progress_bar(wanted: bool | None):
    """A factory for a run's progress: click's bar (ETA, percent, rate) on a terminal's stderr, nothing when
    piped (click hides it) or when --no-progress."""
    if wanted is False or (wanted is None and not sys.stderr.isatty()):
        return None  # quiet when piped: click would still print the label

    def make(total: int):
        return _Bar(total)

    return make


class _Bar:
    def __init__(self, total: int):
        import time

        self.clock, self.start = time.monotonic, time.monotonic()
        self.done = 0
        self.bar = click.progressbar(
            length=total,
            label="grading",
            file=sys.stderr,
            show_eta=True,
            show_percent=True,
            show_pos=True,
            width=0,
            item_show_func=lambda rate: rate,
        )
        self.bar.__enter__()

    def step(self, n: int = 1) -> None:
        self.done += n
        rate = self.done / max(self.clock() - self.start, 1e-9)
        self.bar.update(n, f"{rate:.1f}/s")

    def close(self) -> None:
        self.bar.__exit__(None, None, None)
