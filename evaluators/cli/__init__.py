"""The command line: the only package that imports click.

`python evaluate.py --result_dir SUB --gold_dir GOLD` grades (Spider2's own
spelling works, and so does `--result-dir`); `validate` and `gold ...` are
subcommands.  Every `EvalError` is caught in `options.handle_errors` and
becomes a one-line message and its exit code.
"""

from __future__ import annotations

import click

from evaluators.cli.options import GRADE_EPILOG, stop_interrupted

# Each command by "module:attr", imported when it runs (or when --help lists them): a run imports its own
# command only, not the eleven others and what they import (a tenth of a second of every start).
COMMANDS = {
    "grade": "evaluators.cli.grade:grade",
    "validate": "evaluators.cli.validate:validate",
    "gold": "evaluators.cli.gold:gold",
    "test-suite": "evaluators.cli.testsuite:test_suite",
    "db": "evaluators.cli.db:db",
    "bird": "evaluators.cli.bird:bird",
    "livesql": "evaluators.cli.livesql:livesql",
    "compare": "evaluators.cli.compare:compare",
    "ehrsql": "evaluators.cli.ehrsql:ehrsql",
    "platinum": "evaluators.cli.platinum:platinum",
    "doctor": "evaluators.cli.doctor:doctor",
    "interact": "evaluators.cli.interact:interact",
}


class DefaultToGrade(click.Group):
    """Spider2's `evaluate.py --result_dir ...` has no subcommand: treat it as `grade`.  The commands are
    imported lazily (COMMANDS)."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in COMMANDS:
            return None
        import importlib

        module, _, attr = COMMANDS[cmd_name].partition(":")
        return getattr(importlib.import_module(module), attr)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, COMMANDS, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} Commands: {', '.join(sorted(COMMANDS))}.")
        return super().resolve_command(ctx, args)

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
