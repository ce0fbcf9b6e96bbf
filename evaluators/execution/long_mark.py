"""How long work typically takes, over the last WINDOW durations, and a mark past which it counts as long.

A SQLite worker keeps its queries' CPU times (`priority.LongWatch`): among BIRD questions of half a
millisecond, a query past 5 ms of CPU (TIMES the median, LEAST_S at least) is long, where a fixed mark
(0.05 s of wall time) left the other questions one worker instead of two for 50-90 ms after each slow one.
The runner (`grading/parallel.py`) sizes the runs of items a thread takes by their typical time.  The median,
not the mean: one query running into its timeout moves it by nothing.
"""

from __future__ import annotations

import collections
import threading

TIMES = 4
LEAST_S = 0.005
WINDOW = 32


class Typical:
    """The median of the last WINDOW durations `add`ed (`typical`, None before the first), taken again at the
    first few and then every EVERY: once a query, sorting was 3 % of a small query's time in a worker."""

    EVERY = 8

    def __init__(self):
        self.typical: float | None = None
        self._recent: collections.deque = collections.deque(maxlen=WINDOW)
        self._lock = threading.Lock()
        self._added = 0

    def add(self, seconds: float) -> None:
        with self._lock:
            self._recent.append(seconds)
            self._added += 1
            if self._added <= self.EVERY or self._added % self.EVERY == 0:
                self.typical = sorted(self._recent)[len(self._recent) // 2]
                self._changed(self.typical)

    def _changed(self, typical: float) -> None:
        pass


class LongMark(Typical):
    """The mark in seconds (`seconds`): TIMES the typical duration, LEAST_S..most_s (most_s before any)."""

    def __init__(self, most_s: float):
        super().__init__()
        self.most_s = most_s
        self.seconds = most_s

    def _changed(self, typical: float) -> None:
        self.seconds = min(self.most_s, max(LEAST_S, TIMES * typical))
