"""Queries run in worker processes, so a timeout can always stop them: the parent kills the process group.

A worker reads one JSON request per line on stdin and answers with JSON events on
stdout: {"event": "started", "at": ...} once a query has run a little while (`_Outbox`: a
quick one's start is never sent), {"event": "handle", ...} with a server-side job id as
soon as it has one, and a final {"event": "result", ...}.
Workers are reused between queries (starting Python with pandas costs about a
second); a worker that times out or dies is killed and replaced.

Each backend first tries to stop its own query at the timeout (DuckDB interrupt,
SQLite progress handler, BigQuery job cancel, Snowflake statement timeout); the
parent kills the worker `kill_grace_s` later if the result still has not come,
and then asks a fresh worker to cancel the server-side job by its handle.
"""

from __future__ import annotations

import atexit
import importlib
import json
import math
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import IO

from evaluators.execution import priority, zygote
from evaluators.execution.backends import get_backend
from evaluators.execution.backends.base import FRAMED, QueryFailed, Request, first_line, redact
from evaluators.execution.memory import capped, limit_of
from evaluators.signals import check as stop_if_signalled
from evaluators.signals import exit_with_parent

ROLE_DROP_WAIT_S = 5.0  # how long a worker ending itself may take to drop its server role
STARTUP_ALLOWANCE_S = 60.0  # Python start-up, driver import and connecting, before the query's own timeout
CANCEL_TIMEOUT_S = 30.0  # the cancelling worker's own limit
CANCEL_WAIT_S = 5.0  # how long the caller waits for the cancel's answer before it moves on
MAX_IDLE_WORKERS = 16
FREE_STARTS = os.cpu_count() or 1  # workers started at once, without waiting for a busy one to come back
IDLE_RELEASE_S = 0.5  # a worker without a request this long closes its kept sessions (base.IDLE_RELEASES)
LONG_QUERY_S = 0.05  # a worker busy this long is on a long query: a caller waiting for one starts another
# A worker still getting ready for its query (Python and driver imports, connecting) counts as coming back
# soon for this long, unless its backend says the query started: a fresh worker's first request (a second
# of imports with PostgreSQL's driver) made every waiting caller start yet another worker.
PREPARING_S = 2.0
_STDERR_TAIL = 4000


# ---------------------------------------------------------------- child side


def fork_server() -> None:
    """The zygote's main (zygote.py): `sys.argv` holds the package folder, the socket and the warm modules."""
    zygote.serve(int(sys.argv[2]), sys.argv[3:], main)


def main() -> None:
    exit_with_parent()
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # a driver that prints must not corrupt the protocol: stdout now goes to stderr
    sys.stdout = sys.stderr
    send = _Outbox(protocol).send
    queries = _QueryThread()
    for line in _lines(sys.stdin.fileno(), IDLE_RELEASE_S, _release_idle):
        if line.strip():
            message = json.loads(line)
            settings = (message.get("request") or {}).get("settings") or {}
            with capped(limit_of(settings)):  # the request and its result's JSON line (memory.py)
                try:
                    send(queries.serve(message, send))
                except MemoryError:  # the JSON line did not fit: gone by now, the short answer fits
                    send(_memory_event(message, "the result could not be sent within the memory cap"))
            queries.renew()  # outside the cap: a thread's stack counts against RLIMIT_DATA


def _lines(fd: int, idle_s: float, on_idle):
    """The protocol's lines, read from `fd` as they come; `on_idle()` once whenever none came for `idle_s`."""
    import select

    pending, searched = bytearray(), 0  # a long line is searched for its end once, not once a chunk
    while True:
        end = pending.find(b"\n", searched)
        if end >= 0:
            line = pending[:end].decode("utf-8")
            del pending[: end + 1]
            searched = 0
            yield line
            continue
        searched = len(pending)
        if not select.select([fd], [], [], idle_s)[0]:
            on_idle()
        chunk = os.read(fd, 1 << 20)  # blocks until the next request (or the end) once idle
        if not chunk:
            return
        pending += chunk


