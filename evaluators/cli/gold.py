"""`gold add`, `gold lint`, `gold import-spider2-lite`, `gold import-text2cypher`: building and checking gold folders."""

from __future__ import annotations

import json
from pathlib import Path

import click

from evaluators.cli import options
from evaluators.cli.options import AbsolutePath, echo, handle_errors
from evaluators.errors import Failed, UsageError
from evaluators.matching import registry

GOLD_EPILOG = """\b
Examples:
  python evaluate.py gold add --gold-dir gold --instance-id q1 --func table_match --file result.csv --ignore-order
  python evaluate.py gold lint --gold_dir gold
  python evaluate.py gold import-spider2-lite --from Spider2/spider2-lite/evaluation_suite/gold --to lite_gold
"""

ADD_EPILOG = """\b
Examples:
  python evaluate.py gold add --gold-dir gold --instance-id q1 --func table_match --file result.csv \\
      --condition-cols 0,2 --ignore-order --metadata difficulty=easy
  python evaluate.py gold add --gold-dir gold --instance-id q2 --func table_match --file q2_a.csv --file q2_b.csv
  python evaluate.py gold add --gold-dir gold --instance-id q3 --func string_match --answer "Mountain View" \\
      --exclude Sunnyvale
  python evaluate.py gold add --gold-dir gold --instance-id q4 --func number_match --answer 17.51% \\
      --percentage --precision 2
  python evaluate.py gold add --gold-dir gold --instance-id q5 --func duckdb_match --file gold.duckdb \\
      --condition-tabs customers,audit --condition-cols 0,1 --condition-cols 0
  python evaluate.py gold add --gold-dir gold --instance-id q6 --func table_match --file result.csv \\
      --temporal --sql gold.sql --replace

\b
--condition-cols takes comma-separated column positions; repeat it for one list per gold file (or per
table for duckdb_match).  Given once with several --file, the list applies to every file.
"""


@click.group(epilog=GOLD_EPILOG)
def gold():
    """Add gold instances, lint a gold folder, import Spider2-lite gold."""


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"--condition-cols {text!r}: expected comma-separated column positions such as 0,2") from None


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")


def _metadata(pairs) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--metadata {pair!r}: expected key=value")
        try:  # numbers, true/false and JSON stay typed; NaN and Infinity stay text, as JSON has neither
            out[key.strip()] = json.loads(value, parse_constant=_not_json)
        except ValueError:
            out[key.strip()] = value
    return out


@gold.command(epilog=ADD_EPILOG)
@options.gold_dir_option(exists=False)
@click.option("--instance-id", "--instance_id", "instance_id", required=True, help="The new instance's id.")
@click.option("--func", required=True, type=click.Choice(registry.names(authorable=True)))
@click.option(
    "--file",
    "files",
    multiple=True,
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="A gold table (repeat for variants, or for tables_match's files).",
)
@click.option("--answer", "answers", multiple=True, help="A gold text or number (repeat for several).")
@click.option(
    "--condition-cols",
    "--condition_cols",
    "condition_cols",
    multiple=True,
    help="Column positions that must match, e.g. 0,2 (repeat: one list per file or table).",
)
@click.option("--ignore-order", "--ignore_order", "ignore_order", is_flag=True, help="Row order does not matter.")
@click.option(
    "--condition-tabs",
    "--condition_tabs",
    "condition_tabs",
    multiple=True,
    help="duckdb_match: the tables to compare, comma-separated.",
)
@click.option("--percentage", is_flag=True, default=None, help="number_match: 0.5 and 50 are equal.")
@click.option("--precision", type=int, help="number_match: decimals that must agree (default 4).")
@click.option("--exclude", multiple=True, help="string_match: a text the answer may not contain (repeat).")
@click.option("--conj", type=click.Choice(["or", "and"]), help="Any one gold text (or) or all of them (and).")
@click.option("--temporal", is_flag=True, help="The gold is the result of running --sql (needs a SQL backend).")
@click.option(
    "--sql", type=AbsolutePath(exists=True, dir_okay=False, path_type=Path), help="Gold SQL, copied as gold.sql."
)
@click.option("--metadata", multiple=True, help="key=value kept on the gold line (repeat).")
@click.option("--replace", is_flag=True, help="Overwrite an instance that already exists.")
@options.max_file_mb_option
@handle_errors
def add(
    gold_dir,
    instance_id,
    func,
    files,
    answers,
    condition_cols,
    ignore_order,
    condition_tabs,
    percentage,
    precision,
    exclude,
    conj,
    temporal,
    sql,
    metadata,
    replace,
    max_file_mb,
):
    """Add one gold instance: copy its files, check it, write its spec line atomically."""
    from evaluators.goldtools.add import NewGold, add_gold

    tabs = tuple(t.strip() for group in condition_tabs for t in group.split(",") if t.strip())
    new = NewGold(
        instance_id,
        func,
        tuple(files),
        tuple(answers),
        tuple(_int_list(c) for c in condition_cols),
        ignore_order,
        tabs,
        percentage,
        precision,
        tuple(exclude),
        conj,
        temporal,
        sql,
        _metadata(metadata),
    )
    path = add_gold(gold_dir, new, replace=replace, max_file_bytes=max_file_mb * 1024 * 1024)
    echo(f"{'replaced' if replace else 'added'} {instance_id} in {path}")


