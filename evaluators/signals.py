"""Stopping on a signal, whatever the grader is doing when it comes.

SIGINT, SIGTERM and SIGHUP raise `Interrupted` (a KeyboardInterrupt, so every `finally` and every
"kill the worker" path runs) and end the run with 128 + the signal's number: 130, 143, 129.  Two things
make that hold at any moment, not just most of them:

- A signal is remembered, not only raised.  Python runs the handler between two bytecodes of whatever
  the main thread is doing, and when that is a finaliser or a library's bare `except:` (at import time,
  say) the exception is swallowed and the run would go on as if nothing came.  `check()` raises it again;
  the loops that wait (a query's worker, the grading loops) call it, so a lost one returns within their
  poll interval.
- Work an engine does in this process (DuckDB's out-of-core tables) registers a way to stop it
  (`on_interrupt`), called from a thread as the signal comes: a long C++ call that neither returns nor
  lets the handler's exception through (DuckDB reading a CSV file) is cancelled instead of waited for.
- A deadline: if the process still runs `GRACE_S` after the signal (a cleanup stuck somewhere), it ends
  itself with the same code.  Every child watches its parent (`exit_with_parent`), so nothing outlives it.

Only the entry points (`evaluate.py`, the console script) call `install()`; the Python API leaves the
caller's handlers alone, and `check()` is then a no-op.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_S = 10.0
PARENT_POLL_S = 0.5

_received: int | None = None
_cleaning = False
_stoppers: dict[int, Callable[[], object]] = {}


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal; `exit_code` is what the shell reports for it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum


def install() -> None:
    """The grader's own handlers, in the main thread, before anything slow (imports included) starts."""
    for signum in STOPPING:
        signal.signal(signum, _on_signal)
    os.register_at_fork(after_in_child=child_defaults)
    sys.unraisablehook = _quiet_when_interrupted(sys.unraisablehook)
    threading.excepthook = _quiet_thread_when_interrupted(threading.excepthook)


def _quiet_when_interrupted(previous):
    """A raise that lands in a finaliser or a weakref callback (an import's module lock, say) is printed by
    Python as "Exception ignored in ..." with a traceback, then dropped; `check()` raises it again anyway,
    so that print is only noise on the terminal of a clean stop."""

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            previous(unraisable)

    return hook


def _quiet_thread_when_interrupted(previous):
    """A thread that fails because the run is stopping prints "Exception in thread ..." after the one line of a
    clean stop.  Seen in CI: a signal raised inside `Pool()` after its worker-handler thread started, so no
    `terminate()` could run; at exit the pool's processes were ended and that daemon thread, trying to start
    new ones, failed.  The stop already says what happened."""

    def hook(args) -> None:
        if _received is None and not isinstance(args.exc_value, Interrupted):
            previous(args)

    return hook


def child_defaults() -> None:
    """A forked grading process: the parent decides when it stops (SIGINT is the parent's, a terminal sends
    it to the whole group), SIGTERM and SIGHUP end it at once, and it ends when the parent is gone."""
    global _received, _cleaning
    _received, _cleaning = None, False
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _on_signal(signum: int, _frame) -> None:
    global _received
    if _received is None:
        _received = signum
        threading.Thread(target=_deadline, args=(signum,), daemon=True, name="stop-deadline").start()
        threading.Thread(target=_stop_engines, daemon=True, name="stop-engines").start()
    if not _cleaning:
        raise Interrupted(signum)


def on_interrupt(stop: Callable[[], object]) -> Callable[[], None]:
    """Have `stop` (a connection's interrupt) called when a signal comes; returns what unregisters it."""
    key = id(stop)
    _stoppers[key] = stop
    if _received is not None:
        _call(stop)

    def forget() -> None:
        _stoppers.pop(key, None)

    return forget


def _stop_engines() -> None:
    for stop in list(_stoppers.values()):
        _call(stop)


def _call(stop: Callable[[], object]) -> None:
    try:
        stop()
    except Exception:  # a connection already closed: nothing left to stop
        pass


def check() -> None:
    """Raise the signal that came, if one did: its first raise may have been swallowed, and after it no new
    query may start (queued work in threads ends here instead of starting a worker)."""
    if _received is not None:
        raise Interrupted(_received)


def received() -> bool:
    """Whether a stopping signal came: what would wait (for a server's room, say) gives up at once."""
    return _received is not None


def cleaning_up() -> int:
    """The CLI's handler has the interrupt: later signals and checks raise no more. Returns the exit code."""
    global _cleaning
    _cleaning = True
    return 128 + (_received or signal.SIGINT)


def _deadline(signum: int) -> None:
    time.sleep(GRACE_S)
    sys.stderr.write(f"interrupted: stopping took over {GRACE_S:g} s; ended without waiting\n")
    sys.stderr.flush()
    os._exit(128 + signum)


def exit_with_parent(interval_s: float = PARENT_POLL_S) -> None:
    """This process outlives nobody: when the process that started it is gone (killed by any signal,
    SIGKILL included), it ends itself, even in the middle of C code (os._exit)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
