"""The command line's entry (`evaluate.py`, the `spider-grade` script): the grader's signal handling first,
then the imports, then the commands.  A Ctrl-C during the imports is an interrupt like any other (exit 130)."""

from __future__ import annotations

import gc
import sys

from evaluators import signals


def run() -> None:
    signals.install()
    try:
        # Importing pandas, numpy and pyarrow makes some 10^5 long-lived objects; collecting garbage while
        # they are made finds none and costs about a tenth of the start-up.
        gc.disable()
        from evaluators.cli import main

        gc.enable()
        main()
    except signals.Interrupted as stopped:  # before the commands' own handler, or after it
        sys.stderr.write("interrupted: nothing was graded and no report was written\n")
        sys.exit(stopped.exit_code)
