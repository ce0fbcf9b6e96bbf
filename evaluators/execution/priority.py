"""A worker whose query runs long lowers its own CPU priority, so the short queries beside it keep their pace.

On a machine with fewer cores than queries at once, a query that runs into its timeout took a core from the
grading process and the workers of short queries, which then waited on each other at half their pace: the
official scorer's sixteen processes share the cores among many, so a slow query there gets a small share.
Here a query past YIELD_AFTER_S lowers its thread's priority (nice YIELD_NICE): on an idle machine it still
runs at full speed, and its timeout is the same.  A thread cannot raise its priority again, so the worker
runs its next request on a new thread (`worker._QueryThread`), at the normal priority: Linux keeps a nice
value per thread.  (The worker used to end after such a query; its successor then opened the databases and
filled their caches again, and with every query past the mark, as on large databases, that cost more than
the yielding saved.)

When: past 0.05 s.  Six queries running into a 1 s timeout among 1,000 short ones each took a core for
their first quarter of a second with the earlier mark (0.25 s): a third of the CPU while the short ones ran,
whose last slow question then started 0.85-0.9 s into the run instead of 0.6-0.7 (bench/bird.py --small
--timeouts 6 --meta-time-out 1: 1.12x the official loop at 0.25 s, 1.07x at 0.05 s, 29 Nov 2026).  A session
earlier the 0.05 s mark had seemed to slow the SQLite test files by half; measured again with the per-thread
priority, twelve of them (276 tests) took 70.1 and 70.7 s against 70.4 and 69.0 s at 0.25 s.

How far: nice 10 weighs a tenth of a normal process, about the share of a core the official loop's sixteen
processes leave each of its queries on two busy cores.  Nice 19 (a seventieth) made the timeouts set a few
hundredths quicker, but a long query among thousands of short ones would then stand almost still for as long
as they last, and could run into a timeout the official loop does not: a verdict bought with speed.
"""

from __future__ import annotations

import os
import sys
import threading

YIELD_AFTER_S = 0.05
YIELD_NICE = 10
_thread = threading.local()  # Linux's nice value is a thread's own: so is this flag


def yield_cpu() -> None:
    """Lower this thread's priority, once (on Linux only: elsewhere a nice value is the whole process's)."""
    if sys.platform == "linux" and not getattr(_thread, "lowered", False):
        _thread.lowered = True
        try:
            os.nice(YIELD_NICE)
        except OSError:
            pass


def lowered() -> bool:
    """Whether this thread lowered its priority."""
    return getattr(_thread, "lowered", False)
