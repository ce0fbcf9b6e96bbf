"""`grade`: the default command."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.databases import check_databases
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import check_writable_outside, echo, echo_json, handle_errors, write_reports
from evaluators.errors import Failed, MissingExtra
from evaluators.matching.semantics import PRESETS, semantics_help

GRADE_EPILOG = """\b
Examples:
  python evaluate.py --result_dir example_submission_folder --gold_dir gold
  python evaluate.py --result-dir sub --gold-dir gold --semantics strict --output out/report.json
  python evaluate.py grade --result-dir sub --gold-dir gold --jobs 2 --fail-under 0.5
  python evaluate.py grade --result-dir lite_csvs --gold-dir lite_gold --layout flat
  python evaluate.py grade --result-dir sub --gold-dir gold --db-dir dbs --ves-iterations 100
  python evaluate.py grade --result-dir sub --gold-dir gold --ray auto
"""


@click.command(epilog=GRADE_EPILOG)
@options.result_dir_option
@options.gold_dir_option()
@click.option(
    "--semantics",
    type=click.Choice(list(PRESETS)),
    default="spider2",
    show_default=True,
    help="Which semantics is the reported `score`; strict_score is always reported too. " + semantics_help() + ".",
)
@options.output_option(
    "Write the JSON report here, with a CSV and the figure (SVG; PNG with --plot-format png) of the same "
    "name beside it (a name ending in .html writes the HTML report instead)."
)
@options.html_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="json: the report on stdout and nothing else there (messages and progress on stderr).",
)
@options.allow_gold_errors_option
@click.option(
    "--plot/--no-plot",
    default=True,
    show_default=True,
    help="With --output: also draw the figure beside the report (see --plot-format).",
)
@click.option(
    "--plot-format",
    type=click.Choice(["svg", "png"]),
    default="svg",
    show_default=True,
    help="svg: drawn in milliseconds, no library; png: matplotlib (pip install '.[plots]'), about a second more.",
)
@options.jobs_option("Grade")
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when the score is below this.")
@options.max_file_mb_option
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: only on a terminal).")
@click.option(
    "--attempt-score",
    type=click.Choice(["last", "best"]),
    default="last",
    show_default=True,
    help="For lines with `attempts`: score the last attempt, or the best one.",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS",
    help="Grade on Ray actors: a cluster address (auto, ray://host:10001) or 'local' (needs '.[ray]').",
)
@options.layout_option
@options.execution_options
@fingerprint_option
@handle_errors
def grade(
    result_dir,
    gold_dir,
    semantics,
    output,
    with_html,
    output_format,
    allow_gold_errors,
    plot,
    plot_format,
    jobs,
    fail_under,
    max_file_mb,
    progress,
    attempt_score,
    layout,
    ves_iterations,
    ray_address,
    fingerprint,
    **execution,
):
    """Grade a submission folder against a gold folder."""
    from evaluators.grading.warm import warm_from_folders

    loaded = warm_from_folders(  # before the heavy imports below
        result_dir, gold_dir, layout, jobs, ray_address, max_file_mb * 1024 * 1024
    )
    from evaluators.grading.instance import Options
    from evaluators.grading.run import grade as run_grade

    executor = build_executor(gold_dir, output, **execution)
    config = executor.config
    check_fingerprint(fingerprint, config.db_dir, config.output_dir, config.postgres_dsn, config.mysql_dsn)
    setup_problems = check_databases(loaded, executor, "--db-dir" if execution["db_dir"] else "GOLD/databases")
    check_writable_outside(
        {"--output": output, "--work-dir": executor.config.output_dir}, {"submission": result_dir, "gold": gold_dir}
    )
    report = run_grade(
        result_dir,
        gold_dir,
        semantics=semantics,
        jobs=jobs,
        progress=progress_bar(progress),
        options=Options(
            max_file_bytes=max_file_mb * 1024 * 1024,
            layout=layout,
            attempt_score=attempt_score,
            executor=executor,
            ves_iterations=ves_iterations,
        ),
        ray_address=ray_address,
        loaded=loaded,
    )
    if setup_problems:
        report = replace(report, summary=replace(report.summary, problems=(*setup_problems, *report.summary.problems)))
        for problem in setup_problems:
            echo(f"warning: {problem}", err=True)
    if output_format == "json":
        echo_json(report.to_json())
    else:
        echo(report.to_text(), nl=False)
    if output:
        _write_outputs(report, output, plot_format if plot else None, with_html)
    options.raise_on_gold_errors(report, allow_gold_errors)
    broken = [i.instance_id for i in report.instances if i.reason == "internal_error"]
    if broken:  # the figure is not the submission's: some instances were never really graded
        raise Failed(
            f"{len(broken)} instance(s) could not be graded (internal_error, see the report): "
            f"{', '.join(broken[:5])}{' ...' if len(broken) > 5 else ''}"
        )
    if fail_under is not None and report.summary.score < fail_under:
        raise Failed(f"score {report.summary.score:.4f} is below --fail-under {fail_under}")


def build_executor(
    gold_dir: Path,
    output: Path | None,
    *,
    db_dir,
    backend,
    db_override,
    timeout,
    memory_limit_mb,
    max_gb_billed,
    max_result_rows=1_000_000,
    refresh_gold,
    work_dir,
    credentials_dir,
    bigquery_endpoint,
    bigquery_project,
    snowflake_host,
    snowflake_port,
    snowflake_protocol,
    postgres_dsn=None,
    mysql_dsn=None,
):
    from evaluators.execution.executor import ExecConfig, Executor

    if work_dir is None:
        work_dir = output.parent / f"{output.stem}_exec" if output else Path(".grade-work")
    if db_dir is None and (Path(gold_dir) / "databases").is_dir():
        db_dir = Path(gold_dir) / "databases"
    return Executor(
        ExecConfig(
            output_dir=work_dir,
            db_dir=db_dir,
            credentials_dir=credentials_dir,
            backend_override=backend,
            db_override=db_override,
            timeout_s=timeout,
            memory_limit_mb=memory_limit_mb,
            max_result_rows=max_result_rows,
            max_bytes_billed=int(max_gb_billed * 1024**3),
            refresh_gold=refresh_gold,
            bigquery_endpoint=bigquery_endpoint,
            bigquery_project=bigquery_project,
            snowflake_host=snowflake_host,
            snowflake_port=snowflake_port,
            snowflake_protocol=snowflake_protocol,
            postgres_dsn=postgres_dsn,
            mysql_dsn=mysql_dsn,
        )
    )


def progress_bar(wanted: bool | None):
    """A factory for grading's progress: click's bar (ETA, percent, rate) on a terminal's stderr, nothing when
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


def _write_outputs(report, output: Path, plot: str | None, with_html: bool = False) -> None:
    from evaluators.reporting.report import write_atomic

    if output.suffix.lower() in (".html", ".htm"):
        write_atomic(output, report.to_html())
        echo(f"wrote {output}", err=True)
        return
    written = write_reports(report, output, with_html)
    if plot:
        from evaluators.reporting.plots import plot_report

        try:
            written.append(plot_report(report, output.with_suffix(f".{plot}")))
        except MissingExtra as exc:
            echo(f"note: no {plot.upper()} plot: {exc}", err=True)
    echo("wrote " + ", ".join(str(p) for p in written), err=True)
