"""Answer paths: relative to `<result_dir>/<instance_id>/`, and never outside it."""
from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

from .errors import InstanceError


def answer_path(result_dir: Path, instance_id: str, relative) -> Path:
    if not isinstance(relative, str) or not relative.strip():
        raise InstanceError("invalid_answer", f"expected a relative file path, got {relative!r}")
    if PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute():
        raise InstanceError("unsafe_path", f"{relative!r} is absolute; paths are relative to {instance_id}/")
    if ".." in PurePosixPath(relative.replace("\\", "/")).parts:
        raise InstanceError("unsafe_path", f"{relative!r} leaves the instance folder with '..'")
    base = (Path(result_dir) / instance_id)
    path = base / relative
    try:
        inside = path.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        raise InstanceError("unsafe_path", f"{relative!r} resolves outside {instance_id}/ (a symbolic link?)")
    if not path.is_file():
        raise InstanceError("missing_prediction", f"{instance_id}/{relative}: file not found")
    return path
