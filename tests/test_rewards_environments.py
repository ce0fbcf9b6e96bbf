"""The environment protocol and pool, through a tiny text environment (tests/textenv.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import textenv
from textenv import TextEnvironment

from evaluators.rewards.environments import EnvironmentPool, replay


def test_replay_scores_and_stops_at_done():
    env = TextEnvironment()
    assert replay(env, "door", 0, ["look", "take key"], 10).reward == 0.5
    outcome = replay(env, "door", 0, ["take key", "open door", "jump in the pit", "look"], 10)
    assert outcome.reward == 1.0 and outcome.done and outcome.steps == 2  # actions after done are not taken
    failed = replay(env, "door", 0, ["jump in the pit", "take key", "open door"], 10)
    assert failed.reward == 0.0 and failed.done and failed.steps == 1
    assert env.resets == 3  # a fresh task every time


def test_step_limit_is_raised_for_long_trajectories():
    long_path = ["look"] * 150 + ["take key", "open door"]
    outcome = replay(TextEnvironment(), "door", 0, long_path, 30)
    assert outcome.reward == 1.0 and outcome.steps == 152
    capped = replay(TextEnvironment(), "door", 0, long_path, 30, max_steps=100)
    assert capped.reward == 0.0 and capped.steps == 100


def test_pool_reuses_environments_one_thread_each():
    textenv.STARTED.clear()
    pool = EnvironmentPool(lambda: TextEnvironment(step_delay_s=0.002), size=2)
    paths = [["take key", "open door"], ["take key"], ["look"], ["jump in the pit"]] * 6
    with ThreadPoolExecutor(max_workers=6) as threads:
        rewards = list(threads.map(lambda actions: pool.replay("door", 1, actions, 10).reward, paths))
    assert rewards == [1.0, 0.5, 0.0, 0.0] * 6
    assert len(textenv.STARTED) == 2  # started once, reused
    assert sum(e.resets for e in textenv.STARTED) == len(paths)
    assert not any(e.shared for e in textenv.STARTED)
    pool.close()
    assert all(e.closed for e in textenv.STARTED)


def test_timeout_stops_the_trajectory_and_replaces_the_environment():
    textenv.STARTED.clear()
    pool = EnvironmentPool(lambda: TextEnvironment(step_delay_s=0.05), size=1)
    slow = pool.replay("door", 0, ["look"] * 100 + ["take key"], timeout_s=0.3)
    assert slow.timed_out and slow.reward == 0.0 and slow.steps < 100
    assert textenv.STARTED[0].closed  # its state is unknown, so it is not lent again
    assert pool.replay("door", 0, ["take key", "open door"], 5).reward == 1.0
    assert len(textenv.STARTED) == 2


def test_a_hanging_step_is_ended_by_closing_its_environment(monkeypatch):
    import evaluators.rewards.environments as environments

    monkeypatch.setattr(environments, "WATCHDOG_GRACE_S", 0.2)  # a short grace for the test
    textenv.STARTED.clear()
    pool = EnvironmentPool(TextEnvironment, size=1)
    outcome = pool.replay("door", 0, ["take key", "hang", "open door"], timeout_s=0.2)
    assert outcome.timed_out and outcome.reward == 0.0 and outcome.steps == 1
    assert textenv.STARTED[0].closed
    assert pool.replay("door", 0, ["take key"], 5).reward == 0.5


def test_a_failing_factory_does_not_lose_a_place():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("no JVM today")
        return TextEnvironment()

    pool = EnvironmentPool(flaky, size=1)
    with pytest.raises(OSError):
        pool.replay("door", 0, ["take key"], 5)
    assert pool.replay("door", 0, ["take key"], 5).reward == 0.5
