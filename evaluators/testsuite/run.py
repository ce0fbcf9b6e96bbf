"""Grade Spider 1 predictions with test-suite execution accuracy, and strict beside it.

Every query runs in the project's killable SQLite worker (read-only, under the
timeout).  The official verdict follows `rules`; the strict verdict runs both
queries as written (only `> =` is joined) on every database of the suite and compares typed rows
(`matchers.rows`), with row order when the gold's outermost query has ORDER BY.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

from evaluators.execution.backends.settings import SQLiteSettings
from evaluators.execution.executor import ExecConfig, ExecResult, run_sql
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report, run_benchmark
from evaluators.loading.database_folder import check_database_folder
from evaluators.matching.typed_rows import strict_rows
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import Problem
from evaluators.testsuite import exact_run, rules
from evaluators.testsuite.native import GoldLine, Prediction, database_variants, pair, read_gold, read_predictions

SEMANTICS = "test-suite"
NAMES = (SEMANTICS, "strict")
TIMEOUT_S = 60.0  # the scorer's own per-query limit
PLUG_VALUE_CAP = 1000  # plugged variants tried per question at most (the scorer's search is unbounded)


@dataclass
class _Runner:
    config: ExecConfig
    cache: dict = field(default_factory=dict)  # (database, sql) -> ExecResult
    numbers: Iterator[int] = field(default_factory=count)  # result file names, unique across threads

    def rows(self, database: Path, sql: str, label: str) -> ExecResult:
        key = (str(database), sql)
        if key not in self.cache:
            out = Path(self.config.output_dir) / "test_suite" / f"{label}_{next(self.numbers)}.csv"
            self.cache[key] = run_sql("sqlite", str(database), sql, self.config, out, collect="rows")
        return self.cache[key]


def grade_test_suite(
    gold_file: Path,
    pred_file: Path,
    db_dir: Path,
    work_dir: Path,
    keep_distinct: bool = False,
    timeout_s: float = TIMEOUT_S,
    jobs: int = 1,
    plug_value: bool = False,
    plug_value_cap: int = PLUG_VALUE_CAP,
    etype: str = "exec",
    table: Path | None = None,
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB,
    progress=None,
) -> Report:
    """The Python API behind `evaluate.py test-suite`: the run of `TestSuiteBenchmark` (grading/benchmark.py)."""
    plug = plug_value_cap if plug_value else None
    config = ExecConfig(
        output_dir=Path(work_dir), timeout_s=timeout_s, sqlite=SQLiteSettings("ignore"), memory_limit_mb=memory_limit_mb
    )
    benchmark = TestSuiteBenchmark(
        Path(gold_file), Path(pred_file), Path(db_dir), config, keep_distinct, plug, etype, table
    )
    return run_benchmark(benchmark, jobs, progress)


@dataclass
class TestSuiteBenchmark(Benchmark):
    """test-suite-sql-eval's files, each pair graded on every database of the suite, exact match beside."""

    gold_file: Path
    pred_file: Path
    db_dir: Path
    config: ExecConfig
    keep_distinct: bool = False
    plug: int | None = None  # --plug-value's cap, None without it
    etype: str = "exec"
    table: Path | None = None
    exact: exact_run.ExactMatch = field(init=False)  # made by `read`, with the runner
    runner: _Runner = field(init=False)

    semantics = SEMANTICS
    names = NAMES
    __test__ = False  # not a pytest class, whatever its name

    def read(self) -> Inputs:
        if self.plug is not None or not self.keep_distinct:
            rules.sqlparse_module()  # fails early, with the extra to install, rather than on every question
        problems: list[Problem] = []
        preds = read_predictions(self.pred_file)
        golds = read_gold(self.gold_file, problems)
        pairs = pair(golds, preds, self.pred_file, problems)
        _check_databases(pairs, self.db_dir, problems)  # a wrong --db is said before tables.json is read against it
        self.exact = exact_run.prepare(self.etype, self.table, self.db_dir, golds)  # --etype match|all
        self.runner = _Runner(self.config)
        places = exact_run.turns(golds, preds)
        items = [(i, gold, pred, place) for i, ((gold, pred), place) in enumerate(zip(pairs, places, strict=True))]
        submitted = sum(len(session) for session in preds)
        return Inputs(items, submitted, tuple(problems), (), (self.gold_file,))

    def grade(self, item) -> InstanceReport:
        index, gold, pred, place = item
        instance = _grade(index, gold, pred, self.db_dir, self.runner, self.keep_distinct, self.plug)
        return exact_run.with_fields(instance, gold, pred, place, self.exact)

    def broken(self, item, words: str) -> InstanceReport:
        index, gold, pred, _place = item
        return _instance(index, gold, pred, every(NAMES, Verdict(0.0, "internal_error", words)), {})

    def complete(self, instances: list[InstanceReport]) -> list[InstanceReport]:
        return exact_run.with_sessions(instances, self.exact.matching)

    def scorers(self) -> dict:
        return {SEMANTICS: "taoyds/test-suite-sql-eval evaluation.py at 82793e5 (2020-10-20)"}

    def official_lines(self, report: Report) -> str:
        s = report.summary
        accuracy, compared = official_accuracy(report)
        return (
            f"execution (test-suite-sql-eval's figure, over the {compared} pairs it compares): {accuracy:.3f}\n"
            f"score over all {s.gold_instances} gold lines: test-suite {s.score:.3f}, strict {s.strict_score:.3f}\n"
            f"\ntest-suite-sql-eval's tables (evaluation.py --etype {self.etype}):\n"
            f"{official_tables(report, self.etype)}\n"
        )

    def warnings(self, report: Report) -> list[str]:
        out = []
        unjudged = [i.instance_id for i in report.instances if (i.metadata or {}).get("exact_match_error")]
        if unjudged:
            out.append(
                f"{len(unjudged)} question(s) left out of the tables ({', '.join(unjudged[:10])}): the "
                "scorer's parser cannot read their gold (the scorer stops there); see exact_match_error"
            )
        capped = [i.instance_id for i in report.instances if (i.execution or {}).get("plug_value", {}).get("cap_hit")]
        if capped:
            out.append(
                f"--plug-value-cap {self.plug} hit on {len(capped)} question(s) "
                f"({', '.join(capped[:10])}); the official search would try more variants"
            )
        return out


