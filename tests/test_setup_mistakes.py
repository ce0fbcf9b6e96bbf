"""A verdict depends on the answer alone, never on a setup mistake (issue V): a database folder that holds
none of the databases the gold needs, a server role `db prepare` never made, is exit 2 with the option, the
resolved path and what was expected, never "0 %"; fenced BIRD predictions are said once; VES has one set of
keys in every output; BIRD dev's empty db_id follows the official scorer.

Every command runs as a user runs it: `evaluate.py` in a subprocess, from another folder, relative paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dbservers import postgres_server  # noqa: F401  (the session's server)
from doc_examples import QUESTIONS, SEP
from doc_examples import pets as _database

ROOT = Path(__file__).resolve().parents[1]


def evaluate(cwd: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *map(str, args)], cwd=cwd, capture_output=True, text=True
    )


@pytest.fixture
def world(tmp_path):
    """BIRD, test-suite and grade inputs under `tmp_path/w`, run from `tmp_path/w/elsewhere`."""
    here = tmp_path / "w"
    _database(here / "dbs" / "shop" / "shop.sqlite")
    (here / "predict.json").write_text(json.dumps({str(i): p + SEP + "shop" for i, (_, p) in enumerate(QUESTIONS)}))
    (here / "gold.sql").write_text("".join(f"{g}\tshop\n" for g, _ in QUESTIONS))
    (here / "pred.txt").write_text("".join(f"{p}\n" for _, p in QUESTIONS))
    for n, (gold, pred) in enumerate(QUESTIONS):
        _grade_instance(here, f"q{n}", gold, pred)
    (here / "elsewhere").mkdir()
    return here


def _grade_instance(here: Path, instance_id: str, gold: str, pred: str, db: str = "shop") -> None:
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
    (here / "gold" / instance_id).mkdir(parents=True)
    (here / "gold" / instance_id / "gold.sql").write_text(gold)
    (here / "sub" / instance_id).mkdir(parents=True)
    (here / "sub" / instance_id / "a.sql").write_text(pred)
    line = {"instance_id": instance_id, "evaluation": spec, "type": "SQLite", "db": db}
    with open(here / "gold" / "spider2_eval.jsonl", "a") as handle:
        handle.write(json.dumps(line) + "\n")
    with open(here / "sub" / "results_metadata.jsonl", "a") as handle:
        handle.write(json.dumps({"instance_id": instance_id, "answer_type": "file", "answer_or_path": "a.sql"}) + "\n")


BIRD = ["bird", "--predicted_sql_path", "../predict.json", "--ground_truth_path", "../gold.sql", "--db_root_path"]
TEST_SUITE = ["test-suite", "--gold", "../gold.sql", "--pred", "../pred.txt", "--db"]
GRADE = ["grade", "--result-dir", "../sub", "--gold-dir", "../gold", "--no-plot", "--db-dir"]


# ---- a database folder holding none of the gold's databases ------------------------------------------------


@pytest.mark.parametrize(
    "command, expected", [(BIRD, "shop/shop.sqlite"), (TEST_SUITE, "shop/*.sqlite")], ids=["bird", "test-suite"]
)
def test_one_level_too_deep_is_exit_2_naming_the_option_the_path_and_the_parent(world, command, expected):
    run = evaluate(world / "elsewhere", *command, "../dbs/shop", "--output", "out/r.json")
    assert run.returncode == 2, run.stdout + run.stderr
    option = command[-1]
    assert f"{option} {world / 'dbs' / 'shop'} holds none of the 1 database(s) the gold needs (shop)" in run.stderr
    assert f"expected {expected} there" in run.stderr and f"pass its parent, {world / 'dbs'}" in run.stderr
    assert "0.00%" not in run.stdout and not (world / "elsewhere" / "out" / "r.json").exists()


def test_grade_with_a_folder_holding_none_of_the_databases_is_exit_2(world):
    run = evaluate(world / "elsewhere", *GRADE, "../sub", "--output", "out/r.json")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"--db-dir {world / 'sub'} holds none of the 1 database(s) the gold needs (shop)" in run.stderr
    assert "shop/shop.sqlite" in run.stderr and not (world / "elsewhere" / "out" / "r.json").exists()


@pytest.mark.parametrize("command", [BIRD, TEST_SUITE, GRADE], ids=["bird", "test-suite", "grade"])
def test_a_folder_above_the_right_one_is_exit_2_pointing_one_level_down(world, command):
    run = evaluate(world / "elsewhere", *command, "..", "--work-dir", "../../work")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{command[-1]} {world} holds none" in run.stderr
    assert f"one level deeper: try {world / 'dbs'}" in run.stderr


@pytest.mark.parametrize("command", [BIRD, TEST_SUITE, GRADE], ids=["bird", "test-suite", "grade"])
def test_a_folder_that_does_not_exist_is_exit_2(world, command):
    run = evaluate(world / "elsewhere", *command, "../dbz")
    assert run.returncode == 2, run.stdout + run.stderr
    assert command[-1] in run.stderr and str(world / "dbz") in run.stderr and "does not exist" in run.stderr


def test_grade_without_any_database_folder_is_exit_2(world):
    run = evaluate(world / "elsewhere", *GRADE[:-1])
    assert run.returncode == 2, run.stdout + run.stderr
    assert "name 1 database(s) (shop) but no --db-dir was given" in run.stderr


def _zoo_question(world: Path) -> None:
    """One more gold line, on a database that is not in the folder."""
    with open(world / "gold.sql", "a") as handle:
        handle.write("SELECT 1\tzoo\n")
    with open(world / "pred.txt", "a") as handle:
        handle.write("SELECT 1\n")
    preds = json.loads((world / "predict.json").read_text())
    preds[str(len(preds))] = "SELECT 1" + SEP + "zoo"
    (world / "predict.json").write_text(json.dumps(preds))
    _grade_instance(world, "q_zoo", "SELECT 1", "SELECT 1", db="zoo")


@pytest.mark.parametrize("command", [BIRD, TEST_SUITE, GRADE], ids=["bird", "test-suite", "grade"])
def test_some_databases_missing_are_counted_at_the_top_and_in_problems(world, command):
    _zoo_question(world)
    run = evaluate(world / "elsewhere", *command, "../dbs", "--output", "out/r.json")
    assert run.returncode == 0, run.stdout + run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("warning: ") and "1 of the 2 database(s) the gold needs are not in this folder" in first
    assert "(zoo;" in first and command[-1] in first
    problems = json.loads((world / "elsewhere" / "out" / "r.json").read_text())["summary"]["problems"]
    assert any("1 of the 2 database(s)" in p["message"] for p in problems)


# ---- LiveSQLBench's --db_root -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def livesql_files(tmp_path_factory):
    from livesql_generator import write

    root = tmp_path_factory.mktemp("livesql")
    write(root)
    (root / "elsewhere").mkdir()
    return root


def test_livesql_db_root_holding_none_of_the_databases_is_exit_2(livesql_files):
    from evaluators.livesql.native import database_of

    first = database_of(json.loads((livesql_files / "critic.jsonl").read_text().splitlines()[0]))
    args = ["livesql", "--jsonl_file", "../critic.jsonl", "--benchmark", "critic", "--num_threads", "2"]
    run = evaluate(livesql_files / "elsewhere", *args, "--db_root", f"../databases/{first}")
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"--db_root {livesql_files / 'databases' / first} holds none of the" in run.stderr
    assert "_template.sqlite there" in run.stderr and "pass its parent" in run.stderr
    assert "overall" not in run.stdout


# ---- BIRD: fences, VES, dev's empty db_id ---------------------------------------------------------------------


def test_fenced_bird_predictions_are_said_once(world):
    fenced = {str(i): f"```sql\n{p}\n```" + SEP + "shop" for i, (_, p) in enumerate(QUESTIONS)}
    (world / "predict.json").write_text(json.dumps(fenced))
    run = evaluate(world / "elsewhere", *BIRD, "../dbs", "--output", "out/b.json")
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "markdown fence" in line]
    assert len(said) == 1 and said[0].startswith("warning: ")
    assert "4 of 4 predictions begin with a markdown fence; the official scorer does not unwrap them" in said[0]
    report = json.loads((world / "elsewhere" / "out" / "b.json").read_text())
    assert report["summary"]["score"] == 0.0, "scored as the official scorer scores them"
    assert any("markdown fence" in p["message"] for p in report["summary"]["problems"])


def test_ves_is_one_set_of_keys_in_every_output(world):
    elsewhere = world / "elsewhere"
    for name, iterations in (("a", "3"), ("b", "3")):
        run = evaluate(elsewhere, *BIRD, "../dbs", "--ves-iterations", iterations, "--output", f"out/{name}.json")
        assert run.returncode == 0, run.stderr
    assert "VES not measured" not in run.stdout
    metrics = json.loads((elsewhere / "out" / "b.json").read_text())["summary"]["execution_metrics"]
    assert metrics["ves"] is not None and metrics["r_ves"] is not None
    assert "ves_dev" not in metrics and "rves_mini_dev" not in metrics
    last = [line for line in run.stdout.splitlines() if line.startswith("VES (BIRD dev)")]
    assert last == [line for line in last if f"VES (BIRD dev) {metrics['ves']:.2f}" in line] != []
    assert f"VES {metrics['ves']:.2f}  R-VES {metrics['r_ves']:.2f}" in run.stdout  # the report's own lines
    compared = evaluate(elsewhere, "compare", "out/a.json", "out/b.json", "--html", "out/cmp.html")
    assert compared.returncode == 0, compared.stderr
    assert "ves n/a" not in compared.stdout and "ves_dev" not in compared.stdout
    assert f"-> {metrics['ves']:.2f}" in compared.stdout
    assert '<td>ves</td><td class="num">' in (elsewhere / "out" / "cmp.html").read_text()


def test_the_bird_report_page_shows_the_ves_the_command_prints(world):
    from evaluators.bird.run import BirdOptions, grade_bird

    options = BirdOptions(world / "dbs", work_dir=world / "work", ves_iterations=3)
    report = grade_bird(world / "predict.json", world / "gold.sql", None, options)
    metrics = report.summary.execution_metrics
    page = report.to_html()
    assert "VES not measured" not in page and f"VES {metrics['ves']:.2f}  R-VES {metrics['r_ves']:.2f}" in page


def test_bird_dev_with_an_empty_db_id_fails_as_the_official_scorer(world):
    """dev's evaluation.py opens <db_root>/.sqlite for `SQL\\t----- bird -----\\t`: an empty database."""
    dev = world / "dev"
    dev.mkdir()
    values = {str(i): p + SEP + ("" if i == 0 else "shop") for i, (_, p) in enumerate(QUESTIONS)}
    (dev / "predict_dev.json").write_text(json.dumps(values))
    (dev / "dev_gold.sql").write_text((world / "gold.sql").read_text())
    run = evaluate(world / "elsewhere", "bird", "--predicted_sql_path", "../dev/", "--ground_truth_path", "../dev/",
                   "--db_root_path", "../dbs/", "--output", "out/d.json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    first = json.loads((world / "elsewhere" / "out" / "d.json").read_text())["instances"][0]
    assert (first["score"], first["strict_score"], first["reason"]) == (0.0, 0.0, "no_database")
    assert "names no database after the separator" in first["detail"] and "'/.sqlite'" in first["detail"]


# ---- BIRD on a server: a role `db prepare` never made, a server that cannot be reached -------------------------


@pytest.fixture
def pets_on_postgres(postgres_server):  # noqa: F811
    """The pets table in a database of its own on the session's server: the gold runs, answers are what fail."""
    with postgres_server.admin() as con:
        if not con.execute("SELECT 1 FROM pg_database WHERE datname = 'setup_pets'").fetchone():
            con.execute("CREATE DATABASE setup_pets")
    with postgres_server.admin("setup_pets") as con:
        con.execute("DROP TABLE IF EXISTS pets")
        con.execute("CREATE TABLE pets (name TEXT, kind TEXT, age INTEGER)")
        con.execute("INSERT INTO pets VALUES ('tom', 'cat', 4), ('rex', 'dog', 2), ('kit', 'cat', 1)")
    return postgres_server


def test_bird_on_postgres_as_an_unprepared_role_is_exit_2_naming_db_prepare(world, pets_on_postgres):
    superuser = pets_on_postgres.admin_dsn.rsplit("/", 1)[0] + "/setup_pets"  # the `postgres` superuser
    run = evaluate(world / "elsewhere", *BIRD, "../dbs", "--sql_dialect", "PostgreSQL",
                   "--postgres-dsn", superuser, "--output", "out/pg.json")  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--postgres-dsn: no answer can run on this server (credentials_missing)" in run.stderr
    assert "evaluate.py db prepare --engine postgres" in run.stderr
    assert not (world / "elsewhere" / "out" / "pg.json").exists()
    prepared = pets_on_postgres.dsn.rsplit("/", 1)[0] + "/setup_pets"  # the role `db prepare` made: graded
    run = evaluate(world / "elsewhere", *BIRD, "../dbs", "--sql_dialect", "PostgreSQL",
                   "--postgres-dsn", prepared, "--output", "out/pg.json")  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads((world / "elsewhere" / "out" / "pg.json").read_text())["summary"]["score"] == 0.75


def test_bird_on_a_server_that_cannot_be_reached_is_exit_2(world):
    from dbservers import free_port

    dsn = f"postgresql://grader@127.0.0.1:{free_port()}/postgres"
    run = evaluate(world / "elsewhere", *BIRD, "../dbs", "--sql_dialect", "PostgreSQL", "--postgres-dsn", dsn)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--postgres-dsn: no answer can run on this server (no_database): cannot connect" in run.stderr


def test_grade_on_postgres_as_an_unprepared_role_is_exit_2_naming_db_prepare(world, pets_on_postgres):
    gold = world / "gold" / "spider2_eval.jsonl"
    gold.write_text(
        gold.read_text().replace('"type": "SQLite", "db": "shop"', '"type": "PostgreSQL", "db": "setup_pets"')
    )
    superuser = pets_on_postgres.admin_dsn
    run = evaluate(world / "elsewhere", *GRADE[:-1], "--postgres-dsn", superuser, "--output", "out/g.json")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "--postgres-dsn: no answer can run on this server for any of the 1 database(s)" in run.stderr
    assert "(credentials_missing)" in run.stderr and "evaluate.py db prepare --engine postgres" in run.stderr
    assert superuser not in run.stderr and not (world / "elsewhere" / "out" / "g.json").exists()
    run = evaluate(world / "elsewhere", *GRADE[:-1], "--postgres-dsn", pets_on_postgres.dsn, "--output", "out/g.json")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads((world / "elsewhere" / "out" / "g.json").read_text())["summary"]["score"] == 0.75


# ---- rewards: the trainer's db_root ------------------------------------------------------------------------


def test_a_reward_db_root_that_does_not_exist_stops_the_run_not_every_reward(world, monkeypatch):
    from evaluators.errors import UsageError
    from evaluators.rewards.verl import compute_score, compute_score_batch

    monkeypatch.chdir(world / "elsewhere")
    gold, pred = QUESTIONS[0]
    answer = f"```sql\n{pred}\n```"
    assert compute_score("bird", answer, gold, {"db_id": "shop"}, db_root="../dbs")["score"] == 1.0
    with pytest.raises(UsageError, match=f"reward_kwargs db_root {world / 'dbz'}: no such folder"):
        compute_score("bird", answer, gold, {"db_id": "shop"}, db_root="../dbz")
    with pytest.raises(UsageError, match="db_root"):
        compute_score_batch(["bird"], [answer], [gold], [{"db_id": "shop"}], db_root="../dbz")


# ---- the usual slips of a grade command: swapped folders, a flat folder without --layout flat -------------


@pytest.mark.parametrize("command", [["grade", "--no-plot"], ["validate"]])
def test_swapped_result_and_gold_folders_are_said(world, command):
    run = evaluate(world / "elsewhere", *command, "--result-dir", "../gold", "--gold-dir", "../sub")
    assert run.returncode == 2, run.stderr
    assert "--result-dir and --gold-dir look swapped" in run.stderr
    assert f"swap them: --result-dir {world / 'sub'} --gold-dir {world / 'gold'}" in run.stderr


@pytest.mark.parametrize("command", [["grade", "--no-plot"], ["validate"]])
def test_a_flat_folder_without_layout_flat_is_named(world, command):
    flat = world / "lite_csvs"
    flat.mkdir()
    (flat / "q1.csv").write_text("a\n1\n")
    (flat / "q2.sql").write_text("SELECT 1")
    run = evaluate(world / "elsewhere", *command, "--result-dir", "../lite_csvs", "--gold-dir", "../gold")
    assert run.returncode == 2, run.stderr
    assert "has no results_metadata.jsonl but 2 answer file(s) side by side" in run.stderr
    assert "add --layout flat" in run.stderr


def test_a_miss_is_explained_against_the_closest_gold_variant(tmp_path):
    """Two acceptable golds, the answer nearly the second: the detail names the second, under both rules."""
    from casefolders import write_instance

    from evaluators import grade

    first = "id,name\n1,a\n2,b\n3,c\n"
    second = "id,total\n1,10\n2,20\n"
    spec = {"func": "table_match", "parameters": {"gold": ["first.csv", "second.csv"]}}
    files = {"first.csv": first, "second.csv": second}
    write_instance(tmp_path, "q", spec, "file", "r.csv", files, {"r.csv": "id,total\n1,10\n2,21\n"})
    report = grade(tmp_path / "sub", tmp_path / "gold", semantics="spider2")
    instance = report.instances[0]
    for detail in (instance.detail, instance.strict_detail):
        assert detail.startswith("second.csv: ") and "the closest; 1 other gold variant(s) also fail" in detail
