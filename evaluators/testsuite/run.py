"""Grade Spider 1 predictions with test-suite execution accuracy, and strict beside it.

Every query runs in the project's killable SQLite worker (read-only, under the
timeout), through the execution layer's `RowRunner` (golds cached for the run).  The official verdict
follows `rules`; the strict verdict runs both queries as written (only `> =` is joined) on every database
of the suite and compares typed rows (`matchers.rows`), with row order when the gold's outermost query has
ORDER BY.  `--etype match` runs nothing: each question's verdict is its exact set match (`exact_run`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluators.execution.backends.settings import SQLiteSettings
from evaluators.execution.executor import ExecConfig
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB
from evaluators.execution.row_queries import RowQuery, RowResult, RowRunner
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report, run_benchmark
from evaluators.loading.database_folder import check_database_folder
from evaluators.matching.typed_rows import strict_rows
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import Problem
from evaluators.testsuite import classic, exact_run, rules
from evaluators.testsuite.native import GoldLine, Prediction, database_variants, pair, read_gold, read_predictions

SEMANTICS = "test-suite"
NAMES = (SEMANTICS, "strict")
SCORERS = {"test-suite": "taoyds/test-suite-sql-eval evaluation.py at 82793e5 (2020-10-20)", "spider": classic.SCORER}
TIMEOUT_S = 60.0  # the scorer's own per-query limit
PLUG_VALUE_CAP = 1000  # plugged variants tried per question at most (the scorer's search is unbounded)


@dataclass
class _Runner:
    """The run's queries through `RowRunner`: a gold runs once per (database, SQL) for the run; a prediction
    once per question and database (`_Question.seen`: the official and the strict reading share an equal text)."""

    config: ExecConfig
    each_database: Callable[[str], None] | None = None  # --progress-bar-for-each-datapoint's line writer
    rows: RowRunner = field(init=False)

    def __post_init__(self) -> None:
        self.rows = RowRunner(jobs=1, config=self.config)

    def gold(self, database: Path, sql: str) -> RowResult:
        return self.rows.gold(RowQuery("sqlite", str(database), sql, self.config.timeout_s))

    def pred(self, database: Path, sql: str, question: _Question) -> RowResult:
        key = (str(database), sql)
        if key not in question.seen:
            question.seen[key] = self.rows.run(RowQuery("sqlite", str(database), sql, self.config.timeout_s))
        return question.seen[key]


@dataclass
class _Question:
    """One question's run: its prediction results by (database, SQL), and its per-database progress line."""

    label: str
    databases: int
    say: Callable[[str], None] | None
    seen: dict = field(default_factory=dict)

    def reached(self, number: int, database: Path) -> None:
        """The official comparison reached database `number` (1-based) of the suite (the scorer's tqdm step)."""
        if self.say is not None:
            self.say(f"{self.label}: database {number}/{self.databases} ({database.name})")


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
    scorer: str = "test-suite",
) -> Report:
    """The Python API behind `evaluate.py test-suite`: the run of `TestSuiteBenchmark` (grading/benchmark.py)."""
    plug = plug_value_cap if plug_value else None
    config = ExecConfig(
        output_dir=Path(work_dir), timeout_s=timeout_s, sqlite=SQLiteSettings("ignore"), memory_limit_mb=memory_limit_mb
    )
    benchmark = TestSuiteBenchmark(
        Path(gold_file), Path(pred_file), Path(db_dir), config, keep_distinct, plug, etype, table, scorer=scorer
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
    each_database: Callable[[str], None] | None = None  # --progress-bar-for-each-datapoint: one line per database
    scorer: str = "test-suite"  # or "spider": taoyds/spider's classic evaluation.py (`classic`)
    exact: exact_run.ExactMatch = field(init=False)  # made by `read`, with the runner
    runner: _Runner = field(init=False)

    semantics = SEMANTICS
    names = NAMES
    __test__ = False  # not a pytest class, whatever its name

    def __post_init__(self) -> None:
        self.semantics = self.scorer  # the report's official verdict is named after the script it reproduces
        self.names = (self.scorer, "strict")

    @property
    def classic(self) -> bool:
        return self.scorer == "spider"

    def read(self) -> Inputs:
        if not self.classic and self.etype != "match" and (self.plug is not None or not self.keep_distinct):
            rules.sqlparse_module()  # fails early, with the extra to install, rather than on every question
        problems: list[Problem] = []
        preds = read_predictions(self.pred_file)
        golds = read_gold(self.gold_file, problems)
        if self.classic:  # the classic script drops blank lines: one flat list, no sessions
            golds, preds = [[g for s in golds for g in s]], [[p for s in preds for p in s]]
        pairs = pair(golds, preds, self.pred_file, problems)
        _check_databases(pairs, self.db_dir, problems)  # a wrong --db is said before tables.json is read against it
        self.exact = exact_run.prepare(self.etype, self.table, self.db_dir, golds, self.classic)
        self.runner = _Runner(self.config, self.each_database)
        places = exact_run.turns(golds, preds)
        items = [(i, gold, pred, place) for i, ((gold, pred), place) in enumerate(zip(pairs, places, strict=True))]
        submitted = sum(len(session) for session in preds)
        return Inputs(items, submitted, tuple(problems), (), (self.gold_file,))

    def grade(self, item) -> InstanceReport:
        index, gold, pred, place = item
        unpaired = _unpaired(index, gold, pred, self.db_dir)
        if unpaired is not None:
            return self._named(unpaired)
        found = self.exact.fields(gold, self.exact.prediction(pred.sql))
        if self.etype == "match":  # the scorer's match run executes nothing
            instance = _instance(index, gold, pred, every(NAMES, exact_run.match_verdict(*found)), {})
        elif self.classic:
            instance = _grade_classic(index, gold, pred, self.db_dir, self.runner, found)
        else:
            instance = _grade(index, gold, pred, self.db_dir, self.runner, self.keep_distinct, self.plug)
        return self._named(exact_run.with_fields(instance, place, found))

    def _named(self, instance: InstanceReport) -> InstanceReport:
        """The official verdict under the scorer's name (`spider` for the classic script)."""
        if self.scorer == SEMANTICS:
            return instance
        return replace(instance, scores={self.scorer: instance.scores[SEMANTICS], "strict": instance.scores["strict"]})

    def close(self) -> None:
        self.runner.rows.close()

    def broken(self, item, words: str) -> InstanceReport:
        index, gold, pred, _place = item
        return self._named(_instance(index, gold, pred, every(NAMES, Verdict(0.0, "internal_error", words)), {}))

    def complete(self, instances: list[InstanceReport]) -> list[InstanceReport]:
        return exact_run.with_sessions(instances, self.exact.matching and not self.classic)

    def scorers(self) -> dict:
        return {self.scorer: SCORERS[self.scorer]}

    def official_lines(self, report: Report) -> str:
        s = report.summary
        accuracy, compared = official_accuracy(report)
        figure = "exact match" if self.etype == "match" else "execution"
        script = "taoyds/spider" if self.classic else "test-suite-sql-eval"
        errors = ""
        if self.classic:  # the classic script prints its count of unreadable predictions
            unread = [i for i in report.instances if i.metadata.get("prediction_parse") == "unparseable"]
            errors = f"eval_err_num:{len(unread)}\n"
        return (
            f"{figure} ({script}'s figure, over the {compared} pairs it compares): {accuracy:.3f}\n"
            f"score over all {s.gold_instances} gold lines: {self.scorer} {s.score:.3f}, strict {s.strict_score:.3f}\n"
            f"\n{script}'s tables (evaluation.py --etype {self.etype}):\n{errors}"
            f"{official_tables(report, self.etype)}\n"
        )

    def warnings(self, report: Report) -> list[str]:
        out = []
        if self.classic and (self.plug is not None or self.keep_distinct):
            out.append("--plug-value and --keep-distinct are test-suite-sql-eval's: --scorer spider ignores them")
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
    """The scorer's printed tables (hardness, execution, exact match, partial, turns) for this run."""
    return exact_run.tables(report, etype, report.summary.semantics)


def _unpaired(index: int, gold: GoldLine | None, pred: Prediction | None, db_dir: Path) -> InstanceReport | None:
    """The report of a question no rule can compare (a broken gold line, no prediction, no database), or None."""
    if gold is None:
        both = every(NAMES, Verdict(0.0, "invalid_gold", "the gold line is not SQL<TAB>db_id (a gold problem)"))
        return _instance(index, None, pred, both, {})
    if pred is None:
        return _instance(index, gold, None, every(NAMES, Verdict(0.0, "missing_prediction", "no prediction line")), {})
    if not database_variants(db_dir, gold.db_id):
        verdict = Verdict(0.0, "no_database", f"no {gold.db_id}/*.sqlite under {db_dir}")
        return _instance(index, gold, pred, every(NAMES, verdict), {})
    return None


def _grade_classic(
    index: int, gold: GoldLine, pred: Prediction, db_dir: Path, runner: _Runner, found: exact_run.Found
) -> InstanceReport:
    """The classic script's execution check (`classic.same_results`) on `<db_id>.sqlite`, strict beside."""
    variants = database_variants(db_dir, gold.db_id)
    question = _Question(f"question {index} ({gold.db_id})", 1, None)
    database = db_dir / gold.db_id / f"{gold.db_id}.sqlite"
    if found.failure is not None:  # the classic script stops on a gold it cannot parse
        official = Verdict(0.0, found.failure, found.fields["exact_match_error"])
    else:
        official = _classic_official(gold, pred, database, runner, question, found)
    strict = _strict(gold, pred, variants, runner, question)
    return _instance(index, gold, pred, {SEMANTICS: official, "strict": strict}, {"databases": 1})


def _classic_official(
    gold: GoldLine, pred: Prediction, database: Path, runner: _Runner, question: _Question, found: exact_run.Found
) -> Verdict:
    pred_result = runner.pred(database, pred.sql, question)  # the prediction runs first, as in the script
    if not pred_result.ok:
        return Verdict(0.0, pred_result.reason, f"on {database.name}: {pred_result.detail}")
    gold_result = runner.gold(database, gold.sql)
    if not gold_result.ok:
        return Verdict(0.0, "unreadable_gold", f"the gold query failed on {database.name}: {gold_result.detail}")
    assert found.structures is not None  # a judged question has both structures
    try:
        same = classic.same_results(
            list(gold_result.rows), list(pred_result.rows), found.structures.gold, found.structures.pred
        )
    except IndexError:  # the script's res_map raises here and stops
        return Verdict(0.0, "value_mismatch", "fewer result columns than SELECT items (the script stops here)")
    if same:
        return Verdict(1.0, "match", f"equal column by column, in row order, on {database.name}")
    return Verdict(0.0, "value_mismatch", f"results differ column by column (in row order) on {database.name}")


def _grade(
    index: int, gold: GoldLine, pred: Prediction, db_dir: Path, runner: _Runner, keep_distinct: bool, plug: int | None
) -> InstanceReport:
    variants = database_variants(db_dir, gold.db_id)
    question = _Question(f"question {index} ({gold.db_id})", len(variants), runner.each_database)
    official, info = _official(gold, pred, variants, runner, keep_distinct, plug, question)
    strict = _strict(gold, pred, variants, runner, question)
    info["databases"] = len(variants)
    return _instance(index, gold, pred, {SEMANTICS: official, "strict": strict}, info)


def _official(
    gold: GoldLine,
    pred: Prediction,
    variants: list[Path],
    runner: _Runner,
    keep_distinct: bool,
    plug: int | None,
    question: _Question,
) -> tuple[Verdict, dict]:
    gold_sql = rules.prepare(gold.sql, keep_distinct)
    try:
        pred_sql = rules.prepare(rules.replace_value(pred.sql), keep_distinct)
    except rules.Unparsable as error:
        return Verdict(0.0, "unreadable_prediction", f"the prediction: {error}"), {}
    ordered = rules.order_matters(gold_sql)
    info: dict = {"order_matters": ordered, "rewritten": pred_sql != pred.sql}
    verdict = _official_one(gold_sql, pred_sql, ordered, variants, runner, question)
    if plug is None or verdict.passed or verdict.reason == "unreadable_gold":
        return verdict, info
    from evaluators.testsuite.plug import plugged_predictions

    plugged = plugged_predictions(gold_sql, pred_sql, plug)
    info["plug_value"] = {"variants": plugged.total, "tried": len(plugged.variants), "slots": plugged.slots}
    if plugged.skipped:
        info["plug_value"]["skipped"] = plugged.skipped
        return Verdict(0.0, verdict.reason, f"{verdict.detail}; {plugged.skipped}"), info
    for number, variant in enumerate(plugged.variants, 1):
        attempt = _official_one(gold_sql, variant, ordered, variants, runner, question)
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


def _official_one(
    gold_sql: str, pred_sql: str, ordered: bool, variants: list[Path], runner: _Runner, question: _Question
) -> Verdict:
    for number, database in enumerate(variants, 1):
        question.reached(number, database)
        gold_result = runner.gold(database, rules.replace_cur_year(gold_sql))
        if not gold_result.ok:
            return Verdict(
                0.0,
                "unreadable_gold",
                f"the gold query failed on {database.name} ({gold_result.reason}): {gold_result.detail}",
            )
        pred_result = runner.pred(database, rules.replace_cur_year(pred_sql), question)
        if not pred_result.ok:
            return Verdict(0.0, pred_result.reason, f"on {database.name}: {pred_result.detail}")
        if not rules.result_eq(list(gold_result.rows), list(pred_result.rows), ordered):
            order = "in order" if ordered else "as bags of rows"
            return Verdict(0.0, "value_mismatch", f"results differ {order} on {database.name}")
    return Verdict(1.0, "match", f"equal on all {len(variants)} database(s)")


def _strict(gold: GoldLine, pred: Prediction, variants: list[Path], runner: _Runner, question: _Question) -> Verdict:
    from evaluators.metrics.bird import outermost_has_order_by

    # Only Spider's tokenizer artifacts (`> =`) are mended; otherwise both queries run as written.
    gold_sql, pred_sql = rules.postprocess(gold.sql), rules.postprocess(pred.sql)
    ordered = outermost_has_order_by(gold_sql)
    for database in variants:
        gold_result = runner.gold(database, gold_sql)
        if not gold_result.ok:
            return Verdict(0.0, "unreadable_gold", f"the gold query failed on {database.name}: {gold_result.detail}")
        pred_result = runner.pred(database, pred_sql, question)
        if not pred_result.ok:
            return Verdict(0.0, pred_result.reason, f"on {database.name}: {pred_result.detail}")
        verdict = strict_rows(list(gold_result.rows), list(pred_result.rows), ordered)
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
