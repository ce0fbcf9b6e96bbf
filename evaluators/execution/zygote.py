"""SQL workers forked from one warm process of this run (the zygote), instead of each starting Python anew.

A worker started as a new Python process costs a fifth of a CPU second of start-up and imports, and on a
busy machine (queries running into their timeouts beside it) a third of a second or more before it answers:
a run whose two workers were both on slow queries stood still until a third had started.  The zygote is
started once per grading process, imports what the workers need, and forks a worker in a few milliseconds
whenever the pool asks for one.  It holds nothing of any submission: it never runs a query, only forks.

The grading process makes each worker's three pipes and hands the worker's ends to the zygote over a Unix
socket (SCM_RIGHTS); the forked worker takes them as its standard streams, makes a process group of its own
(the grader kills the group at a timeout) and runs `worker.main`.  The zygote reaps ended workers at
once, so the grader tells a worker's end by its pipes and by its pid.  The zygote
ends when the grading process closes the socket or is gone.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
# The zygote imports only evaluators.execution (and what it needs), not the whole package: a stub package
# module skips evaluators/__init__.py, so start-up is quicker and independent of the grader.  The command
# line names the worker module, as every worker's did (tools and tests look for it).
_BOOTSTRAP = (
    "import sys, types; package = types.ModuleType('evaluators'); package.__path__ = [sys.argv[1]]; "
    "sys.modules['evaluators'] = package; from evaluators.execution.worker import fork_server; fork_server()"
)


# A process that forks must not hold threads: numpy's BLAS starts a pool of them when it is imported unless
# told not to (a query's worker never needs one); the user's own setting is kept.
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class Forked:
    """A forked worker as `subprocess.Popen` shows one, as far as the pool uses it."""

    def __init__(self, pid: int, stdin, stdout, stderr):
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                self.returncode = -1  # reaped by the zygote: its status is not sent back
            except PermissionError:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("worker", timeout or 0)
            time.sleep(0.005)
        return self.returncode or 0

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class _Child:
    """A zygote forked from this process (`Zygote.forked`), as `subprocess.Popen` shows a child to `Zygote`."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self._reap(0)
        return self.returncode or 0

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _reap(self, options: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, options)
        except ChildProcessError:
            self.returncode = -1
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)


class Zygote:
    """The warm process of this run: a new Python (`spawned`), or this process forked at its start, before its
    imports, when it holds no thread (`forked`, from `evaluators.entry`: the first workers are ready as the grader
    needs them, not a Python start-up and the imports later).  Either serves the same `serve` loop."""

    def __init__(self, sock: socket.socket, process):
        self.sock, self.proc, self.pid = sock, process, os.getpid()
        self.lock = threading.Lock()

    @classmethod
    def spawned(cls, warm: tuple[str, ...]) -> Zygote:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # -P: the current folder (perhaps a submission's) is not put on the import path.
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", _BOOTSTRAP, _PACKAGE_DIR, str(theirs.fileno()), *warm],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            process_group=0,  # in the grader's session: see `_become_worker`
            env={**SINGLE_THREADED, **os.environ},
        )
        theirs.close()
        return cls(ours, process)

    @classmethod
    def forked(cls, warm: tuple[str, ...], run_worker) -> Zygote:
        """This process forked, the child becoming the zygote as a spawned one starts (`run_worker()`: the
        worker's main); a spawned one when this process holds a thread (a fork keeps only the calling one,
        and any lock another held stays held)."""
        if threading.active_count() > 1:
            return cls.spawned(warm)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            ours.close()
            _serve_forked(theirs, warm, run_worker)
        theirs.close()
        return cls(ours, _Child(pid))

    def fork(self, warm: tuple[str, ...] = ()) -> Forked:
        """A new worker; OSError when the zygote is gone."""
        ends = [os.pipe() for _ in range(3)]
        theirs = [ends[0][0], ends[1][1], ends[2][1]]  # the worker reads stdin, writes stdout and stderr
        try:
            with self.lock:
                socket.send_fds(self.sock, [json.dumps(list(warm)).encode() + b"\n"], theirs)
                pid = int(_line(self.sock))
        except (OSError, ValueError):
            for fd in (*theirs, ends[0][1], ends[1][0], ends[2][0]):
                os.close(fd)
            raise OSError("the worker zygote is gone") from None
        for fd in theirs:
            os.close(fd)
        return Forked(pid, os.fdopen(ends[0][1], "wb"), os.fdopen(ends[1][0], "rb"), os.fdopen(ends[2][0], "rb"))

    def close(self) -> None:
        """The zygote holds nothing worth a clean exit (it never ran a query): killed, not waited for while
        an interpreter with its imports winds down."""
        self.sock.close()
        self.proc.kill()
        self.proc.wait()


