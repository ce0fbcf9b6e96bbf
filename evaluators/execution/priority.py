"""A worker whose query runs long lowers its own CPU priority, so the short queries beside it keep their pace.

On a machine with fewer cores than queries at once, a query that runs into its timeout took a core from the
grading process and the workers of short queries, which then waited on each other at half their pace: the
official scorer's sixteen processes share the cores among many, so a slow query there gets a small share.
Here a query past YIELD_AFTER_S lowers its worker's priority (nice YIELD_NICE): on an idle machine it still
runs at full speed, and its timeout is the same.  A process cannot raise its priority again, so the worker
ends after that query (`lowered`), and the next query starts in a fresh one, at the normal priority.

How far: nice 10 weighs a tenth of a normal process, about the share of a core the official loop's sixteen
processes leave each of its queries on two busy cores.  Nice 19 (a seventieth) made the timeouts set a few
hundredths quicker, but a long query among thousands of short ones would then stand almost still for as long
as they last, and could run into a timeout the official loop does not: a verdict bought with speed.
"""

from __future__ import annotations

import os

YIELD_AFTER_S = 0.05
YIELD_NICE = 10
_lowered = False


def yield_cpu() -> None:
    """Lower this process's priority, once."""
    global _lowered
    if not _lowered:
        _lowered = True
        try:
            os.nice(YIELD_NICE)
        except OSError:
            pass


def lowered() -> bool:
    return _lowered
