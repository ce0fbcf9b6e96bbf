"""`--fingerprint FILE` for the commands that grade on databases: checked before any answer runs (exit 2 on
a mismatch, naming the tables; evaluators/health/fingerprint.py, docs/doctor.md)."""

from __future__ import annotations

from pathlib import Path

import click

from evaluators.cli.options import AbsolutePath, echo

fingerprint_option = click.option(
    "--fingerprint",
    "fingerprint",
    type=AbsolutePath(exists=True, dir_okay=False, path_type=Path),
    help="Check the databases against this file (`evaluate.py doctor fingerprint`) first; exit 2 on a mismatch.",
)


def check_fingerprint(fingerprint: Path | None, db_dir: Path | None, config) -> None:
    """Before grading: the run's databases (local files under `db_dir`, server databases through the run's
    DSNs, from its `ExecConfig`) are the fingerprinted ones, or FingerprintMismatch (exit 2).  Reading a
    database has no query's timeout: an hour at most."""
    if fingerprint is None:
        return
    from dataclasses import replace

    from evaluators.health.fingerprint import verify

    checked = verify(fingerprint, db_dir, replace(config, timeout_s=3600.0))
    echo(f"fingerprint: {checked} database(s) match {fingerprint.name}", err=True)
