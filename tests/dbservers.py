"""Real PostgreSQL and MariaDB servers for the tests: installed when missing, started on free ports with
throwaway data folders, stopped at the end of the session.

Debian's packages (`postgresql`, `mariadb-server`) are installed with apt-get when the binaries are not
there and we are root.  Under xdist each worker is a session of its own and starts its own servers; a file
lock in the temp folder lets one process at a time install, or pick a port and start a server on it (so
two workers never race for one port), and a server that loses the port to any other process is started
again on a new one.  When a server cannot be had, its tests skip with the reason; with `CI` set they
fail instead.  The grader connects as a role without superuser rights, as an operator should; on PostgreSQL
the roles are the ones `evaluate.py db prepare` makes.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

GRADER_PASSWORD = "grader-pw-Secret1"
START_ATTEMPTS = 3  # only a port lost between its probe and the server's bind is retried


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: this server must be available)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def machine_lock(name: str):
    """One holder at a time across every test process of this machine (xdist workers, parallel runs)."""
    with open(Path(tempfile.gettempdir()) / f"spider-grade-tests-{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def apt_install(*packages: str) -> None:
    with machine_lock("apt"):
        _apt_install(*packages)


def _apt_install(*packages: str) -> None:
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        unavailable(f"{', '.join(packages)} not installed and apt-get is not available as root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    install = subprocess.run(
        ["apt-get", *lock, "install", "-y", "-q", *packages], env=env, capture_output=True, text=True
    )
    if install.returncode != 0:
        subprocess.run(["apt-get", *lock, "update", "-q"], env=env, capture_output=True)
        install = subprocess.run(
            ["apt-get", *lock, "install", "-y", "-q", *packages], env=env, capture_output=True, text=True
        )
    if install.returncode != 0:
        unavailable(f"apt-get install {' '.join(packages)} failed: {install.stderr.strip()[-300:]}")


def _as_nobody(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run it as `nobody` when we are root."""
    return (
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command] if os.geteuid() == 0 else command
    )


def _wait_for_port(port: int, seconds: float, log: Path, process: subprocess.Popen | None = None) -> bool:
    """True once the port answers; False when `process` ended first (the port was another's); else fails."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    text = log.read_text(errors="replace")[-800:] if log.exists() else "no log"
    unavailable(f"the server did not open port {port}: {text}")


@dataclass
class PostgresServer:
    port: int
    folder: Path

    @property
    def dsn(self) -> str:
        return f"postgresql://grader:{GRADER_PASSWORD}@127.0.0.1:{self.port}/postgres"

    @property
    def admin_dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def admin(self, database: str = "postgres"):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database, autocommit=True)


def _postgres_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def start_postgres():
    if _postgres_bin("initdb") is None:
        apt_install("postgresql")
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        unavailable("PostgreSQL's initdb/pg_ctl not found after installing")
    folder = Path(tempfile.mkdtemp(prefix="pg-test-"))
    os.chmod(folder, 0o777)
    data, log = folder / "data", folder / "server.log"
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody", "nogroup")
    init = subprocess.run(  # --no-sync, like fsync=off below: throwaway data, and fsync was half of each start
        _as_nobody([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]),
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        unavailable(f"initdb failed: {init.stderr.strip()[-400:]}")
    with machine_lock("ports"):
        for _ in range(START_ATTEMPTS):  # pg_ctl fails when the port went to another process: a new port
            port = free_port()
            options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            command = [pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start"]
            if subprocess.run(_as_nobody(command), capture_output=True).returncode == 0:
                break
        else:
            unavailable(f"PostgreSQL did not start: {log.read_text(errors='replace')[-800:]}")
        _wait_for_port(port, 30, log)
    server = PostgresServer(port, folder)
    from evaluators.execution.pg_roles import prepare_postgres

    # As `evaluate.py db prepare` makes it: gold as `grader`, each answer as a role of its own.
    prepare_postgres(server.admin_dsn, "grader", GRADER_PASSWORD)
    return server, lambda: _stop_postgres(pg_ctl, data, folder)


def _stop_postgres(pg_ctl: str, data: Path, folder: Path) -> None:
    subprocess.run(_as_nobody([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


@dataclass
class MariaDBServer:
    port: int
    socket: str

    @property
    def dsn(self) -> str:
        return f"mysql://grader:{GRADER_PASSWORD}@127.0.0.1:{self.port}"

    def admin(self, database: str | None = None):
        import pymysql

        return pymysql.connect(unix_socket=self.socket, user="root", database=database, autocommit=True)


def start_mariadb():
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        apt_install("mariadb-server")
    daemon = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
    install_db = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    if install_db is None:
        unavailable("mariadb-install-db not found after installing")
    folder = Path(tempfile.mkdtemp(prefix="mariadb-test-"))
    data, log, sock = folder / "data", folder / "server.log", str(folder / "mysqld.sock")
    user = ["--user=root"] if os.geteuid() == 0 else []
    init = subprocess.run(
        [
            install_db,
            "--no-defaults",
            f"--datadir={data}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            *user,
        ],
        capture_output=True,
        text=True,
    )
    if init.returncode != 0:
        unavailable(f"mariadb-install-db failed: {init.stderr.strip()[-400:]}")
    with machine_lock("ports"):
        for _ in range(START_ATTEMPTS):  # a server that lost its port to another process ends: a new port
            port = free_port()
            process = _mariadbd(daemon, folder, port, sock, user)
            if _wait_for_port(port, 60, log, process):
                break
        else:
            unavailable(f"mariadbd ended without opening a port: {log.read_text(errors='replace')[-800:]}")
    server = MariaDBServer(port, sock)
    con = server.admin()
    try:
        con.cursor().execute(f"CREATE USER 'grader'@'%' IDENTIFIED BY '{GRADER_PASSWORD}'")
    finally:
        con.close()
    return server, lambda: _stop_mariadb(process, folder)


def _mariadbd(daemon: str, folder: Path, port: int, sock: str, user: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            daemon,
            "--no-defaults",
            f"--datadir={folder / 'data'}",
            f"--port={port}",
            f"--socket={sock}",
            "--bind-address=127.0.0.1",
            f"--log-error={folder / 'server.log'}",
            f"--pid-file={folder / 'pid'}",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=64M",
            *user,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop_mariadb(process: subprocess.Popen, folder: Path) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    pytest.importorskip("psycopg")
    server, stop = start_postgres()
    try:
        yield server
    finally:
        stop()


@pytest.fixture(scope="session")
def mariadb_server():
    pytest.importorskip("pymysql")
    server, stop = start_mariadb()
    try:
        yield server
    finally:
        stop()
