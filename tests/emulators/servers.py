"""Start and stop the local BigQuery (bqemulator) and Snowflake (fakesnow) servers.

Both classes are context managers::

    with BigQueryEmulator() as bq:
        client = bq.client()          # google.cloud.bigquery.Client
    with SnowflakeEmulator() as sf:
        conn = sf.connect()           # snowflake.connector connection

Each server runs as a subprocess of its own venv (see install.py), in its own
process group so that stop() can take down the whole tree, on a free port of
127.0.0.1, logging to a file in a private temporary directory.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from . import install

HOST = "127.0.0.1"
_PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>


class EmulatorStartError(RuntimeError):
    """The server did not come up; the message includes the log tail."""


def free_port() -> int:
    """Ask the kernel for a port that is free right now on 127.0.0.1.

    There is a small window in which another process could take it; start()
    retries with new ports if the server then fails to bind.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _load_prctl():
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux/glibc: no parent-death signal
        return None


# Resolved in the parent: the child must not dlopen between fork and exec.
_PRCTL = _load_prctl()


def _die_with_parent() -> None:
    """Runs in the child before exec: get SIGKILL if the test process dies.

    Without this a pytest killed by SIGKILL (CI timeout) would leave the
    emulators running and burning CPU. SIGKILL rather than SIGTERM because
    bqemulator ignores SIGTERM while a query runs. Caveat: the signal fires
    when the *thread* that started the server exits, so start servers from a
    long-lived thread (pytest fixtures run on the main thread).
    """
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


class _EmulatorProcess:
    """Common lifecycle: spawn, wait until it answers, stop the process group."""

    name = "emulator"
    spec: install.EmulatorSpec
    startup_timeout = 60.0
    stop_timeout = 10.0
    start_attempts = 3  # only a lost race for a free port is retried

    def __init__(self, startup_timeout: float | None = None) -> None:
        if startup_timeout is not None:
            self.startup_timeout = startup_timeout
        self.port: int | None = None
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self.log_path: Path | None = None
        # Last line of defence for a test run that forgets to call stop().
        atexit.register(self.stop)

    # -- subclass hooks -------------------------------------------------------

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _env(self) -> dict[str, str]:
        return dict(os.environ)

    def _ensure_installed(self) -> None:
        install.ensure_installed(self.spec.name)

    def _pick_ports(self) -> None:
        self.port = free_port()

    def _is_ready(self) -> bool:
        """True once the server answers a request (any HTTP status)."""
        return _http_status(f"http://{HOST}:{self.port}/") is not None

    # -- public API -----------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> _EmulatorProcess:
        if self.running:
            return self
        self._ensure_installed()
        self._workdir = Path(tempfile.mkdtemp(prefix=f"{self.name}-emulator-"))
        self.log_path = self._workdir / "server.log"
        for attempt in range(1, self.start_attempts + 1):
            try:
                self._start_once()
                return self
            except EmulatorStartError:
                # The work dir stays until stop(): the error names its log file.
                self._kill_group()
                if attempt == self.start_attempts or not self._lost_port_race():
                    raise
        raise AssertionError("start_attempts must be at least 1")

    def stop(self) -> None:
        """Stop the server and its children; safe to call more than once."""
        self._kill_group()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def restart(self) -> None:
        """Kill and start again on new ports; all in-memory data is lost.

        The only way to stop a runaway query on either emulator (see README).
        """
        self.stop()
        self.start()

    def _lost_port_race(self) -> bool:
        """Another process grabbed one of our free ports between probe and bind."""
        log = self.log_tail(lines=10_000).lower()
        # uvicorn: "[Errno 98] ... address already in use"; grpc: "Failed to bind to address"
        return "address already in use" in log or "failed to bind to address" in log

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    # -- internals ------------------------------------------------------------

    def _start_once(self) -> None:
        self._kill_group()
        self._pick_ports()
        assert self._workdir is not None and self.log_path is not None
        started = time.monotonic()
        with open(self.log_path, "ab") as log_file:
            self._proc = subprocess.Popen(
                self._command(),
                cwd=self._workdir,  # keeps stray config files in the repo out of reach
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group, so killpg gets everything
                preexec_fn=_die_with_parent,
            )
        self._wait_until_ready(started)
        self.startup_seconds = time.monotonic() - started

    def _wait_until_ready(self, started: float) -> None:
        deadline = started + self.startup_timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise self._start_error(f"exited with code {self._proc.returncode} during startup")
            if self._is_ready():
                return
            time.sleep(0.1)
        raise self._start_error(f"did not answer within {self.startup_timeout:g}s")

    def _start_error(self, what: str) -> EmulatorStartError:
        return EmulatorStartError(
            f"{self.name} emulator on port {self.port} {what}: {' '.join(self._command())}\n"
            f"--- tail of {self.log_path} ---\n{self.log_tail()}"
        )

    def _kill_group(self) -> None:
        """SIGTERM the process group, then SIGKILL whatever is left."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if _signal_group(proc.pid, signal.SIGTERM):
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                pass
            # Also reaches children that outlived the group leader.
            _signal_group(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)  # reap; SIGKILL cannot be ignored


def _signal_group(pgid: int, sig: int) -> bool:
    """Send sig to a process group; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False


