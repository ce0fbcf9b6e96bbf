"""The command line's entry (`evaluate.py`, the `spider-grade` script): the grader's signal handling first,
then the imports, then the commands.  A Ctrl-C during the imports is an interrupt like any other (exit 130)."""

from __future__ import annotations

import gc
import os
import sys

from evaluators import signals

# pyarrow's default allocator (mimalloc) made grading a 3.3-million-row pair a fifth slower than the system's
# malloc, whole process (4.5-5.0 s against 3.5-3.8 s, 1.31 against 1.21-1.23 GB at the peak; jemalloc
# 3.9-4.0 s): the columns' large arrays come and go between the read and each family of rules
# (`bench/scale.py --whole`, 29 Nov 2026).  For the command line's own process and its children only, set
# before pyarrow is imported; a user's own setting is kept.
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")


def run() -> None:
    os.environ.setdefault(*ARROW_POOL)
    signals.install()
    sys.excepthook = print_safely
    try:
        try:
            # Importing pandas, numpy and pyarrow makes some 10^5 long-lived objects; collecting garbage while
            # they are made finds none and costs about a tenth of the start-up.
            gc.disable()
            start_workers_early(sys.argv[1:])
            from evaluators.cli import main

            gc.enable()
            main()
        except Exception:
            # A signal whose raise landed inside C code (numpy's module init during an import) comes back as
            # another error (SystemError): it is still the stop it was.
            signals.check()
            raise
    except signals.Interrupted as stopped:  # before the commands' own handler, or after it
        sys.stderr.write("interrupted: nothing was graded and no report was written\n")
        end(stopped.exit_code)
    except SystemExit as done:  # every command ends here (click's standalone mode)
        end(done.code)


def start_workers_early(args: list[str]) -> None:
    """`evaluate.py bird` on SQLite (its default dialect) runs every question in a worker forked from one warm
    process (execution/zygote.py): started here, its own start-up and imports overlap the command line's
    instead of following them.  A guess from the words alone, never a parse: a wrong one costs an idle
    process (the command starts the zygote itself when it was not started here)."""
    if not args or args[0] != "bird" or {"--help", "-h"} & set(args):
        return
    dialect = "sqlite"
    for word, after in zip(args, [*args[1:], ""], strict=True):
        name, equals, value = word.partition("=")
        if name in ("--sql_dialect", "--sql-dialect"):
            dialect = (value if equals else after).lower()
    if dialect == "sqlite":
        from evaluators.bird import SQLITE_WORKER_IMPORTS
        from evaluators.execution import worker

        worker.prestart(SQLITE_WORKER_IMPORTS, fork=True)


def end(code) -> None:
    """The process ends with `code` once its exit handlers ran (workers stopped, work folders removed) and
    its output is flushed, without tearing down every module and object one by one: a tenth of a second of
    a small run, after its report was written."""
    import atexit
    import os

    if code is not None and not isinstance(code, int):
        sys.stderr.write(f"{code}\n")  # as Python's own exit prints a message given to sys.exit
        code = 1
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code or 0)


def print_safely(kind, value, tb) -> None:
    """A traceback nobody caught (a bug) with its control characters shown escaped: its message may quote a
    submission's text, which must not reach the terminal raw (`terminal_safe`)."""
    import traceback

    from evaluators.terminal_safe import terminal_text

    sys.stderr.write(terminal_text("".join(traceback.format_exception(kind, value, tb))))
