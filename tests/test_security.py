"""Untrusted submissions (docs/security.md): each attack of the table, tried as an attacker would.

Every test hashes the gold and submission trees before and after: nothing there may change.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import duckdb
import pytest
from casefolders import write_instance
from endless import DUCKDB_ENDLESS
from helpers_io import run_cli, tree_hash

ROOT = Path(__file__).resolve().parents[1]
SECRET = "s3cr3t-Value/with+chars=="
DUCKDB_SPEC = {"func": "duckdb_match", "parameters": {"gold": "g.duckdb", "condition_tabs": ["t"]}}
TABLE_SPEC = {"func": "table_match", "parameters": {"gold": "g.csv", "ignore_order": True}}


def _duckdb_file(path: Path, *statements: str) -> None:
    con = duckdb.connect(str(path))
    try:
        for statement in statements:
            con.execute(statement)
    finally:
        con.close()


def _hashes(root: Path) -> tuple[str, str]:
    return tree_hash(root / "gold"), tree_hash(root / "sub")


def _grade(root: Path, *extra) -> tuple[object, dict]:
    out = root / "out" / "report.json"
    result = run_cli(
        "--result-dir", root / "sub", "--gold-dir", root / "gold", "--output", out, "--no-plot", "--jobs", "1", *extra
    )
    report = json.loads(out.read_text()) if out.exists() else {}
    return result, {i["instance_id"]: i for i in report.get("instances", [])}


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "elsewhere" / "credentials.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"password": SECRET}))
    return path


# ---- 1. a submitted DuckDB file with views over the grading machine's files ----------------------------


def test_1_a_duckdb_answer_cannot_read_the_machines_files(tmp_path, secret_file):
    gold_db = tmp_path / "g.duckdb"
    _duckdb_file(gold_db, "CREATE TABLE t AS SELECT 1 AS a")
    pred = tmp_path / "p.duckdb"
    _duckdb_file(pred, f"CREATE VIEW t AS SELECT content AS a FROM read_text('{secret_file}')")
    write_instance(
        tmp_path,
        "d1",
        DUCKDB_SPEC,
        "file",
        "p.duckdb",
        {"g.duckdb": gold_db.read_bytes()},
        {"p.duckdb": pred.read_bytes()},
    )
    before = _hashes(tmp_path)
    result, instances = _grade(tmp_path)
    assert result.exit_code == 0, result.output
    assert instances["d1"]["score"] == 0 and instances["d1"]["reason"] != "match"
    everything = result.output + (tmp_path / "out" / "report.json").read_text()
    everything += (tmp_path / "out" / "report.csv").read_text()
    assert SECRET not in everything and "s3cr3t" not in everything
    assert _hashes(tmp_path) == before


# ---- 2. a submitted DuckDB view that never ends ------------------------------------------------------


def test_2_reading_a_duckdb_answer_is_stopped_by_the_timeout(tmp_path):
    gold_db = tmp_path / "g.duckdb"
    _duckdb_file(gold_db, "CREATE TABLE t AS SELECT 1 AS a")
    pred = tmp_path / "p.duckdb"
    _duckdb_file(pred, f"CREATE VIEW t AS {DUCKDB_ENDLESS.replace('SELECT sum', 'SELECT sum')}")
    write_instance(
        tmp_path,
        "d2",
        DUCKDB_SPEC,
        "file",
        "p.duckdb",
        {"g.duckdb": gold_db.read_bytes()},
        {"p.duckdb": pred.read_bytes()},
    )
    before = _hashes(tmp_path)
    started = time.monotonic()
    result, instances = _grade(tmp_path, "--timeout", "2")
    assert result.exit_code == 0, result.output
    assert instances["d2"]["reason"] == "timeout" and instances["d2"]["strict_reason"] == "timeout"
    assert time.monotonic() - started < 60, "hours of work were stopped (the bound is generous on purpose)"
    assert _hashes(tmp_path) == before


# ---- 3. a compressed answer that expands far past --max-file-mb --------------------------------------


def test_3_the_size_limit_counts_decompressed_bytes(tmp_path):
    bomb = gzip.compress(b"a\n" + b"1\n" * (8 * 1024 * 1024), compresslevel=9)  # 16 MB of text
    assert len(bomb) < 100_000
    write_instance(tmp_path, "z1", TABLE_SPEC, "file", "r.csv.gz", {"g.csv": "a\n1\n"}, {"r.csv.gz": bomb})
    before = _hashes(tmp_path)
    result, instances = _grade(tmp_path, "--max-file-mb", "1")
    assert instances["z1"]["reason"] == "unreadable_prediction"
    assert "decompresses to more than 1,048,576 bytes" in instances["z1"]["detail"]
    assert _hashes(tmp_path) == before


# ---- 4. the instance folder itself a link to a folder outside the submission ------------------------


def test_4_an_instance_folder_that_is_a_link_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "r.csv").write_text("a\n1\n")
    write_instance(tmp_path, "l1", TABLE_SPEC, "file", "r.csv", {"g.csv": "a\n1\n"}, {})
    (tmp_path / "sub" / "l1").rmdir()
    (tmp_path / "sub" / "l1").symlink_to(outside, target_is_directory=True)
    before = _hashes(tmp_path)
    result, instances = _grade(tmp_path)
    assert instances["l1"]["reason"] == "unsafe_path" and instances["l1"]["score"] == 0
    validated = run_cli("validate", "--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold")
    assert validated.exit_code != 0 and "symbolic link" in validated.output
    assert _hashes(tmp_path) == before


# ---- 5. EXPLAIN of a text with a second, heavy statement ---------------------------------------------


def test_5_validity_and_plan_cost_never_run_a_second_statement(tmp_path):
    db = tmp_path / "gold" / "databases" / "shop.duckdb"
    db.parent.mkdir(parents=True)
    _duckdb_file(db, "CREATE TABLE t AS SELECT 1 AS a")
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    write_instance(
        tmp_path,
        "e5",
        spec,
        "file",
        "a.sql",
        {"gold.sql": "SELECT a FROM t"},
        {"a.sql": f"SELECT 1; {DUCKDB_ENDLESS}"},
        {"type": "DuckDB", "db": "shop"},
    )
    before = _hashes(tmp_path)
    started = time.monotonic()
    result, instances = _grade(tmp_path, "--timeout", "30", "--ves-iterations", "0")
    assert result.exit_code == 0, result.output
    validity = instances["e5"]["execution"]["validity"]
    assert validity["valid"] is False and "expected 1 statement, got 2" in validity["message"]
    assert time.monotonic() - started < 25, "the endless second statement never ran"
    assert _hashes(tmp_path) == before


def test_5_explain_runs_in_a_worker_not_in_the_grading_process():
    source = (ROOT / "evaluators" / "execution" / "explain.py").read_text()
    assert "worker.execute(" in source and "import duckdb" not in source and "sqlite3" not in source


# ---- 6. a query that spills, against a gold DuckDB database --------------------------------------------


def test_6_spill_files_go_to_the_work_folder_not_beside_the_gold_database(tmp_path):
    db = tmp_path / "gold" / "databases" / "big.duckdb"
    db.parent.mkdir(parents=True)
    _duckdb_file(db, "CREATE TABLE t AS SELECT range AS a, md5(range::VARCHAR) AS b FROM range(3000000)")
    spec = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    write_instance(
        tmp_path,
        "s6",
        spec,
        "file",
        "a.sql",
        {"g.csv": "n\n1\n"},
        {"a.sql": "SELECT count(*) AS n FROM (SELECT b, a FROM t ORDER BY b DESC, a)"},
        {"type": "DuckDB", "db": "big"},
    )
    before = _hashes(tmp_path)
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:  # DuckDB removes its spill folder when it closes: look while the query runs
        while not done.is_set():
            seen.update(os.listdir(db.parent))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result, instances = _grade(tmp_path, "--memory-limit-mb", "64", "--timeout", "120")
    finally:
        done.set()
        watcher.join()
    assert result.exit_code == 0, result.output
    assert instances["s6"]["execution"].get("backend") == "duckdb"
    assert seen == {"big.duckdb"}, f"nothing but the database beside it, ever: {seen}"
    assert _hashes(tmp_path) == before


# ---- 7. a gold SQLite database in WAL mode ---------------------------------------------------------------


def test_7_a_wal_mode_gold_database_gets_no_side_files(tmp_path):
    db = tmp_path / "gold" / "databases" / "wal.sqlite"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t (a INTEGER)")
    con.execute("INSERT INTO t VALUES (1), (2)")
    con.commit()
    con.close()
    assert sorted(p.name for p in db.parent.iterdir()) == ["wal.sqlite"]
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    write_instance(
        tmp_path,
        "w7",
        spec,
        "file",
        "a.sql",
        {"gold.sql": "SELECT a FROM t"},
        {"a.sql": "SELECT a FROM t"},
        {"type": "SQLite", "db": "wal"},
    )
    before = _hashes(tmp_path)
    result, instances = _grade(tmp_path, "--ves-iterations", "2")
    assert instances["w7"]["score"] == 1, instances["w7"]
    assert sorted(p.name for p in db.parent.iterdir()) == ["wal.sqlite"], "no -wal or -shm in the gold folder"
    assert _hashes(tmp_path) == before


# ---- 8. a huge result cut by the timeout -------------------------------------------------------------------


def test_8_no_partial_result_file_stays_after_a_timeout(tmp_path):
    spec = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    write_instance(
        tmp_path,
        "h8",
        spec,
        "file",
        "a.sql",
        {"g.csv": "a\n1\n"},
        {"a.sql": "SELECT range AS a, repeat('x', 200) AS b FROM range(50000000)"},
        {"type": "DuckDB"},
    )
    before = _hashes(tmp_path)
    result, instances = _grade(tmp_path, "--timeout", "2")
    assert instances["h8"]["reason"] in ("timeout", "exec_error"), instances["h8"]
    work = tmp_path / "out" / "report_exec"
    leftovers = [p for p in work.rglob(".*") if p.is_file()] if work.exists() else []
    assert leftovers == [], leftovers
    assert _hashes(tmp_path) == before


# ---- 9 and 10. where reports and work files go -----------------------------------------------------------


@pytest.mark.parametrize("where", ["sub", "gold"])
def test_9_output_or_work_folder_inside_the_inputs_is_refused(tmp_path, where):
    write_instance(tmp_path, "o9", TABLE_SPEC, "file", "r.csv", {"g.csv": "a\n1\n"}, {"r.csv": "a\n1\n"})
    before = _hashes(tmp_path)
    for flag, target in (("--output", tmp_path / where / "report.json"), ("--work-dir", tmp_path / where / "w")):
        result = run_cli("--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold", flag, target)
        assert (
            result.exit_code == 2
            and f"is inside the {'submission' if where == 'sub' else 'gold'} folder" in result.output
        ), result.output
    assert _hashes(tmp_path) == before


def test_10_an_unwritable_output_is_one_line_and_exit_2_before_grading(tmp_path):
    write_instance(tmp_path, "o10", TABLE_SPEC, "file", "r.csv", {"g.csv": "a\n1\n"}, {"r.csv": "a\n1\n"})
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    result = run_cli(
        "--result-dir", tmp_path / "sub", "--gold-dir", tmp_path / "gold", "--output", blocker / "report.json"
    )
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "cannot write there" in result.output
    assert "Graded" not in result.output, "checked before grading"


# ---- 11. Ctrl-C while grading ------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_11_ctrl_c_is_exit_130_with_every_worker_killed_and_no_report(tmp_path):
    spec = {"func": "table_match", "parameters": {"gold": "g.csv"}}
    write_instance(
        tmp_path, "c11", spec, "file", "a.sql", {"g.csv": "a\n1\n"}, {"a.sql": DUCKDB_ENDLESS}, {"type": "DuckDB"}
    )
    before = _hashes(tmp_path)
    out = tmp_path / "out" / "report.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--result-dir",
            str(tmp_path / "sub"),
            "--gold-dir",
            str(tmp_path / "gold"),
            "--output",
            str(out),
            "--timeout",
            "600",
            "--jobs",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and not workers:
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert workers, "the query's worker started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted" in stderr and len(stderr.strip().splitlines()) == 1, stderr
    time.sleep(1.5)
    assert not [pid for pid in workers if _alive(pid)], "no worker keeps running"
    assert not out.exists() and not out.with_suffix(".csv").exists(), "no partial report"
    assert _hashes(tmp_path) == before


# ---- 13. a func whose extra is not installed ----------------------------------------------------------------


def test_13_a_missing_extra_is_missing_extra_with_the_pip_hint(tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "math_verify" or m.startswith("math_verify.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "math_verify", None)  # what an environment without the extra gives
    spec = {"func": "math_equal", "parameters": {"gold": "1/2"}}
    write_instance(tmp_path, "m13", spec, "answer", "0.5")
    result, instances = _grade(tmp_path)
    assert instances["m13"]["reason"] == "missing_extra", instances["m13"]
    assert "pip install '.[rewards]'" in instances["m13"]["detail"]
    assert "pip install '.[rewards]'" in result.output, "the terminal says how to fix it"


# ---- 14. credentials in encoded forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encode",
    [
        lambda s: urllib.parse.quote(s, safe=""),
        urllib.parse.quote_plus,
        lambda s: base64.b64encode(s.encode()).decode(),
        lambda s: base64.b64encode(b"user:" + s.encode()).decode(),  # a basic-auth header
        lambda s: base64.urlsafe_b64encode(b"xy" + s.encode() + b"!").decode(),
    ],
)
def test_14_encoded_credentials_are_redacted(encode):
    from evaluators.execution.backends.base import redact

    message = f"driver error: could not connect with {encode(SECRET)} (retrying)"
    cleaned = redact(message, [SECRET])
    assert "[redacted]" in cleaned and encode(SECRET) not in cleaned
    core = base64.b64encode(SECRET.encode()).decode()[4:-4]
    assert core not in cleaned


def test_14_a_worker_error_carrying_an_encoded_password_is_redacted(tmp_path, monkeypatch):
    from evaluators.execution.backends.settings import SnowflakeSettings
    from evaluators.execution.executor import ExecConfig, run_sql

    credentials = tmp_path / "creds"
    credentials.mkdir()
    (credentials / "snowflake_credential.json").write_text(
        json.dumps({"user": "u", "password": SECRET, "account": "acct"})
    )
    monkeypatch.setenv("SNOWFLAKE_PASSWORD", SECRET)
    config = ExecConfig(
        output_dir=tmp_path / "out",
        credentials_dir=credentials,
        timeout_s=5,
        snowflake=SnowflakeSettings("127.0.0.1", 9, "http"),
    )
    encoded = urllib.parse.quote(SECRET, safe="")
    result = run_sql(
        "snowflake",
        "DB",
        f"SELECT '{encoded}' FROM nowhere_{base64.b64encode(SECRET.encode()).decode()}",
        config,
        tmp_path / "out" / "r.csv",
    )
    assert not result.ok
    assert SECRET not in result.detail and encoded not in result.detail


# ---- 15. an unreachable BigQuery token endpoint -------------------------------------------------------------


def test_15_an_unreachable_token_endpoint_is_a_network_problem_naming_it(tmp_path, monkeypatch):
    pytest.importorskip("google.cloud.bigquery")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from evaluators.execution.executor import ExecConfig, run_sql

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    token_uri = "http://127.0.0.1:9/token"  # the discard port: nothing listens there
    credentials = tmp_path / "creds"
    credentials.mkdir()
    (credentials / "bigquery_credential.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": "grader@p.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": token_uri,
            }
        )
    )
    config = ExecConfig(output_dir=tmp_path / "out", credentials_dir=credentials, timeout_s=20)
    result = run_sql("bigquery", "p.ds", "SELECT 1", config, tmp_path / "out" / "r.csv")
    assert result.reason == "network_error", result
    assert token_uri in result.detail and "BEGIN PRIVATE KEY" not in result.detail


# ---- credentials from the usual places (issue I) ------------------------------------------------------------


def test_bigquery_application_default_credentials_are_used(tmp_path, monkeypatch):
    """gcloud's ADC file is found (a key file there; the token endpoint in it is where the grader goes, on
    loopback), and nothing secret of it appears in the message."""
    pytest.importorskip("google.cloud.bigquery")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from evaluators.execution.executor import ExecConfig, run_sql

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    gcloud = tmp_path / "gcloud"
    gcloud.mkdir()
    token_uri = "http://127.0.0.1:9/adc-token"
    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )
    (gcloud / "application_default_credentials.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "p",
                "private_key_id": "rtoken-Value-5678",
                "private_key": pem,
                "client_email": "adc@p.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": token_uri,
            }
        )
    )
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud))
    config = ExecConfig(output_dir=tmp_path / "out", credentials_dir=tmp_path / "none", timeout_s=20)
    result = run_sql("bigquery", "p.ds", "SELECT 1", config, tmp_path / "out" / "r.csv")
    assert result.reason == "network_error" and token_uri in result.detail, result.detail
    assert "rtoken-Value-5678" not in result.detail and "PRIVATE KEY" not in result.detail


def test_snowflake_connections_toml_with_key_pair_is_read(tmp_path, monkeypatch, snowflake_emulator):
    """The named connection of connections.toml reaches the server (the emulator), private key and all."""
    pytest.importorskip("snowflake.connector")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from evaluators.execution.executor import ExecConfig, run_sql

    for name in [n for n in os.environ if n.startswith("SNOWFLAKE_")]:
        monkeypatch.delenv(name)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "rsa_key.p8"
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    home = tmp_path / "snowhome"
    home.mkdir()
    (home / "connections.toml").write_text(
        f'[grading]\naccount = "{snowflake_emulator.account}"\nuser = "{snowflake_emulator.user}"\n'
        f'authenticator = "SNOWFLAKE_JWT"\nprivate_key_file = "{key_file}"\n'
        f'host = "{snowflake_emulator.host}"\nport = {snowflake_emulator.port}\nprotocol = "http"\n'
    )
    monkeypatch.setenv("SNOWFLAKE_HOME", str(home))
    monkeypatch.setenv("SNOWFLAKE_DEFAULT_CONNECTION_NAME", "grading")
    config = ExecConfig(output_dir=tmp_path / "out", credentials_dir=tmp_path / "none", timeout_s=20)
    result = run_sql("snowflake", None, "SELECT 41 + 1 AS n", config, tmp_path / "out" / "r.csv")
    assert result.ok and result.first_cell == 42, result
    monkeypatch.setenv("SNOWFLAKE_DEFAULT_CONNECTION_NAME", "absent")
    missing = run_sql("snowflake", None, "SELECT 1", config, tmp_path / "out" / "m.csv")
    assert missing.reason == "credentials_missing" and "[absent]" in missing.detail
