"""`compare`: two reports of the same gold, with flips, Δ, its interval and McNemar's p-value."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli.options import AbsolutePath, echo, handle_errors

EPILOG = """\b
Examples:
  python evaluate.py compare baseline.json candidate.json
  python evaluate.py compare baseline.json candidate.json --output cmp.json --html cmp.html
"""


@click.command("compare", epilog=EPILOG)
@click.argument("baseline", type=AbsolutePath(exists=True, dir_okay=False, path_type=Path))
@click.argument("candidate", type=AbsolutePath(exists=True, dir_okay=False, path_type=Path))
@click.option("--output", type=AbsolutePath(dir_okay=False, path_type=Path), help="Write the comparison as JSON.")
@click.option(
    "--html",
    "html_path",
    type=AbsolutePath(dir_okay=False, path_type=Path),
    help="Write a self-contained HTML page of the comparison.",
)
@handle_errors
def compare(baseline, candidate, output, html_path):
    """Is CANDIDATE better than BASELINE? Both are JSON reports of `evaluate.py grade --output`."""
    from evaluators.reporting.compare import compare_reports
    from evaluators.reporting.report import write_atomic

    comparison = compare_reports(baseline, candidate)
    echo(comparison.to_text(), nl=False)
    if output:
        write_atomic(output, comparison.to_json())
    if html_path:
        write_atomic(html_path, comparison.to_html())
