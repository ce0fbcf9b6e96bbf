"""A tiny text environment for the environment-reward tests: fetch the key, open the door.

Score: 0.5 for holding the key, 1.0 (done) for opening the door with it; "jump in the pit"
scores -1 and ends the episode, like a failed ScienceWorld task.  It records how it was used
so tests can see resets, steps and whether two threads ever shared one instance.
"""

from __future__ import annotations

import threading
import time

STARTED: list[TextEnvironment] = []


class TextEnvironment:
    def __init__(self, step_delay_s: float = 0.0):
        self.step_delay_s = step_delay_s
        self.resets = 0
        self.steps_taken = 0
        self.closed = False
        self.shared = False  # set when two threads were inside at once
        self._inside = threading.Lock()
        self._score = 0.0
        self._limit = 100
        self._moves = 0
        STARTED.append(self)

    def reset(self, task: str, variation: int, max_steps: int) -> str:
        with self._guard():
            self.resets += 1
            self.task, self.variation, self._limit = task, variation, max_steps
            self._score, self._moves, self._has_key, self._done = 0.0, 0, False, False
            return f"{task} #{variation}: a key lies on the floor; a door is locked"

    def step(self, action: str) -> bool:
        with self._guard():
            if self.closed:
                raise RuntimeError("environment closed")
            if action == "hang":
                while not self.closed:  # a step that never returns on its own
                    time.sleep(0.01)
                raise RuntimeError("closed while stepping")
            time.sleep(self.step_delay_s)
            self.steps_taken += 1
            self._moves += 1
            if action == "take key":
                self._has_key = True
                self._score = max(self._score, 0.5)
            elif action == "open door" and self._has_key:
                self._score, self._done = 1.0, True
            elif action == "jump in the pit":
                self._score, self._done = -1.0, True
            return self._done or self._moves >= self._limit

    def score(self) -> float:
        return max(0.0, self._score)

    def close(self) -> None:
        self.closed = True

    def _guard(self):
        if not self._inside.acquire(blocking=False):
            self.shared = True
            self._inside.acquire()
        return _Release(self._inside)


class _Release:
    def __init__(self, lock):
        self.lock = lock

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lock.release()
