"""`grade`: the default command."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.databases import check_databases
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import GRADE_EPILOG, check_writable_outside, handle_errors
from evaluators.matching.semantics import PRESETS, semantics_help


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
@options.report_options(
    "Write the JSON report here, with a CSV and the figure (SVG; PNG with --plot-format png) of the same name beside it"
)
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
@options.max_file_mb_option
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
    fail_under,
    allow_gold_errors,
    progress,
    plot,
    plot_format,
    jobs,
    max_file_mb,
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
    check_fingerprint(fingerprint, config.db_dir, config)
    setup_problems = check_databases(loaded, executor, "--db-dir" if execution["db_dir"] else "GOLD/databases")
    check_writable_outside(
        {"--output": output, "--work-dir": executor.config.output_dir}, {"submission": result_dir, "gold": gold_dir}
    )
    report = run_grade(
        result_dir,
        gold_dir,
        semantics=semantics,
        jobs=jobs,
        progress=options.progress_bar(progress),
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
    options.finish(
        report,
        output=output,
        with_html=with_html,
        output_format=output_format,
        fail_under=fail_under,
        allow_gold_errors=allow_gold_errors,
        plot=plot_format if plot else None,
        warnings=setup_problems,
    )


def build_executor(gold_dir: Path, output: Path | None, *, db_dir, **execution):
    """The executor of `grade`: `options.exec_config`, with GOLD/databases as the database folder by default."""
    from evaluators.execution.executor import Executor

    if db_dir is None and (Path(gold_dir) / "databases").is_dir():
        db_dir = Path(gold_dir) / "databases"
    return Executor(options.exec_config(db_dir=db_dir, output=output, **execution))