def _check_databases(pairs: list, db_dir: Path, problems: list) -> None:
    """Before any query runs: a --db folder holding none of the gold's databases is exit 2, some missing a problem."""
    needed = (gold.db_id for gold, _ in pairs if gold is not None)
    problem = check_database_folder(
        "--db", db_dir, needed, lambda db: bool(database_variants(db_dir, db)), "{db}/*.sqlite"
    )
    if problem is not None:
        problems.append(problem)


def official_accuracy(report: Report) -> tuple[float, int]:
    """The scorer's own figure: correct over the pairs it compared (unpaired gold lines are not counted)."""
    compared = [i for i in report.instances if i.answer_type is not None and i.reason != "invalid_gold"]
    return (sum(i.score for i in compared) / len(compared) if compared else 0.0), len(compared)


def official_tables(report: Report, etype: str) -> str:
    """test-suite-sql-eval's printed tables (hardness, execution, exact match, partial, turns) for this run."""
    return exact_run.tables(report, etype, SEMANTICS)


def _grade(
    index: int,
    gold: GoldLine | None,
    pred: Prediction | None,
    db_dir: Path,
    runner: _Runner,
    keep_distinct: bool,
    plug: int | None,
) -> InstanceReport:
    if gold is None:
        both = every(NAMES, Verdict(0.0, "invalid_gold", "the gold line is not SQL<TAB>db_id (a gold problem)"))
        return _instance(index, None, pred, both, {})
    if pred is None:
        return _instance(index, gold, None, every(NAMES, Verdict(0.0, "missing_prediction", "no prediction line")), {})
    variants = database_variants(db_dir, gold.db_id)
    if not variants:
        verdict = Verdict(0.0, "no_database", f"no {gold.db_id}/*.sqlite under {db_dir}")
        return _instance(index, gold, pred, every(NAMES, verdict), {})
    official, info = _official(gold, pred, variants, runner, keep_distinct, plug)
    strict = _strict(gold, pred, variants, runner)
    info["databases"] = len(variants)
    return _instance(index, gold, pred, {SEMANTICS: official, "strict": strict}, info)


