"""`validate`: check a submission folder before grading it."""

from __future__ import annotations

import click

from evaluators.cli import options
from evaluators.cli.options import echo, handle_errors
from evaluators.errors import Failed

VALIDATE_EPILOG = """\b
Examples:
  python evaluate.py validate --result_dir example_submission_folder --gold_dir gold
  python evaluate.py validate --result-dir sub
  python evaluate.py validate --result-dir lite_csvs --gold-dir lite_gold --layout flat --max-file-mb 512

Exit codes: 0 ready to grade (warnings allowed), 1 problems listed, 2 usage error or unreadable gold.
"""


@click.command(epilog=VALIDATE_EPILOG)
@options.result_dir_option
@options.gold_dir_option(required=False)
@options.layout_option
@options.max_file_mb_option
@handle_errors
def validate(result_dir, gold_dir, layout, max_file_mb):
    """Check a submission's format and files; list every problem with file:line and a fix."""
    from evaluators.loading.validate import validate as run_validate

    result = run_validate(result_dir, gold_dir, layout=layout, max_file_bytes=max_file_mb * 1024 * 1024)
    echo(result.to_text(), nl=False)
    if not result.ok:
        raise Failed("validate: the submission has the problems listed above")
