"""Grade EHRSQL 2024 predictions: the official reliability score of a named scorer version, and strict's.

Inputs are the scorer's own: `label.json` (gold, `{id: SQL or "null"}`), `prediction.json` (the same for the
answers) and the one SQLite database.  Every query, gold included, is rewritten as the version rewrites it
and runs in the project's workers (read-only, stopped at `timeout_s`: the scorer has no timeout, so a query
past it is a failed query here, said as `timeout`).  An item is +1, 0 or -1 (metrics/ehrsql.py); its score
in the report is 1 for +1 (a correct answer or abstention), else 0, and its reliability sits in metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evaluators.bird.native import read_predictions
from evaluators.ehrsql.rewrite import rewrite
from evaluators.ehrsql.rules import PRESETS, Preset, is_abstention, result_text
from evaluators.errors import Location, SpecError, UsageError
from evaluators.execution.backends.settings import SQLiteSettings
from evaluators.execution.executor import ExecConfig
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB
from evaluators.execution.row_queries import RowQuery, RowResult, RowRunner
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report
from evaluators.matching.typed_rows import strict_rows
from evaluators.matching.verdicts import Verdict
from evaluators.metrics.ehrsql import reliability, reliability_scores
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import Problem

GOLD_NAME, PRED_NAME = "label.json", "prediction.json"  # inside the scorer's ref/ and res/ folders


@dataclass(frozen=True)
class EhrsqlOptions:
    database: Path
    preset: str = "official"
    timeout_s: float = 30.0
    work_dir: Path = Path(".grade-work")
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB


@dataclass(frozen=True)
class Item:
    key: str
    gold: str | None  # None: the gold line is not a string (a gold problem)
    pred: str | None  # None: no prediction for this id
    location: Location | None = None


@dataclass
class Side:
    """One side's answer: an abstention, or the rows of its query (or why it failed)."""

    abstains: bool
    result: RowResult | None = None

    @property
    def rows(self) -> tuple:
        return self.result.rows if self.result is not None else ()

    @property
    def failed(self) -> bool:
        return not self.abstains and (self.result is None or not self.result.ok)


