"""The command line: the only package that imports click.

`python evaluate.py --result_dir SUB --gold_dir GOLD` grades (Spider2's own
spelling works, and so does `--result-dir`); `validate` and `gold ...` are
subcommands.  Every `EvalError` is caught in `options.handle_errors` and
becomes a one-line message and its exit code.
"""

from __future__ import annotations

import click

from evaluators.cli.bird import bird
from evaluators.cli.compare import compare
from evaluators.cli.db import db
from evaluators.cli.doctor import doctor
from evaluators.cli.ehrsql import ehrsql
from evaluators.cli.gold import gold
from evaluators.cli.grade import GRADE_EPILOG, grade
from evaluators.cli.interact import interact
from evaluators.cli.livesql import livesql
from evaluators.cli.options import stop_interrupted
from evaluators.cli.platinum import platinum
from evaluators.cli.testsuite import test_suite
from evaluators.cli.validate import validate


class DefaultToGrade(click.Group):
    """Spider2's `evaluate.py --result_dir ...` has no subcommand: treat it as `grade`."""

    def make_context(self, *args, **kwargs):
        try:  # a signal while the flags are read: click would say "Aborted!" and exit 1
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            stop_interrupted()

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            stop_interrupted()

    def parse_args(self, ctx, args):
        if args and args[0].startswith("-") and args[0] not in ("--help", "-h", "--version"):
            args = ["grade", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultToGrade, epilog=GRADE_EPILOG)
@click.version_option(package_name="spider-grade")
def main():
    """Grade Spider 2.0-style submissions offline: official and strict semantics side by side."""


main.add_command(grade)
main.add_command(validate)
main.add_command(gold)
main.add_command(test_suite)
main.add_command(db)
main.add_command(bird)
main.add_command(livesql)
main.add_command(compare)
main.add_command(ehrsql)
main.add_command(platinum)
main.add_command(doctor)
main.add_command(interact)
