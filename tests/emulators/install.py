"""Idempotent installer for the local BigQuery and Snowflake emulators.

Each emulator lives in its own virtual environment because their dependency
sets clash with each other and with the project's own venv (bqemulator needs
duckdb 1.5.x, fakesnow 0.12 needs duckdb 2.0). The venvs are built once per
machine and pin set, in the temp folder (``$SPIDER_GRADE_EMULATORS_DIR``
overrides), and shared by every clone and test worker: a fresh clone's test
run does not spend minutes rebuilding them. A venv's folder name carries the
hash of its pins, so clones with other pins never touch each other's venv.

Usage::

    python tests/emulators/install.py            # both emulators
    python tests/emulators/install.py bigquery   # only one
    python tests/emulators/install.py --force    # rebuild from scratch

A marker file inside each venv records the exact pin set it was built from,
so a second run returns in well under a second. All progress goes to stderr;
pip's own chatter goes to ``install-<name>.log`` beside the venvs.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

EMULATORS_DIR = Path(
    os.environ.get("SPIDER_GRADE_EMULATORS_DIR") or Path(tempfile.gettempdir()) / "spider-grade-emulators"
)
MARKER_NAME = ".spider-emulator-installed.json"
MIN_PYTHON = (3, 11)  # both bqemulator and fakesnow require it


@dataclass(frozen=True)
class EmulatorSpec:
    """What to install into one emulator venv."""

    name: str
    venv_name: str
    executable: str  # console script the server is started with
    requirements: tuple[str, ...]  # what we ask for
    constraints: tuple[str, ...]  # the full set verified to work together

    @property
    def venv(self) -> Path:
        return EMULATORS_DIR / f"{self.venv_name}-{self.fingerprint()[:12]}"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def server_bin(self) -> Path:
        return self.venv / "bin" / self.executable

    def fingerprint(self) -> str:
        text = "\n".join(self.requirements + ("--",) + self.constraints)
        return hashlib.sha256(text.encode()).hexdigest()


BIGQUERY = EmulatorSpec(
    name="bigquery",
    venv_name="bq-venv",
    executable="bqemulator",
    requirements=(
        "bqemulator==1.4.0",
        # duckdb-extension-spatial 1.5.5 is built for exactly duckdb 1.5.5;
        # bqemulator refuses to start without the spatial extension.
        "duckdb==1.5.5",
        "duckdb-extension-spatial==1.5.5",
        # Not declared by bqemulator, but its UDF registration fails without it.
        "numpy==2.4.6",
    ),
    constraints=(
        "alembic==1.20.1",
        "annotated-doc==0.0.7",
        "annotated-types==0.8.0",
        "anyio==4.16.0",
        "asgiref==3.13.0",
        "certifi==2026.10.18",
        "cffi==2.1.1",
        "charset-normalizer==3.5.2",
        "click==8.5.1",
        "cryptography==50.0.2",
        "fastapi==0.165.0",
        "fastavro==1.13.1",
        "google-api-core==2.44.0",
        "google-auth==2.62.2",
        "google-cloud-bigquery-storage==2.43.0",
        "googleapis-common-protos==1.76.0",
        "grpcio==1.85.1",
        "grpcio-health-checking==1.80.1",
        "grpcio-status==1.85.1",
        "grpcio-tools==1.80.1",
        "h11==0.16.0",
        "httpcore==1.0.9",
        "httptools==0.9.0",
        "httpx==0.28.1",
        "idna==3.20",
        "Mako==1.4.3",
        "MarkupSafe==3.0.4",
        "opentelemetry-api==1.45.2",
        "opentelemetry-exporter-http-transport==0.66b2",
        "opentelemetry-exporter-otlp==1.45.2",
        "opentelemetry-exporter-otlp-common==0.66b2",
        "opentelemetry-exporter-otlp-proto-common==1.45.2",
        "opentelemetry-exporter-otlp-proto-grpc==1.45.2",
        "opentelemetry-exporter-otlp-proto-http==1.45.2",
        "opentelemetry-instrumentation==0.66b2",
        "opentelemetry-instrumentation-asgi==0.66b2",
        "opentelemetry-instrumentation-fastapi==0.66b2",
        "opentelemetry-instrumentation-grpc==0.66b2",
        "opentelemetry-proto==1.45.2",
        "opentelemetry-sdk==1.45.2",
        "opentelemetry-semantic-conventions==0.66b2",
        "opentelemetry-util-http==0.66b2",
        "orjson==3.13.0",
        "packaging==26.3",
        "prometheus-client==0.26.0",
        "proto-plus==1.29.0",
        "protobuf==6.33.6",
        "pyarrow==26.0.1",
        "pyasn1==0.6.5",
        "pyasn1-modules==0.4.2",
        "pycparser==3.12",
        "pydantic==2.14.3",
        "pydantic-settings==2.16.3",
        "pydantic-core==2.50.4",
        "PyJWT==2.15.1",
        "python-dotenv==1.2.4",
        "pytz==2026.6",
        "PyYAML==6.0.3",
        "requests==2.34.2",
        "SQLAlchemy==2.1.9",
        "sqlglot==30.11.0",
        "starlette==1.10.0",
        "structlog==26.1.0",
        "typing-inspection==0.4.5",
        "typing-extensions==4.16.0",
        "urllib3==2.8.0",
        "uvicorn==0.54.0",
        "uvloop==0.23.0",
        "watchfiles==1.3.0",
        "websockets==17.4",
        "wrapt==2.5.2",
    ),
)

SNOWFLAKE = EmulatorSpec(
    name="snowflake",
    venv_name="snow-venv",
    executable="fakesnow",
    requirements=(
        "fakesnow[server]==0.12.1",
        # fakesnow imports connector internals that moved in 5.x.
        "snowflake-connector-python==4.8.1",
    ),
    constraints=(
        "anyio==4.16.0",
        "asn1crypto==1.5.1",
        "boto3==1.44.5",
        "botocore==1.44.5",
        "certifi==2026.10.18",
        "cffi==2.1.1",
        "charset-normalizer==3.5.2",
        "click==8.5.1",
        "cryptography==50.0.2",
        "duckdb==2.0.0",
        "filelock==4.2.11",
        "h11==0.16.0",
        "idna==3.20",
        "jmespath==1.1.0",
        "packaging==26.3",
        "platformdirs==4.14.7",
        "pyarrow==26.0.1",
        "pycparser==3.12",
        "PyJWT==2.15.1",
        "pyOpenSSL==26.4.0",
        "python-dateutil==2.9.0.post0",
        "pytz==2026.6",
        "requests==2.34.2",
        "s3transfer==0.19.3",
        "six==1.17.0",
        "sortedcontainers==2.4.0",
        "sqlglot==30.22.0",
        "starlette==1.10.0",
        "tomlkit==0.15.2",
        "typing-extensions==4.16.0",
        "urllib3==2.8.0",
        "uvicorn==0.54.0",
    ),
)

SPECS = {spec.name: spec for spec in (BIGQUERY, SNOWFLAKE)}
# bqemulator's DuckDB finds extensions under $HOME/.duckdb/extensions; the
# BigQuery server is started with HOME pointing here (inside its venv, rebuilt
# with it) so nothing else is touched (DuckDB has no env var for the folder).
DUCKDB_HOME = BIGQUERY.venv / "duckdb-home"

# Run inside bq-venv: copies the wheel-shipped spatial extension to where
# DuckDB looks for it, then proves that INSTALL/LOAD (what bqemulator runs at
# startup) succeed without network access.
_PLACE_SPATIAL = r"""
import pathlib, shutil, sys
import duckdb, duckdb_extension_spatial
con = duckdb.connect()
version = con.execute("SELECT version()").fetchone()[0]  # e.g. v1.5.5
platform = con.execute("PRAGMA platform").fetchone()[0]  # e.g. linux_amd64
src = pathlib.Path(duckdb_extension_spatial.__file__).parent / "extensions" / version / "spatial.duckdb_extension"
dst_dir = pathlib.Path(sys.argv[1]) / ".duckdb" / "extensions" / version / platform
dst_dir.mkdir(parents=True, exist_ok=True)
shutil.copyfile(src, dst_dir / src.name)
con.execute("INSTALL spatial")
con.execute("LOAD spatial")
assert con.execute("SELECT ST_AsText(ST_Point(1, 2))").fetchone()[0] == "POINT (1 2)"
print(dst_dir / src.name)
"""


class InstallError(RuntimeError):
    """An emulator could not be installed; the message carries the log tail."""


def log(message: str) -> None:
    print(f"[emulators] {message}", file=sys.stderr, flush=True)


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextlib.contextmanager
def _install_lock():
    """Serialise installers (e.g. parallel pytest workers) on one machine."""
    EMULATORS_DIR.mkdir(parents=True, exist_ok=True)
    with open(EMULATORS_DIR / ".install.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _marker_path(spec: EmulatorSpec) -> Path:
    return spec.venv / MARKER_NAME


def is_installed(spec: EmulatorSpec) -> bool:
    """True when the venv was completed from exactly the current pin set."""
    try:
        marker = json.loads(_marker_path(spec).read_text())
    except (OSError, ValueError):
        return False
    return (
        marker.get("fingerprint") == spec.fingerprint()
        and spec.python.exists()
        and spec.server_bin.exists()
        and all(Path(p).exists() for p in marker.get("extra_files", []))
    )


def _run_logged(cmd: list[str], log_path: Path, env: dict[str, str] | None = None) -> str:
    """Run a command appending its output to log_path; return its stdout."""
    with open(log_path, "a") as log_file:
        log_file.write(f"\n$ {' '.join(cmd)}\n")
        log_file.flush()
        result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log_file, text=True, env=env, check=False)
        log_file.write(result.stdout)
    if result.returncode != 0:
        raise InstallError(
            f"command failed ({result.returncode}): {' '.join(cmd)}\n--- tail of {log_path} ---\n{_log_tail(log_path)}"
        )
    return result.stdout


def _base_python() -> str:
    """Interpreter used to create the venvs (the one running this script)."""
    if sys.version_info < MIN_PYTHON:
        raise InstallError(
            f"Python >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]} needed for the emulators, running {sys.version.split()[0]}"
        )
    return sys.executable


def _pip_install(spec: EmulatorSpec, log_path: Path) -> None:
    # No --no-compile: it would halve install time, but with
    # PYTHONDONTWRITEBYTECODE=1 (set on these machines) every server start
    # would then recompile its imports from source (~5 s more each).
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join(spec.constraints) + "\n")
        _run_logged(
            [
                str(spec.python),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-c",
                str(constraints),
                *spec.requirements,
            ],
            log_path,
        )


def _place_spatial_extension(log_path: Path) -> list[str]:
    env = {**os.environ, "HOME": str(DUCKDB_HOME)}
    out = _run_logged([str(BIGQUERY.python), "-c", _PLACE_SPATIAL, str(DUCKDB_HOME)], log_path, env=env)
    return [out.strip().splitlines()[-1]]


def _build(spec: EmulatorSpec) -> None:
    log_path = EMULATORS_DIR / f"install-{spec.name}.log"
    log_path.write_text("")
    # A half-built venv (crash, pin change) is never patched: start clean.
    shutil.rmtree(spec.venv, ignore_errors=True)
    log(f"{spec.name}: creating {spec.venv}")
    _run_logged([_base_python(), "-m", "venv", str(spec.venv)], log_path)
    log(f"{spec.name}: pip install {' '.join(spec.requirements)} (log: {log_path})")
    _pip_install(spec, log_path)
    extra_files: list[str] = []
    if spec is BIGQUERY:
        log(f"bigquery: placing DuckDB spatial extension under {DUCKDB_HOME}")
        extra_files = _place_spatial_extension(log_path)
    marker = {
        "fingerprint": spec.fingerprint(),
        "requirements": list(spec.requirements),
        "extra_files": extra_files,
        "installed_at": time.time(),
    }
    _marker_path(spec).write_text(json.dumps(marker, indent=2))


def ensure_installed(name: str, force: bool = False) -> EmulatorSpec:
    """Install one emulator unless it is already installed from the same pins."""
    spec = SPECS[name]
    if not force and is_installed(spec):
        return spec
    with _install_lock():
        # Another process may have finished the job while we waited.
        if force or not is_installed(spec):
            started = time.monotonic()
            _build(spec)
            log(f"{spec.name}: installed in {time.monotonic() - started:.0f}s")
    return spec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"emulators to install: {', '.join(SPECS)} (default: all)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if installed")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(SPECS))
    if unknown:
        parser.error(f"unknown emulator(s): {', '.join(unknown)}")
    try:
        for name in args.names or list(SPECS):
            spec = ensure_installed(name, force=args.force)
            log(f"{name}: ready ({spec.server_bin})")
    except InstallError as exc:
        log(f"install failed: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