@dataclass
class EhrsqlBenchmark(Benchmark):
    gold_file: Path
    pred_file: Path
    options: EhrsqlOptions
    runner: RowRunner = field(init=False)

    def __post_init__(self) -> None:
        if self.options.preset not in PRESETS:
            raise UsageError(f"unknown preset {self.options.preset!r}", hint="one of " + ", ".join(PRESETS))
        self.preset: Preset = PRESETS[self.options.preset]
        self.semantics = self.preset.name
        self.names = (self.preset.name, "strict")
        config = ExecConfig(
            output_dir=self.options.work_dir,
            timeout_s=self.options.timeout_s,
            memory_limit_mb=self.options.memory_limit_mb,
            sqlite=SQLiteSettings("ignore"),  # the scorer's text_factory: bytes.decode(errors="ignore")
        )
        self.runner = RowRunner(jobs=1, config=config)

    def read(self) -> Inputs:
        if not Path(self.options.database).is_file():
            raise UsageError(f"{self.options.database}: no such database file", hint="the scorer's mimic_iv.sqlite")
        problems: list[Problem] = []
        pred_file = _resolve(self.pred_file, PRED_NAME)
        gold = _read_object(_resolve(self.gold_file, GOLD_NAME))
        preds = _read_object(pred_file)
        items = [self._item(key, g, preds.get(key), problems) for key, g in gold.items()]
        unknown = tuple(k for k in preds if k not in gold)
        missing = [k for k in gold if k not in preds]
        if missing or unknown:
            problems.append(
                Problem(
                    Location(str(pred_file)),
                    f"IDs do not match ({len(missing)} missing, {len(unknown)} unknown): the official scorer "
                    "stops here; a missing id is graded as a failed query",
                )
            )
        return Inputs(items, len(preds), tuple(problems), unknown, (self.gold_file, self.options.database))

    @staticmethod
    def _item(key: str, gold, pred, problems: list) -> Item:
        for side, value in (("gold", gold), ("prediction", pred)):
            if value is not None and not isinstance(value.value, str):
                problems.append(Problem(value.location, f"{side} {key!r} is not a string (the scorer stops on it)"))
        text = pred.value if pred is not None and isinstance(pred.value, str) else None
        gold_text = gold.value if isinstance(gold.value, str) else None
        return Item(key, gold_text, text, pred.location if pred is not None else None)

    def grade(self, item: Item) -> InstanceReport:
        if item.gold is None:
            return self.broken(item, "the gold is not a string")
        gold = self._side(item.gold, gold=True)
        pred = self._side(item.pred, gold=False) if item.pred is not None else Side(False, None)
        official = self._official(gold, pred)
        strict = self._strict(gold, pred)
        metadata = {"answerable": not gold.abstains, "abstained": pred.abstains}
        return item_report(
            self.names,
            item.key,
            {self.preset.name: official[1], "strict": strict[1]},
            funcs=("ehrsql",),
            answer_type="sql" if item.pred is not None else None,
            location=str(item.location) if item.location else None,
            metadata=metadata,
            execution={
                "reliability": official[0],
                "reliability_strict": strict[0],
                "gold": _said(gold),
                "prediction": _said(pred),
            },
        )

    def _side(self, text: str, gold: bool) -> Side:
        if is_abstention(text, self.preset):
            return Side(True)
        sql = rewrite(text, self.preset.rewrite)
        if not sql:  # sqlite3 runs an empty text as no statement: no rows, no error
            return Side(False, RowResult(True, "ok", "", (), ()))
        query = RowQuery("sqlite", str(self.options.database), sql, self.options.timeout_s)
        return Side(False, self.runner.gold(query) if gold else self.runner.run(query))

    def _official(self, gold: Side, pred: Side) -> tuple[int, Verdict]:
        gold_text = _text(gold, "error_real", self.preset.digits)
        pred_text = _text(pred, "error_pred", self.preset.digits)
        score = reliability(gold.abstains, pred.abstains, gold_text == pred_text)
        detail = f"gold {_short(gold_text)}, prediction {_short(pred_text)}"
        failed = next((s.result for s in (gold, pred) if s.failed and s.result is not None), None)
        return score, _verdict(score, gold, pred, detail + (f" ({failed.detail})" if failed else ""))

    def _strict(self, gold: Side, pred: Side) -> tuple[int, Verdict]:
        correct = False
        detail = "strict: typed rows compared as multisets, every row"
        if not (gold.abstains or pred.abstains or gold.failed or pred.failed):
            rows = strict_rows(list(gold.rows), list(pred.rows), ordered=False)
            correct, detail = rows.passed, rows.detail
        score = reliability(gold.abstains, pred.abstains, correct)
        return score, _verdict(score, gold, pred, detail)

    def broken(self, item: Item, words: str) -> InstanceReport:
        verdict = Verdict(0.0, "internal_error" if item.gold is not None else "invalid_gold", words)
        return item_report(self.names, item.key, every(self.names, verdict), funcs=("ehrsql",), answer_type=None)

    def figures(self, instances: list[InstanceReport]) -> dict:
        def scores(key: str) -> list[int]:
            return [(i.execution or {}).get(key, -1) for i in instances]

        return {
            "ehrsql_preset": self.preset.name,
            "ehrsql_scorer": self.preset.provenance,
            "reliability": reliability_scores(scores("reliability")),
            "reliability_strict": reliability_scores(scores("reliability_strict")),
            "timeout_s": self.options.timeout_s,
        }

    def official_lines(self, report: Report) -> str:
        figures = report.summary.execution_metrics or {}
        return (
            f"As {self.preset.provenance} prints it (RS(0), RS(5), RS(10), RS(N), x100):\n"
            f"Scores:\n{figures.get('reliability')}\n"
            f"strict (ours: typed rows, every row): {figures.get('reliability_strict')}\n"
        )

    def close(self) -> None:
        self.runner.close()


def _read_object(path: Path) -> dict:
    """The scorer's JSON object, id by id with the line each starts on (read as every submitted file is)."""
    try:
        return {p.key: p for p in read_predictions(path)}
    except SpecError as error:
        if "must be a JSON object" not in error.message:
            raise
        raise SpecError('the file must be a JSON object {"id": "SQL or null", ...}', error.location) from None


def _resolve(path: Path, name: str) -> Path:
    path = Path(path)
    return path / name if path.is_dir() else path


def _text(side: Side, error: str, digits: int) -> str:
    if side.abstains:
        return "null"
    if side.failed:
        return error
    return result_text(side.rows, digits)


def _verdict(score: int, gold: Side, pred: Side, detail: str) -> Verdict:
    if gold.failed:
        reason = "invalid_gold"
    elif gold.abstains:
        reason = "correct_abstention" if pred.abstains else "answered_unanswerable"
    elif pred.abstains:
        reason = "abstained"
    elif pred.failed:
        reason = pred.result.reason if pred.result is not None else "missing_prediction"
    else:
        reason = "match" if score == 1 else "value_mismatch"
    return Verdict(1.0 if score == 1 else 0.0, reason, detail)


def _said(side: Side) -> dict:
    if side.abstains:
        return {"abstains": True}
    if side.result is None:
        return {"ran": False}
    return {"ok": side.result.ok, "reason": side.result.reason, "rows": len(side.result.rows)}


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
