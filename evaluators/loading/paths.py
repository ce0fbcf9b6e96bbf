"""Answer paths: relative to `<result_dir>/<instance_id>/`, and never outside it.

In the flat layout (Spider2-lite's `<id>.csv` / `<id>.sql` files side by side)
the folder is `<result_dir>` itself and the path is just the file name.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from evaluators.errors import InstanceError


def unsafe_instance_id(instance_id: str) -> str | None:
    """Why an instance id cannot name a folder, or None: ids become folder and file names."""
    if instance_id in (".", "..") or any(sep in instance_id for sep in ("/", "\\", "\0")):
        return f"instance_id {instance_id!r} cannot name a folder (no '/' or '\\', not '.' or '..')"
    return None


def _shown(value) -> str:
    """A repr short enough for a report line, whatever the submission put there."""
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(text):,} characters)"


def answer_path(result_dir: Path, instance_id: str, relative, flat: bool = False) -> Path:
    if not isinstance(relative, str) or not relative.strip():
        raise InstanceError("invalid_answer", f"expected a relative file path, got {_shown(relative)}")
    problem = unsafe_instance_id(instance_id)
    if problem:
        raise InstanceError("unsafe_path", problem)
    folder = "the submission folder" if flat else f"{instance_id}/"
    if _absolute(relative):
        raise InstanceError("unsafe_path", f"{_shown(relative)} is absolute; paths are relative to {folder}")
    if ".." in relative.replace("\\", "/").split("/"):
        raise InstanceError("unsafe_path", f"{_shown(relative)} leaves {folder} with '..'")
    base = Path(result_dir) if flat else Path(result_dir) / instance_id
    path = base / relative
    if not flat and os.path.islink(base):  # the instance folder itself must not lead elsewhere
        raise InstanceError("unsafe_path", f"{instance_id}/ is a symbolic link; answers must live in the submission")
    if _plain_file_in(base, relative):
        return path
    # Every component is resolved and must stay inside the submission's own folder for this instance
    # (the operator's result_dir may itself be a link: it is resolved first, as the root).
    allowed = Path(result_dir).resolve() if flat else Path(result_dir).resolve() / instance_id
    try:
        inside = path.resolve().is_relative_to(allowed)
        exists = path.is_file()
    except RuntimeError:  # a symbolic link loop
        inside = exists = False
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL character, ...
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InstanceError("invalid_answer", f"{_shown(relative)} is not a usable path: {why}") from None
    if not inside:
        raise InstanceError("unsafe_path", f"{_shown(relative)} resolves outside {folder} (a symbolic link?)")
    if not exists:
        shown = relative if flat else f"{instance_id}/{relative}"
        raise InstanceError("missing_prediction", f"{shown[:200]}: file not found")
    return path


def _absolute(relative: str) -> bool:
    """Absolute on POSIX or Windows (a drive or a root); most names are settled without a path object."""
    if not relative.startswith(("/", "\\")) and ":" not in relative:
        return False
    return PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute()


def _plain_file_in(base: Path, relative: str) -> bool:
    """A bare file name naming a regular file (not a link) is inside `base` whatever `base` resolves
    to: settled by one lstat instead of resolving two paths.  False means "look closer"."""
    if "/" in relative or "\\" in relative or relative in (".", ".."):
        return False
    try:
        return stat.S_ISREG(os.lstat(os.path.join(base, relative)).st_mode)
    except (OSError, ValueError):
        return False
