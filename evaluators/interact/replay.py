"""The official batch loop replayed over a recorded run, without an LLM: the budget each action spends, when
the budget forces a submit, which phase each submit is graded in, what a passing phase 1 stores for phase
2, and the reward after each submit (mini-interact `main.run_batch_evaluation` and
`action_handler_sqlite.execute_submit_action`; bird_interact_agent's for PostgreSQL).

The verdict of one submit is asked of `judge(phase, sql, phase1_sql)`; the replay is pure.  Two rule sets:
`official` (the named quirks: quote characters stripped from both ends in mini, a failed submit resets the
reward to 0, mini's phase 2 worth nothing) and `strict` (the argument read as a Python string literal as
bird_interact_agent does, rewards 0.7 + 0.3 that a later failure never takes back).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# main.py's ACTION_COSTS, WRONG_FORMAT_COST, DEFAULT_ENV_INTERACT_BUDGET and DEFAULT_SUBMIT_BUDGET.
ACTION_COSTS = {
    "ask": 2,
    "submit": 3,
    "execute": 1,
    "get_schema": 1,
    "get_all_column_meanings": 1,
    "get_column_meaning": 0.5,
    "get_all_external_knowledge_names": 0.5,
    "get_knowledge_definition": 0.5,
    "get_all_knowledge_definitions": 1,
}
WRONG_FORMAT_COST = 0.2
FIXED_BUDGET = 3 + 3  # environment interactions + submits
DEFAULT_PATIENCE = 10  # main.py's --user_patience_budget default
A_INTERACT_REWARDS = {1: 0.7, 2: 0.3}
MINI_REWARDS = {1: 1}  # mini's execute_submit_action: phase 2 adds nothing
# c-Interact's README: per phase, solved at the first submit / after the one debugging retry.
C_INTERACT_REWARDS = {1: (0.7, 0.5), 2: (0.3, 0.2)}


@dataclass(frozen=True)
class Rules:
    name: str  # official | strict
    flavour: str  # mini (SQLite) | full (PostgreSQL: bird-interact-lite / full)

    def phase_rewards(self, has_follow_up: bool = True) -> dict:
        """Official: mini's {1: 1} or a-Interact's {1: 0.7, 2: 0.3}.  Strict: a task's full reward is 1, so a
        task without a follow-up earns 1 for phase 1 (a-Interact's tasks all have one)."""
        if self.name == "official":
            return MINI_REWARDS if self.flavour == "mini" else A_INTERACT_REWARDS
        return A_INTERACT_REWARDS if has_follow_up else MINI_REWARDS

    def full_reward(self, has_follow_up: bool) -> float:
        """What solving every phase of a task earns."""
        rewards = self.phase_rewards(has_follow_up)
        return sum(rewards.get(p, 0) for p in ((1, 2) if has_follow_up else (1,)))

    @property
    def resets(self) -> bool:
        """A failed submit sets the stored reward to 0 (official); strict keeps what was earned."""
        return self.name == "official"

    def submitted_sql(self, action: str) -> str | None:
        """The SQL of `submit(...)` as the loop reads it, or None when it cannot (an invalid submit)."""
        found = re.search(r"submit\((.*)\)", action, re.DOTALL)
        if not found:
            return None
        raw = found.group(1).strip()
        if self.name == "official" and self.flavour == "mini":
            return raw.strip("'\"")  # every quote character at both ends, a closing string literal's included
        return python_string(raw)


def python_string(raw: str) -> str:
    """bird_interact_agent's `parse_action_arg`: a Python string literal read as one, else one matching pair of
    outer quotes (triple or single) removed."""
    try:
        value = ast.literal_eval(raw)
        if isinstance(value, str):
            return value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    for quote in ('"""', "'''", '"', "'"):
        if len(raw) >= 2 * len(quote) and raw.startswith(quote) and raw.endswith(quote):
            return raw[len(quote) : -len(quote)]
    return raw


def budget(ambiguities: int, patience: float) -> float:
    """`calculate_initial_budget`: 3 + 3 + 2 per ambiguity + the user's patience."""
    return FIXED_BUDGET + ACTION_COSTS["ask"] * ambiguities + patience


def cost(action: str) -> float:
    """`update_budget`: the action's name before its bracket; an empty or unknown one costs 0.2."""
    if not action:
        return WRONG_FORMAT_COST
    return ACTION_COSTS.get(action.split("(")[0], WRONG_FORMAT_COST)


@dataclass
class Submit:
    """One graded submit."""

    index: int  # its place in the interaction history
    location: str
    phase: int
    attempt: int  # 1, 2, ... within its phase
    sql: str
    verdict: object  # the Verdict of the rules' side
    reward_after: float
    forced: bool  # the budget had run out: this submit ends the task
    recorded_reward: float | None
    logged_phase: int | None


@dataclass
class Replay:
    """A task's run under one rule set."""

    submits: list = field(default_factory=list)
    reward: float = 0.0
    phases_solved: tuple = ()
    finished: bool = False
    budget_total: float = 0.0
    budget_left: float = 0.0
    budget_exceeded: bool = False
    ended_by: str = "history ended"  # solved | budget | history ended
    full_reward: float = 1.0  # what solving every phase earns under these rules
    ignored: list = field(default_factory=list)  # turns after the task ended (the replay's, not the record's)
    invalid_submits: int = 0

    def c_interact(self) -> float:
        """c-Interact's reward from the per-submit verdicts: per phase 0.7/0.3 at the first submit, 0.5/0.2
        at the second (after debugging), 0 later; phase 2 counts only once phase 1 is solved."""
        total = 0.0
        for phase, (first, second) in C_INTERACT_REWARDS.items():
            tries = [s for s in self.submits if s.phase == phase]
            solved = [s.attempt for s in tries if s.verdict.passed]
            if solved and solved[0] <= 2:
                total += first if solved[0] == 1 else second
            elif phase == 1:
                break
        return round(total, 10)


def replay(task, actions, rules: Rules, judge, patience: float) -> Replay:
    """Walk the logged turns as the batch loop processed them, asking `judge` for each submit's verdict."""
    state = Replay(budget_total=budget(task.ambiguities, patience))
    state.budget_left = state.budget_total
    phase, force, phase1_sql, solved, reward = 1, False, None, [], 0.0
    attempts = {1: 0, 2: 0}
    for index, act in enumerate(actions):
        if state.finished:
            state.ignored.append(index)
            continue
        is_submit = act.action.startswith("submit(")
        if force and not is_submit:  # the loop ends a task whose forced turn is no submit
            state.finished, state.ended_by = True, "budget"
            continue
        state.budget_left -= cost(act.action)
        if state.budget_left <= 0 and not force:
            force, state.budget_exceeded = True, True
        if act.obj != "User" or not is_submit:
            continue
        sql = rules.submitted_sql(act.action)
        if sql is None:
            state.invalid_submits += 1
            continue
        attempts[phase] += 1
        verdict = judge(phase, sql, phase1_sql)
        done = False
        if verdict.passed:
            reward += rules.phase_rewards(task.has_follow_up).get(phase, 0)
            solved.append(phase)
            if phase == 1:
                phase1_sql = sql
            done = phase == 2 or not task.has_follow_up
        elif rules.resets:
            reward = 0.0
        record = Submit(
            index,
            act.location,
            phase,
            attempts[phase],
            sql,
            verdict,
            reward,
            force,
            act.recorded_reward,
            act.logged_phase,
        )
        state.submits.append(record)
        state.finished = force or done
        state.ended_by = "solved" if done else ("budget" if force else state.ended_by)
        if not state.finished and phase == 1 and verdict.passed:
            phase = 2
    state.reward = round(reward, 10)
    state.full_reward = rules.full_reward(task.has_follow_up)
    state.phases_solved = tuple(solved)
    return state
