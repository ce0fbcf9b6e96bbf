"""Grade BIRD-Platinum predictions: `bird` and the scorer's `strict` under a named grading, and ours beside.

Inputs are grade.py's own: `--data_path` (a JSON array of questions: `question_id`, `db_id`, `SQL`, and the
tie annotation `grading_method`, also read from `reward_spec.grading_method` as its RL environment keeps
it), `--infer_results` (a JSON object `{question_id: SQL}`, or a list whose first item is the SQL) and
`--db_base_path` (`<db_id>/<db_id>.sqlite`).  Every question of the data counts (grade.py's denominator);
a question with no prediction is wrong.  Queries run in the project's workers (read-only, stopped at
`timeout_s`; grade.py has no timeout).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.bird.native import read_predictions
from evaluators.errors import Location, SpecError, UsageError
from evaluators.execution.executor import ExecConfig
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB
from evaluators.execution.row_queries import RowQuery, RowResult, RowRunner
from evaluators.grading.benchmark import Benchmark, Inputs, item_report
from evaluators.loading.database_folder import check_database_folder
from evaluators.matching.verdicts import Verdict
from evaluators.platinum.rules import COMMIT, GRADINGS, REPOSITORY, OfficialError, bird_verdict, official_strict, ours
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import Problem


@dataclass(frozen=True)
class PlatinumOptions:
    db_root: Path
    grading: str = "official"  # GRADINGS
    timeout_s: float = 30.0
    work_dir: Path = Path(".grade-work")
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB


@dataclass(frozen=True)
class Item:
    key: str
    db_id: str
    gold: str
    method: str  # the gold's grading method ("multiset" when it has none)
    pred: object  # the SQL; None: no prediction
    location: Location | None = None


@dataclass
class PlatinumBenchmark(Benchmark):
    data_file: Path
    pred_file: Path
    options: PlatinumOptions
    runner: RowRunner = field(init=False)

    def __post_init__(self) -> None:
        if self.options.grading not in GRADINGS:
            raise UsageError(f"unknown grading {self.options.grading!r}", hint="one of " + ", ".join(GRADINGS))
        self.semantics = self.options.grading
        self.names = (self.options.grading, "bird", "strict")  # the first is the report's score
        config = ExecConfig(
            output_dir=self.options.work_dir,
            timeout_s=self.options.timeout_s,
            memory_limit_mb=self.options.memory_limit_mb,
        )
        self.runner = RowRunner(jobs=1, config=config)

    def read(self) -> Inputs:
        questions = _read_questions(Path(self.data_file))
        preds = {p.key: p for p in read_predictions(Path(self.pred_file))}
        problems: list[Problem] = []
        items = [self._item(q, preds.get(str(q["question_id"])), problems) for q in questions]
        known = {str(q["question_id"]) for q in questions}
        unknown = tuple(k for k in preds if k not in known)
        if unknown:
            problems.append(
                Problem(
                    Location(str(self.pred_file)),
                    f"{len(unknown)} prediction(s) for no question ({', '.join(unknown[:5])}): grade.py stops on "
                    "them (KeyError); graded here as not submitted",
                )
            )
        found = check_database_folder(
            "--db_base_path",
            Path(self.options.db_root),
            (i.db_id for i in items),
            lambda db: self._database(db).is_file(),
            "{db}/{db}.sqlite",
        )
        problems.extend([found] if found else [])
        return Inputs(items, len(preds), tuple(problems), unknown, (self.data_file,))

    def _item(self, question: dict, pred, problems: list) -> Item:
        method = question.get("grading_method") or (question.get("reward_spec") or {}).get("grading_method")
        value = None
        if pred is not None:
            value = pred.value[0] if isinstance(pred.value, list) and pred.value else pred.value
            if not isinstance(value, str):
                problems.append(Problem(pred.location, "the prediction is not SQL text: grade.py grades it wrong"))
        return Item(
            str(question["question_id"]),
            str(question["db_id"]),
            question["SQL"],
            method if isinstance(method, str) else "multiset",
            value,
            pred.location if pred is not None else None,
        )

    def _database(self, db_id: str) -> Path:
        return Path(self.options.db_root) / db_id / f"{db_id}.sqlite"

    def _run(self, sql: str, db_id: str, gold: bool) -> RowResult:
        query = RowQuery("sqlite", str(self._database(db_id)), sql, self.options.timeout_s)
        return self.runner.gold(query) if gold else self.runner.run(query)

    def grade(self, item: Item) -> InstanceReport:
        if item.pred is None:
            missing = Verdict(0.0, "missing_prediction", "no prediction for this question")
            return self._report(item, False, missing, missing, None)
        gold = self._run(item.gold, item.db_id, gold=True)
        if not gold.ok:
            reason = "no_database" if gold.reason == "no_database" else "invalid_gold"
            failed = Verdict(0.0, reason, f"the gold fails ({gold.reason}): {gold.detail}")
            return self._report(item, False, failed, failed, "sql")
        pred = self._run(item.pred, item.db_id, gold=False) if isinstance(item.pred, str) else None
        if pred is None or not pred.ok:
            why = "not SQL text" if pred is None else f"{pred.reason}: {pred.detail}"
            failed = Verdict(0.0, pred.reason if pred else "invalid_answer", f"the prediction fails ({why})")
            return self._report(item, False, failed, failed, "sql")
        gold_rows, pred_rows = list(gold.rows), list(pred.rows)
        method = item.method if self.options.grading == "official-tie-aware" else "multiset"
        return self._report(
            item,
            bird_verdict(gold_rows, pred_rows),
            _official(gold_rows, pred_rows, method),
            _ours(gold_rows, pred_rows, item.method),
            "sql",
        )

    def _report(self, item: Item, bird: bool, official: Verdict, strict: Verdict, answer_type) -> InstanceReport:
        said = "rows equal as sets" if bird else "rows differ as sets (or no rows to compare)"
        verdicts = {
            self.options.grading: official,
            "bird": Verdict(1.0 if bird else 0.0, "match" if bird else "value_mismatch", said),
            "strict": strict,
        }
        return item_report(
            self.names,
            item.key,
            verdicts,
            funcs=("platinum",),
            answer_type=answer_type,
            location=str(item.location) if item.location else None,
            metadata={"db_id": item.db_id, "grading_method": item.method, "bird": bird},
        )

    def broken(self, item: Item, words: str) -> InstanceReport:
        verdict = Verdict(0.0, "internal_error", words)
        return self._report(item, False, verdict, verdict, None)

    def figures(self, instances: list[InstanceReport]) -> dict:
        total = len(instances)
        correct = {n: sum(i.scores.get(n, 0.0) >= 1 for i in instances) for n in ("bird", self.options.grading)}
        return {
            "platinum_grading": self.options.grading,
            "platinum_scorer": f"{REPOSITORY} evaluation/grade.py at {COMMIT}: {GRADINGS[self.options.grading]}",
            "bird_correct": correct["bird"],
            "strict_correct": correct[self.options.grading],
            "official_errors": sum(i.reason == "official_error" for i in instances),
            "total": total,
        }

    def official_lines(self, report: Report) -> str:
        figures = report.summary.execution_metrics or {}
        total = figures.get("total", 0)
        lines = [
            f"As grade.py ({self.options.grading}) prints it:",
            f"Evaluation results of {Path(self.pred_file).stem}:",
        ]
        for label, key in (("Bird", "bird_correct"), ("Strict", "strict_correct")):
            count = figures.get(key, 0)
            lines.append(f"{label} Accuracy: {count / total if total else 0.0:.4f} ({count}/{total})")
        lines.append(f"Strict (ours, typed cells): {report.summary.strict_score:.4f}")
        return "\n".join(lines) + "\n"

    def warnings(self, report: Report) -> list[str]:
        errors = [i.instance_id for i in report.instances if i.reason == "official_error"]
        if not errors:
            return []
        return [f"grade() raises on {len(errors)} question(s) ({', '.join(errors[:10])}): no official verdict"]

    def close(self) -> None:
        self.runner.close()


def _official(gold: list, pred: list, method: str) -> Verdict:
    try:
        passed, why = official_strict(gold, pred, method)
    except OfficialError as error:
        return Verdict(0.0, "official_error", f"grade() raises here, no official verdict: {error}")
    return Verdict(1.0 if passed else 0.0, "match" if passed else "value_mismatch", why)


def _ours(gold: list, pred: list, method: str) -> Verdict:
    passed, why = ours(gold, pred, method)
    return Verdict(1.0 if passed else 0.0, "match" if passed else "value_mismatch", why)


def _read_questions(path: Path) -> list[dict]:
    """The data file (trusted): a JSON array of questions, each with question_id, db_id and SQL."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecError(f"the questions cannot be read: {error}", Location(str(path))) from None
    if not isinstance(data, list):
        raise SpecError("the questions must be a JSON array", Location(str(path)))
    for index, question in enumerate(data):
        if not isinstance(question, dict) or not all(k in question for k in ("question_id", "db_id", "SQL")):
            raise SpecError(f"the array's item {index + 1} lacks question_id, db_id or SQL", Location(str(path)))
    return data
