"""Environment rewards: replay an agent's actions in a text environment and take its own final score.

An environment is anything with this shape (ScienceWorld's adapter is in scienceworld.py;
WebShop or ALFWorld installations plug in the same way, see docs/rl.md):

    class MyEnvironment:
        def reset(self, task: str, variation: int, max_steps: int) -> str: ...   # a fresh task; its first text
        def step(self, action: str) -> bool: ...                                 # True once the episode is done
        def score(self) -> float: ...                                            # the reward so far, in [0, 1]
        def close(self) -> None: ...                                             # free what it holds (a JVM, ...)

Starting one is expensive (ScienceWorld: a JVM, about 1.5 s), so an `EnvironmentPool` keeps
them across calls; each is used by one thread at a time and reset between uses.  A trajectory
has a time limit: past it the replay stops at the next step, and a step that hangs past the
limit has its environment closed from a watchdog (which ends the blocked call) and replaced.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class Environment(Protocol):
    def reset(self, task: str, variation: int, max_steps: int) -> str: ...

    def step(self, action: str) -> bool: ...

    def score(self) -> float: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Replay:
    reward: float  # the environment's score when the replay stopped, in [0, 1]; 0 when it timed out or failed
    steps: int  # actions taken (actions after `done` are not taken)
    done: bool
    timed_out: bool = False
    error: str = ""


class EnvironmentPool:
    """Up to `size` environments from `factory`, lent to one thread at a time."""

    def __init__(self, factory: Callable[[], Environment], size: int = 2):
        self.factory = factory
        self.size = max(1, size)
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self._started = 0
        self._lock = threading.Lock()
        self._closed = False

    def acquire(self) -> Environment:
        with self._lock:
            start = self._idle.empty() and self._started < self.size
            if start:
                self._started += 1
        held = None if start else self._idle.get()
        if held is not None:
            return held
        try:  # a free place (or a discarded environment's place, marked by None): start one
            return self.factory()
        except BaseException:
            self._free_place()
            raise

    def release(self, environment: Environment) -> None:
        self._idle.put(environment)

    def discard(self, environment: Environment) -> None:
        """An environment that timed out or failed is closed; its place goes to a fresh one."""
        _close_quietly(environment)
        self._free_place()

    def _free_place(self) -> None:
        self._idle.put(None)  # a place without an environment: the next acquire starts the replacement

    def replay(
        self, task: str, variation: int, actions: Sequence[str], timeout_s: float = 120.0, max_steps: int | None = None
    ) -> Replay:
        environment = self.acquire()
        try:
            outcome = replay(environment, task, variation, actions, timeout_s, max_steps)
        except BaseException:
            self.discard(environment)
            raise
        if outcome.timed_out or outcome.error:  # its state is unknown (perhaps mid-step): never lent again
            self.discard(environment)
        else:
            self.release(environment)
        return outcome

    def close(self) -> None:
        self._closed = True
        while not self._idle.empty():
            held = self._idle.get_nowait()
            if held is not None:
                _close_quietly(held)


DEFAULT_STEP_LIMIT = 100  # ScienceWorld's own envStepLimit; a longer trajectory raises the limit to fit
WATCHDOG_GRACE_S = 5.0  # how long past its time limit a step may hang before its environment is closed


def replay(
    environment: Environment,
    task: str,
    variation: int,
    actions: Sequence[str],
    timeout_s: float,
    max_steps: int | None = None,
) -> Replay:
    """Reset, take the actions until the environment says done, return its final score."""
    limit = max_steps or max(DEFAULT_STEP_LIMIT, len(actions) + 1)
    deadline = time.monotonic() + timeout_s
    watchdog = _Watchdog(environment, deadline, WATCHDOG_GRACE_S)
    steps, done = 0, False
    try:
        environment.reset(task, variation, limit)
        for action in actions:
            if done or steps >= limit:
                break
            if time.monotonic() > deadline:
                return Replay(0.0, steps, False, timed_out=True, error=f"over the time limit of {timeout_s:g} s")
            done = bool(environment.step(str(action)))
            steps += 1
        return Replay(environment.score(), steps, done)
    except Exception as exc:
        if watchdog.fired:
            return Replay(0.0, steps, False, timed_out=True, error="a step ran past the time limit")
        return Replay(0.0, steps, False, error=f"{type(exc).__name__}: {exc}"[:300])
    finally:
        watchdog.cancel()


class _Watchdog:
    """Closes the environment if the replay is still running `grace_s` after its deadline."""

    def __init__(self, environment: Environment, deadline: float, grace_s: float):
        self.fired = False
        self._environment = environment
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()) + grace_s, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        _close_quietly(self._environment)

    def cancel(self) -> None:
        self._timer.cancel()


def _close_quietly(environment: Environment) -> None:
    try:
        environment.close()
    except Exception:
        pass