def _release_idle() -> None:
    """What the worker keeps that other processes may need, let go while it waits (base.IDLE_RELEASES)."""
    from evaluators.execution.backends.base import IDLE_RELEASES

    for release in IDLE_RELEASES:
        try:
            release()
        except Exception:
            pass  # a session already gone: nothing held


class _QueryThread:
    """Where a worker runs its requests: one thread, replaced after a request whose query lowered its priority
    (priority.py).  Linux keeps a priority per thread, so the worker goes on at the normal one, with its open
    connections, instead of ending and leaving its successor to open them again."""

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = self._started()
        self.lowered = False  # the thread's last request lowered its priority: it has ended, or is ending

    def renew(self) -> None:
        if self.lowered or not self.thread.is_alive():
            self.thread.join()
            self.thread, self.lowered = self._started(), False

    def serve(self, message: dict, send) -> dict:
        self.inbox.put((message, send))
        while True:
            alive = self.thread.is_alive()  # before looking: an answer handed over just before it ended counts
            try:
                ok, value, self.lowered = self.outbox.get(timeout=0.25 if alive else 0)
                break
            except queue.Empty:
                if not alive:  # it ended without handing its answer over: out of memory
                    raise MemoryError from None
        if not ok:
            raise value
        return value

    def _started(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, daemon=True, name="queries")
        thread.start()
        return thread

    def _run(self) -> None:
        while True:
            message, send = self.inbox.get()
            answer: tuple[bool, object]
            try:
                answer = (True, serve(message, send))
            except BaseException as exc:  # MemoryError: the main thread answers as it always has
                answer = (False, exc)
            lowered = priority.lowered()
            self.outbox.put((*answer, lowered))
            if lowered:
                return  # this thread's priority cannot be raised again: the next request gets a new one


# A query's "started" event is held this long before it is written: most queries of a benchmark end sooner, and
# their events, a write and a wake-up of the grading process each, were a fifth of a small question's cost.
START_SENT_AFTER_S = 0.02