def _official(
    gold: GoldLine, pred: Prediction, variants: list[Path], runner: _Runner, keep_distinct: bool, plug: int | None
) -> tuple[Verdict, dict]:
    gold_sql = rules.prepare(gold.sql, keep_distinct)
    try:
        pred_sql = rules.prepare(rules.replace_value(pred.sql), keep_distinct)
    except rules.Unparsable as error:
        return Verdict(0.0, "unreadable_prediction", f"the prediction: {error}"), {}
    ordered = rules.order_matters(gold_sql)
    info: dict = {"order_matters": ordered, "rewritten": pred_sql != pred.sql}
    verdict = _official_one(gold_sql, pred_sql, ordered, variants, runner)
    if plug is None or verdict.passed or verdict.reason == "unreadable_gold":
        return verdict, info
    from evaluators.testsuite.plug import plugged_predictions

    plugged = plugged_predictions(gold_sql, pred_sql, plug)
    info["plug_value"] = {"variants": plugged.total, "tried": len(plugged.variants), "slots": plugged.slots}
    if plugged.skipped:
        info["plug_value"]["skipped"] = plugged.skipped
        return Verdict(0.0, verdict.reason, f"{verdict.detail}; {plugged.skipped}"), info
    for number, variant in enumerate(plugged.variants, 1):
        attempt = _official_one(gold_sql, variant, ordered, variants, runner)
        if attempt.passed:
            info["plug_value"]["matched"] = variant
            return Verdict(
                1.0, "match", f"{attempt.detail}, with the gold's values plugged in (variant {number})"
            ), info
    if plugged.capped:
        note = (
            f"--plug-value-cap {plug} hit: tried {len(plugged.variants)} of {plugged.total} plugged variants "
            f"({plugged.values} value(s) into {plugged.slots} slot(s)); the official search would go on"
        )
        info["plug_value"]["cap_hit"] = note
        return Verdict(0.0, verdict.reason, f"{verdict.detail}; {note}"), info
    return verdict, info


def _official_one(gold_sql: str, pred_sql: str, ordered: bool, variants: list[Path], runner: _Runner) -> Verdict:
    for database in variants:
        gold_result = runner.rows(database, rules.replace_cur_year(gold_sql), "gold")
        if not gold_result.ok:
            return Verdict(
                0.0,
                "unreadable_gold",
                f"the gold query failed on {database.name} ({gold_result.reason}): {gold_result.detail}",
            )
        pred_result = runner.rows(database, rules.replace_cur_year(pred_sql), "pred")
        if not pred_result.ok:
            return Verdict(0.0, pred_result.reason, f"on {database.name}: {pred_result.detail}")
        if not rules.result_eq(gold_result.rows()[1], pred_result.rows()[1], ordered):
            order = "in order" if ordered else "as bags of rows"
            return Verdict(0.0, "value_mismatch", f"results differ {order} on {database.name}")
    return Verdict(1.0, "match", f"equal on all {len(variants)} database(s)")


def _strict(gold: GoldLine, pred: Prediction, variants: list[Path], runner: _Runner) -> Verdict:
    from evaluators.metrics.bird import outermost_has_order_by

    # Only Spider's tokenizer artifacts (`> =`) are mended; otherwise both queries run as written.
    gold_sql, pred_sql = rules.postprocess(gold.sql), rules.postprocess(pred.sql)
    ordered = outermost_has_order_by(gold_sql)
    for database in variants:
        gold_result = runner.rows(database, gold_sql, "gold")
        if not gold_result.ok:
            return Verdict(0.0, "unreadable_gold", f"the gold query failed on {database.name}: {gold_result.detail}")
        pred_result = runner.rows(database, pred_sql, "pred")
        if not pred_result.ok:
            return Verdict(0.0, pred_result.reason, f"on {database.name}: {pred_result.detail}")
        verdict = strict_rows(gold_result.rows()[1], pred_result.rows()[1], ordered)
        if not verdict.passed:
            return Verdict(0.0, verdict.reason, f"on {database.name}: {verdict.detail}")
    return Verdict(1.0, "match", f"typed rows equal on all {len(variants)} database(s)")


def _instance(index: int, gold: GoldLine | None, pred: Prediction | None, verdicts: dict, info: dict) -> InstanceReport:
    metadata = {"db_id": gold.db_id} if gold else {}
    location = str(pred.location) if pred else (str(gold.location) if gold else None)
    return item_report(
        NAMES,
        str(index),
        verdicts,
        funcs=("test_suite",),
        answer_type="sql" if pred else None,
        location=location,
        metadata=metadata,
        execution=info,
    )
