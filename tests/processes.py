"""CPU time of this process's descendants, read from /proc: "nothing left running" made measurable."""

from __future__ import annotations

import os
import time
from pathlib import Path


def descendants(pid: int | None = None) -> list[int]:
    root = pid or os.getpid()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def busy_descendants(window_s: float = 1.0) -> float:
    """CPU seconds this process's descendants burn over `window_s` (about 0 when nothing runs)."""
    pids = descendants()
    before = cpu_seconds(pids)
    time.sleep(window_s)
    return cpu_seconds(pids) - before
