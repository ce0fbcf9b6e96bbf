"""BIRD-Interact graded offline from a recorded run, on the one benchmark runner (`grading/benchmark.py`):
the reader pairs each task with its record, the one-item rule replays the record under the official rules
and under strict (replay.py), every submit graded on a fresh database (submit.py), and the figures are the
official ones: the a-Interact reward (mini: phase 1 worth 1), c-Interact's computed from the same
per-submit verdicts, phase completion, budgets.

`oracle`: the gold is submitted in every phase instead of a record (the ADK's `--mode oracle`, main.py's
`--debug`): tasks whose gold does not earn the full reward are listed by cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.cwd import absolute_or_none
from evaluators.errors import InstanceError, UsageError
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report
from evaluators.interact import native, replay
from evaluators.interact.submit import Judge
from evaluators.livesql.run import LiveSQLOptions, database_ref, missing_databases
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report

NAMES = ("official", "strict")


@dataclass(frozen=True)
class InteractOptions:
    engine: str = "sqlite"  # sqlite: mini-interact | postgresql: bird-interact-lite / full
    db_root: Path | None = None
    postgres_dsn: str | None = None
    patience: float | None = None  # None: from each record's total_budget, else main.py's default 10
    oracle: bool = False
    work_dir: Path = Path(".grade-work")
    timeout_s: float = 60.0
    memory_limit_mb: int = 2048
    disk_limit_mb: int = 1024

    def __post_init__(self) -> None:
        for name in ("db_root", "work_dir"):
            object.__setattr__(self, name, absolute_or_none(getattr(self, name)))

    @property
    def flavour(self) -> str:
        return "mini" if self.engine == "sqlite" else "full"

    def livesql(self) -> LiveSQLOptions:
        return LiveSQLOptions(
            benchmark="interact",
            engine=self.engine,
            db_root=self.db_root,
            work_dir=self.work_dir,
            postgres_dsn=self.postgres_dsn,
            instance_timeout_s=self.timeout_s,
            memory_limit_mb=self.memory_limit_mb,
            disk_limit_mb=self.disk_limit_mb,
        )


class Interact(Benchmark):
    semantics = "official"
    names = NAMES

    def __init__(self, tasks: Path, gt: Path | None, run: Path | None, options: InteractOptions):
        if run is None and not options.oracle:
            raise UsageError("a recorded run is needed (or --oracle to grade the gold)")
        self.tasks, self.options = Path(tasks), options
        self.gt = Path(gt) if gt is not None else None
        self.run = Path(run) if run is not None else Path()

    def read(self) -> Inputs:
        problems: list = []
        tasks = native.read_tasks(self.tasks, self.gt, problems)
        if self.options.engine == "sqlite" and self.options.db_root is not None:  # none there: exit 2, not 0 %
            problem = missing_databases(tasks, self.options.db_root)
            problems = problems if problem is None else [problem, *problems]
        if self.options.oracle:
            return Inputs([(t, None) for t in tasks], len(tasks), tuple(problems), (), self._gold_files())
        records = native.read_run(self.run, problems)
        by_id: dict = {}
        for record in records:
            if record.instance_id in by_id:
                problems.append(_problem(record, f"task {record.instance_id} recorded twice; the first is kept"))
                continue
            by_id[record.instance_id] = record
        known = {t.instance_id for t in tasks}
        unknown = tuple(i for i in by_id if i not in known)
        items = [(t, by_id.get(t.instance_id)) for t in tasks]
        return Inputs(items, len(records), tuple(problems), unknown, self._gold_files())

    def _gold_files(self) -> tuple:
        return tuple(p for p in (self.tasks, self.gt) if p is not None)

    def grade(self, item) -> InstanceReport:
        task, record = item
        meta = _metadata(task)
        if record is None and not self.options.oracle:
            return _report(task, meta, Verdict(0.0, "missing_prediction", "no record of this task in the run"))
        try:
            db_ref = database_ref(task.database or "", self.options.livesql()) if task.database else None
        except InstanceError as exc:
            return _report(task, meta, Verdict(0.0, exc.reason, exc.detail))
        if db_ref is None:
            return _report(task, meta, Verdict(0.0, "no_database", f"no database {task.database!r} for this task"))
        judge = Judge(task, db_ref, self.options.livesql())
        if self.options.oracle:
            return _oracle_report(task, meta, judge, self.options.flavour)
        return self._replayed(task, record, meta, judge)

    def _replayed(self, task, record, meta: dict, judge: Judge) -> InstanceReport:
        patience = self._patience(task, record)
        sides = {
            name: replay.replay(task, record.actions, rules, judge.for_rules(rules), patience)
            for name, rules in ((n, replay.Rules(n, self.options.flavour)) for n in NAMES)
        }
        official, strict = sides["official"], sides["strict"]
        verdicts = {name: _task_verdict(state, task.has_follow_up) for name, state in sides.items()}
        execution = {
            "submits": [_submit_row(s, strict) for s in official.submits],
            "strict_submits": [_submit_row(s) for s in strict.submits],
            "budget": {
                "total": official.budget_total,
                "left": round(official.budget_left, 10),
                "exceeded": official.budget_exceeded,
            },
            "ended_by": official.ended_by,
            "ignored_turns": official.ignored,
            "invalid_submits": official.invalid_submits,
            "recorded": record.recorded,
            "c_interact": official.c_interact(),
            "phases_solved": list(official.phases_solved),
            "strict_phases_solved": list(strict.phases_solved),
            "runs": judge.runs,
        }
        scores = {"official": official.reward, "strict": strict.reward, "c_interact": official.c_interact()}
        return _report(task, meta, verdicts["official"], verdicts["strict"], scores, execution, record.location)

    def _patience(self, task, record) -> float:
        if self.options.patience is not None:
            return self.options.patience
        if record.total_budget is not None:
            return record.total_budget - replay.budget(task.ambiguities, 0)
        return replay.DEFAULT_PATIENCE

    def broken(self, item, words: str) -> InstanceReport:
        task, _ = item
        return _report(task, _metadata(task), Verdict(0.0, "internal_error", f"{words} (task at {task.location})"))

    def figures(self, instances: list) -> dict:
        return {"interact": figures(instances)}

    def official_lines(self, report: Report) -> str:
        title = "Gold submitted as every submit" if self.options.oracle else "Rewards (official, strict, c-Interact)"
        return f"{title}:\n" + official_table(report)


def _problem(record, words: str):
    from evaluators.specs import Problem

    return Problem(record.location, words)


def _metadata(task) -> dict:
    difficulty = task.data.get("difficulty_tier", task.data.get("difficulty"))
    meta = {"category": str(task.data.get("category", "Query")), "database": task.database or "?"}
    if difficulty is not None:
        meta["difficulty"] = str(difficulty)
    meta["phases"] = "2" if task.has_follow_up else "1"
    return meta


def _task_verdict(state, has_follow_up: bool) -> Verdict:
    solved = state.phases_solved
    if not state.submits:
        return Verdict(state.reward, "no_submit", f"no graded submit ({state.ended_by})")
    last = state.submits[-1]
    words = f"reward {state.reward:g} after {len(state.submits)} submit(s); phases solved {list(solved) or 'none'}"
    words += f"; ended: {state.ended_by}; last submit: {last.verdict.reason}: {last.verdict.detail[:300]}"
    if 2 in solved or (1 in solved and not has_follow_up):
        if state.reward < state.full_reward:  # official: a failed submit after the solving one reset it
            return Verdict(state.reward, "reward_reset", words)
        return Verdict(state.reward, "solved", words)
    if solved:
        return Verdict(state.reward, "phase1_only", words)
    return Verdict(state.reward, last.verdict.reason, words)


def _submit_row(submit, strict=None) -> dict:
    row = {
        "turn_index": submit.index,
        "location": submit.location,
        "phase": submit.phase,
        "attempt": submit.attempt,
        "passed": submit.verdict.passed,
        "reason": submit.verdict.reason,
        "detail": submit.verdict.detail[:500],
        "reward_after": submit.reward_after,
        "forced": submit.forced,
        "recorded_reward": submit.recorded_reward,
        "logged_phase": submit.logged_phase,
    }
    if strict is not None:
        twin = next((s for s in strict.submits if s.index == submit.index), None)
        row["strict_passed"] = twin.verdict.passed if twin else None
    return row


def _report(task, meta, official: Verdict, strict: Verdict | None = None, scores=None, execution=None, where=None):
    verdicts = {"official": official, "strict": strict} if strict is not None else every(NAMES, official)
    report = item_report(
        NAMES,
        task.instance_id,
        verdicts,
        funcs=("interact",),
        answer_type="sql",
        location=str(where or task.location),
        metadata=meta,
        execution=execution or {},
    )
    return replace(report, scores=scores) if scores else report


# ------------------------------------------------------------------ oracle: the gold as every submit

_TODAY = re.compile(r"current_date|current_timestamp|\bnow\s*\(|date\s*\(\s*'now'", re.IGNORECASE)


def _oracle_report(task, meta: dict, judge: Judge, flavour: str) -> InstanceReport:
    """Phase 1's gold, then (once it passes) phase 2's, joined as main.py's --debug joins them.  The score is the
    share of the task's full reward the gold earns with every phase counted (0.7 + 0.3: in mini the official
    reward would hide a phase-2 gold that fails); `oracle_reward` is the official one."""
    official, weights = replay.Rules("official", flavour), replay.Rules("strict", flavour)
    reward, score, causes, phase1 = 0.0, 0.0, [], None
    solved: list[int] = []
    for phase in (1, 2) if task.has_follow_up else (1,):
        sol = task.phase(phase).get("sol_sql", [])
        text = "\n".join(sol) if isinstance(sol, list) else str(sol or "")
        verdict = judge.verdict("official", phase, (text,), phase1)
        if not verdict.passed:
            causes.append(f"phase {phase}: {_cause(verdict, text)}: {verdict.detail[:300]}")
            reward = 0.0  # the handler's reset, as for any failed submit
            break
        reward += official.phase_rewards(task.has_follow_up).get(phase, 0)
        score += weights.phase_rewards(task.has_follow_up).get(phase, 0)
        phase1, solved = (text,), [*solved, phase]
    score = round(score, 10)
    reason = "gold_full_reward" if not causes else causes[0].split(": ")[1]
    verdict = Verdict(score, reason, "; ".join(causes) or "the gold earns the full reward")
    scores = {"official": score, "strict": score, "c_interact": score}  # the gold is every phase's first submit
    return _report(task, meta, verdict, verdict, scores, {"oracle_reward": reward, "phases_solved": solved})


def _cause(verdict: Verdict, text: str) -> str:
    detail = verdict.detail.lower()
    if verdict.reason == "invalid_gold":
        return "gold_missing"
    if "one statement at a time" in detail:
        return "gold_multi_statement"
    if verdict.reason in ("exec_error", "timeout"):
        return "gold_does_not_run"
    if "ex_base returned 0" in detail and _TODAY.search(text):
        return "gold_today_date"
    if "ex_base returned 0" in detail:
        return "gold_empty_or_unequal"
    return "gold_fails_own_test"


# ------------------------------------------------------------------ figures


def figures(instances: list) -> dict:
    """Mean rewards (a-Interact official and strict, c-Interact), phase completion and budgets, overall and
    per category, difficulty and phase count."""
    out: dict = {"overall": _row(instances)}
    for key in ("category", "difficulty", "phases"):
        values = sorted({i.metadata.get(key) for i in instances if i.metadata.get(key) is not None})
        for value in values:
            out[f"{key}={value}"] = _row([i for i in instances if i.metadata.get(key) == value])
    return out


def _row(chosen: list) -> dict:
    n = len(chosen)
    if not n:
        return {"n": 0}

    def share(test) -> float:
        return sum(1 for i in chosen if test(i)) / n

    return {
        "n": n,
        "official": sum(i.score for i in chosen) / n,
        "strict": sum(i.strict_score for i in chosen) / n,
        "c_interact": sum(i.scores.get("c_interact", 0.0) for i in chosen) / n,
        "phase1": share(lambda i: 1 in i.execution.get("phases_solved", [])),
        "phase2": share(lambda i: 2 in i.execution.get("phases_solved", [])),
        "budget_exceeded": share(lambda i: i.execution.get("budget", {}).get("exceeded", False)),
    }


def official_table(report: Report) -> str:
    table = (report.summary.execution_metrics or {}).get("interact", {})
    head = f"{'group':24} {'count':>6} {'reward':>8} {'strict':>8} {'c-Int.':>8} {'phase1 %':>9} {'phase2 %':>9}"
    lines = [head]
    for label, row in table.items():
        if row.get("n"):
            lines.append(
                f"{label[:24]:24} {row['n']:>6} {row['official']:>8.3f} {row['strict']:>8.3f} {row['c_interact']:>8.3f}"
                f" {100 * row['phase1']:>9.2f} {100 * row['phase2']:>9.2f}"
            )
    return "\n".join(lines) + "\n"


def grade_interact(tasks: Path, gt: Path | None, run: Path | None, options: InteractOptions, jobs: int = 1) -> Report:
    from evaluators.grading.benchmark import run_benchmark

    return run_benchmark(Interact(tasks, gt, run, options), jobs)
