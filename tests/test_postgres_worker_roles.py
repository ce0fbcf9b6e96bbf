"""Each SQL worker answers as one PostgreSQL role of its own, made at its first prediction and reused for its
later ones, with password authentication; no two workers share a role; a role is dropped when its worker
ends, and when the worker is killed (Ctrl-C), with the query it ran stopped on the server."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from evaluators.execution import worker
from evaluators.execution.backends.settings import PostgresSettings
from evaluators.execution.executor import ExecConfig, run_sql

# Answer roles (members of grader_answers) must log in with their password: no trust for them.
HBA_LINE = "host all +grader_answers 127.0.0.1/32 scram-sha-256\n"


@pytest.fixture(scope="module")
def server(postgres_server):
    hba = Path(postgres_server.folder) / "data" / "pg_hba.conf"
    text = hba.read_text()
    if HBA_LINE not in text:
        hba.write_text(HBA_LINE + text)  # first matching line wins
    with postgres_server.admin() as con:
        con.execute("SELECT pg_reload_conf()")
        assert con.execute("SELECT count(*) FROM pg_hba_file_rules WHERE auth_method = 'scram-sha-256'").fetchone()[0]
    return postgres_server


@pytest.fixture
def idle_pool():
    worker.kill_all()  # no worker (nor its role) from an earlier test
    yield
    worker.kill_all()


def _config(tmp_path: Path, server, timeout_s: float = 20) -> ExecConfig:
    return ExecConfig(output_dir=tmp_path / "out", postgres=PostgresSettings(server.dsn), timeout_s=timeout_s)


def _answer(sql: str, config: ExecConfig, tmp_path: Path):
    result = run_sql("postgres", "postgres", sql, config, tmp_path / "r.csv", collect="inline")
    assert result.ok, result
    return result.rows()[1]


def _answer_roles(server) -> list[str]:
    with server.admin() as con:
        return [r[0] for r in con.execute("SELECT rolname FROM pg_roles WHERE starts_with(rolname, 'grader_a_')")]


def test_a_workers_answers_reuse_its_role_which_is_dropped_when_the_worker_ends(server, idle_pool, tmp_path):
    config = _config(tmp_path, server)
    users = [_answer("SELECT current_user", config, tmp_path)[0][0] for _ in range(3)]
    assert users[0].startswith("grader_a_") and users == [users[0]] * 3  # one worker, one role, three logins
    assert _answer_roles(server) == [users[0]]  # kept while its worker idles
    # What one answer sets for its session is gone at the next, though the role is the same.
    _answer("SELECT set_config('search_path', 'nowhere', false)", config, tmp_path)
    assert _answer("SELECT current_user, current_setting('search_path')", config, tmp_path)[0] == (
        users[0],
        '"$user", public',
    )
    worker.pool().shutdown()  # the run ends: the worker ends itself and drops its role
    assert _answer_roles(server) == []


def test_two_workers_answer_as_two_roles_neither_able_to_stop_the_other(server, idle_pool, tmp_path):
    config = _config(tmp_path, server)
    found: dict = {}

    def victim() -> None:
        found["victim"] = _answer("SELECT current_user, pg_sleep(2) IS NULL", config, tmp_path)  # ok: not stopped

    thread = threading.Thread(target=victim)
    thread.start()
    time.sleep(1.0)  # the victim's worker is in pg_sleep; the attack needs a second worker
    attack = (
        "SELECT current_user, count(pg_terminate_backend(pid)) FILTER (WHERE pg_terminate_backend(pid)) "
        "FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND usename LIKE 'grader%'"
    )
    attacker = run_sql("postgres", "postgres", attack, config, tmp_path / "a.csv", collect="inline")
    thread.join()
    assert found["victim"][0][0].startswith("grader_a_")  # slept to the end
    if attacker.ok:
        (attacker_user, stopped), *_ = attacker.rows()[1]
        assert stopped == 0 and attacker_user != found["victim"][0][0]
    assert len(_answer_roles(server)) == 2


def test_ctrl_c_stops_the_running_answer_and_drops_every_role(server, idle_pool, tmp_path):
    config = _config(tmp_path, server)
    _answer("SELECT 1", config, tmp_path)  # an idle worker holding a role

    def sleeper() -> None:
        try:
            run_sql("postgres", "postgres", "SELECT pg_sleep(30)", config, tmp_path / "s")
        except Exception:
            pass  # its worker was killed under it, as on Ctrl-C

    thread = threading.Thread(target=sleeper)
    thread.start()
    deadline = time.monotonic() + 10
    while len(_answer_roles(server)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)  # the second worker has made its role and runs the sleep
    time.sleep(0.3)
    worker.kill_all()  # what the CLI does on Ctrl-C
    thread.join(20)
    assert _answer_roles(server) == []
    with server.admin() as con:
        sleeping = con.execute("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'").fetchone()
    assert sleeping[0] == 0


# BIRD's settings (the statements and values of its official driver) and the plain ones: both keep sessions.
SETTINGS = {
    "plain": {},
    "bird": {"official_statements": True, "psycopg2_values": True},
}


@pytest.mark.parametrize("kind", sorted(SETTINGS))
def test_a_workers_answers_share_one_session_and_none_leaves_anything_in_it_for_the_next(
    server, idle_pool, tmp_path, kind
):
    config = ExecConfig(tmp_path / "out", postgres=PostgresSettings(server.dsn, **SETTINGS[kind]), timeout_s=20)
    (pid, user), *_ = _answer("SELECT pg_backend_pid(), current_user", config, tmp_path)
    # What outlives a rolled-back read-only transaction in a session: a session advisory lock, settings.
    _answer(
        "SELECT pg_advisory_lock(36), set_config('search_path', 'nowhere', false), set_config('a.b', 'left', false)",
        config,
        tmp_path,
    )
    after = _answer(
        "SELECT pg_backend_pid(), current_user, current_setting('search_path'), current_setting('a.b', true), "
        "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())",
        config,
        tmp_path,
    )
    assert after[0][:2] == (pid, user)  # the same session: no new login for the next answer
    assert after[0][2:] == ('"$user", public', "", 0)  # the lock released, the settings back ('a.b' stays known)


def test_a_session_is_kept_past_a_timeout_and_replaced_when_the_server_ended_it(server, idle_pool, tmp_path):
    config = _config(tmp_path, server, timeout_s=1)
    (pid,), *_ = _answer("SELECT pg_backend_pid()", config, tmp_path)
    slow = run_sql("postgres", "postgres", "SELECT pg_sleep(5)", config, tmp_path / "s.csv", collect="inline")
    assert slow.reason == "timeout", slow  # stopped by the server: the worker and its session live on
    assert _answer("SELECT pg_backend_pid()", config, tmp_path)[0][0] == pid
    with server.admin() as con:
        con.execute("SELECT pg_terminate_backend(%s)", (pid,))  # the server ends the idle session
    time.sleep(0.2)
    (again, ok), *_ = _answer("SELECT pg_backend_pid(), true", config, tmp_path)
    assert ok and again != pid
