"""A database folder given on the command line that holds none of the databases the gold needs is a setup
mistake, not a score: every question would fail with `no_database` and the run would read as "the model scored
0 %".  `check_database_folder` says so before any answer runs (exit 2, the option, the resolved path and what
was expected there); when only some databases are missing, the run goes on and says how many, at the top of
the output and in the report's problems.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from evaluators.errors import Location, UsageError
from evaluators.specs import Problem

PREFIX = "setup: "  # what the command lines look for to repeat these problems as warnings at the top
SHOWN = 5  # missing database names listed in a message


def check_database_folder(
    option: str, root: Path, needed: Iterable[str], found: Callable[[str], bool], layout: str
) -> Problem | None:
    """None when every database the gold `needed` is `found` under `root`; a problem naming the missing ones
    when some are; `UsageError` (exit 2) when none is.  `layout` shows the expected place of one database,
    with `{db}` for its name (`<db>/<db>.sqlite`)."""
    wanted = sorted({db for db in needed if db})
    missing = [db for db in wanted if not found(db)]
    if not missing:
        return None
    example = layout.format(db=wanted[0])
    if len(missing) == len(wanted):
        raise UsageError(
            f"{option} {root} holds none of the {len(wanted)} database(s) the gold needs "
            f"({_names(wanted)}): expected {example} there",
            hint=_hint(root, wanted),
        )
    return Problem(
        Location(str(root)),
        f"{PREFIX}{option}: {len(missing)} of the {len(wanted)} database(s) the gold needs are not in this folder "
        f"({_names(missing)}; expected e.g. {layout.format(db=missing[0])}): their questions score 0 (no_database)",
    )


SERVER_FAILURES = ("credentials_missing", "no_database")  # no answer could run: the server, not the model
SERVER_OPTIONS = {"postgres": "--postgres-dsn", "mysql": "--mysql-dsn"}


def server_hint(backend: str, reason: str) -> str:
    """What to do when no answer can run on a server: prepare the role, or check the connection settings."""
    if reason == "credentials_missing":
        return (
            "prepare the role once with `evaluate.py db prepare --engine postgres` and grade as it (docs/backends.md)"
        )
    variables = "PG*" if backend == "postgres" else "MYSQL_*"
    return f"check {SERVER_OPTIONS.get(backend, 'the DSN')} and the {variables} variables"


def warnings(problems: Sequence) -> list[str]:
    """The setup problems among a report's problems, for the command line to repeat at the top."""
    return [str(p) for p in problems if PREFIX in str(p)]


def _names(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _hint(root: Path, wanted: list[str]) -> str:
    """The usual slips: the folder of one database (one level too deep), or a folder above the right one."""
    if not root.is_dir():
        return "the folder does not exist"
    if root.name in wanted:
        return f"{root} looks like one database's own folder: pass its parent, {root.parent}"
    deeper = sorted(d for d in root.iterdir() if d.is_dir() and any((d / db).is_dir() for db in wanted[:SHOWN]))
    if deeper:
        return f"the databases seem to be one level deeper: try {deeper[0]}"
    return "pass the folder that holds the databases the gold names"
