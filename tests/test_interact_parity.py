"""BIRD-Interact (mini-interact, SQLite): per submit, per phase and per task, our official replay equals the
official batch loop's, run unmodified on the generated tasks (tests/interact_generator.py --record; the
official run it recorded is graded here, and its own verdicts compared)."""

import json

import interact_generator
import pytest

from evaluators.interact.run import InteractOptions, grade_interact


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("interact")
    interact_generator.build(root)
    recorded = json.loads(interact_generator.RECORDED.read_text())
    run = root / "run.jsonl"
    run.write_text("".join(json.dumps(status) + "\n" for status in recorded["run"]))
    options = InteractOptions(db_root=root, work_dir=root / "work")
    report = grade_interact(root / "public.jsonl", root / "gt.jsonl", run, options, jobs=2)
    return {i.instance_id: i for i in report.instances}, recorded["official"]


def _ours(instance) -> dict:
    submits = instance.execution["submits"]
    return {
        "reward": instance.score,
        "phase1_completed": 1 in instance.execution["phases_solved"],
        "phase2_completed": 2 in instance.execution["phases_solved"],
        "submits": [{"passed": s["passed"], "phase": s["phase"], "reward": s["reward_after"]} for s in submits],
    }


def test_every_task_is_graded(graded):
    ours, official = graded
    assert set(ours) == set(official) and len(official) >= 25


@pytest.mark.parametrize("task", sorted(json.loads(interact_generator.RECORDED.read_text())["official"]))
def test_submits_phases_and_rewards_equal_the_official(graded, task):
    ours, official = graded
    mine, theirs = _ours(ours[task]), official[task]
    for submit in theirs["submits"]:  # the handler's words name no phase when it raised (phase-2 set-up)
        if submit["phase"] is None:
            submit["phase"] = mine["submits"][theirs["submits"].index(submit)]["phase"]
    assert mine["submits"] == theirs["submits"]
    assert (mine["phase1_completed"], mine["phase2_completed"]) == (
        theirs["phase1_completed"],
        theirs["phase2_completed"],
    )
    assert mine["reward"] == theirs["reward"]
