"""Answer paths: relative to `<result_dir>/<instance_id>/`, and never outside it; the one opener of
files a submission holds.

In the flat layout (Spider2-lite's `<id>.csv` / `<id>.sql` files side by side)
the folder is `<result_dir>` itself and the path is just the file name.

Every file of a submission (answers, `results_metadata.jsonl`, BIRD's and test-suite's predictions) is
opened here, once, by `open_beneath`: each component of the path is opened with `O_NOFOLLOW` relative to
the folder before it (`dir_fd`), so a link swapped in between a check and the open is never followed; a
link met on the way is read and walked the same way, and refused when it leads out of the submission;
the last component is opened `O_NONBLOCK` (a FIFO cannot block) and must be a regular file (`fstat`:
not a FIFO, a device or a folder).  What is read afterwards is that open file: `answer_path` returns a
`PinnedPath`, whose `os.fspath` is `/proc/self/fd/N`, so pandas, DuckDB and `open` read the file that was
checked whatever the name points to by then.  `read_untrusted` reads a whole small file from such an
fd, with a size cap.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from pathlib import Path, PurePosixPath, PureWindowsPath

from evaluators.errors import InstanceError, Location, SpecError
from evaluators.pinned import PinnedPath


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
    shown = relative if flat else f"{instance_id}/{relative}"
    try:
        fd = open_beneath(Path(result_dir), relative if flat else f"{instance_id}/{relative}", 0 if flat else 1)
    except _Outside:
        raise InstanceError("unsafe_path", f"{_shown(relative)} resolves outside {folder} (a symbolic link?)") from None
    except FileNotFoundError:
        raise InstanceError("missing_prediction", f"{shown[:200]}: file not found") from None
    except _NotRegular as exc:
        raise InstanceError("missing_prediction", f"{shown[:200]}: file not found ({exc})") from None
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL character, ...
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InstanceError("invalid_answer", f"{_shown(relative)} is not a usable path: {why}") from None
    base = Path(result_dir) if flat else Path(result_dir) / instance_id
    return PinnedPath.of(base / relative, fd)


def _absolute(relative: str) -> bool:
    """Absolute on POSIX or Windows (a drive or a root); most names are settled without a path object."""
    if not relative.startswith(("/", "\\")) and ":" not in relative:
        return False
    return PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute()


MAX_LINKS = 40  # as the kernel's own limit on links followed in one path


class _Outside(Exception):
    """The path, or a link on it, leads out of the root."""


class _NotRegular(Exception):
    """The path names a folder, a FIFO, a device or a socket."""


def open_beneath(root: Path, relative: str, pinned: int = 0) -> int:
    """A read-only fd of the regular file `relative` names under `root`, never leaving `root`.

    `root` is the operator's folder and is followed as given; below it nothing is followed blindly.  The
    first `pinned` components (the instance folder) must be plain folders, not links.  Raises `_Outside`,
    `_NotRegular`, `FileNotFoundError` or another `OSError`."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    stack = [root_fd]
    parts = _parts(relative)
    try:
        fd = _walk(stack, deque(parts), root, parts[:pinned])
    finally:
        for folder in stack:
            os.close(folder)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _NotRegular(_kind(mode))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_inside(root: Path, relative: str) -> int | None:
    """A read-only fd of the regular file `relative` under the operator's folder `root`, for a name the
    submission chose (LiveSQLBench's `selected_database`): None when there is no such regular file (or it
    cannot be opened: a name too long, no permission); InstanceError `unsafe_path` when the name, or a link
    on it, leads out of `root`."""
    try:
        return open_beneath(root, relative)
    except _Outside:
        raise InstanceError("unsafe_path", f"{_shown(relative)} leads out of {root} (a symbolic link?)") from None
    except (OSError, ValueError, _NotRegular):
        return None


def _parts(relative: str) -> list[str]:
    if "\0" in relative:
        raise ValueError("embedded null character in path")
    return [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".")]


def _walk(stack: list[int], pending: deque, root: Path, prefix: list[str]) -> int:
    """Open `pending` one component at a time from `stack[-1]` (the folders opened so far); the path
    never goes above `prefix` (the instance folder), and a link to an absolute path must lead there."""
    links, pinned = 0, len(prefix)
    while pending:
        name = pending.popleft()
        if name == "..":
            if len(stack) <= 1 + pinned:
                raise _Outside()
            os.close(stack.pop())
            continue
        last = not pending
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
        try:
            fd = os.open(name, flags, dir_fd=stack[-1])
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
            target = _link_target(name, stack[-1], exc)
            links += 1
            if len(stack) <= pinned or links > MAX_LINKS:  # the instance folder itself, or a loop
                raise _Outside() from None
            if os.path.isabs(target):
                inside = os.path.relpath(os.path.normpath(target), os.path.realpath(root))
                if inside == ".." or inside.startswith("../") or _parts(inside)[:pinned] != prefix:
                    raise _Outside() from None
                while len(stack) > 1:
                    os.close(stack.pop())
                target = inside
            pending.extendleft(reversed(_parts(target)))
            continue
        if last:
            return fd
        stack.append(fd)
    raise _NotRegular("a folder")


def _link_target(name: str, folder_fd: int, error: OSError) -> str:
    """What the link `name` points to; the open's own error when `name` is no link."""
    try:
        return os.readlink(name, dir_fd=folder_fd)
    except OSError:
        if error.errno == errno.ENOTDIR:
            raise FileNotFoundError(errno.ENOENT, "a component is not a folder") from None
        raise error from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_untrusted(folder: Path, name: str, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file `name` directly in `folder` (a submission's metadata, BIRD's or
    test-suite's predictions): not a link, not a FIFO or device, at most `max_bytes`; SpecError when not."""
    where = Location(str(Path(folder) / name))
    try:
        fd = open_beneath(Path(folder), name, pinned=1)
    except FileNotFoundError:
        raise SpecError("file not found", where) from None
    except _NotRegular as exc:
        if str(exc) == "a folder":
            raise SpecError(f"is a folder, expected a {what}", where) from None
        raise SpecError(f"{exc}, expected a regular {what}", where) from None
    except _Outside:
        raise SpecError(f"is a symbolic link; the {what} must be a regular file in its folder", where) from None
    except OSError as exc:
        raise SpecError(f"cannot open: {exc.strerror or exc}", where) from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SpecError(f"more than {max_bytes:,} bytes, over the limit (raise it with --max-file-mb)", where)
    return data
