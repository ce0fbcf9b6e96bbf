"""`python evaluate.py ARGS` without paying Python's and pandas' start-up each time: a warm process that has
imported the grader forks one child per command, and the child runs the CLI's entry as evaluate.py does.

Each child is a fresh copy of a process that has only imported modules (no command ran in it before), in
the command's folder, with the command's environment, stdin from /dev/null, its own stdout and stderr, and
Python's normal exit (atexit handlers, excepthook, exit code). What a child does not prove is the
interpreter's own start-up with evaluate.py as its script: tests/test_docs_examples.py keeps some commands
as real processes for that.

    with WarmCli() as cli:
        result = cli.run(["--result-dir", "sub", "--gold-dir", "gold"], cwd=work, env=env)
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What a grading run imports (python -X importtime evaluate.py ...): imported once, before any fork.
WARM = (
    "evaluators.entry",
    "evaluators.cli",
    "evaluators.grading.instance",
    "evaluators.grading.run",
    "evaluators.execution.worker",
    "evaluators.execution.executor",
    "evaluators.execution.explain",
    "evaluators.loading.inputs",
    "evaluators.reporting.svg",
    "evaluators.reporting.plots",
    "evaluators.metrics.similarity",
)


class WarmCli:
    """The warm process (its own session, so closing it takes a stuck child with it)."""

    def __init__(self, timeout: float = 600.0):
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *WARM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(self, args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
        out, err = cwd.parent / ".forked_cli.out", cwd.parent / ".forked_cli.err"
        request = {"args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        if not select.select([self.proc.stdout], [], [], self.timeout)[0]:
            self.close()
            raise subprocess.TimeoutExpired(args, self.timeout)
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"the warm CLI process ended (exit {self.proc.wait()})")
        stdout, stderr = (path.read_text(errors="replace") for path in (out, err))
        out.unlink()
        err.unlink()
        return subprocess.CompletedProcess(args, json.loads(reply)["exit"], stdout, stderr)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def __enter__(self) -> WarmCli:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _serve() -> None:
    """The warm process: imports, then one fork per request line; answers {"exit": code} per line."""
    import importlib

    sys.path[0] = str(ROOT)  # as for `python ROOT/evaluate.py` (this file's folder was put there instead)
    for name in sys.argv[1:]:
        importlib.import_module(name)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)  # returns only to exit as a script does, through the interpreter's shutdown
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n")


def _child(request: dict) -> None:
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = [str(ROOT / "evaluate.py"), *request["args"]]
    from evaluators.entry import run

    run()


if __name__ == "__main__":
    _serve()
