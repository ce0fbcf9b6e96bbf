"""A worker whose query runs long lowers its own CPU priority, so the short queries beside it keep their pace,
and says so: the grading process then starts another worker beside it at once.

On a machine with fewer cores than queries at once, a query that runs into its timeout took a core from the
grading process and the workers of short queries, which then waited on each other at half their pace: the
official scorer's sixteen processes share the cores among many, so a slow query there gets a small share.
Here a query past YIELD_AFTER_S lowers its thread's priority (nice YIELD_NICE): on an idle machine it still
runs at full speed, and its timeout is the same.  A thread cannot raise its priority again, so the worker
runs its next request on a new thread (`worker._QueryThread`), at the normal priority: Linux keeps a nice
value per thread.  (The worker used to end after such a query; its successor then opened the databases and
filled their caches again, and with every query past the mark, as on large databases, that cost more than
the yielding saved.)

A long query also says so (a "long" event): the pool no longer counts its worker as coming back soon
(`worker._soon_back`), and the grading thread waiting on it gets a thread beside it at once (`when_long`,
grading/parallel.py), where the pool and the runner used to guess on their own clocks (STUCK_S after a run
of questions began; LONG_QUERY_S after the query's "started" event, itself sent 0.02 s late) and the
guesses composed: among short questions, one worker did the work of two for 50-90 ms after each slow one.

When it is long (`LongWatch`): past YIELD_AFTER_S of wall time, or sooner, once its CPU time passes four
times the typical CPU time of this worker's queries (`long_mark.py`; at least 5 ms), when that mark is under
EARLY_MOST_S.  Among BIRD questions of half a millisecond a query running into its timeout is then long
after 5 ms of CPU instead of 50 ms of wall time; where typical queries take milliseconds (the heavier BIRD
set, 10^4-10^5 rows) the early mark is off and the wall mark is as before: there the early mark had made
the set 6 % slower (more of its queries lowered, each then waiting on the rest), and CPU time, not wall
time, so that a short query waiting for a core is not taken for a long one.  Both together, on
`bench/bird.py --small --timeouts 6 --meta-time-out 1` (29 Nov 2026): 0.96x the time before, the heavier
set 0.99-1.00x.

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

import math
import os
import sys
import threading
import time
from collections.abc import Callable

from evaluators.execution.long_mark import LongMark

YIELD_AFTER_S = 0.05
YIELD_NICE = 10
EARLY_MOST_S = 0.01
_QUERY_CPU = LongMark(math.inf)  # this worker's queries' CPU seconds: a few times their typical is long
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


def when_long(callback: Callable[[], None] | None) -> None:
    """`callback()` on this thread (a grading thread) whenever a query it waits for says it runs long."""
    _thread.on_long = callback


def went_long() -> None:
    """The query this thread waits for runs long (its worker's "long" event)."""
    callback = getattr(_thread, "on_long", None)
    if callback is not None:
        callback()


class LongWatch:
    """One query's watch, called as it runs (`check`, on the query's own thread): the query is long once its
    wall time passes YIELD_AFTER_S, or sooner once its CPU time passes the mark this worker's queries set
    (`long_mark.py`: among queries of half a millisecond, 5 ms).  A long query yields the CPU and `say`s so,
    once.  CPU time, not wall time, for the early mark: a short query that waits for a core is not long."""

    def __init__(self, say: Callable[[], None]):
        self.say = say
        self.wall, self.cpu = time.monotonic(), time.thread_time()
        early = _QUERY_CPU.seconds
        self.mark = early if early <= EARLY_MOST_S else YIELD_AFTER_S
        self.look_at = self.wall + self.mark  # a thread's CPU time cannot run ahead of the clock
        self.long = False

    def check(self, now: float) -> None:
        if self.long or now < self.look_at:
            return
        if now - self.wall < YIELD_AFTER_S:
            left = self.mark - (time.thread_time() - self.cpu)
            if left > 0:
                self.look_at = now + left
                return
        self.long = True
        yield_cpu()
        self.say()

    def done(self) -> None:
        _QUERY_CPU.add(time.thread_time() - self.cpu)
