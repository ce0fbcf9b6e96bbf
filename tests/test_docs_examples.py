"""The docs' examples are tests (issue P): every `evaluate.py` command shown in README.md, docs/*.md and the
`--help` epilogs runs verbatim, from a fresh working folder, with its relative paths, and must print the
figure tests/data/doc_examples.yaml says (which also says why that figure is right).

A relative `--db_root_path` once zeroed a whole BIRD run, with the help text's own example: this is the test
that would have caught it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from doc_examples import ROOT, SHARED_LITE_GOLD, build_world, documented_commands, normalise
from forked_cli import WarmCli

TABLE = Path(__file__).parent / "data" / "doc_examples.yaml"
EXAMPLES = {normalise(entry["command"]): entry for entry in yaml.safe_load(TABLE.read_text())}
# The README's first command runs as the user's shell starts it, like every command with shell syntax; the
# other bare `python evaluate.py ...` commands run in children of a warm process (tests/forked_cli.py).
FRESH = next(iter(EXAMPLES))
SCORE_LINE = re.compile(r"(\d+(?:\.\d+)?)%\s+\d+\s+<- (score|strict_score)")


def test_every_example_in_the_docs_is_in_the_table_and_nothing_else():
    shown = documented_commands()
    unlisted = sorted(f"{where}: {command}" for command, where in shown.items() if command not in EXAMPLES)
    stale = sorted(command for command in EXAMPLES if command not in shown)
    assert not unlisted, "examples shown but not tested; add them to tests/data/doc_examples.yaml:\n" + "\n".join(
        unlisted
    )
    assert not stale, "examples tested but no longer shown anywhere:\n" + "\n".join(stale)


def _shell(command: str) -> str:
    """The command as a user's shell runs it, with this interpreter and this checkout's evaluate.py."""
    python = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'evaluate.py'))}"
    return re.sub(r"(^|\s)(?:\.venv/bin/)?python evaluate\.py", lambda m: m.group(1) + python, command)


def _plain_args(command: str) -> list[str] | None:
    """The arguments of a bare `python evaluate.py ARGS` (no shell syntax beyond quoting), else None."""
    if re.search(r"[$`~*?\[{}|&;<>()!\\]", command):
        return None
    words = shlex.split(command)
    if words[:2] in (["python", "evaluate.py"], [".venv/bin/python", "evaluate.py"]):
        return words[2:]
    return None


def _run(command: str, cwd: Path, env: dict, cli: WarmCli | None = None) -> subprocess.CompletedProcess:
    """A bare command runs in a child forked from the warm CLI process when one is given (a fresh process
    state, without Python's start-up); anything else, as a user's shell runs it."""
    args = _plain_args(command) if cli is not None else None
    if cli is not None and args is not None:
        result = cli.run(args, cwd, env)
    else:
        result = subprocess.run(
            ["bash", "-c", _shell(command)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
        )
    result.output = result.stdout + result.stderr  # type: ignore[attr-defined]
    return result


def _printed_scores(output: str) -> dict[str, float]:
    return {name: float(value) / 100 for value, name in SCORE_LINE.findall(output)}


def _check_scores(entry: dict, output: str, work: Path) -> None:
    if "report" in entry:
        summary = json.loads((work / entry["report"]).read_text())["summary"]
        found = {"score": summary["score"], "strict_score": summary["strict_score"]}
    else:
        found = _printed_scores(output)
    for key, name in (("score", "score"), ("strict", "strict_score")):
        if key in entry:
            assert found.get(name) == pytest.approx(entry[key], abs=5e-5), (name, found, output)


@pytest.fixture(scope="module")
def warm_cli():
    with WarmCli() as cli:
        yield cli


@pytest.fixture(scope="module")
def world_template(tmp_path_factory) -> Path:
    """build_world once; each test gets its own copy (the commands write into their folder)."""
    root = tmp_path_factory.mktemp("doc_world")
    build_world(root)
    return root


def _fresh_world(template: Path, tmp_path: Path) -> Path:
    shutil.copytree(template, tmp_path, symlinks=True, dirs_exist_ok=True)
    return tmp_path / "work"


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory):
    pytest.importorskip("ray", reason="pip install '.[ray]'")
    from ray.cluster_utils import Cluster

    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("ray_cwd"))  # a cluster's processes do not share the grader's folder
    try:
        head = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    finally:
        os.chdir(here)
    yield head.address
    head.shutdown()


def _environment(entry: dict, request) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["COLUMNS"] = "200"
    if entry.get("cluster") == "ray":
        env["RAY_ADDRESS"] = request.getfixturevalue("ray_address")
    return env


def _admin_dsn(kind: str, request) -> str:
    """An account that may create databases, as `db load-sqlite --help` asks for (and roles, as `db prepare`)."""
    server = request.getfixturevalue({"postgres": "postgres_server", "mysql": "mariadb_server"}[kind])
    with server.admin() as admin:
        if kind == "postgres":
            exists = admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'loader'").fetchone()
            verb = "ALTER" if exists else "CREATE"  # an earlier example's database may belong to it
            admin.execute(f"{verb} ROLE loader LOGIN CREATEDB CREATEROLE PASSWORD 'load-pw'")
            return f"postgresql://loader:load-pw@127.0.0.1:{server.port}/postgres"
        with admin.cursor() as cursor:
            cursor.execute("CREATE USER IF NOT EXISTS 'loader'@'%' IDENTIFIED BY 'load-pw'")
            cursor.execute("GRANT ALL PRIVILEGES ON *.* TO 'loader'@'%'")
        return f"mysql://loader:load-pw@127.0.0.1:{server.port}"


@pytest.fixture(scope="module")
def livesql_dsn(postgres_server) -> str:
    """The generated PostgreSQL templates, owned by the role the grader connects as (docs/livesql.md)."""
    from livesql_generator import load_postgres

    server = postgres_server
    with server.admin() as admin:
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'livesql_docs'").fetchone():
            admin.execute("CREATE ROLE livesql_docs LOGIN CREATEDB PASSWORD 'docs-pw'")
    load_postgres(server.admin, "livesql_docs")
    return f"postgresql://livesql_docs:docs-pw@127.0.0.1:{server.port}/postgres"


def _with_server(command: str, entry: dict, request) -> str:
    if "server" not in entry:
        return command
    if entry["server"] == "postgres-livesql":
        return re.sub(r"--postgres-dsn \S+", f"--postgres-dsn {request.getfixturevalue('livesql_dsn')}", command)
    if entry["server"] == "postgres-livesql-admin":  # the superuser, and the role the livesql examples use
        request.getfixturevalue("livesql_dsn")
        command = re.sub(r"--role \S+", "--role livesql_docs", command)
        return re.sub(r"--dsn \S+", f"--dsn {request.getfixturevalue('postgres_server').admin_dsn}", command)
    return re.sub(r"--dsn \S+", f"--dsn {_admin_dsn(entry['server'], request)}", command)


# A command on a Ray cluster runs in the xdist group of the other Ray tests: `--ray auto` finds any cluster.
_ON_RAY = [pytest.mark.xdist_group("ray")]
CASES = [pytest.param(c, marks=_ON_RAY if e.get("cluster") == "ray" else ()) for c, e in EXAMPLES.items()]


@pytest.mark.parametrize("command", CASES, ids=[f"{n:02d}" for n in range(len(EXAMPLES))])
def test_the_documented_command_prints_the_documented_figure(command, tmp_path, request, world_template, warm_cli):
    entry = EXAMPLES[command]
    if entry.get("shared") and not SHARED_LITE_GOLD.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED_LITE_GOLD} is missing")
        pytest.skip(f"{SHARED_LITE_GOLD} is missing")
    work = _fresh_world(world_template, tmp_path)
    env = _environment(entry, request)
    cli = None if command == FRESH else warm_cli
    for before in entry.get("before", []):
        assert _run(before, work, env, cli).returncode == 0, before
    result = _run(_with_server(normalise(entry.get("runs", command)), entry, request), work, env, cli)
    assert result.returncode == entry["exit"], result.output
    for text in entry.get("printed", []):
        assert text in result.output, (text, result.output)
    for name in entry.get("files", []):
        assert (work / name).is_file(), (name, sorted(p.name for p in work.rglob("*")))
    _check_scores(entry, result.output, work)
    assert "Traceback" not in result.output, result.output
