"""The one path rule: a relative path is relative to the caller's working directory, made absolute once, at
the edge (the CLI's options, the Python API, the reward functions), before anything reaches a worker, a
pool process, a Ray actor or a remote node, whose working directory may be another."""

from __future__ import annotations

import os
from pathlib import Path


def absolute(path: str | os.PathLike) -> Path:
    """`path` against this process's working directory, `~` expanded, `..` folded; symbolic links are kept
    (a link named by the user is read as the user named it)."""
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path))))


def absolute_or_none(path: str | os.PathLike | None) -> Path | None:
    return None if path is None else absolute(path)
