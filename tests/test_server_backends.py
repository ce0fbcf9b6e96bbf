"""PostgreSQL and MariaDB backends on real servers started by the test session (tests/dbservers.py)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest
from casefolders import write_instance
from dbservers import GRADER_PASSWORD, free_port
from helpers_io import run_cli, tree_hash

from evaluators.execution import worker
from evaluators.execution.backends.base import Request
from evaluators.execution.backends.settings import MySQLSettings, PostgresSettings
from evaluators.execution.executor import ExecConfig, run_sql

ROWS = [(1, "Ann", 30, 2.5, "2010-01-01"), (2, "bob", 41, None, "2011-05-02"), (3, "Cy", 30, 4.0, None)]


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("bird") / "school.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE people (id INTEGER, name TEXT, age INTEGER, score REAL, joined DATE)")
    con.executemany("INSERT INTO people VALUES (?,?,?,?,?)", ROWS)
    con.execute('CREATE TABLE "odd name" ("a b" TEXT, n INTEGER)')
    con.execute("INSERT INTO \"odd name\" VALUES ('x', 1), ('y', '2a')")  # SQLite keeps text in an INTEGER column
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="module")
def loaded(sqlite_db, postgres_server, mariadb_server):
    admin_pg = f"postgresql://postgres@127.0.0.1:{postgres_server.port}/postgres"
    result = run_cli("db", "load-sqlite", sqlite_db, "--engine", "postgres", "--dsn", admin_pg, "--replace")
    assert result.exit_code == 0, result.output
    assert "loaded 2 table(s), 5 row(s) into database 'school'" in result.output
    with postgres_server.admin("school") as con:
        con.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO grader")
        con.execute("CREATE SEQUENCE counter")
        con.execute("GRANT USAGE ON SEQUENCE counter TO grader")
    con = mariadb_server.admin()
    try:
        con.cursor().execute("GRANT ALL ON school.* TO 'grader'@'%'")  # the read-only transaction must hold (not FILE)
    finally:
        con.close()
    root = f"mysql://root@localhost/?unix_socket={mariadb_server.socket}"
    result = run_cli("db", "load-sqlite", sqlite_db, "--engine", "mysql", "--dsn", root, "--replace")
    assert result.exit_code == 0, result.output
    return postgres_server, mariadb_server


def _config(tmp_path, servers, **extra):
    pg, maria = servers
    return ExecConfig(
        output_dir=tmp_path / "out", postgres=PostgresSettings(pg.dsn), mysql=MySQLSettings(maria.dsn), **extra
    )


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_a_query_runs_and_returns_typed_rows(engine, loaded, tmp_path):
    result = run_sql(
        engine,
        "school",
        "SELECT id, name, score FROM people ORDER BY id",
        _config(tmp_path, loaded),
        tmp_path / "r.csv",
        collect="rows",
    )
    assert result.ok, result.detail
    assert result.rows()[1] == [(1, "Ann", 2.5), (2, "bob", None), (3, "Cy", 4.0)]


@pytest.mark.parametrize(
    "engine, sql",
    [
        ("postgres", "SELECT nextval('counter')"),  # a write hidden in a query: the read-only transaction refuses it
        ("postgres", "DELETE FROM people"),
        ("postgres", "COPY (SELECT 1) TO PROGRAM 'touch /tmp/pwned'"),
        ("mysql", "DELETE FROM people"),
        ("mysql", "SELECT * FROM people INTO OUTFILE '/tmp/pwned.txt'"),
        ("mysql", "SELECT * FROM people FOR UPDATE"),
    ],
)
def test_writes_fail_and_nothing_changes(engine, sql, loaded, tmp_path):
    result = run_sql(engine, "school", sql, _config(tmp_path, loaded), tmp_path / "r.csv")
    assert not result.ok and result.reason == "exec_error", result
    count = run_sql(engine, "school", "SELECT count(*) FROM people", _config(tmp_path, loaded), tmp_path / "c.csv")
    assert count.first_cell == 3


def _active(engine: str, servers, needle: str) -> list:
    pg, maria = servers
    if engine == "postgres":
        with pg.admin() as con:
            return con.execute(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE %s AND pid <> pg_backend_pid()", (f"%{needle}%",)
            ).fetchall()
    con = maria.admin()
    try:
        cursor = con.cursor()
        cursor.execute(
            "SELECT id FROM information_schema.processlist WHERE info LIKE %s AND id <> connection_id()",
            (f"%{needle}%",),
        )
        return list(cursor.fetchall())
    finally:
        con.close()


@pytest.mark.parametrize(
    "engine, sql",
    [
        ("postgres", "SELECT count(*) FROM generate_series(1, 1000000000000) AS endless_a"),
        ("mysql", "SELECT sum(a.seq % 7 + endless_a.seq) FROM seq_1_to_1000000 a, seq_1_to_1000000 endless_a"),
    ],
)
def test_a_timeout_stops_the_query_on_the_server(engine, sql, loaded, tmp_path):
    result = run_sql(engine, "school", sql, _config(tmp_path, loaded, timeout_s=1.0), tmp_path / "r.csv")
    assert result.reason == "timeout", result
    deadline = time.monotonic() + 10
    while _active(engine, loaded, "endless_a") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _active(engine, loaded, "endless_a") == [], "gone from the server's process list"


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_cancel_stops_a_query_left_behind_by_a_killed_worker(engine, loaded, tmp_path):
    """The backstop: the parent cancels by the handle the worker sent first (pg_cancel_backend, KILL QUERY)."""
    pg, maria = loaded
    import psycopg
    import pymysql

    holder: dict = {}

    def runaway() -> None:
        try:
            if engine == "postgres":
                with psycopg.connect(pg.dsn.replace("/postgres", "/school")) as con:
                    holder["id"] = con.info.backend_pid
                    con.execute("SELECT count(*) FROM generate_series(1, 1000000000000) AS endless_b")
            else:
                con = pymysql.connect(host="127.0.0.1", port=maria.port, user="grader", password=GRADER_PASSWORD)
                holder["id"] = con.thread_id()
                con.cursor().execute(
                    "SELECT sum(a.seq % 7 + endless_b.seq) FROM seq_1_to_1000000 a, seq_1_to_1000000 endless_b"
                )
        except Exception as exc:  # the cancel ends it with an error
            holder["error"] = str(exc)

    thread = threading.Thread(target=runaway, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not _active(engine, loaded, "endless_b") and time.monotonic() < deadline:
        time.sleep(0.1)
    handle = {"backend_pid": holder["id"]} if engine == "postgres" else {"connection_id": holder["id"]}
    request = Request(engine, "", "", "school", _config(tmp_path, loaded).settings(engine), {})
    answer = worker.cancel(request, handle)
    thread.join(20)
    assert not thread.is_alive() and "error" in holder, answer
    assert _active(engine, loaded, "endless_b") == []


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_connection_passwords_are_never_printed(engine, loaded, tmp_path):
    pg, maria = loaded
    closed = free_port()  # nothing listens: the driver's error names host and port, and must not say the password
    wrong = (
        f"postgresql://grader:{GRADER_PASSWORD}@127.0.0.1:{closed}/postgres"
        if engine == "postgres"
        else f"mysql://grader:{GRADER_PASSWORD}x@127.0.0.1:{maria.port}"
    )
    config = ExecConfig(output_dir=tmp_path / "out", postgres=PostgresSettings(wrong), mysql=MySQLSettings(wrong))
    result = run_sql(engine, "school", "SELECT 1", config, tmp_path / "r.csv")
    assert not result.ok and GRADER_PASSWORD not in result.detail, result.detail


def test_pg_variables_are_read(loaded, tmp_path, monkeypatch):
    pg, _ = loaded
    for name, value in {
        "PGHOST": "127.0.0.1",
        "PGPORT": str(pg.port),
        "PGUSER": "grader",
        "PGPASSWORD": GRADER_PASSWORD,
    }.items():
        monkeypatch.setenv(name, value)
    result = run_sql(
        "postgres", "school", "SELECT count(*) FROM people", ExecConfig(output_dir=tmp_path / "out"), tmp_path / "r.csv"
    )
    assert result.ok and result.first_cell == 3, result.detail


QUESTIONS = [  # (gold, prediction): written once, run on SQLite, PostgreSQL and MariaDB alike
    ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age = 30"),
    ("SELECT name FROM people WHERE age = 30", "SELECT name FROM people WHERE age > 29"),
    ("SELECT count(*) FROM people", "SELECT count(id) FROM people"),
    ("SELECT max(score) FROM people", "SELECT min(score) FROM people"),
    ("SELECT name, age FROM people", "SELECT age, name FROM people"),
    ("SELECT joined FROM people WHERE id = 1", "SELECT joined FROM people WHERE name = 'Ann'"),
    ("SELECT name FROM people WHERE name = 'ann'", "SELECT name FROM people WHERE name = 'Ann'"),
]


def test_the_three_engines_give_the_same_ex(loaded, sqlite_db, tmp_path):
    pg, maria = loaded
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    for engine, kind in (("sqlite", "SQLite"), ("postgres", "PostgreSQL"), ("mysql", "MySQL")):
        root = tmp_path / engine
        for n, (gold, pred) in enumerate(QUESTIONS):
            write_instance(
                root,
                f"q{n}",
                spec,
                "file",
                "a.sql",
                {"gold.sql": gold},
                {"a.sql": pred},
                {"type": kind, "db": "school"},
            )
        (root / "gold" / "databases").mkdir()
        (root / "gold" / "databases" / "school.sqlite").write_bytes(sqlite_db.read_bytes())
    verdicts = {}
    for engine in ("sqlite", "postgres", "mysql"):
        root = tmp_path / engine
        before = tree_hash(root / "gold")
        out = root / "out" / "report.json"
        result = run_cli(
            "--result-dir",
            root / "sub",
            "--gold-dir",
            root / "gold",
            "--output",
            out,
            "--no-plot",
            "--postgres-dsn",
            pg.dsn,
            "--mysql-dsn",
            maria.dsn,
            "--ves-iterations",
            "0",
            "--jobs",
            "1",
        )
        assert result.exit_code == 0, result.output
        assert tree_hash(root / "gold") == before
        report = json.loads(out.read_text())
        verdicts[engine] = [
            i["execution"].get("ex_bird") for i in sorted(report["instances"], key=lambda i: int(i["instance_id"][1:]))
        ]
    assert verdicts["sqlite"] == [True, False, True, False, False, True, False], verdicts
    assert verdicts["postgres"] == verdicts["sqlite"] and verdicts["mysql"] == verdicts["sqlite"]


def test_bird_in_three_dialects_gives_the_same_ex(loaded, sqlite_db, tmp_path):
    from evaluators.bird.run import BirdOptions, grade_bird

    pg, maria = loaded
    sep = "\t----- bird -----\t"
    db_root = tmp_path / "dbs"
    (db_root / "school").mkdir(parents=True)
    (db_root / "school" / "school.sqlite").write_bytes(sqlite_db.read_bytes())
    (tmp_path / "gold.sql").write_text("".join(f"{g}\tschool\n" for g, _ in QUESTIONS))
    (tmp_path / "pred.json").write_text(json.dumps({str(i): p + sep + "school" for i, (_, p) in enumerate(QUESTIONS)}))
    verdicts = {}
    for dialect in ("SQLite", "PostgreSQL", "MySQL"):
        options = BirdOptions(
            db_root,
            dialect,
            work_dir=tmp_path / "w",
            postgres_dsn=pg.dsn.replace("/postgres", "/school"),
            mysql_dsn=maria.dsn + "/school",
        )
        report = grade_bird(tmp_path / "pred.json", tmp_path / "gold.sql", None, options)
        verdicts[dialect] = [i.execution.get("ex_bird") for i in report.instances]
    assert verdicts["SQLite"] == [True, False, True, False, False, True, False], verdicts
    assert verdicts["PostgreSQL"] == verdicts["SQLite"] and verdicts["MySQL"] == verdicts["SQLite"], verdicts


ROOMY = "roomy"  # an account of this test's own: a limit on the shared `grader` would refuse other tests' logins


def _roomy(engine: str, servers):
    """Settings of a grader account like `grader` (`db prepare`'s roles on PostgreSQL; the school tables on
    MariaDB), whose connection limit this test may set; made for one engine by the test of that engine."""
    pg, maria = servers
    if engine == "postgres":
        from evaluators.execution.pg_roles import prepare_postgres

        prepare_postgres(pg.admin_dsn, ROOMY, GRADER_PASSWORD)
        return PostgresSettings(pg.dsn.replace("grader:", f"{ROOMY}:"))
    con = maria.admin()
    try:
        con.cursor().execute(f"CREATE USER IF NOT EXISTS '{ROOMY}'@'%' IDENTIFIED BY '{GRADER_PASSWORD}'")
        con.cursor().execute(f"GRANT ALL ON school.* TO '{ROOMY}'@'%'")
    finally:
        con.close()
    return MySQLSettings(maria.dsn.replace("grader:", f"{ROOMY}:"))


def _login(engine: str, servers):
    pg, maria = servers
    if engine == "postgres":
        import psycopg

        return psycopg.connect(pg.dsn.replace("grader:", f"{ROOMY}:"))
    import pymysql

    return pymysql.connect(host="127.0.0.1", port=maria.port, user=ROOMY, password=GRADER_PASSWORD)


def _limit(engine: str, servers, limit: int) -> None:
    pg, maria = servers
    if engine == "postgres":
        with pg.admin() as con:
            con.execute(f"ALTER ROLE {ROOMY} CONNECTION LIMIT {limit}")
        return
    con = maria.admin()
    try:
        con.cursor().execute(f"ALTER USER '{ROOMY}'@'%' WITH MAX_USER_CONNECTIONS {max(limit, 0)}")
    finally:
        con.close()


@pytest.mark.parametrize("engine", ["postgres", "mysql"])
def test_a_login_refused_for_want_of_room_waits_for_room(engine, loaded, tmp_path):
    """The grader's account at its connection limit (as when other clients fill the server) for a second:
    the answer waits and runs; a refusal scored as the answer's failure made a verdict depend on the load."""
    count = "SELECT count(*) FROM people"
    config = ExecConfig(output_dir=tmp_path / "out", **{engine: _roomy(engine, loaded)})
    assert run_sql(engine, "school", count, config, tmp_path / "r.csv").ok  # a warm zygote
    worker.kill_all()  # and no worker with its sessions already open
    _limit(engine, loaded, 2)  # first: MariaDB counts an account's sessions only while it has a limit
    held = [_login(engine, loaded) for _ in range(2)]
    leave = threading.Timer(1.0, lambda: [con.close() for con in held])
    leave.start()
    try:
        result = run_sql(engine, "school", count, config, tmp_path / "r.csv")
    finally:
        leave.join()
        _limit(engine, loaded, -1)
    assert result.ok and result.first_cell == 3, result.detail


