"""A PostgreSQL server for `bench/bird.py --postgres`: started on a free port in a throwaway folder, every
login by password (`scram-sha-256`, no trust), the roles `evaluate.py db prepare` makes, and the bench's
four tables in a database `bird` (BIRD's PostgreSQL edition keeps every table in one database).

    with postgres_server() as server:      # server.admin_dsn, server.grader_dsn
        ...
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ADMIN_PASSWORD = "bench-admin-pw"
GRADER_PASSWORD = "bench-grader-pw"


@dataclass(frozen=True)
class Server:
    port: int

    def dsn(self, user: str, password: str, database: str = "bird") -> str:
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"

    @property
    def admin_dsn(self) -> str:
        return self.dsn("postgres", ADMIN_PASSWORD)

    @property
    def grader_dsn(self) -> str:
        return self.dsn("grader", GRADER_PASSWORD)


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name)]
    if not found[-1]:
        raise SystemExit(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found[-1]


def _as_nobody(command: list[str]) -> list[str]:
    return (
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command] if os.geteuid() == 0 else command
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server(tables):
    """`tables(connection)` fills the `bird` database (as the administrator) before the roles are made."""
    import psycopg

    folder = Path(tempfile.mkdtemp(prefix="bird-bench-pg-"))
    os.chmod(folder, 0o777)
    data, log, port = folder / "data", folder / "server.log", _free_port()
    (folder / "pw").write_text(ADMIN_PASSWORD + "\n")
    os.chmod(folder / "pw", 0o644)
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    subprocess.run(
        _as_nobody([initdb, "-D", str(data), "-U", "postgres", "--auth=scram-sha-256", f"--pwfile={folder / 'pw'}"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    subprocess.run(_as_nobody([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"]), check=True)
    server = Server(port)
    try:
        with psycopg.connect(server.dsn("postgres", ADMIN_PASSWORD, "postgres"), autocommit=True) as con:
            con.execute("CREATE DATABASE bird")
        with psycopg.connect(server.admin_dsn, autocommit=True) as con:
            tables(con)
        from evaluators.execution.pg_roles import prepare_postgres

        prepare_postgres(server.admin_dsn, "grader", GRADER_PASSWORD)
        time.sleep(0.5)
        yield server
    finally:
        subprocess.run(_as_nobody([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
