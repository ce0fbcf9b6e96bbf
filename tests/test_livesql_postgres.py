"""`evaluate.py livesql --engine postgresql` on the test suite's real server: LiveSQLBench (evaluation.py)
and BIRD-CRITIC PostgreSQL instances from the generator, each on a clone of `<db>_template`, graded verdict
for verdict as the official harnesses graded them (tests/data/livesql_official_verdicts.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbservers import GRADER_PASSWORD, postgres_server  # noqa: F401  (the session's server)
from livesql_generator import VERDICTS, load_postgres, write_postgres
from processes import busy_descendants

from evaluators.livesql.run import LiveSQLOptions, grade_livesql

OFFICIAL = json.loads(VERDICTS.read_text())
ROLE = "livesql_grader"


@pytest.fixture(scope="module")
def pg(postgres_server, tmp_path_factory):  # noqa: F811
    with postgres_server.admin() as con:
        if not con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            con.execute(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{GRADER_PASSWORD}'")
    load_postgres(postgres_server.admin, ROLE)
    files = write_postgres(tmp_path_factory.mktemp("livesql_pg"))
    dsn = f"postgresql://{ROLE}:{GRADER_PASSWORD}@127.0.0.1:{postgres_server.port}/postgres"
    return postgres_server, files, dsn


def _fingerprint(server) -> tuple:
    with server.admin("shop_template") as con:
        rows = con.execute("SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM orders o").fetchone()
        indexes = con.execute("SELECT count(*) FROM pg_indexes WHERE schemaname = 'public'").fetchone()
    with server.admin() as con:
        databases = sorted(r[0] for r in con.execute("SELECT datname FROM pg_database"))
        roles = con.execute("SELECT count(*) FROM pg_roles WHERE starts_with(rolname, %s)", (ROLE + "_a_",)).fetchone()
    return rows, indexes, databases, roles[0]  # every answer role dropped with its clone, killed workers' too


def _grade(pg, label: str, work: Path, path: Path | None = None, **options):
    server, files, dsn = pg
    settings = {"benchmark": label.split("_")[0], "engine": "postgresql", "postgres_dsn": dsn, "work_dir": work}
    return grade_livesql(path or files[label], None, LiveSQLOptions(**{"num_threads": 2, **settings, **options}))


@pytest.mark.parametrize("label", ["livesql_pg", "critic_pg"])
def test_every_verdict_equals_the_official_one_and_the_template_is_untouched(pg, tmp_path, label):
    before = _fingerprint(pg[0])
    report = _grade(pg, label, tmp_path)
    official = {k: v["status"] == "success" for k, v in OFFICIAL[label].items()}
    assert {i.instance_id: i.score == 1 for i in report.instances} == official
    assert _fingerprint(pg[0]) == before  # same rows, no index added, every clone dropped
    if label == "livesql_pg":  # strict differs where the official helpers are lossy
        by_id = {i.instance_id: (i.score, i.strict_score) for i in report.instances}
        assert by_id["pq_dates"] == (1.0, 0.0)  # a date and its text are equal once the helper formats the date
        assert by_id["pq_empty_gold"] == (0.0, 1.0)
        assert by_id["pq_rewrite"] == (1.0, 0.0)  # strict compares with the gold on the untouched database
        # the official helper's json.dumps raises on Decimal and date arrays; strict compares the values
        assert by_id["pq_numeric_array"] == by_id["pq_date_array"] == (0.0, 1.0)


def _one(pg, tmp_path: Path, **fields) -> Path:
    base = json.loads(pg[1]["livesql_pg"].read_text().splitlines()[0])
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({**base, **fields}) + "\n")
    return path


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
        "DROP DATABASE shop_template",
        "COPY orders TO '/tmp/orders.csv'",
        "SET ROLE postgres",
    ],
)
def test_a_prediction_cannot_reach_outside_its_clone(pg, tmp_path, statement):
    before = _fingerprint(pg[0])
    report = _grade(pg, "livesql_pg", tmp_path / "w", _one(pg, tmp_path, pred_sqls=[statement]))
    assert report.instances[0].reason == "exec_error"
    assert report.instances[0].detail.startswith("not run")
    assert _fingerprint(pg[0]) == before


def test_a_running_prediction_is_stopped_and_its_clone_dropped(pg, tmp_path):
    before = _fingerprint(pg[0])
    path = _one(pg, tmp_path, pred_sqls=["SELECT pg_sleep(30)"])
    report = _grade(pg, "livesql_pg", tmp_path / "w", path, instance_timeout_s=1.0, statement_timeout_s=0.5)
    assert report.instances[0].reason == "timeout", report.instances[0].detail
    loop = "def test_case(pred_sqls, sol_sqls, db_name, conn):\n    while True:\n        pass\n"
    looping = _one(pg, tmp_path, category="Management", test_cases=[loop])
    report = _grade(pg, "livesql_pg", tmp_path / "w", looping, instance_timeout_s=0.5)
    assert report.instances[0].reason == "timeout"
    assert busy_descendants(0.5) < 0.2
    assert _fingerprint(pg[0]) == before


def test_ctrl_c_drops_the_clone_and_leaves_nothing_running(pg, tmp_path):
    from test_livesql import interrupt_run

    before = _fingerprint(pg[0])
    path = _one(pg, tmp_path, pred_sqls=["SELECT pg_sleep(60)"])
    args = ["--jsonl_file", str(path), "--engine", "postgresql", "--postgres-dsn", pg[2]]
    code, left, stderr = interrupt_run(args, tmp_path / "w")
    assert code == 130, stderr
    assert not left
    assert _fingerprint(pg[0]) == before  # the clone is gone
    with pg[0].admin() as con:  # and its query with it
        assert not con.execute("SELECT 1 FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'").fetchall()


def test_a_server_without_room_for_a_while_changes_no_verdict(pg, tmp_path):
    """Other clients filled the server (here: the grader's role at its connection limit) and left a second
    later: every connection waits for room, and the verdicts are the official ones (in CI a full server
    once turned 20 of 34 into 19)."""
    import threading

    import psycopg

    server, files, dsn = pg
    kept = ("pq_exact", "pq_wrong", "pm_pool_4", "pm_pool_5", "pm_new_connection", "pm_update")  # helpers connect
    lines = [line for line in files["livesql_pg"].read_text().splitlines() if json.loads(line)["instance_id"] in kept]
    path = tmp_path / "some.jsonl"
    path.write_text("\n".join(lines) + "\n")
    held = [psycopg.connect(dsn) for _ in range(6)]
    with server.admin() as admin:
        admin.execute(f"ALTER ROLE {ROLE} CONNECTION LIMIT 6")  # taken: the next login is refused (53300)
    leave = threading.Timer(1.0, lambda: [con.close() for con in held])
    leave.start()
    try:
        report = _grade(pg, "livesql_pg", tmp_path / "w", path)
    finally:
        leave.join()
        with server.admin() as admin:
            admin.execute(f"ALTER ROLE {ROLE} CONNECTION LIMIT -1")
    official = {k: OFFICIAL["livesql_pg"][k]["status"] == "success" for k in kept}
    assert {i.instance_id: i.score == 1 for i in report.instances} == official