class _Outbox:
    """The worker's events to the grading process, each written whole, in order.

    A "started" event carries its query's start time (`at`, the system-wide monotonic clock the parent reads
    too) and is written only once the query has run START_SENT_AFTER_S, by a thread that looks every as
    often, or before the next event that is not a result.  The parent's timeout still counts from the
    query's real start, and any query it could kill has said it started (and which phase it is)."""

    def __init__(self, protocol) -> None:
        self.protocol, self.lock = protocol, threading.Lock()
        self.pending: dict | None = None
        # Started before any request's memory cap: a thread's stack counts against RLIMIT_DATA.
        threading.Thread(target=self._send_late_starts, daemon=True, name="started-events").start()

    def send(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "started":
            with self.lock:
                self.pending = {**event, "at": time.monotonic()}
            return
        line = json.dumps(event, default=str) + "\n"  # built whole before a byte is written (MemoryError)
        with self.lock:
            held, self.pending = self.pending, None
            if held is not None and kind != "result":  # a handle or a note of a running query: its start first
                self._write(json.dumps(held) + "\n")
            self._write(line)

    def _write(self, line: str) -> None:
        self.protocol.write(line)
        self.protocol.flush()

    def _send_late_starts(self) -> None:
        while True:
            time.sleep(START_SENT_AFTER_S)
            with self.lock:
                held = self.pending
                if held is None or time.monotonic() - held["at"] < START_SENT_AFTER_S:
                    continue
                try:
                    self._write(json.dumps(held) + "\n")
                    self.pending = None
                except MemoryError:  # the query holds the worker's cap: tried again next time
                    continue
                except OSError:  # the grading process is gone, and this worker with it
                    return


def _memory_event(message: dict, detail: str) -> dict:
    settings = (message.get("request") or {}).get("settings") or {}
    return {"event": "result", "reason": "memory_limit", "detail": f"{detail} (--memory-limit-mb {limit_of(settings)})"}


_BACKENDS = "evaluators.execution.backends"
# Worker actions besides running a query: name -> (module, function, how it is called with the message).
ACTIONS = {
    "time_pair": (
        f"{_BACKENDS}.sqlite_backend",
        "time_pair",
        lambda f, r, m, send: f(r, m["gold_sql"], int(m["iterations"]), send),
    ),
    "official_pair": (f"{_BACKENDS}.sqlite_backend", "official_pair", lambda f, r, m, send: f(r, m["gold_sql"], send)),
    "inspect": ("evaluators.execution.inspect", "inspect", lambda f, r, m, send: f(r, m.get("plan_queries"), send)),
    "kg_valid": (f"{_BACKENDS}.cypher_backend", "kg_validity", lambda f, r, m, send: f(r, send)),
    "read_tables": (f"{_BACKENDS}.duckdb_backend", "read_tables", lambda f, r, m, send: f(r, m.get("tables"), send)),
    # Query similarity of an untrusted prediction: under the request's timeout and memory cap like a query.
    "similarity": (
        "evaluators.metrics.similarity",
        "query_similarity",
        lambda f, r, m, send: {"similarity": f(m["pred_sql"], m["gold_sql"])},
    ),
}


def _act(action: str, request: Request, message: dict, send) -> dict:
    """A named action of ACTIONS, or one the caller hands in as "module:function" (called with the request,
    the message and `send`): a floor above names its own code, so this floor names none of it."""
    if action in ACTIONS:
        module, function, call = ACTIONS[action]
        return call(getattr(importlib.import_module(module), function), request, message, send)
    module, _, function = action.partition(":")
    return getattr(importlib.import_module(module), function)(request, message, send)


def serve(message: dict, send) -> dict:
    """Run one request and return its result event (never raises)."""
    request = Request.from_dict(message["request"])
    started = time.monotonic()
    try:
        backend = get_backend(request.backend)
        if message.get("action") == "cancel":
            return {"event": "result", "reason": "ok", "detail": backend.cancel(request, message["handle"])}
        action = message.get("action") or "run"
        if action in ACTIONS or ":" in action:
            found = _act(action, request, message, send)
            return {"event": "result", "reason": "ok", "detail": "", "seconds": time.monotonic() - started, **found}
        if request.collect in FRAMED:
            # The result's frame needs pandas: imported before the query starts (under the start-up allowance),
            # so that on a loaded machine its second of import is never charged to the answer's timeout.
            importlib.import_module("pandas")
        outcome = backend.run(request, send)
        return {
            "event": "result",
            "reason": "ok",
            "detail": "",
            "first_cell": outcome.first_cell,
            "rows": outcome.rows,
            "columns": outcome.columns,
            "bytes_processed": outcome.bytes_processed,
            "seconds": time.monotonic() - started,
            "query_seconds": outcome.query_seconds,
            **({"data": outcome.data} if outcome.data is not None else {}),
        }
    except MemoryError:
        return {
            **_memory_event(message, "the worker passed its memory cap"),
            "seconds": time.monotonic() - started,
        }
    except QueryFailed as exc:
        return {
            "event": "result",
            **query_failure(exc, request),
            "bytes_processed": exc.bytes_processed,
            "seconds": time.monotonic() - started,
        }
    except Exception as exc:  # a driver bug or an unexpected error type: still that instance's error only
        return {
            "event": "result",
            "reason": memory_reason("exec_error", str(exc)),
            "seconds": time.monotonic() - started,
            "detail": _clean(f"{type(exc).__name__}: {first_line(exc)}", request),
        }


_OUT_OF_MEMORY = ("out of memory", "memoryerror", "bad_alloc", "cannot allocate memory", "memory allocation")


def query_failure(exc: QueryFailed, request: Request) -> dict:
    """A query's failure as every result says it: its reason (memory words read as `memory_limit`) and its
    first line, secrets redacted; for an action that reports several queries' failures in one result."""
    return {"reason": memory_reason(exc.reason, exc.detail), "detail": _clean(exc.detail, request)}


def memory_reason(reason: str, detail: str) -> str:
    """An engine that ran out of memory under the cap (SQLite's, libpq's, DuckDB's own words) is the
    instance's `memory_limit`, not an error of its SQL."""
    if reason == "exec_error" and any(words in detail.lower() for words in _OUT_OF_MEMORY):
        return "memory_limit"
    return reason


def _clean(text: str, request: Request) -> str:
    return redact(first_line(text), _secrets(request))


def _secrets(request: Request) -> list[str]:
    try:
        return get_backend(request.backend).secrets(request)
    except Exception:
        return []


# ---------------------------------------------------------------- parent side


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    if stream is None:
        raise RuntimeError("a worker's pipe is missing")  # Popen was given PIPE for all three
    return stream


class WorkerProcess:
    """One worker: its own process group, so killing the group takes any children with it."""

    def __init__(self, warm: tuple[str, ...] = ()):
        # Forked from this run's zygote (zygote.py), which imports `warm` first: modules (ours and drivers,
        # never a submission's words) a worker has loaded before its first request arrives.
        self.proc = zygote.fork_worker(warm)
        self.pid = self.proc.pid
        self.lent_at = time.monotonic()  # when the pool last handed it to a caller
        self.query_began: float | None = None  # when its backend said the query started ("started")
        self.long_query = False  # its backend said the query runs long ("long")
        # Server state a kill would leave behind: the answer role it logs in as (PostgreSQL; it drops it
        # itself when it ends), and the request and handle of the query it runs now.
        self.role: str | None = None
        self.running: tuple[Request, dict] | None = None
        self.last_request: Request | None = None
        self._buffer = b""
        self.stderr_tail = b""
        self._selector = selectors.DefaultSelector()
        self.closed = False  # its pipes closed (killed, or dead): a request queued behind gets no answer
        self.stdin, stdout, stderr = _pipe(self.proc.stdin), _pipe(self.proc.stdout), _pipe(self.proc.stderr)
        self._selector.register(stdout, selectors.EVENT_READ, "out")
        self._selector.register(stderr, selectors.EVENT_READ, "err")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict) -> None:
        self.write(json.dumps(message) + "\n")

    def write(self, line: str) -> None:
        self.stdin.write(line.encode("utf-8"))
        self.stdin.flush()

    def next_event(self, deadline: float) -> dict | None:
        """The next event, None when the deadline passes; EOFError when the worker is gone."""
        while b"\n" not in self._buffer:
            stop_if_signalled()  # a signal whose first raise was swallowed (evaluators/signals.py)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in self._selector.select(min(remaining, 0.25)):
                chunk = os.read(key.fd, 65536)
                if key.data == "err":
                    self.stderr_tail = (self.stderr_tail + chunk)[-_STDERR_TAIL:]
                elif not chunk:
                    raise EOFError
                else:
                    self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def kill(self) -> None:
        self.send_kill()
        self.close()

    def send_kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, AttributeError):
            self.proc.kill()

    def end(self) -> None:
        """A worker holding a server role ends itself (closing its stdin), dropping the role on its way out;
        one that does not within ROLE_DROP_WAIT_S is killed: its server does not answer (trying again from
        here would only make the exit wait), so the role is left to the next `db prepare`."""
        if self.role is None:
            self.kill()
            return
        try:
            self.stdin.close()
            self.proc.wait(timeout=ROLE_DROP_WAIT_S)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
            return
        self.close()

    def leave_server_clean(self) -> None:
        """After a kill: the answer role it held dropped (and the query it ran stopped on the server), from
        this process: the run may be stopping, when no worker starts."""
        if self.role is None or self.last_request is None:
            return  # no role of its own: nothing of this worker's outlives it on a server we can reach
        request, handle = self.running or (self.last_request, {})
        handle = {**handle, "role": handle.get("role") or self.role}
        try:
            get_backend(request.backend).cancel(request, handle)
        except Exception:
            pass  # the server is gone or refuses: `db prepare` drops roles left behind
        self.role, self.running = None, None

    def close(self) -> None:
        self.closed = True
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._selector.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class _Pool:
    """Idle workers of this process; a forked child starts with an empty pool of its own.

    Workers start as they are needed: past one per core busy on short work, a caller finding none idle
    waits for one to come back, or for a busy one to be on a long query (LONG_QUERY_S), before it starts
    another.  A worker costs a Python start-up (a
    fifth of a CPU second); sixteen threads of short queries on two cores kept sixteen of them for work two
    or three could do, while queries that run long still get a worker each after the short wait."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.idle: list[WorkerProcess] = []
        self.busy: set[WorkerProcess] = set()
        self.lock = threading.Lock()
        self.returned = threading.Condition(self.lock)  # a worker came back or left: waiting callers look again
        self.starting = 0

    def acquire(self) -> WorkerProcess:
        with self.lock:
            while True:
                while self.idle:
                    worker = self.idle.pop()
                    if worker.alive():
                        return self._lend(worker)
                    worker.close()
                if self._working() < FREE_STARTS:
                    break
                self.returned.wait(LONG_QUERY_S / 4)
            self.starting += 1
        try:
            worker = WorkerProcess()
        finally:
            with self.lock:
                self.starting -= 1
        with self.lock:
            return self._lend(worker)

    def _lend(self, worker: WorkerProcess) -> WorkerProcess:
        _on_a_new_request(worker)
        self.busy.add(worker)
        return worker

    def _working(self) -> int:
        """Workers starting, getting ready for their query (PREPARING_S at most), or on a query younger than
        LONG_QUERY_S: those will be back soon.  A worker on a long query does not count, so a caller behind it
        starts another within LONG_QUERY_S of the query's start."""
        now = time.monotonic()
        return self.starting + sum(_soon_back(worker, now) for worker in self.busy)

    def lent_again(self, worker: WorkerProcess) -> None:
        """`worker` starts on a request that waited behind another (`send`): what the pool knew of the last
        one's query (a long one) is not this one's."""
        with self.lock:
            _on_a_new_request(worker)

    def went_long(self, worker: WorkerProcess) -> None:
        """`worker` said its query runs long: it does not count as coming back soon (`_soon_back`)."""
        with self.lock:
            worker.long_query = True
            self.returned.notify_all()

    def release(self, worker: WorkerProcess) -> None:
        with self.lock:
            self.busy.discard(worker)
            if worker.alive() and len(self.idle) < MAX_IDLE_WORKERS:
                self.idle.append(worker)
                self.returned.notify()
                return
            self.returned.notify()
        worker.close()

    def forget(self, worker: WorkerProcess) -> None:
        with self.lock:
            self.busy.discard(worker)
            self.returned.notify()

    def kill_all(self) -> None:
        """Ctrl-C: every worker of this process, busy or idle, is killed now; the queries they ran are stopped
        on their servers and their answer roles dropped.  An idle worker holding a role ends itself."""
        with self.lock:
            idle, busy, self.idle, self.busy = self.idle, list(self.busy), [], set()
        for worker in busy:
            worker.kill()
        _each(lambda worker: worker.leave_server_clean(), busy)
        self._end(idle)

    def shutdown(self) -> None:
        """At exit: idle workers hold nothing worth a clean exit, and waiting for a Python with pandas and
        a driver loaded to wind down costs a small run a good part of its time, so they are killed; those
        holding a server role end themselves, dropping it."""
        with self.lock:
            idle, self.idle = self.idle, []
        self._end(idle)

    @staticmethod
    def _end(workers: list[WorkerProcess]) -> None:
        idle = [worker for worker in workers if worker.role is None]
        for worker in idle:  # all killed first, then waited for: not one wait after another
            worker.send_kill()
        for worker in idle:
            worker.close()
        holding = [worker for worker in workers if worker.role is not None]
        for worker in holding:
            try:
                worker.stdin.close()  # all of them at once: each drops its role on its way out
            except OSError:
                pass
        _each(WorkerProcess.end, holding)


