"""Round 4 (docs/security.md): on PostgreSQL a LiveSQL answer runs as a role made for its phase, owner of
its clone only, so what stops it is what the role may do, not the text rules. Each payload here passes the
text rules of round 3 (a comment between words, U& escapes, dollar quoting, dynamic SQL): the server
refuses it, and later instances, and the next run, are graded as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbservers import postgres_server  # noqa: F401  (the session's server)
from test_livesql_postgres import ROLE, _fingerprint, _grade, pg  # noqa: F401  (the module's templates)

RIGHT = "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'open' AND amount > 48)"


def _run(pg, tmp_path: Path, preds: list, **options) -> list:  # noqa: F811
    """Grade the first generated instance once per prediction list, in order; the instances' reports."""
    base = json.loads(pg[1]["livesql_pg"].read_text().splitlines()[0])
    path = tmp_path / f"set_{len(list(tmp_path.iterdir()))}.jsonl"
    lines = [json.dumps({**base, "instance_id": f"i{k}", "pred_sqls": p}) for k, p in enumerate(preds)]
    path.write_text("\n".join(lines) + "\n")
    return _grade(pg, "livesql_pg", tmp_path / "w", path, **options).instances


def _left_behind(server) -> tuple:
    """Settings stored for the grader or a template, and answer roles not dropped."""
    with server.admin() as con:
        settings = con.execute(
            "SELECT count(*) FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid = s.setdatabase "
            "WHERE s.setrole = %s::regrole OR d.datname = 'shop_template'",
            (ROLE,),
        ).fetchone()[0]
        roles = con.execute("SELECT count(*) FROM pg_roles WHERE starts_with(rolname, %s)", (ROLE + "_a_",)).fetchone()
    return settings, roles[0]


def test_the_templates_and_their_objects_belong_to_roles_answers_cannot_act_as(pg):  # noqa: F811
    from helpers_io import run_cli

    server = pg[0]
    result = run_cli("db", "prepare", "--engine", "postgres", "--dsn", server.admin_dsn, "--role", ROLE,
                     "--template", "shop_template")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"template 'shop_template': owned by '{ROLE}'" in result.output
    with server.admin("shop_template") as con:
        owners = {r[0] for r in con.execute("SELECT tableowner FROM pg_tables WHERE schemaname = 'public'")}
        database = con.execute(
            "SELECT pg_get_userbyid(datdba), datistemplate, has_database_privilege('public', oid, 'CONNECT'), "
            "(SELECT rolcreatedb FROM pg_roles WHERE rolname = %s) FROM pg_database WHERE datname = 'shop_template'",
            (ROLE,),
        ).fetchone()
    assert owners == {ROLE + "_tables"}
    assert database == (ROLE, True, False, True)


ROLE_SETTINGS = [
    ["ALTER/**/ROLE CURRENT_USER SET default_transaction_read_only = on"],
    ["ALTER/**/ROLE CURRENT_USER PASSWORD 'taken'"],
    ["alter/**/role session_user set search_path = nowhere"],
    ["DO $$ BEGIN EXECUTE 'ALTER ' || 'ROLE ' || current_user || ' CONNECTION LIMIT 0'; END $$"],
]


def test_an_answer_changing_its_role_disables_nothing_later(pg, tmp_path):  # noqa: F811
    before = _fingerprint(pg[0])
    preds = [p for attack in ROLE_SETTINGS for p in (attack, [RIGHT])]
    reports = _run(pg, tmp_path, preds, num_threads=1)
    assert [r.reason for r in reports[1::2]] == ["match"] * len(ROLE_SETTINGS), [r.detail for r in reports]
    assert _run(pg, tmp_path, [[RIGHT]])[0].reason == "match"  # and the next run
    assert _left_behind(pg[0]) == (0, 0)
    assert _fingerprint(pg[0]) == before


TEMPLATE_ATTACKS = [
    "ALTER/**/DATABASE shop_template RENAME TO x",
    'ALTER/**/DATABASE U&"shop\\005Ftemplate" RENAME TO x',
    "ALTER/**/DATABASE shop_template SET default_transaction_read_only = on",
    "ALTER/**/DATABASE shop_template IS_TEMPLATE false",
    "ALTER/**/DATABASE shop_template OWNER TO CURRENT_USER",
    "DROP/**/DATABASE shop_template",
    "CREATE/**/DATABASE lsq_taken TEMPLATE shop_template",
    "DO $$ BEGIN EXECUTE format('ALTER/**/DATABASE %I IS_TEMPLATE true', current_database()); END $$",
]


