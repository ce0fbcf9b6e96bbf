"""`platinum`: BIRD-Platinum's `bird` and `strict` verdicts, grade.py's arguments unchanged, ours beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.options import AbsolutePath, handle_errors
from evaluators.platinum.rules import COMMIT, GRADINGS, REPOSITORY

EPILOG = f"""\b
Examples (grade.py's own arguments):
  python evaluate.py platinum --db_base_path dev_databases --infer_results results/model.json \\
      --data_path bird_platinum.json
  python evaluate.py platinum --db_base_path dev_databases --infer_results results/model.json \\
      --data_path bird_platinum.json --grading official-tie-aware --output out/platinum.json
\b
Gradings ({REPOSITORY} evaluation/grade.py at {COMMIT}):
""" + "\n".join(f"  {name}: {what}" for name, what in GRADINGS.items())


def _path(*names, **kwargs):
    return click.option(*names, type=AbsolutePath(exists=True, path_type=Path), required=True, **kwargs)


@click.command("platinum", epilog=EPILOG)
@_path("--db_base_path", "--db-base-path", "db_root", help="Folder of <db_id>/<db_id>.sqlite.")
@_path(
    "--infer_results",
    "--infer-results",
    "infer_results",
    help="Predictions: a JSON object {question_id: SQL}, or a list whose first item is the SQL.",
)
@_path(
    "--data_path",
    "--data-path",
    "data_path",
    help="Questions: a JSON array with question_id, db_id, SQL and, for ties, grading_method.",
)
@click.option(
    "--grading",
    type=click.Choice(list(GRADINGS)),
    default="official",
    show_default=True,
    help="official: grade.py's command line (every question multiset); official-tie-aware: its grade().",
)
@options.run_limits("a query (grade.py has none: a query past it fails here)")
@options.report_options()
@options.jobs_option("Run")
@handle_errors
def platinum(db_root, infer_results, data_path, grading, timeout, memory_limit_mb, work_dir, jobs, **tail):
    """BIRD-Platinum: Bird and Strict accuracy as grade.py gives them, and the project's strict."""
    from evaluators.platinum.run import PlatinumBenchmark, PlatinumOptions

    config = options.exec_config(work_dir, tail["output"], timeout=timeout, memory_limit_mb=memory_limit_mb)
    settings = PlatinumOptions(db_root, grading, config.timeout_s, config.output_dir, config.memory_limit_mb)
    benchmark = PlatinumBenchmark(data_path, infer_results, settings)
    options.run_benchmark_command(benchmark, jobs, tail, config.output_dir, {"database": db_root})