def _on_a_new_request(worker: WorkerProcess) -> None:
    """What the pool knows of a worker's query, as it starts on a new request: nothing yet."""
    worker.lent_at, worker.query_began, worker.long_query = time.monotonic(), None, False


def _soon_back(worker: WorkerProcess, now: float) -> bool:
    if worker.long_query:
        return False
    if worker.query_began is not None:
        return now - worker.query_began < LONG_QUERY_S
    return now - worker.lent_at < PREPARING_S


def _each(function, workers: list[WorkerProcess]) -> None:
    """`function(worker)` for every worker, side by side (each may wait on a server) a few seconds at most;
    one after the other at the interpreter's exit, where no thread starts."""
    threads = []
    for worker in workers:
        thread = threading.Thread(target=function, args=(worker,), daemon=True)
        try:
            thread.start()
            threads.append(thread)
        except RuntimeError:  # at exit
            function(worker)
    for thread in threads:
        thread.join(ROLE_DROP_WAIT_S + CANCEL_WAIT_S)


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            _pool = _Pool()
        return _pool


def prestart(warm: tuple[str, ...], fork: bool = False) -> None:
    """Start this run's zygote now, importing `warm`, so that its start-up (a second or so with the drivers)
    overlaps the grader's own imports and reading instead of delaying the first query; it does not wait for
    the zygote (the first worker is forked when the first query needs it).  Nothing if a worker exists.
    `fork`: this process forked into the zygote (zygote.py), for a caller that has imported nothing heavy and
    started no thread: the command line's entry."""
    workers = pool()
    with workers.lock:
        if workers.idle or workers.busy:
            return
    zygote.start(warm, main if fork else None)


