"""`platinum`: BIRD-Platinum's `bird` and `strict` verdicts, grade.py's arguments unchanged, ours beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.ehrsql import _work_dir, run_and_tell
from evaluators.cli.options import AbsolutePath, echo, handle_errors
from evaluators.platinum.rules import COMMIT, GRADINGS, REPOSITORY

EPILOG = f"""\b
Examples (grade.py's own arguments):
  python evaluate.py platinum --db_base_path dev_databases --infer_results results/model.json \\
      --data_path bird_platinum.json
  python evaluate.py platinum ... --grading official-tie-aware --output out/platinum.json
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
@options.timeout_option("Seconds per query (grade.py has no timeout: a query past it fails here).")
@options.jobs_option("Run queries", default="1", auto=False)
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when the strict accuracy is below this.")
@options.output_option("Write the JSON report here, with a CSV beside it.")
@options.work_dir_option("Where scratch files go (default: beside --output, else .grade-work).")
@options.memory_limit_option("Memory one query may use (docs/security.md).")
@handle_errors
def platinum(db_root, infer_results, data_path, grading, timeout, jobs, fail_under, output, work_dir, memory_limit_mb):
    """BIRD-Platinum: Bird and Strict accuracy as grade.py gives them, and the project's strict."""
    from evaluators.platinum.run import PlatinumBenchmark, PlatinumOptions

    work_dir = _work_dir(output, work_dir)
    options.check_writable_outside({"--output": output, "--work-dir": work_dir}, {"database": db_root})
    settings = PlatinumOptions(db_root, grading, timeout, work_dir, memory_limit_mb)
    report = run_and_tell(PlatinumBenchmark(data_path, infer_results, settings), int(jobs), output, fail_under)
    echo(f"Strict (ours, typed cells): {report.summary.strict_score:.4f}")
