"""The one atomic writer: a file is written under a temporary name in its own folder, then renamed into
place, so a reader sees the old file or the new one, never half of one; a failure (or Ctrl-C) removes the
temporary file.  Files get the mode a plain `open(path, "w")` would give (mkstemp's are private)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def default_file_mode() -> int:
    """0666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it becomes `path`, on failure it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, default_file_mode() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path, text: str, mode: int | None = None) -> None:
    """Write `text` (UTF-8, newlines as given) atomically, flushed to disk before the rename."""
    with atomic_path(path, mode) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
