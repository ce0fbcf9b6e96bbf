"""One submit's verdict as the official `execute_submit_action` gives it, on LiveSQLBench's sandbox
(`livesql/sandbox.py`: a worker process, a fresh private SQLite copy or PostgreSQL template clone per
submit, the answer under its own role; profiles `interact-sqlite` / `interact`).

What the submit handler does, and how it is laid onto a LiveSQLBench instance:
- the database is reset to its template before every submit (a fresh copy or clone);
- phase 2 of a Management task first runs the task's `preprocess_sql`, the stored passing phase-1 SQL and
  `clean_up_sqls`, and commits; any of them failing fails the submit (the profile's `preprocess_must_pass`).
  Phase 1 runs no `preprocess_sql` at all, as the handler;
- the phase's `sol_sql`, `test_cases`, `conditions` and `category` (the task's, or its `follow_up`'s): a
  phase without `sol_sql` fails every submit without running it; a Query phase runs the default test only,
  any other its own test cases, which see only `execute_queries` and are called without `conditions`;
- the submitted SQL is one statement list of one text: on SQLite, `cursor.execute` refuses a text of two
  statements, so a multi-statement submit fails there (strict runs its statements one by one).
"""

from __future__ import annotations

from evaluators.interact.replay import Rules
from evaluators.livesql.profiles import split_field
from evaluators.livesql.run import LiveSQLOptions, run_instance, verdicts_of
from evaluators.matching.verdicts import Verdict
from evaluators.sqltext import split_statements


class Judge:
    """Every submit of one task, each run once whatever rule set asks (cached by what runs)."""

    def __init__(self, task, db_ref: str, options: LiveSQLOptions):
        self.task, self.db_ref, self.options = task, db_ref, options
        self.runs = 0
        self._cache: dict = {}

    def for_rules(self, rules: Rules):
        """The `judge(phase, sql, phase1_sql)` the replay calls, for one rule set."""

        def judge(phase: int, sql: str, phase1_sql: str | None) -> Verdict:
            phase1 = self.statements(rules, phase1_sql) if phase1_sql is not None else None
            return self.verdict(rules.name, phase, self.statements(rules, sql), phase1)

        return judge

    def statements(self, rules: Rules, sql: str) -> tuple:
        """Official: the text as one statement, as `cursor.execute` gets it.  Strict on SQLite: its statements."""
        if rules.name == "official" or self.options.profile.engine != "sqlite":
            return (sql,)
        return tuple(split_statements(sql, "sqlite")) or (sql,)

    def verdict(self, side: str, phase: int, pred: tuple, phase1: tuple | None) -> Verdict:
        gold = self.task.phase(phase)
        sol = gold.get("sol_sql", [])
        sol = sol if isinstance(sol, list) else ([sol] if sol else [])
        if not sol:
            return Verdict(0.0, "invalid_gold", f"phase {phase} has no sol_sql: the handler fails every submit")
        key = (phase, pred, phase1)
        if key not in self._cache:
            self._cache[key] = self._run(phase, gold, sol, list(pred), phase1)
        return self._cache[key][side]

    def _run(self, phase: int, gold: dict, sol: list, pred: list, phase1: tuple | None) -> dict:
        instance = {
            "instance_id": f"{self.task.instance_id}#phase{phase}",
            "selected_database": self.task.database,
            "category": gold.get("category", "Query"),
            "sol_sql": sol,
            "test_cases": [t for t in (gold.get("test_cases") or []) if isinstance(t, str)],
            "conditions": gold.get("conditions") or {},
            "preprocess_sql": self.setup(phase, phase1),
            "pred_sqls": pred,
        }
        self.runs += 1
        verdicts, _ = verdicts_of(run_instance(instance, self.db_ref, self.options))
        return verdicts

    def setup(self, phase: int, phase1: tuple | None) -> list:
        """What runs before a phase-2 submit of a Management task; nothing otherwise."""
        if phase != 2 or self.task.data.get("category") != "Management":
            return []
        steps = [s for s in split_field(self.task.data, "preprocess_sql") if s]
        if phase1:
            steps += [*phase1, *[s for s in split_field(self.task.data, "clean_up_sqls") if s]]
        return steps
