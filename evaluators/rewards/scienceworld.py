"""ScienceWorld rewards: replay an action trajectory and take ScienceWorld's own final score.

    scienceworld_reward("find-non-living-thing", 0, ["focus on ...", ...]) -> max(0, score) / 100

ScienceWorld (`pip install '.[scienceworld]'`, Java 17) ships its simulator in the package.
Environments are kept in a pool (one JVM each, reused and reloaded per trajectory); actions
after the task is done are not taken; the step limit (ScienceWorld's `envStepLimit`, 100 by
default) is raised to fit a longer trajectory.  The score is read the way `env.step` computes
it (`round(100 * getScore())`, done on completion, on a negative score or past the step limit),
without the list of valid actions `env.step` also builds every step, which is most of its time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from evaluators.rewards.environments import EnvironmentPool, Replay

INSTALL_HINT = "pip install '.[scienceworld]'"
DEFAULT_TIMEOUT_S = 300.0
MOVES_PER_ACTION = 20
_pool: EnvironmentPool | None = None
_pool_lock = threading.Lock()


class ScienceWorldEnvironment:
    """The Environment protocol over one ScienceWorld simulator (one JVM)."""

    def __init__(self) -> None:
        try:
            from scienceworld import ScienceWorldEnv
        except ImportError as exc:
            raise ImportError(f"ScienceWorld is not installed: {INSTALL_HINT} (it needs Java 17)") from exc
        self.env = ScienceWorldEnv("")
        self._score = 0
        self._limit = 100

    def reset(self, task: str, variation: int, max_steps: int) -> str:
        self.env.load(task, int(variation), "")
        # ScienceWorld counts moves, not actions, and one action can count several (a gold path's "wait1" 2):
        # the replay limits the actions itself; the move limit only has to stay out of its way.
        self._limit = max_steps * MOVES_PER_ACTION
        self.env.envStepLimit = self._limit
        self._score = 0
        observation, info = self.env.reset()
        self._score = int(info["score"])
        return observation

    def step(self, action: str) -> bool:
        server = self.env.server
        server.step(action)
        self._score = int(round(100 * server.getScore()))
        return bool(server.getCompleted()) or self._score < 0 or server.getNumMoves() > self._limit

    def score(self) -> float:
        return max(0, self._score) / 100

    def raw_score(self) -> int:
        """ScienceWorld's own score, from -100 (failed) to 100."""
        return self._score

    def close(self) -> None:
        java = self.env._gateway.java_process
        self.env.close()
        try:  # wait for the JVM, so nothing is left running (and a later close finds it gone)
            java.wait(timeout=10)
        except Exception:
            java.kill()
            java.wait(timeout=10)


def pool(size: int | None = None) -> EnvironmentPool:
    """The process's ScienceWorld pool (size: SCIENCEWORLD_POOL_SIZE, default 2)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = EnvironmentPool(ScienceWorldEnvironment, size or int(os.environ.get("SCIENCEWORLD_POOL_SIZE", 2)))
        return _pool


def close_pool() -> None:
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.close()
            _pool = None


def scienceworld_replay(
    task_name: str, variation: int, actions: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S
) -> Replay:
    return pool().replay(task_name, variation, [str(a) for a in actions], timeout_s)


def scienceworld_reward(
    task_name: str, variation: int, actions: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S
) -> float:
    """ScienceWorld's final score of the trajectory, as max(0, score) / 100."""
    return scienceworld_replay(task_name, variation, actions, timeout_s).reward


import atexit  # noqa: E402  registered last: the pool's JVMs are stopped at exit

atexit.register(close_pool)
