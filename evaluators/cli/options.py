"""Options shared by the subcommands, and the one place errors become exit codes."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from ..errors import EvalError


def result_dir_option(fn):
    return click.option("--result-dir", "--result_dir", "result_dir", required=True,
                        type=click.Path(exists=True, file_okay=False, path_type=Path),
                        help="Submission folder holding results_metadata.jsonl.")(fn)


def gold_dir_option(required=True):
    def wrap(fn):
        return click.option("--gold-dir", "--gold_dir", "gold_dir", required=required,
                            type=click.Path(exists=True, file_okay=False, path_type=Path),
                            help="Gold folder holding spider2_eval.jsonl.")(fn)
    return wrap


def handle_errors(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except EvalError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
    return run
