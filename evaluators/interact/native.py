"""BIRD-Interact's own files: the tasks (the public JSON lines with the GT file laid over them as the
benchmark's `combine_public_with_gt.py` does) and a recorded run as the official agents write it (the batch
loop's output JSON lines: one `SampleStatus` per task, its `interaction_history` holding every turn's
action, object, phase and budget).  Every problem is said with its `file:line`; a broken line or entry is a
problem, never the end of the run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import Location
from evaluators.livesql.native import Line, read_lines
from evaluators.specs import Problem

# What `combine_public_with_gt.py` copies from a GT line over the public one (and inside `follow_up`).
GT_FIELDS = ("sol_sql", "external_knowledge", "test_cases")


@dataclass(frozen=True)
class Task(Line):
    """One task, public fields and gold merged (trusted: the operator's files): a JSON line of livesql's
    reader (its `data`, `location` and `instance_id`) with the task's own fields."""

    @property
    def database(self) -> str | None:
        value = self.data.get("selected_database")
        return str(value) if value else None

    def phase(self, number: int) -> dict:
        """The fields phase `number` is graded with: the task's own (1) or its follow-up's (2)."""
        return self.data if number == 1 else (self.data.get("follow_up") or {})

    @property
    def has_follow_up(self) -> bool:
        """As the submit handler asks: a follow-up with a query moves a solved phase 1 to phase 2."""
        follow = self.data.get("follow_up")
        return bool(isinstance(follow, dict) and follow and follow.get("query"))

    @property
    def ambiguities(self) -> int:
        """Critical ambiguities of the query plus knowledge ambiguities: each adds 2 to the budget."""
        query = self.data.get("user_query_ambiguity") or {}
        critical = query.get("critical_ambiguity", []) if isinstance(query, dict) else []
        return _count(critical) + _count(self.data.get("knowledge_ambiguity", []))


def _count(value) -> int:
    return len(value) if isinstance(value, (list, dict, str)) else 0


@dataclass(frozen=True)
class Action:
    """One logged turn of the agent."""

    turn: int | None
    logged_phase: int | None  # the phase the log names (the passing phase-1 submit says 2: logged after)
    obj: str  # interaction_object: User | Environment | ...
    action: str  # e.g. submit('SELECT ...'), ask(...), execute(...)
    recorded_reward: float | None
    recorded_budget: float | None  # remaining budget the run logged with this turn
    location: str  # file:line interaction_history[i]


@dataclass(frozen=True)
class Record:
    """One task's recorded run (untrusted: the submission)."""

    instance_id: str
    actions: tuple
    total_budget: float | None
    recorded: dict  # what the run itself concluded: last_reward, phase1/2_completed, task_finished
    location: Location


def read_tasks(path: Path, gt_path: Path | None, problems: list) -> list[Task]:
    """The tasks in file order; with a GT file, its protected fields laid over each public line."""
    lines = read_lines(Path(path), problems)
    gt = _by_id(read_lines(Path(gt_path), problems), problems) if gt_path is not None else None
    tasks, seen = [], set()
    for line in lines:
        if line.instance_id in seen:
            problems.append(Problem(line.location, f"task {line.instance_id} appears twice; the first is kept"))
            continue
        seen.add(line.instance_id)
        data = dict(line.data)
        if gt is not None:
            if line.instance_id in gt:
                data = combine(data, gt[line.instance_id].data)
            else:
                problems.append(Problem(line.location, f"task {line.instance_id}: no GT line; graded as it stands"))
        tasks.append(Task(data, line.location))
    return tasks


def combine(public: dict, gt: dict) -> dict:
    """`combine_public_with_gt.py`: the GT line's sol_sql, external_knowledge and test_cases (empty when it has
    none) replace the public ones; a GT follow_up's three fields go into the public follow_up."""
    merged = {**public, **{name: gt.get(name, []) for name in GT_FIELDS}}
    follow = gt.get("follow_up")
    if isinstance(follow, dict):
        public_follow = merged.get("follow_up")
        base = dict(public_follow) if isinstance(public_follow, dict) else {}
        merged["follow_up"] = {**base, **{name: follow.get(name, []) for name in GT_FIELDS}}
    return merged


def _by_id(lines: list[Line], problems: list) -> dict:
    found: dict = {}
    for line in lines:
        if line.instance_id in found:
            problems.append(Problem(line.location, f"GT line {line.instance_id} appears twice; the first is kept"))
            continue
        found[line.instance_id] = line
    return found


def read_run(path: Path, problems: list) -> list[Record]:
    """The recorded run: one record per line, as the official batch loop saves its statuses."""
    records = []
    for line in read_lines(Path(path), problems, submitted=True):
        record = _record(line, problems)
        if record is not None:
            records.append(record)
    return records


def _record(line: Line, problems: list) -> Record | None:
    original = line.data.get("original_data")
    if not isinstance(original, dict) or "instance_id" not in original:
        problems.append(Problem(line.location, "a record needs original_data with the task's instance_id"))
        return None
    history = line.data.get("interaction_history", [])
    if not isinstance(history, list):
        problems.append(Problem(line.location, "interaction_history must be a list of turns"))
        return None
    actions = []
    for i, entry in enumerate(history):
        where = f"{line.location} interaction_history[{i}]"
        if not isinstance(entry, dict):
            problems.append(Problem(line.location, f"interaction_history[{i}] is not an object; skipped"))
            continue
        actions.append(_action(entry, where))
    recorded = {k: line.data.get(k) for k in ("last_reward", "phase1_completed", "phase2_completed", "task_finished")}
    total = _number(line.data.get("total_budget"))
    return Record(str(original["instance_id"]), tuple(actions), total, recorded, line.location)


def _action(entry: dict, where: str) -> Action:
    budget = entry.get("budget_after_action")
    remaining = _number(budget.get("remaining_budget")) if isinstance(budget, dict) else None
    return Action(
        turn=entry.get("turn") if isinstance(entry.get("turn"), int) else None,
        logged_phase=entry.get("phase") if isinstance(entry.get("phase"), int) else None,
        obj=str(entry.get("interaction_object") or ""),
        action=str(entry.get("action") or ""),
        recorded_reward=_number(entry.get("reward")),
        recorded_budget=remaining,
        location=where,
    )


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
