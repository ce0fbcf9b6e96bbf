"""scienceworld_reward against ScienceWorld's own score (env.step's info["score"]) on short tasks.

The reference replays each trajectory with a plain ScienceWorldEnv the way its docs show
(load, reset, step until done) and reads info["score"]; the reward must be max(0, score) / 100.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from dbservers import apt_install, unavailable

TASKS = [("find-non-living-thing", 1), ("lifespan-longest-lived", 0), ("find-animal", 2)]
NONSENSE = ["eat the sun", "focus on door", "go to nowhere"]


def _java_ok() -> bool:
    java = shutil.which("java")
    if java is None:
        return False
    version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    return any(f'version "{n}' in version for n in range(17, 30))


@pytest.fixture(scope="module")
def official():
    pytest.importorskip("scienceworld", reason="pip install '.[scienceworld]'")
    if not _java_ok():
        apt_install("openjdk-17-jre-headless")
        if not _java_ok():
            unavailable("Java 17 is needed by ScienceWorld")
    from scienceworld import ScienceWorldEnv

    env = ScienceWorldEnv("", envStepLimit=10_000)
    yield env
    env.close()
    from evaluators.rewards import scienceworld

    scienceworld.close_pool()


def own_score(env, task: str, variation: int, actions: list[str]) -> int:
    env.load(task, variation, "")
    _, info = env.reset()
    score = info["score"]
    for action in actions:
        _, _, done, info = env.step(action)
        score = info["score"]
        if done:
            break
    return score


def gold_path(env, task: str, variation: int) -> list[str]:
    env.load(task, variation, "", generateGoldPath=True)
    return list(env.get_gold_action_sequence())


# Each task replays its gold path, half of it, and one of the other kinds (each kind on one task: a replay
# costs seconds of JVM time, and the kinds do not depend on the task).
OTHER_KINDS = ["nonsense", "past done", "empty"]


@pytest.mark.parametrize("task, variation, other", [(*t, k) for t, k in zip(TASKS, OTHER_KINDS, strict=True)])
def test_reward_equals_scienceworlds_own_score(official, task, variation, other):
    from evaluators.rewards.scienceworld import scienceworld_reward

    gold = gold_path(official, task, variation)
    others = {"nonsense": NONSENSE, "past done": gold + ["look around", "eat the sun"], "empty": []}
    trajectories = {"gold": gold, "truncated": gold[: len(gold) // 2], other: others[other]}
    seen = {}
    for name, actions in trajectories.items():
        expected = max(0, own_score(official, task, variation, actions)) / 100
        assert scienceworld_reward(task, variation, actions) == expected, name
        seen[name] = expected
    assert seen["gold"] == 1.0 and seen["truncated"] < 1.0


def test_environments_are_pooled_and_reset(official):
    from evaluators.rewards import scienceworld

    pool = scienceworld.pool()
    for _ in range(3):
        scienceworld.scienceworld_reward("find-non-living-thing", 1, ["look around"])
    assert pool._started <= pool.size  # reused, not one JVM per call


def test_gold_func_grades_a_trajectory_file(official, tmp_path):
    from casefolders import write_instance

    from evaluators import grade

    task, variation = TASKS[0]
    gold = gold_path(official, task, variation)
    messages = [{"role": "user", "content": "solve it"}] + [{"role": "assistant", "content": a} for a in gold]
    spec = {"func": "scienceworld_reward", "parameters": {"task": task, "variation": variation}}
    write_instance(tmp_path, "sw", spec, "answer", "done", pred_files={"trajectory.json": json.dumps(messages)})
    line = {"instance_id": "sw", "answer_type": "answer", "answer_or_path": "done", "trajectory": "trajectory.json"}
    (tmp_path / "sub" / "results_metadata.jsonl").write_text(json.dumps(line) + "\n")
    (instance,) = grade(tmp_path / "sub", tmp_path / "gold").instances
    assert instance.score == 1.0 and "ScienceWorld" in instance.detail
    bad = {"func": "scienceworld_reward", "parameters": {"task": task, "variations": 1}}
    write_instance(tmp_path, "sw", bad, "answer", "look around")
    (instance,) = grade(tmp_path / "sub", tmp_path / "gold").instances
    assert instance.reason == "invalid_spec" and "variations" in instance.detail


def test_a_long_trajectory_is_not_cut_by_the_step_limit(official):
    """More actions than ScienceWorld's default limit (100), and more moves than actions ("wait1" counts 2): a
    limit of 100, or a move limit fitted to the action count, would end it before the task is done.
    100 waits, then find-non-living-thing's gold path: 107 actions, 206 moves."""
    from evaluators.rewards.scienceworld import scienceworld_replay

    actions = ["wait1"] * 100 + gold_path(official, "find-non-living-thing", 1)
    official.load("find-non-living-thing", 1, "")
    official.reset()
    for action in actions:  # ScienceWorld's own count of moves (the simulator's step, without env.step's extras)
        official.server.step(action)
    assert len(actions) > 100 and official.get_num_moves() > len(actions) + 1
    assert official.server.getCompleted() and official.server.getScore() == 1.0
    outcome = scienceworld_replay("find-non-living-thing", 1, actions)
    assert outcome.reward == 1.0 and outcome.done


def test_a_trajectory_past_its_time_limit_scores_zero_and_its_jvm_goes(official):
    import time

    from processes import descendants

    from evaluators.rewards import scienceworld

    gold = gold_path(official, "boil", 0)
    scienceworld.close_pool()
    outcome = scienceworld.scienceworld_replay("boil", 0, gold, timeout_s=0.5)
    assert outcome.timed_out and outcome.reward == 0.0 and outcome.steps < len(gold)
    time.sleep(1.0)
    java = [
        pid for pid in descendants() if "java" in open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
    ]
    assert len(java) == 1  # only the reference environment's JVM: the timed-out one was closed
    assert scienceworld.scienceworld_reward("find-non-living-thing", 1, ["look around"]) == 0.0