def _http_status(url: str, timeout: float = 2.0) -> int | None:
    """HTTP status of a GET, or None if nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError):
        return None


class BigQueryEmulator(_EmulatorProcess):
    """bqemulator: BigQuery REST API (and gRPC storage API) backed by DuckDB.

    Data is in memory and lost when the server stops. Point the official
    client at ``endpoint`` with anonymous credentials, or use ``client()``.
    """

    name = "bigquery"
    spec = install.BIGQUERY
    # SIGTERM is only honoured between queries (a running query blocks the
    # server's event loop), so do not wait long before SIGKILL.
    stop_timeout = 3.0

    def __init__(self, project: str = "spider-emulator", startup_timeout: float | None = None) -> None:
        super().__init__(startup_timeout)
        self.project = project
        self.grpc_port: int | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def _pick_ports(self) -> None:
        self.port = free_port()
        self.grpc_port = free_port()
        while self.grpc_port == self.port:
            self.grpc_port = free_port()

    def _command(self) -> list[str]:
        return [
            str(self.spec.server_bin),
            "start",
            "--rest-host",
            HOST,
            "--rest-port",
            str(self.port),
            "--grpc-host",
            HOST,
            "--grpc-port",
            str(self.grpc_port),
            "--project",
            self.project,
            "--ephemeral",
            "--log-format",
            "console",
        ]

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BQEMU_")}
        # DuckDB reads extensions from $HOME/.duckdb; install.py put spatial there.
        env["HOME"] = str(install.DUCKDB_HOME)
        # avro would be downloaded from the internet at startup; we have no network.
        env["BQEMU_ENABLE_FORMAT_EXTENSIONS"] = "false"
        return env

    def _is_ready(self) -> bool:
        # The REST app answers 200 here only after DuckDB and the catalog are up.
        url = f"{self.endpoint}/bigquery/v2/projects/{self.project}/datasets"
        return _http_status(url) == 200

    def client(self, **kwargs: Any):
        """A google.cloud.bigquery.Client talking to this emulator."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import bigquery

        kwargs.setdefault("project", self.project)
        kwargs.setdefault("credentials", AnonymousCredentials())
        kwargs.setdefault("client_options", {"api_endpoint": self.endpoint})
        return bigquery.Client(**kwargs)


class SnowflakeEmulator(_EmulatorProcess):
    """fakesnow in server mode: the Snowflake REST protocol backed by DuckDB.

    fakesnow accepts any non-empty user/password/account (it checks nothing);
    the connector itself insists that all three are non-empty.
    """

    name = "snowflake"
    spec = install.SNOWFLAKE
    startup_timeout = 30.0
    user = "spider"
    password = "emulator"
    account = "fakesnow"

    @property
    def host(self) -> str:
        return HOST

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    def _command(self) -> list[str]:
        return [str(self.spec.server_bin), "-s", "--host", HOST, "-p", str(self.port)]

    def connect_kwargs(self, **overrides: Any) -> dict[str, Any]:
        """Arguments for snowflake.connector.connect() that reach this server."""
        kwargs: dict[str, Any] = {
            "user": self.user,
            "password": self.password,
            "account": self.account,
            "host": HOST,
            "port": self.port,
            "protocol": "http",
            # Bounds how long the connector keeps retrying once the server is
            # gone; without it a dead server hangs a query for many minutes.
            "network_timeout": 30,
            "login_timeout": 30,
        }
        kwargs.update(overrides)
        return kwargs

    def connect(self, **overrides: Any):
        """A snowflake.connector connection to this server."""
        import snowflake.connector

        return snowflake.connector.connect(**self.connect_kwargs(**overrides))
