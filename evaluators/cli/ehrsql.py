"""`ehrsql`: EHRSQL 2024's reliability score, as a named version of its scorer computes it, strict beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.options import AbsolutePath, echo, handle_errors, write_reports
from evaluators.ehrsql.rules import PRESETS
from evaluators.errors import Failed

EPILOG = """\b
Examples (the scorer's own files: ref/label.json, res/prediction.json, mimic_iv.sqlite):
  python evaluate.py ehrsql --gold input/ref --pred input/res --db mimic_iv.sqlite
  python evaluate.py ehrsql --gold label.json --pred prediction.json --db mimic_iv.sqlite \\
      --preset official-round1 --output out/ehrsql.json
\b
Presets (glee4810/ehrsql-2024, scoring_program/):
""" + "\n".join(f"  {p.name}: {p.provenance}, cells rounded to {p.digits} decimal(s)" for p in PRESETS.values())


def _file(name: str, what: str):
    return click.option(name, required=True, type=AbsolutePath(exists=True, path_type=Path), help=what)


@click.command("ehrsql", epilog=EPILOG)
@_file("--gold", 'label.json ({id: SQL or "null"}), or the scorer\'s ref/ folder holding it.')
@_file("--pred", 'prediction.json ({id: SQL or "null"}), or the scorer\'s res/ folder holding it.')
@click.option(
    "--db",
    "database",
    required=True,
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="The SQLite database (the scorer's mimic_iv.sqlite).",
)
@click.option(
    "--preset",
    type=click.Choice(list(PRESETS)),
    default="official",
    show_default=True,
    help="The scorer version the official verdict follows (see below); strict is always beside it.",
)
@options.timeout_option("Seconds per query (the scorer has no timeout: a query past it fails here).")
@options.jobs_option("Run queries", default="1", auto=False)
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when the share of +1 items is below this.")
@options.output_option("Write the JSON report here, with a CSV beside it.")
@options.work_dir_option("Where scratch files go (default: beside --output, else .grade-work).")
@options.memory_limit_option("Memory one query may use (docs/security.md).")
@handle_errors
def ehrsql(gold, pred, database, preset, timeout, jobs, fail_under, output, work_dir, memory_limit_mb):
    """EHRSQL 2024: RS(0), RS(5), RS(10), RS(N) of a named scorer version, and strict's."""
    from evaluators.ehrsql.run import EhrsqlBenchmark, EhrsqlOptions

    work_dir = _work_dir(output, work_dir)
    options.check_writable_outside({"--output": output, "--work-dir": work_dir}, {"database": database})
    settings = EhrsqlOptions(database, preset, timeout, work_dir, memory_limit_mb)
    report = run_and_tell(EhrsqlBenchmark(gold, pred, settings), int(jobs), output, fail_under)
    strict = report.summary.execution_metrics["reliability_strict"]
    echo("strict (typed rows, every row; ours): " + str(strict))


def _work_dir(output: Path | None, work_dir: Path | None) -> Path:
    if work_dir is not None:
        return work_dir
    return output.parent / f"{output.stem}_exec" if output else Path(".grade-work")


def run_and_tell(benchmark, jobs: int, output: Path | None, fail_under: float | None):
    """Run a benchmark of grading/benchmark.py; print the report, the scorer's own lines and warnings; write
    the files; exit 1 below --fail-under."""
    from evaluators.grading.benchmark import run_benchmark

    report = run_benchmark(benchmark, jobs)
    options.warn_about_pairing(report)
    echo(report.to_text(), nl=False)
    echo("\nAs the official scorer prints it:\n" + benchmark.official_lines(report), nl=False)
    for warning in benchmark.warnings(report):
        echo("warning: " + warning, err=True)
    if output:
        echo("wrote " + ", ".join(map(str, write_reports(report, output))), err=True)
    if fail_under is not None and report.summary.score < fail_under:
        raise Failed(f"score {report.summary.score:.4f} is below --fail-under {fail_under}")
    return report