def kill_all() -> None:
    """Kill every SQL worker this process started (on Ctrl-C): nothing keeps running."""
    if _pool is not None and _pool.pid == os.getpid():
        _pool.kill_all()


@atexit.register
def _shutdown() -> None:
    if _pool is not None and _pool.pid == os.getpid():
        _pool.shutdown()
    zygote.shutdown()


def execute(request: Request, action: str = "run", **extra) -> dict:
    """Run the request in a worker and return its result event; timeouts kill the worker."""
    return send(request, action, **extra).result()


def send(request: Request, action: str = "run", behind: Pending | None = None, **extra) -> Pending:
    """Write the request to a worker: one from the pool, or `behind`'s, where it waits in the pipe until the
    request before it is answered (the worker reads its requests in turn), so the worker goes on at once
    instead of waiting for the grading process to read that answer and write the next request."""
    stop_if_signalled()  # no query starts once the run is stopping
    message = {"action": action, "request": request.to_dict(), **extra}
    if behind is None or behind.worker.closed:
        return Pending(_start(pool(), message), request)
    behind.queued = True
    line = json.dumps(message) + "\n"
    if len(line) > QUEUED_BYTES:  # written after the answer before it is read (`result`), not now
        return Pending(behind.worker, request, line, behind=True)
    behind.worker.write(line)
    return Pending(behind.worker, request, behind=True)


