"""`test-suite`: Spider 1 predictions graded as test-suite-sql-eval grades them, strict beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, handle_errors

EPILOG = """\b
Examples:
  python evaluate.py test-suite --gold dev_gold.sql --pred pred.txt --db database
  python evaluate.py test-suite --gold gold.txt --pred pred.txt --db test_suite_database --output out/ts.json
"""


@click.command("test-suite", epilog=EPILOG)
@click.option(
    "--gold",
    "gold_file",
    required=True,
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Gold file: one SQL<TAB>db_id a line.",
)
@click.option(
    "--pred",
    "pred_file",
    required=True,
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Predictions: one SQL a line, in the gold's order.",
)
@click.option(
    "--db",
    "--db-dir",
    "db_dir",
    required=True,
    type=AbsolutePath(exists=True, file_okay=False, path_type=Path),
    help="Folder of <db_id>/<db_id>.sqlite and the suite's variants <db_id>/*.sqlite.",
)
@click.option(
    "--keep-distinct",
    "--keep_distinct",
    "keep_distinct",
    is_flag=True,
    help="Keep DISTINCT (the scorer removes it by default).",
)
@click.option(
    "--plug-value",
    "--plug_value",
    "plug_value",
    is_flag=True,
    help="The scorer's --plug_value: also try the gold's values plugged into the prediction's value slots.",
)
@click.option(
    "--plug-value-cap",
    type=click.IntRange(0),
    default=1000,
    show_default=True,
    help="At most this many plugged variants per question (the scorer's own search is unbounded); "
    "a question that hits the cap says so.",
)
@click.option(
    "--etype",
    type=click.Choice(["exec", "match", "all"]),
    default="exec",
    show_default=True,
    help="As the scorer's --etype: exec (test-suite execution), match (exact set match, components), or all.",
)
@click.option(
    "--scorer",
    type=click.Choice(["test-suite", "spider"]),
    default="test-suite",
    show_default=True,
    help="Whose evaluation.py: test-suite (taoyds/test-suite-sql-eval) or spider (taoyds/spider's classic "
    "exact-match script: no sessions, no value->1, its own execution check on <db_id>.sqlite; needs --table).",
)
@click.option(
    "--table",
    "table",
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Spider's tables.json (the scorer's foreign keys); needed by --etype match and all.",
)
@click.option(
    "--progress-bar-for-each-datapoint",
    "--progress_bar_for_each_datapoint",
    "each_datapoint",
    is_flag=True,
    help="As the scorer's option: for each question, a line on stderr per database of its suite it reaches.",
)
@options.run_limits()
@options.report_options()
@options.jobs_option("Run")
@fingerprint_option
@handle_errors
def test_suite(
    gold_file,
    pred_file,
    db_dir,
    keep_distinct,
    plug_value,
    plug_value_cap,
    etype,
    scorer,
    table,
    each_datapoint,
    timeout,
    memory_limit_mb,
    work_dir,
    jobs,
    fingerprint,
    **tail,
):
    """Test-suite execution accuracy (Spider 1), official verdict and strict."""
    from evaluators.testsuite.run import TestSuiteBenchmark

    config = options.exec_config(  # test-suite-sql-eval reads text with errors="ignore"
        work_dir, tail["output"], timeout=timeout, memory_limit_mb=memory_limit_mb, sqlite={"decode_errors": "ignore"}
    )
    check_fingerprint(fingerprint, db_dir, config)
    plug = plug_value_cap if plug_value else None
    say = (lambda line: click.echo(line, err=True)) if each_datapoint else None
    benchmark = TestSuiteBenchmark(gold_file, pred_file, db_dir, config, keep_distinct, plug, etype, table, say, scorer)
    options.run_benchmark_command(benchmark, jobs, tail, config.output_dir, {"database": db_dir})
