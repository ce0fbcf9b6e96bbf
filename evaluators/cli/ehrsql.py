"""`ehrsql`: EHRSQL 2024's reliability score, as a named version of its scorer computes it, strict beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.options import AbsolutePath, handle_errors
from evaluators.ehrsql.rules import PRESETS

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
@options.run_limits("a query (the scorer has none: a query past it fails here)")
@options.report_options()
@options.jobs_option("Run")
@handle_errors
def ehrsql(gold, pred, database, preset, timeout, memory_limit_mb, work_dir, jobs, **tail):
    """EHRSQL 2024: RS(0), RS(5), RS(10), RS(N) of a named scorer version, and strict's."""
    from evaluators.ehrsql.run import EhrsqlBenchmark, EhrsqlOptions

    config = options.exec_config(work_dir, tail["output"], timeout=timeout, memory_limit_mb=memory_limit_mb)
    settings = EhrsqlOptions(database, preset, config.timeout_s, config.output_dir, config.memory_limit_mb)
    benchmark = EhrsqlBenchmark(gold, pred, settings)
    options.run_benchmark_command(benchmark, jobs, tail, config.output_dir, {"database": database})