# A request written behind another goes into an empty pipe at once only when it is this small: a longer one
# could fill it while the worker, blocked writing a long answer nobody reads yet, reads nothing.
QUEUED_BYTES = 32 * 1024
NOT_RUN = "not run: its worker was stopped with the request before it"


class Pending:
    """A request written to a worker, answered by `result()`."""

    def __init__(self, worker: WorkerProcess, request: Request, unsent: str | None = None, behind: bool = False):
        self.worker, self.request, self.unsent, self.behind = worker, request, unsent, behind
        self.queued = False  # another request waits behind this one on its worker: the worker is kept

    def result(self) -> dict:
        """The request's result event.  Its time counts from this call (a request behind another has not
        begun before), then from its query's start; past it the worker is killed, and a request behind this
        one is answered as a dead worker's."""
        request, worker = self.request, self.worker
        backend = get_backend(request.backend)
        worker.last_request = request
        try:
            if worker.closed:  # stopped with the request before this one (its timeout, or it died)
                return {"event": "result", "reason": "exec_error", "detail": NOT_RUN}
            if self.unsent is not None:
                worker.write(self.unsent)
            if self.behind:
                pool().lent_again(worker)
            return self._wait(worker, request, backend)
        except BaseException:  # Ctrl-C (or anything) while waiting: the query must not go on without us
            pool().forget(worker)
            worker.kill()
            worker.leave_server_clean()
            raise

    def _wait(self, worker: WorkerProcess, request: Request, backend) -> dict:
        begun = time.monotonic()
        deadline = begun + request.timeout_s + STARTUP_ALLOWANCE_S
        handle = None
        phase: dict = {}  # an action running queries in turn names each one as it starts: a kill says which
        while True:
            try:
                event = worker.next_event(deadline)
            except EOFError:
                pool().forget(worker)
                return {**_died(worker, request, backend), **phase}
            if event is None:
                pool().forget(worker)
                return {**_expired(worker, request, backend, handle, begun), **phase}
            if event["event"] == "started":  # the timeout counts from the query's start, by the worker's clock
                begun = worker.query_began = min(event.get("at", math.inf), time.monotonic())
                deadline = begun + request.timeout_s + backend.kill_grace_s
                phase = {"phase": event["phase"]} if "phase" in event else {}
            elif event["event"] == "long":  # past priority.YIELD_AFTER_S: not back soon (_soon_back)
                pool().went_long(worker)
                priority.went_long()
            elif event["event"] == "handle":
                handle = event
                worker.running = (request, event)
                worker.role = event.get("role") or worker.role
            elif event["event"] == "result":
                worker.running = None
                if not self.queued:
                    pool().release(worker)
                return event


