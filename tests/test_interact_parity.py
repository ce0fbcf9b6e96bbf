"""BIRD-Interact: per submit, per phase and per task, our official replay equals the official batch loop's,
run unmodified on the generated tasks (tests/interact_generator.py --record): mini-interact's loop on
SQLite, bird_interact_agent's on PostgreSQL.  The run each recorded is graded here and compared with the
verdicts it gave."""

import json

import interact_generator
import pytest
from dbservers import GRADER_PASSWORD, postgres_server  # noqa: F401  (the session's server)
from livesql_generator import load_postgres

from evaluators.interact.run import InteractOptions, grade_interact

ROLE = "interact_grader"
RECORDS = {"sqlite": interact_generator.RECORDED, "postgresql": interact_generator.RECORDED_PG}


def _grade(root, recorded: dict, **options) -> dict:
    run = root / "run.jsonl"
    run.write_text("".join(json.dumps(status) + "\n" for status in recorded["run"]))
    settings = InteractOptions(work_dir=root / "work", **options)
    report = grade_interact(root / "public.jsonl", root / "gt.jsonl", run, settings, jobs=2)
    return {i.instance_id: i for i in report.instances}


@pytest.fixture(scope="module")
def sqlite_graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("interact")
    interact_generator.build(root)
    recorded = json.loads(RECORDS["sqlite"].read_text())
    return _grade(root, recorded, db_root=root), recorded["official"]


@pytest.fixture(scope="module")
def postgres_graded(postgres_server, tmp_path_factory):  # noqa: F811
    with postgres_server.admin() as con:
        if not con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            con.execute(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{GRADER_PASSWORD}'")
    load_postgres(postgres_server.admin, ROLE, interact_generator.PG_DATABASES)
    root = tmp_path_factory.mktemp("interact_pg")
    interact_generator.build(root, postgres=True)
    recorded = json.loads(RECORDS["postgresql"].read_text())
    dsn = f"postgresql://{ROLE}:{GRADER_PASSWORD}@127.0.0.1:{postgres_server.port}/postgres"
    return _grade(root, recorded, engine="postgresql", postgres_dsn=dsn), recorded["official"]


def _ours(instance) -> dict:
    submits = instance.execution["submits"]
    return {
        "reward": instance.score,
        "phase1_completed": 1 in instance.execution["phases_solved"],
        "phase2_completed": 2 in instance.execution["phases_solved"],
        "submits": [{"passed": s["passed"], "phase": s["phase"], "reward": s["reward_after"]} for s in submits],
    }


def _compare(mine: dict, theirs: dict) -> None:
    for i, submit in enumerate(theirs["submits"]):  # the handler's words name no phase when it raised
        if submit["phase"] is None:
            submit["phase"] = mine["submits"][i]["phase"]
    assert mine["submits"] == theirs["submits"]
    completed = (theirs["phase1_completed"], theirs["phase2_completed"])
    assert (mine["phase1_completed"], mine["phase2_completed"]) == completed
    assert mine["reward"] == pytest.approx(theirs["reward"])


def _tasks(engine: str) -> list:
    return sorted(json.loads(RECORDS[engine].read_text())["official"])


def test_every_task_is_graded(sqlite_graded):
    ours, official = sqlite_graded
    assert set(ours) == set(official) and len(official) >= 25


@pytest.mark.parametrize("task", _tasks("sqlite"))
def test_mini_interact_submits_phases_and_rewards_equal_the_official(sqlite_graded, task):
    ours, official = sqlite_graded
    _compare(_ours(ours[task]), official[task])


@pytest.mark.parametrize("task", _tasks("postgresql"))
def test_bird_interact_postgres_submits_phases_and_rewards_equal_the_official(postgres_graded, task):
    ours, official = postgres_graded
    _compare(_ours(ours[task]), official[task])


def test_oracle_rewards_equal_the_official_debug_run(tmp_path):
    """`--oracle` against mini's `main.py --debug` (the gold submitted in each phase), recorded beside the run."""
    interact_generator.build(tmp_path)
    options = InteractOptions(work_dir=tmp_path / "work", db_root=tmp_path, oracle=True)
    report = grade_interact(tmp_path / "public.jsonl", tmp_path / "gt.jsonl", None, options, jobs=2)
    ours = {
        i.instance_id: {
            "last_reward": i.execution["oracle_reward"],
            "phase1_completed": 1 in i.execution["phases_solved"],
            "phase2_completed": 2 in i.execution["phases_solved"],
        }
        for i in report.instances
    }
    assert ours == json.loads(RECORDS["sqlite"].read_text())["oracle"]
