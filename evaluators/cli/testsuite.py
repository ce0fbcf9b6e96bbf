"""`test-suite`: Spider 1 predictions graded as test-suite-sql-eval grades them, strict beside."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.fingerprint_option import check_fingerprint, fingerprint_option
from evaluators.cli.options import AbsolutePath, echo, handle_errors, warn_about_pairing, write_reports

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
    "--table",
    "table",
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Spider's tables.json (the scorer's foreign keys); needed by --etype match and all.",
)
@options.timeout_option("Seconds per query (the scorer's own limit).")
@options.output_option("Write the JSON report here, with a CSV beside it.")
@options.work_dir_option("Where query results go (default: beside --output, else .grade-work).")
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
    table,
    timeout,
    output,
    work_dir,
    jobs,
    fingerprint,
):
    """Test-suite execution accuracy (Spider 1), official verdict and strict."""
    from evaluators.grading.jobs import resolve_jobs
    from evaluators.testsuite.run import grade_test_suite, official_accuracy, official_tables

    if work_dir is None:
        work_dir = output.parent / f"{output.stem}_exec" if output else Path(".grade-work")
    check_fingerprint(fingerprint, db_dir, work_dir)
    report = grade_test_suite(
        gold_file,
        pred_file,
        db_dir,
        work_dir,
        keep_distinct=keep_distinct,
        timeout_s=timeout,
        jobs=resolve_jobs(jobs, 10**6),
        plug_value=plug_value,
        plug_value_cap=plug_value_cap,
        etype=etype,
        table=table,
    )
    warn_about_pairing(report)
    echo(report.to_text(), nl=False)
    s = report.summary
    accuracy, compared = official_accuracy(report)
    echo(f"\nexecution (test-suite-sql-eval's figure, over the {compared} pairs it compares): {accuracy:.3f}")
    echo(f"score over all {s.gold_instances} gold lines: test-suite {s.score:.3f}, strict {s.strict_score:.3f}")
    echo("\ntest-suite-sql-eval's tables (evaluation.py --etype " + etype + "):\n" + official_tables(report, etype))
    unjudged = [i.instance_id for i in report.instances if (i.metadata or {}).get("exact_match_error")]
    if unjudged:
        echo(
            f"warning: {len(unjudged)} question(s) left out of the tables ({', '.join(unjudged[:10])}): the "
            "scorer's parser cannot read their gold (the scorer stops there); see exact_match_error",
            err=True,
        )
    capped = [i for i in report.instances if (i.execution or {}).get("plug_value", {}).get("cap_hit")]
    if capped:
        echo(
            f"warning: --plug-value-cap {plug_value_cap} hit on {len(capped)} question(s) "
            f"({', '.join(i.instance_id for i in capped[:10])}); the official search would try more variants",
            err=True,
        )
    if output:
        echo("wrote " + ", ".join(map(str, write_reports(report, output))), err=True)
