"""BIRD on PostgreSQL sends an answer's text to the server as it is, one statement of the extended protocol,
in a read-only transaction, as the worker's own login role: the server refuses several statements, writes and
what the role may not do.  The official reading of the text (several statements, FOR UPDATE cut; sqlglot)
decides only where the server refuses; a worker's session is kept between answers and nothing one answer
leaves in it reaches the next."""

from __future__ import annotations

import pytest

from evaluators.execution import worker
from evaluators.execution.backends.settings import PostgresSettings
from evaluators.execution.executor import ExecConfig, run_sql

TABLE = "as_given_items"


@pytest.fixture(scope="module")
def server(postgres_server):
    with postgres_server.admin() as con:
        con.execute(f"DROP TABLE IF EXISTS {TABLE}")
        con.execute(f"CREATE TABLE {TABLE} AS SELECT g AS id, 'n' || g AS name FROM generate_series(1, 4) AS g")
    return postgres_server


@pytest.fixture
def config(server, tmp_path):
    worker.kill_all()  # one worker from here on: the answers of a test share its session
    settings = PostgresSettings(server.dsn, official_statements=True, psycopg2_values=True)  # BIRD's
    yield ExecConfig(tmp_path / "out", postgres=settings, timeout_s=20)
    worker.kill_all()


def _bird(sql: str, config: ExecConfig):
    return run_sql("postgres", "postgres", sql, config, config.output_dir / "r.csv", collect="inline")


def _official(server, sql: str) -> list[tuple]:
    """What mini-dev's scorer gets: psycopg2, the text as it is, the last statement's rows."""
    import psycopg2

    con = psycopg2.connect(server.admin_dsn)  # (a superuser here: what the official scorer is told to use)
    try:
        cursor = con.cursor()
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN (COSTS OFF) SELECT 1",  # sqlglot reads a command here: it was refused, 0 where the official has 1
        f"SELECT name FROM {TABLE} WHERE id = 2 FOR UPDATE",  # the read-only transaction refuses it: cut, as before
        f"SELECT 1; SELECT name FROM {TABLE} ORDER BY id",  # several statements: the last one's rows, as before
    ],
)
def test_a_read_only_answer_gives_the_official_drivers_rows(server, config, sql):
    result = _bird(sql, config)
    assert result.ok, result
    assert result.rows()[1] == _official(server, sql)


@pytest.mark.parametrize(
    "sql",
    [
        f"DELETE FROM {TABLE}",
        f"COMMIT; DELETE FROM {TABLE}",
        f"SELECT 1; COMMIT; DELETE FROM {TABLE}",
        f"WITH d AS (DELETE FROM {TABLE} RETURNING *) SELECT * FROM d",
        f"CREATE TEMP TABLE t AS SELECT * FROM {TABLE}",
        "SET search_path = nowhere",
    ],
)
def test_what_could_write_is_refused_in_the_official_readings_words_and_changes_nothing(server, config, sql):
    result = _bird(sql, config)
    assert result.reason == "exec_error" and result.detail.startswith("not run: only read-only statements"), result
    with server.admin() as con:
        assert con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == 4
    assert _bird(f"SELECT count(*) FROM {TABLE}", config).rows()[1] == [(4,)]  # the session still answers


# Each leaves something in its session past the rolled-back read-only transaction, or tries to.
LEFT = [
    "PREPARE left_behind AS SELECT 1",
    "DECLARE held CURSOR WITH HOLD FOR SELECT 1",
    "LISTEN left_channel",
    "COMMIT",
    "SELECT pg_advisory_lock(36), set_config('search_path', 'nowhere', false), set_config('a.b', 'left', false)",
    "SELECT set_config('role', 'grader_answers', false)",
]
PROBE = (
    "SELECT pg_backend_pid(), current_user, current_setting('search_path'), "
    "coalesce(current_setting('a.b', true), ''), "  # (once set, a setting stays known: '' after a reset)
    "(SELECT count(*) FROM pg_prepared_statements), (SELECT count(*) FROM pg_cursors WHERE name <> ''), "
    "(SELECT count(*) FROM pg_listening_channels()), "
    "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())"
)


@pytest.mark.parametrize("sql", LEFT)
def test_nothing_an_answer_leaves_in_its_session_reaches_the_next_answer(config, sql):
    (pid, user, *clean), *_ = _bird(PROBE, config).rows()[1]
    _bird(sql, config)  # run or refused: either way it reached the server
    after = _bird(PROBE, config)
    assert after.ok, after
    assert after.rows()[1] == [(pid, user, *clean)]  # the same session, as clean as before
    assert user.startswith("grader_a_") and clean == ['"$user", public', "", 0, 0, 0, 0]


def test_an_answer_preparing_its_transaction_leaves_nothing_prepared(tmp_path):
    """Where the server allows prepared transactions (max_prepared_transactions > 0, not the default), an answer
    `PREPARE TRANSACTION` would leave its transaction, and the locks it took, past its session."""
    import subprocess

    from dbservers import _as_nobody, _postgres_bin, start_postgres

    worker.kill_all()
    server, stop = start_postgres()  # a server of its own: this one restarts
    try:
        with server.admin() as con:
            con.execute("ALTER SYSTEM SET max_prepared_transactions = 2")
            con.execute(f"CREATE TABLE {TABLE} AS SELECT 1 AS id")
        data, log = str(server.folder / "data"), str(server.folder / "server.log")
        pg_ctl = [_postgres_bin("pg_ctl"), "-D", data, "-l", log, "-w", "-m", "fast", "restart"]
        subprocess.run(_as_nobody(pg_ctl), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        settings = PostgresSettings(server.dsn, official_statements=True, psycopg2_values=True)
        config = ExecConfig(tmp_path / "out", postgres=settings, timeout_s=20)
        refused = _bird(f"SELECT id FROM {TABLE}; PREPARE TRANSACTION 'left'", config)  # several: refused
        alone = _bird("PREPARE TRANSACTION 'left'", config)
        assert not refused.ok and not alone.ok
        with server.admin() as con:
            assert con.execute("SELECT count(*) FROM pg_prepared_xacts").fetchone()[0] == 0
        assert _bird(f"SELECT id FROM {TABLE}", config).rows()[1] == [(1,)]
    finally:
        worker.kill_all()
        stop()