@gold.command(
    epilog="""\b
Examples:
  python evaluate.py gold lint --gold-dir gold
  python evaluate.py gold lint --gold_dir lite_gold --jobs 2 --no-self-check
"""
)
@options.gold_dir_option()
@click.option(
    "--self-check/--no-self-check",
    default=True,
    show_default=True,
    help="Grade each gold as the answer to itself under every semantics.",
)
@options.jobs_option("Lint", default=1, auto=False)
@options.max_file_mb_option
@handle_errors
def lint(gold_dir, self_check, jobs, max_file_mb):
    """Check a gold folder: schema, parameters, files, condition_cols, gold.sql, self-check. Exit 1 on problems."""
    from evaluators.goldtools.lint import lint_gold

    result = lint_gold(gold_dir, max_file_mb * 1024 * 1024, run_self_check=self_check, jobs=jobs)
    echo(result.to_text(), nl=False)
    if not result.ok:
        raise Failed("gold lint: the gold has the problems listed above")


@gold.command(
    "import-spider2-lite",
    epilog="""\b
Examples:
  python evaluate.py gold import-spider2-lite --from Spider2/spider2-lite/evaluation_suite/gold --to lite_gold
  python evaluate.py gold import-spider2-lite --from snow_gold --to gold --eval-file spider2snow_eval.jsonl \\
      --tasks spider2-snow.jsonl --replace
""",
)
@click.option(
    "--from",
    "source",
    required=True,
    type=AbsolutePath(exists=True, file_okay=False, path_type=Path),
    help="Spider2-lite/snow gold folder: exec_result/, spider2lite_eval.jsonl, sql/.",
)
@click.option(
    "--to",
    "target",
    required=True,
    type=AbsolutePath(file_okay=False, path_type=Path),
    help="Gold folder to write (created if missing).",
)
@click.option("--eval-file", help="The eval jsonl's name, when the folder holds both lite and snow.")
@click.option(
    "--tasks",
    type=AbsolutePath(dir_okay=False, path_type=Path),
    help="The task file (spider2-lite.jsonl / spider2-snow.jsonl) that gives each instance its engine and "
    "database; found by itself where the official repository keeps it.",
)
@click.option("--replace", is_flag=True, help="Overwrite instances already in --to.")
@handle_errors
def import_spider2_lite(source, target, eval_file, tasks, replace):
    """Convert Spider2-lite/snow gold into table_match specs. Exit 1 when something could not be imported cleanly."""
    from evaluators.goldtools.lite_import import import_spider2_lite as run_import

    result = run_import(source, target, replace=replace, eval_file=eval_file, tasks=tasks)
    echo(result.to_text(), nl=False)
    if result.problems:
        raise Failed("import: some gold could not be imported cleanly (listed above)")


@gold.command(
    "import-text2cypher",
    epilog="""\b
Examples:
  python evaluate.py gold import-text2cypher --from text2cypher_test.jsonl --to cypher_gold --db-dir graphs
  python evaluate.py gold import-text2cypher --from test.parquet --to gold_t2c --db-dir graphs --prefix q_
""",
)
@click.option(
    "--from",
    "source",
    required=True,
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Rows with question, cypher, schema and database_reference_alias / data_source (JSON, JSONL, Parquet).",
)
@click.option(
    "--to", "target", required=True, type=AbsolutePath(file_okay=False, path_type=Path), help="New gold folder."
)
@click.option(
    "--db-dir",
    type=AbsolutePath(file_okay=False, path_type=Path),
    help="The folder of <graph>.cypher scripts: graphs missing from it are listed.",
)
@click.option("--prefix", default="t2c_", show_default=True, help="Instance ids are <prefix><row number>.")
@handle_errors
def import_text2cypher(source, target, db_dir, prefix):
    """Turn a Text2Cypher data set into execution_match gold on embedded graphs. Exit 1 when rows were listed."""
    from evaluators.goldtools.text2cypher import import_text2cypher as run_import

    result = run_import(source, target, db_dir, prefix)
    echo(result.to_text(), nl=False)
    if result.problems:
        raise Failed("import: some rows were left out or need a graph script (listed above)")