def _line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(64)
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


_zygote: Zygote | None = None
_lock = threading.Lock()


def start(warm: tuple[str, ...], forked_main=None) -> Zygote:
    """This process's zygote, started now with `warm` imported if it has none running (it answers its first
    fork once those imports are done; this does not wait for them).  `forked_main`: this process forked,
    the child serving workers that run `forked_main()`, for a caller that has imported nothing heavy and
    started no thread (`worker.prestart`, from `entry`)."""
    global _zygote
    with _lock:
        if _zygote is None or _zygote.pid != os.getpid() or _zygote.proc.poll() is not None:
            # a forked grading process starts its own: the socket is not shared
            _zygote = Zygote.spawned(warm) if forked_main is None else Zygote.forked(warm, forked_main)
        return _zygote


def fork_worker(warm: tuple[str, ...]) -> Forked:
    """A worker forked from this process's zygote (started at the first call, with `warm` imported)."""
    return start(warm).fork(warm)


@atexit.register  # also when the command never reached its workers (a usage error after `entry` started it)
def shutdown() -> None:
    global _zygote
    with _lock:
        zygote, _zygote = _zygote, None
    if zygote is not None and zygote.pid == os.getpid():
        zygote.close()


# ---------------------------------------------------------------- the zygote's side


def serve(sock_fd: int, warm: list[str], run_worker) -> None:
    """Fork a worker for each request on the socket, until it closes.  `run_worker()` is the worker's main."""
    import importlib

    sock = socket.socket(fileno=sock_fd)
    for module in warm:
        _try_import(importlib, module)
    signal.signal(signal.SIGCHLD, _reap)  # ended workers reaped at once (their CPU time counted, as before)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, 65536, 3)
        except OSError:
            return
        if not message:
            return  # the grading process closed its end, or is gone
        for module in json.loads(message.decode().split("\n", 1)[0] or "[]"):
            _try_import(importlib, module)  # what this worker's caller wants warm, kept for the next ones
        pid = os.fork()
        if pid == 0:
            _become_worker(sock, fds, run_worker)
        for fd in fds:
            os.close(fd)
        try:
            sock.sendall(f"{pid}\n".encode())
        except OSError:
            return  # the grading process is gone (a signal stopped it): the worker sees its pipes close


def _serve_forked(sock: socket.socket, warm: tuple[str, ...], run_worker) -> None:
    """The forked child, made what a spawned zygote is (its own process group in the grader's session, no
    stdin, single-threaded BLAS, no script folder on the import path, garbage collected), serving until the
    grader closes the socket; never back in the grader's code, its exit handlers never run here."""
    import gc

    code = 0
    try:
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        for name, value in SINGLE_THREADED.items():
            os.environ.setdefault(name, value)
        if not sys.flags.safe_path and sys.path:
            del sys.path[0]
        gc.enable()
        serve(sock.detach(), list(warm), run_worker)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _reap(signum, frame) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become_worker(sock: socket.socket, fds: list[int], run_worker) -> None:
    """The forked child: the worker, ending as a Python process ends (its atexit handlers run: a PostgreSQL
    worker drops its answer roles there), and never back in the zygote's loop."""
    code = 0
    try:
        sock.close()
        # Its own process group (the grader kills the group at a timeout), in the grader's session: a session
        # is a scheduling group of its own under Linux's autogroup, where a long query's lowered priority
        # (priority.py) would count for nothing against the grader and the other workers.
        os.setpgid(0, 0)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # a driver waiting for its own children must see them end
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        run_worker()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _try_import(importlib, module: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        pass  # the request that needs it says so, with the extra to install