def _start(workers: _Pool, message: dict) -> WorkerProcess:
    for _ in range(2):  # an idle worker may have died since; one fresh retry
        worker = workers.acquire()
        try:
            worker.send(message)
            return worker
        except OSError:
            worker.kill()
    raise RuntimeError("cannot start a SQL worker process")


def _expired(worker: WorkerProcess, request: Request, backend, handle, begun: float) -> dict:
    worker.kill()
    if handle is None and worker.role is not None:  # killed before its query began: its role only
        handle = {"role": worker.role}
    detail = f"no result after {time.monotonic() - begun:.1f} s (timeout {request.timeout_s:g} s): worker killed"
    if handle is not None and backend.cancels_on_kill:
        detail += f"; {cancel_soon(request, handle)}"
    return {
        "event": "result",
        "reason": "timeout",
        "detail": detail,
        "seconds": time.monotonic() - begun,
        "handle": handle,
    }


def cancel_soon(request: Request, handle: dict) -> str:
    """Cancel in a background thread; wait a little for the answer (a busy server may answer late)."""
    answer: list[str] = []
    thread = threading.Thread(target=lambda: answer.append(cancel(request, handle)), daemon=True)
    thread.start()
    thread.join(CANCEL_WAIT_S)
    job = handle.get("job_id") or handle.get("query_id")
    return answer[0] if answer else f"cancel requested for {job} (no answer within {CANCEL_WAIT_S:g} s)"


def cancel(request: Request, handle: dict) -> str:
    """Ask a fresh worker to cancel the server-side job: the killed one cannot any more."""
    limited = Request(
        request.backend,
        "",
        "",
        request.db_ref,
        {**request.settings, "timeout_s": CANCEL_TIMEOUT_S},
        request.environment,
    )
    worker = _start(pool(), {"action": "cancel", "request": limited.to_dict(), "handle": handle})
    try:
        while True:
            event = worker.next_event(time.monotonic() + CANCEL_TIMEOUT_S)
            if event is None:
                worker.kill()
                return "cancelling the job timed out"
            if event["event"] == "result":
                pool().release(worker)
                return event["detail"] if event["reason"] == "ok" else f"cancel failed: {event['detail']}"
    except EOFError:
        worker.close()
        return "cancel failed: the worker died"


def _died(worker: WorkerProcess, request: Request, backend) -> dict:
    worker.close()
    worker.leave_server_clean()  # it could not drop its role (nor end its query) itself
    tail = worker.stderr_tail.decode("utf-8", "replace").strip().splitlines()
    last = tail[-1] if tail else "no message"
    detail = redact(
        f"the worker process died (exit code {worker.proc.returncode}): {last}", _parent_secrets(backend, request)
    )
    # A library that aborts when an allocation fails under the cap (C++ bad_alloc, "out of memory").
    return {"event": "result", "reason": memory_reason("exec_error", " ".join(tail[-3:])), "detail": detail}


def _parent_secrets(backend, request: Request) -> list[str]:
    try:
        return backend.secrets(request)
    except Exception:
        return []


if __name__ == "__main__":
    main()