def test_workers_that_fill_their_database_still_grade_every_question(loaded, tmp_path):
    """BIRD on PostgreSQL, eight questions at once under a limit of 9 connections on their database: each
    worker keeps two sessions (the gold's and its answer role's), sixteen in all, where the official loop
    holds one connection a process.  A worker refused for want of room closes its idle sessions first, so no
    worker waits on sessions the others keep idle, and every verdict is the one without the limit."""
    from evaluators.bird.run import BirdOptions, grade_bird

    pg, _ = loaded
    sep = "\t----- bird -----\t"
    slow, wrong = "SELECT count(*) FROM people, pg_sleep(0.15)", "SELECT count(*) + 1 FROM people"
    preds = {str(i): (slow if i % 2 == 0 else wrong) + sep + "school" for i in range(24)}
    (tmp_path / "pred.json").write_text(json.dumps(preds))
    (tmp_path / "gold.sql").write_text(
        "".join(f"SELECT count(*) FROM people WHERE id > -{i}\tschool\n" for i in range(24))
    )
    options = BirdOptions(
        tmp_path, "PostgreSQL", num_cpus=8, work_dir=tmp_path / "w", postgres_dsn=pg.dsn.replace("/postgres", "/school")
    )
    worker.kill_all()  # no idle worker of an earlier test holding sessions to the database
    with pg.admin() as con:
        con.execute("ALTER DATABASE school CONNECTION LIMIT 9")
    try:
        report = grade_bird(tmp_path / "pred.json", tmp_path / "gold.sql", None, options)
    finally:
        worker.kill_all()
        with pg.admin() as con:
            con.execute("ALTER DATABASE school CONNECTION LIMIT -1")
    reasons = [i.reason for i in report.instances]
    assert reasons == ["match", "value_mismatch"] * 12, [i.detail for i in report.instances if i.reason != "match"]


def test_an_hourly_connection_limit_is_not_taken_for_a_passing_want_of_room(loaded):
    """MariaDB says 1226 for an account's `max_user_connections` (waited for, above) and for its hourly limits,
    which no wait of 30 s lifts: those are not a want of room, and every connection would wait in vain."""
    import pymysql

    from evaluators.execution.backends.servers import mysql_no_room

    pg, maria = loaded
    _roomy("mysql", loaded)
    admin = maria.admin()
    try:
        admin.cursor().execute(f"ALTER USER '{ROOMY}'@'%' WITH MAX_CONNECTIONS_PER_HOUR 1")
        _login("mysql", loaded).close()
        with pytest.raises(pymysql.err.OperationalError) as refused:
            _login("mysql", loaded).close()
        assert refused.value.args[0] == 1226 and "max_connections_per_hour" in str(refused.value)
        assert not mysql_no_room(refused.value)
    finally:
        admin.cursor().execute(f"ALTER USER '{ROOMY}'@'%' WITH MAX_CONNECTIONS_PER_HOUR 0")
        admin.cursor().execute("FLUSH USER_RESOURCES")
        admin.close()