def test_an_answer_cannot_rename_alter_or_copy_a_template_nor_keep_its_clone(pg, tmp_path):  # noqa: F811
    before = _fingerprint(pg[0])
    preds = [p for attack in TEMPLATE_ATTACKS for p in ([attack], [RIGHT])]
    reports = _run(pg, tmp_path, preds)
    assert [r.reason for r in reports[1::2]] == ["match"] * len(TEMPLATE_ATTACKS), [r.detail for r in reports]
    assert all(r.score == 0 for r in reports[0::2][:-1])  # refused or failed on the server
    assert _fingerprint(pg[0]) == before  # same name, rows, indexes; no database left (the last one's clone)
    assert _left_behind(pg[0]) == (0, 0)


# Each attack keeps trying for 4 s, past the other instance's 3 s query (a fixed count of tries took 40 s).
FOR_4_S = "WHILE clock_timestamp() < statement_timestamp() + interval '4 s' LOOP"
SIGNALS = [
    f'DO $$ BEGIN {FOR_4_S} PERFORM U&"pg\\005Fterminate_backend"(pid) FROM pg_stat_activity '
    "WHERE pid <> pg_backend_pid() AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = usename); "
    "PERFORM pg_sleep(0.1); END LOOP; END $$",
    f"DO $$ DECLARE p int; BEGIN {FOR_4_S} FOR p IN SELECT pid FROM pg_stat_activity WHERE pid <> "
    "pg_backend_pid() LOOP BEGIN EXECUTE 'SELECT pg_' || 'cancel_backend(' || p || ')'; EXCEPTION WHEN OTHERS "
    "THEN NULL; END; END LOOP; PERFORM pg_sleep(0.1); END LOOP; END $$",
]


@pytest.mark.parametrize("attack", SIGNALS, ids=["terminate_u_escape", "cancel_dynamic"])
def test_one_instance_cannot_end_another_instances_session(pg, tmp_path, attack):  # noqa: F811
    reports = _run(pg, tmp_path, [[attack], ["SELECT pg_sleep(3)", RIGHT]], num_threads=2)
    assert reports[1].reason == "match", (reports[1].detail, reports[0].detail)
    assert _left_behind(pg[0]) == (0, 0)


def test_an_answer_reaches_no_server_file_even_when_the_grader_is_a_superuser(pg, tmp_path):  # noqa: F811
    target = tmp_path / "files"
    target.mkdir()
    target.chmod(0o777)
    attacks = [
        [f"COPY orders TO $${target}/dollar.csv$$"],
        [f"COPY orders TO E'{target}/escape.csv'"],
        [f"COPY (SELECT 1) TO/**/PROGRAM $$touch {target}/program$$"],
        [f"SELECT U&\"lo\\005Fexport\"(lo_from_bytea(0, 'x'), $${target}/lo$$)"],
        ['SELECT U&"pg\\005Fread\\005Ffile"($$/etc/hostname$$)'],
    ]
    for reports in (_run(pg, tmp_path, attacks), _run(pg, tmp_path, attacks, postgres_dsn=pg[0].admin_dsn)):
        assert all(r.score == 0 for r in reports), [r.detail for r in reports]
        assert not list(target.iterdir()), [r.detail for r in reports]
    superuser = _run(pg, tmp_path, [[RIGHT]], postgres_dsn=pg[0].admin_dsn)[0]
    assert superuser.reason == "credentials_missing" and "db prepare" in superuser.detail, superuser.detail


def test_an_answer_cannot_grow_temporary_files_past_the_disk_limit_nor_lift_it(pg, tmp_path):  # noqa: F811
    spill = "SELECT count(*) FROM (SELECT md5(g::text) AS m FROM generate_series(1, 300000) g ORDER BY m) s"
    preds = [
        ["SET work_mem = '64kB'", spill],
        ["SELECT set_config($$temp_file_limit$$, $$-1$$, false)", spill],
        ["RESET temp_file_limit", "SET work_mem = '64kB'", spill],
        [RIGHT],
    ]
    reports = _run(pg, tmp_path, preds, disk_limit_mb=1)
    assert "temp_file_limit" in reports[0].detail, reports[0].detail
    assert "permission denied" in reports[1].detail and "permission denied" in reports[2].detail
    assert reports[3].reason == "match"
    assert _left_behind(pg[0]) == (0, 0)
