"""`PinnedPath`: the path of a submitted file already opened and checked (`loading/paths.open_beneath`), read
through its file descriptor by every floor that reads it (`execution/executor.py` too), so it sits on the
ground floor."""

from __future__ import annotations

import os
import weakref
from pathlib import Path


class PinnedPath(type(Path())):  # type: ignore[misc]
    """The path of a file that is already open: its name, suffix and `str` are the submitted ones, and
    `os.fspath` (what `open`, pandas and zipfile use) is `/proc/self/fd/N`, the file opened and checked.
    The fd closes with the object; paths derived from it (`.parent`, `/`) are plain paths."""

    fd: int

    @classmethod
    def of(cls, path: Path, fd: int) -> Path:
        if not os.path.isdir("/proc/self/fd"):  # no procfs: the checked name is the best there is
            os.close(fd)
            return path
        pinned = cls(path)
        pinned.fd = fd
        weakref.finalize(pinned, os.close, fd)
        return pinned

    def with_segments(self, *segments):
        return Path(*segments)

    def __fspath__(self) -> str:
        return f"/proc/self/fd/{self.fd}"

    def resolve(self, strict: bool = False):
        return self  # already the file itself; resolving the name would look it up again

    def __reduce__(self):
        return (Path, (str(self),))
