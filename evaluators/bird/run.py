"""Grade BIRD predictions: the official EX (`ex_bird`) and the strict typed EX (`ex_strict`) per question.

Queries run in the project's workers (read-only, stopped at the timeout), typed rows come back inline,
and each gold query runs once per (engine, database, SQL) for the whole run.  A prediction that is not one
read-only query runs the official way, prediction then gold on one writable connection, but on a private
copy of the database (see `official`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluators.bird import native, official
from evaluators.bird.official import split_prediction
from evaluators.bird.pair import compare as pair_compare
from evaluators.bird.pair import verdicts_from
from evaluators.errors import Location, UsageError
from evaluators.execution.backends.settings import MySQLSettings, PostgresSettings
from evaluators.execution.config import ExecConfig
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB
from evaluators.execution.row_queries import RowQuery, RowResult, RowRunner
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report, run_benchmark
from evaluators.loading import pairing
from evaluators.loading.database_folder import SERVER_FAILURES, SERVER_OPTIONS, check_database_folder, server_hint
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report
from evaluators.specs import Problem

DIALECTS = {"sqlite": "sqlite", "postgresql": "postgres", "mysql": "mysql"}
LEVELS = ("simple", "moderate", "challenging")
PAIR_ACTION = "evaluators.bird.pair:grade_in_worker"  # a question graded in the SQL worker (bird/pair.py)
PAIRS_ACTION = "evaluators.bird.pair:grade_many_in_worker"  # up to BATCH questions of a thread, one request
BATCH = 16
NAMES = ("bird", "strict")


@dataclass(frozen=True)
class BirdOptions:
    db_root: Path
    sql_dialect: str = "SQLite"
    meta_time_out: float = 30.0
    num_cpus: int = 1
    work_dir: Path = Path(".grade-work")
    postgres_dsn: str | None = None
    mysql_dsn: str | None = None
    ves_iterations: int = 0  # > 0: time correct answers for VES (BIRD dev) and R-VES (mini-dev); BIRD uses 100
    plan_cost: bool = False  # EXPLAIN cost of gold and prediction, and its rank correlation with the time ratio
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB  # each query's cap (execution/memory.py)
    layout: str = "mini-dev"  # "dev" when the predictions are BIRD dev's folder: dev runs on the prediction's db_id

    @property
    def backend(self) -> str:
        return DIALECTS[self.sql_dialect.lower()]


@dataclass
class _Runner:
    """The run's queries through the execution layer's `RowRunner` (typed rows inline, golds cached)."""

    options: BirdOptions
    config: ExecConfig
    rows: RowRunner = field(init=False)
    paths: dict = field(default_factory=dict)  # db_id -> its file's path, or None when it is not a file
    settings: dict | None = None  # the SQLite settings every query carries, made once
    ready: threading.local = field(default_factory=threading.local)  # this thread's batch of pairs (`pairs`)

    def __post_init__(self) -> None:
        self.rows = RowRunner(jobs=1, config=self.config)

    def database(self, db_id: str) -> str | None:
        """The SQLite file of `db_id`, or None when there is none (looked for once per database, not once per
        question)."""
        if self.options.backend != "sqlite":
            return None  # the official script uses the one database of its connection settings
        if db_id not in self.paths:
            path = native.database_path(self.options.db_root, db_id)
            self.paths[db_id] = str(path) if path is not None and path.is_file() else None
        return self.paths[db_id]

    def run(self, sql: str, db: str | None) -> RowResult:
        return self.rows.run(RowQuery(self.options.backend, db, sql, self.options.meta_time_out))

    def gold(self, sql: str, db: str | None) -> RowResult:
        """One run per gold query, however many questions share it."""
        return self.rows.gold(RowQuery(self.options.backend, db, sql, self.options.meta_time_out))

    def pair(self, sql: str, gold_sql: str, db: str | None) -> tuple:
        """The gold then the prediction in one worker, compared there (`pair.grade_in_worker`): (gold result,
        prediction result or None, the comparison or None), as `_in_parent` gives them.  A pair this thread
        had graded in its batch (`pairs`) is taken from there."""
        ready = getattr(self.ready, "pairs", {}).get((sql, gold_sql, db))
        if ready is not None:
            return ready
        event = self._send(self._request(sql, db), PAIR_ACTION, gold_sql=gold_sql)
        return _pair_result(event, sql)

    def pairs(self, wanted: list[tuple]) -> Callable[[], None]:
        """`pair` for each (prediction, gold, database), in one worker request, written now; the function
        returned waits for its answer and keeps it for this thread's `pair` calls until its next batch.  The
        request goes behind this thread's last one still unanswered, on that worker (`worker.send`), so the
        worker starts it as soon as it has answered the other.  A pair asked twice runs once (the same query
        on the same file gives the same rows).  A batch that fails whole (a worker killed, or out of memory)
        keeps nothing: each is then run alone."""
        from evaluators.execution import worker

        distinct = list(dict.fromkeys(wanted))
        behind = getattr(self.ready, "unanswered", None)
        pending = worker.send(self._request("", None), PAIRS_ACTION, behind, pairs=[list(w) for w in distinct])
        self.ready.unanswered = pending

        def answered() -> None:
            self.ready.pairs = {}
            if self.ready.unanswered is pending:
                self.ready.unanswered = None
            event = pending.result()
            if event.get("reason") == "ok":
                results = zip(event["results"], distinct, strict=True)
                self.ready.pairs = dict(
                    zip(distinct, [_pair_result(r, sql) for r, (sql, _, _) in results], strict=True)
                )

        return answered

    def _request(self, sql: str, db: str | None):
        from evaluators.execution.backends.base import Request

        if self.settings is None:
            self.settings = self.config.settings("sqlite")
        return Request("sqlite", sql, "", db, self.settings, {}, "values")

    @staticmethod
    def _send(request, action: str, **extra) -> dict:
        from evaluators.execution import worker

        return worker.execute(request, action, **extra)


def _pair_result(event: dict, sql: str) -> tuple:
    """A worker's answer for one pair as (gold result, prediction result or None, the comparison or None)."""
    if event.get("reason") != "ok":
        failed = RowResult(False, event.get("reason", "exec_error"), event.get("detail", ""))
        if event.get("phase") == "gold":  # killed while the gold ran
            return failed, None, None
        return RowResult(True, "ok", ""), failed, None
    if "gold_failed" in event:
        return RowResult(False, event["gold_failed"]["reason"], event["gold_failed"]["detail"]), None, None
    ran = RowResult(True, "ok", "") if sql.strip() else None
    return RowResult(True, "ok", ""), ran, (event["verdicts"], event["info"])


def grade_bird(
    predictions: Path, gold: Path, questions: Path | None, options: BirdOptions, data_mode: str = "dev", progress=None
) -> Report:
    """The Python API behind `evaluate.py bird`: the run of `BirdBenchmark` (grading/benchmark.py)."""
    return run_benchmark(BirdBenchmark(predictions, gold, questions, options, data_mode), options.num_cpus, progress)


class BirdBenchmark(Benchmark):
    """BIRD's files read as its official scripts read them, each question graded by `_grade`."""

    semantics = "bird"
    names = NAMES

    def __init__(self, predictions: Path, gold: Path, questions: Path | None, options: BirdOptions, data_mode: str):
        if Path(predictions).is_dir():
            options = replace(options, layout="dev")  # BIRD dev's evaluation.py reads a folder; mini-dev a file
        self.predictions, self.gold, self.questions = Path(predictions), Path(gold), questions
        self.options, self.data_mode = options, data_mode
        self.runner: _Runner  # made by `read`
        # On SQLite, up to BATCH questions a worker request (`prepare`; the runner sizes each run by the
        # questions' time: grading/parallel.py): a run of small fast questions spent most of its time in one
        # round trip each, the grading process and the worker waiting on each other.
        self.batch = BATCH if options.backend == "sqlite" else 1

    def scorers(self) -> dict:
        if self.options.layout == "dev":
            return {"bird": "BIRD dev's evaluation.py, which reads a folder of predictions (commit not pinned)"}
        return {"bird": "bird-bench/mini_dev evaluation/evaluation_ex.py at f9d2750 (2025-09-19)"}

    def read(self) -> Inputs:
        options, problems = self.options, list[Problem]()
        pred_file = native.resolve(self.predictions, self.data_mode, "predict_{mode}.json")
        gold_file = native.resolve(self.gold, self.data_mode, "{mode}_gold.sql")
        preds = native.read_predictions(pred_file, named=not self.predictions.is_dir())
        golds = native.read_gold(gold_file, problems)
        metadata = native.read_questions(self.questions, problems)
        _check_lengths(preds, golds, metadata, pred_file, self.questions, problems)
        if options.layout == "dev":
            problems.extend(official.dev_crash_problems(preds, pred_file))
        _check_databases(golds, options, problems)
        fenced = official.fence_problem(preds, pred_file)
        if fenced is not None:
            problems.append(fenced)
        config = ExecConfig(
            output_dir=options.work_dir,
            timeout_s=options.meta_time_out,
            memory_limit_mb=options.memory_limit_mb,
            # the values psycopg2 gives (uuid and records as text ...), as compared officially; SHOW, VALUES,
            # SET @x ...: what the official drivers run, read-only
            postgres=PostgresSettings(options.postgres_dsn, official_statements=True, psycopg2_values=True),
            mysql=MySQLSettings(options.mysql_dsn, official_statements=True),
        )
        self.runner = _Runner(options, config)
        if options.backend != "sqlite":
            _check_server(self.runner)
        names = question_names(metadata, len(golds))
        items = [
            (names[i], g, preds[i] if i < len(preds) else None, metadata[i] if i < len(metadata) else {})
            for i, g in enumerate(golds)
        ]
        gold_files = (gold_file, *([self.questions] if self.questions else []))
        return Inputs(items, len(preds), tuple(problems), tuple(_unpaired(preds, golds)), gold_files)

    def grade(self, item) -> InstanceReport:
        name, gold, pred, question = item
        return _grade(name, gold, pred, question, self.runner)

    def prepare(self, items: list):
        wanted = _pairs_of(items, self.runner)
        return self.runner.pairs(wanted) if len(wanted) > 1 else None

    def broken(self, item, words: str) -> InstanceReport:
        name, gold, pred, question = item
        meta = {k: v for k, v in question.items() if k in ("question_id", "db_id", "difficulty")}
        return _instance(name, gold, pred, meta, every(NAMES, Verdict(0.0, "internal_error", words)), {})

    def figures(self, instances: list) -> dict:
        return {**soft_f1_summary(instances), **efficiency_summary(instances, self.options)}

    def official_lines(self, report: Report) -> str:
        return official_lines(report, self.options.layout)

    def warnings(self, report: Report) -> list[str]:
        warning = (report.summary.execution_metrics or {}).get("ves_warning")
        return [warning] if warning else []

    def close(self) -> None:  # after `read` made the runner (run_benchmark's order)
        self.runner.rows.close()


def question_names(questions: list[dict], count: int) -> list[str]:
    """Each gold line's instance id: its question's `question_id` when every question has one, each its own
    (BIRD's files do), else its position (0, 1, ...), as the official scripts count."""
    ids = [str(q.get("question_id", "")) for q in questions[:count]]
    if len(ids) == count and all(ids) and len(set(ids)) == count:
        return ids
    return [str(i) for i in range(count)]


def _check_lengths(preds, golds, metadata, pred_file: Path, questions: Path | None, problems: list) -> None:
    where = Location(str(pred_file))
    found = [
        pairing.key_order_problem([p.key for p in preds], where),
        pairing.count_problem(len(preds), len(golds), where),
        pairing.shift_problem(
            [(split_prediction(p.value)[1], g.db_id if g else None) for p, g in zip(preds, golds, strict=False)],
            where,
        ),
    ]
    problems.extend(p for p in found if p is not None)
    problems.extend(Problem(p.location, f"prediction {p.key!r}: {p.problem}") for p in preds if p.problem)
    if questions is not None and len(metadata) != len(golds):
        problems.append(
            Problem(
                Location(str(questions)),
                f"{len(metadata)} question(s) for {len(golds)} gold line(s): difficulties are read by position",
            )
        )


def _check_databases(golds: list, options: BirdOptions, problems: list) -> None:
    """Before any answer runs: a --db_root_path holding none of the gold's databases is exit 2, some missing a
    problem (PostgreSQL and MySQL use the one database of their connection, as the official scripts do)."""
    if options.backend != "sqlite":
        return

    def found(db_id: str) -> bool:
        path = native.database_path(options.db_root, db_id)
        return path is not None and path.is_file()

    needed = (g.db_id for g in golds if g is not None)
    problem = check_database_folder("--db_root_path", options.db_root, needed, found, native.DATABASE_LAYOUT)
    if problem is not None:
        problems.append(problem)


def _check_server(runner: _Runner) -> None:
    """Before any answer runs on PostgreSQL or MySQL: one `SELECT 1` run as every answer runs (on PostgreSQL as
    a role of its own, which only a role `db prepare` made can make).  A server that cannot be reached, or a
    role that was never prepared (the `postgres` superuser), would fail every answer the same way: exit 2."""
    probe = runner.run("SELECT 1", None)
    if probe.ok or probe.reason not in SERVER_FAILURES:
        return
    runner.rows.close()
    backend = runner.options.backend
    raise UsageError(
        f"{SERVER_OPTIONS[backend]}: no answer can run on this server ({probe.reason}): {probe.detail}",
        hint=server_hint(backend, probe.reason),
    )


def _unpaired(preds, golds) -> list[str]:
    return [p.key for p in preds[len(golds) :]]


def _grade(
    name: str, gold: native.GoldLine | None, pred: native.PredictionValue | None, question: dict, runner: _Runner
) -> InstanceReport:
    meta = {k: v for k, v in question.items() if k in ("question_id", "db_id", "difficulty")}
    if gold is None:
        return _instance(
            name,
            None,
            pred,
            meta,
            every(NAMES, Verdict(0.0, "invalid_gold", "the gold line is not SQL<TAB>db_id (a gold problem)")),
            {},
        )
    meta.setdefault("db_id", gold.db_id)
    if pred is None:
        return _instance(
            name,
            gold,
            None,
            meta,
            every(NAMES, Verdict(0.0, "missing_prediction", "no prediction at this position")),
            {},
        )
    sql, named_db = official.split_prediction(pred.value)
    db_id, db = _where(gold, pred, runner)
    if runner.options.backend == "sqlite" and db is None:
        words = official.DEV_EMPTY_DB if db_id == "" else f"no database {db_id}/{db_id}.sqlite"
        verdict = Verdict(0.0, "no_database", f"{words} under {runner.options.db_root}")
        return _instance(name, gold, pred, meta, every(NAMES, verdict), {"soft_f1": 0.0, "soft_f1_unordered": 0.0})
    verdicts, info = _execute(sql, gold, db, runner, db_id != gold.db_id)
    info["db_named_in_prediction"] = named_db
    if db_id != gold.db_id:
        info["ran_on"] = f"{db_id} (BIRD dev runs the prediction and the gold on the prediction's db_id)"
    return _instance(name, gold, pred, meta, verdicts, info)


def _where(gold: native.GoldLine, pred: native.PredictionValue, runner: _Runner) -> tuple[str, str | None]:
    """(the db_id the pair runs on, its file on SQLite): the gold's, or on BIRD dev the prediction's."""
    db_id = gold.db_id
    if runner.options.layout == "dev" and runner.options.backend == "sqlite":
        named = official.dev_database(pred.value)
        db_id = gold.db_id if named is None else named  # None: dev crashes on this file (a problem)
    return db_id, runner.database(db_id)


def _pairs_of(items: list, runner: _Runner) -> list[tuple]:
    """The (prediction, gold, database) each of these questions will run on SQLite, as `_grade` finds them."""
    wanted = []
    for _, gold, pred, _ in items:
        if gold is None or pred is None:
            continue
        _, db = _where(gold, pred, runner)
        if db is not None:
            wanted.append((official.split_prediction(pred.value)[0], gold.sql, db))
    return wanted


def _failed(verdict: Verdict, info: dict) -> tuple[dict, dict]:
    return every(NAMES, verdict), {
        **info,
        "ex_bird": False,
        "ex_strict": False,
        "soft_f1": 0.0,
        "soft_f1_unordered": 0.0,
    }


def _execute(sql: str, gold: native.GoldLine, db: str | None, runner: _Runner, elsewhere: bool) -> tuple[dict, dict]:
    backend = runner.options.backend
    info: dict = {"backend": backend}
    if backend != "sqlite" and not sql.strip():
        return _failed(Verdict(0.0, "exec_error", official.EMPTY_QUERY_ERRORS[backend]), info)
    if backend == "sqlite":
        gold_result, pred_result, compared = runner.pair(sql, gold.sql, db)
    else:
        gold_result, pred_result, compared = _in_parent(sql, gold.sql, db, runner)
    if backend == "sqlite" and official.needs_private_copy(sql, gold_result, pred_result):
        pair = _official_pair(sql, gold.sql, db, runner)
        if isinstance(pair, Verdict):
            return _failed(pair, {**info, "ran": "private copy"})
        info["ran"] = "private copy (the prediction is not one read-only query)"
        pred_rows, gold_rows = pair
        compared = pair_compare(pred_rows, gold_rows, gold.sql)
    elif not gold_result.ok:
        reason = "exec_error" if elsewhere else "unreadable_gold"
        where = " on the prediction's database" if elsewhere else ""
        return _failed(
            Verdict(0.0, reason, f"the gold query failed{where} ({gold_result.reason}): {gold_result.detail}"), info
        )
    elif pred_result is not None and not pred_result.ok:
        return _failed(Verdict(0.0, pred_result.reason, pred_result.detail), info)
    verdicts, found = compared
    info.update(found)
    if backend == "sqlite" and sql.strip() and "ran" not in info:
        info.update(_efficiency(sql, gold.sql, db, info["ex_bird"], runner))
    return verdicts_from(verdicts), info


def _in_parent(sql: str, gold_sql: str, db: str | None, runner: _Runner) -> tuple:
    """(gold result, prediction result or None, the comparison or None): the gold cached for the run, the
    prediction run only when the gold ran, their rows compared here."""
    gold_result = runner.gold(gold_sql, db)
    pred_result = runner.run(sql, db) if gold_result.ok and sql.strip() else None
    if not gold_result.ok or (pred_result is not None and not pred_result.ok):
        return gold_result, pred_result, None
    pred_rows = list(pred_result.rows) if pred_result is not None else []
    verdicts, info = pair_compare(pred_rows, list(gold_result.rows), gold_sql)
    if pred_result is not None:
        info["pred_seconds"] = pred_result.query_seconds
    return gold_result, pred_result, (verdicts, info)


def soft_f1_summary(instances: list) -> dict:
    """Soft F1 over the compared questions (mini-dev's figure), and ours beside it, as fractions (the report's
    unit for every rate, docs/report-schema.md; the printed table shows percent)."""
    compared = [i for i in instances if i.answer_type is not None]
    if not compared:
        return {}
    return {
        "soft_f1": sum(i.execution.get("soft_f1", 0.0) for i in compared) / len(compared),
        "soft_f1_unordered": sum(i.execution.get("soft_f1_unordered", 0.0) for i in compared) / len(compared),
        "soft_f1_definition": "mini-dev evaluation_f1.py: rows compared by position after dropping duplicates; "
        "soft_f1_unordered (ours) pairs rows by content",
    }


def _efficiency(sql: str, gold_sql: str, db: str | None, correct: bool, runner: _Runner) -> dict:
    """Timings for VES / R-VES (correct answers only, as the official scripts) and EXPLAIN plan costs."""
    from evaluators.execution import worker
    from evaluators.execution.backends.base import Request
    from evaluators.metrics.ves import official_time_ratio

    out: dict = {}
    iterations = runner.options.ves_iterations
    if iterations <= 0 and not runner.options.plan_cost:
        return out  # neither asked for: nothing to run
    settings = runner.config.settings("sqlite")
    if correct and iterations > 0:
        limit = {**settings, "timeout_s": runner.options.meta_time_out * iterations}  # as the VES scripts allow
        event = worker.execute(
            Request("sqlite", sql, "", db, limit, {}, "time"), "time_pair", gold_sql=gold_sql, iterations=iterations
        )
        if event.get("reason") == "ok":
            pred_times, gold_times = event["pred_times"], event["gold_times"]
            ratio = official_time_ratio(gold_times, pred_times)
            out["bird_ves"] = {
                "time_ratio": ratio,
                "iterations": iterations,
                "pred_mean_s": sum(pred_times) / len(pred_times),
                "gold_mean_s": sum(gold_times) / len(gold_times),
                "ratio_cv": _cv([g / p for g, p in zip(gold_times, pred_times, strict=False) if p > 0]),
            }
        else:
            out["bird_ves"] = {"time_ratio": 0.0, "error": f"{event.get('reason')}: {event.get('detail', '')}"}
    if runner.options.plan_cost:
        event = worker.execute(
            Request("sqlite", sql, "", db, settings, {}, "csv"), "inspect", plan_queries={"gold": gold_sql, "pred": sql}
        )
        if event.get("reason") == "ok" and "plan_cost" in event:
            out["plan_cost"] = event["plan_cost"]
    return out


def _cv(values: list[float]) -> float | None:
    import statistics

    if len(values) < 2 or statistics.fmean(values) <= 0:
        return None
    return statistics.pstdev(values) / statistics.fmean(values)


NOISY_CV = 0.5  # a spread of per-iteration ratios above this makes one question's figure untrustworthy


def efficiency_summary(instances: list, options: BirdOptions) -> dict:
    """VES (BIRD dev) and R-VES (mini-dev) over every compared question, each by its official definition,
    the spread of the timings, and the rank correlation of plan-cost ratio with time ratio.

    VES goes under the report's one set of keys (`ves`, `r_ves`, `ves_correct`, the ratio's spread,
    `timing_note`), the keys `grade` fills, so the text, the JSON, `compare` and the HTML say the same."""
    from evaluators.metrics.ves import spearman

    compared = [i for i in instances if i.answer_type is not None]
    out: dict = {}
    if options.ves_iterations > 0 and compared:
        out.update(_ves_figures(compared, options.ves_iterations))
    pairs = [
        (i.execution["plan_cost"], i.execution.get("bird_ves", {}).get("time_ratio"))
        for i in compared
        if (i.execution.get("plan_cost") or {}).get("pred") and (i.execution.get("plan_cost") or {}).get("gold")
    ]
    timed = [(cost["gold"] / cost["pred"], ratio) for cost, ratio in pairs if ratio]
    if options.plan_cost:
        out["plan_cost_vs_time_spearman"] = spearman([a for a, _ in timed], [b for _, b in timed])
        out["plan_cost_pairs"] = len(timed)
    return out


def _ves_figures(compared: list, iterations: int) -> dict:
    import statistics

    from evaluators.metrics.ves import official_rves, official_ves
    from evaluators.reporting.execution_summary import TIMING_NOTE

    ratios = [_time_ratio(i) for i in compared]
    timed = [
        i.execution["bird_ves"] for i in compared if i.score >= 1 and "ratio_cv" in (i.execution.get("bird_ves") or {})
    ]
    kept = [t["time_ratio"] for t in timed]
    cvs = sorted(t["ratio_cv"] for t in timed if t["ratio_cv"] is not None)
    noisy = sum(cv > NOISY_CV for cv in cvs)
    out = {
        "ves": official_ves(ratios),
        "r_ves": official_rves(ratios),
        "ves_correct": sum(i.score >= 1 for i in compared),
        "median_ratio": statistics.median(kept) if kept else None,
        "ratio_min": min(kept, default=None),
        "ratio_max": max(kept, default=None),
        "ratio_stdev": statistics.pstdev(kept) if len(kept) > 1 else None,
        "ves_iterations": iterations,
        "ves_timed": len(timed),
        "ves_ratio_cv_median": cvs[len(cvs) // 2] if cvs else None,
        "ves_noisy": noisy,
        "ves_definitions": "ves: BIRD dev evaluation_ves.py; r_ves: mini-dev evaluation_ves.py; both take "
        "the mean of per-iteration gold/pred time ratios within 3 sigma",
        "timing_note": TIMING_NOTE.format(how="execute and fetch, in one worker on one connection", n=iterations),
    }
    if cvs and noisy > len(cvs) / 4:
        out["ves_warning"] = (
            f"{noisy} of {len(cvs)} timed questions have a ratio spread (CV) above {NOISY_CV}: "
            "the VES figures are too noisy to trust; use more iterations or a quieter machine"
        )
    return out


def _official_pair(sql: str, gold_sql: str, db: str | None, runner: _Runner):
    import uuid

    from evaluators.execution import worker
    from evaluators.execution.backends.base import Request
    from evaluators.execution.row_files import decode

    copy = Path(runner.config.output_dir).resolve() / "bird" / f"copy-{uuid.uuid4().hex}.sqlite"
    request = Request("sqlite", sql, str(copy), db, runner.config.settings("sqlite"), {}, "inline")
    event = worker.execute(request, "official_pair", gold_sql=gold_sql)
    for leftover in (copy, copy.with_name(copy.name + "-journal")):
        leftover.unlink(missing_ok=True)  # a killed worker cannot clean up after itself
    if event.get("reason") != "ok":
        return Verdict(0.0, event.get("reason", "exec_error"), event.get("detail", ""))
    rows = {k: [tuple(decode(v) for v in row) for row in event[k]] for k in ("pred", "gold")}
    return rows["pred"], rows["gold"]


def _instance(
    name: str,
    gold: native.GoldLine | None,
    pred: native.PredictionValue | None,
    meta: dict,
    verdicts: dict,
    info: dict,
) -> InstanceReport:
    location = str(pred.location) if pred else (str(gold.location) if gold else None)
    return item_report(
        NAMES,
        name,
        verdicts,
        funcs=("execution_match",),
        answer_type="sql" if pred else None,
        location=location,
        metadata=meta,
        execution={
            **info,
            **(
                {"ex_bird": False, "ex_strict": False, "soft_f1": 0.0, "soft_f1_unordered": 0.0}
                if "ex_bird" not in info and pred and gold
                else {}
            ),
        },
    )


def official_table(report: Report, metric: str = "EX", key: str | None = None, label: str | None = None) -> str:
    """The official scripts' table: count and figure per difficulty and in total (over the compared pairs);
    `key` names a per-question figure in `execution` (Soft F1) instead of the score."""
    return _table(_by_level(report), metric, label or metric, _figure(key))


def _figure(key: str | None):
    """A question's figure in a table: its score, or the `execution` value named `key`."""
    if key is None:
        return lambda instance: instance.score
    return lambda instance: instance.execution.get(key, 0.0)


def _table(groups: list[list], metric: str, label: str, figure) -> str:
    banner = f"======================================    {metric}    ====================================="
    return _level_table(groups, banner, label, [_percent(g, figure) for g in groups])


def ves_tables(report: Report) -> str:
    """VES per difficulty as BIRD dev's evaluation_ves.py prints it, then R-VES as mini-dev's prints it."""
    from evaluators.metrics.ves import official_rves, official_ves

    groups = _by_level(report)
    ratios = [[_time_ratio(i) for i in g] for g in groups]
    ves = [f"{official_ves(r):.2f}" if r else "-" for r in ratios]
    rves = [f"{official_rves(r):.2f}" if r else "-" for r in ratios]
    dev = _level_table(groups, "=" * 41 + "    VES   " + "=" * 40, "ves", ves)
    mini = _level_table(groups, "=" * 38 + "    R-VES    " + "=" * 37, "R-VES", rves)
    return dev + mini


def _by_level(report: Report) -> list[list]:
    """The compared pairs per difficulty, in the scripts' order, then all of them (the `total` column)."""
    compared = [i for i in report.instances if i.answer_type is not None]
    return [[i for i in compared if i.metadata.get("difficulty") == level] for level in LEVELS] + [compared]


def _level_table(groups: list[list], banner: str, label: str, scores: list[str]) -> str:
    lines = [
        "{:20} {:20} {:20} {:20} {:20}".format("", *LEVELS, "total"),
        "{:20} {:<20} {:<20} {:<20} {:<20}".format("count", *map(len, groups)),
        banner,
        "{:20} {:<20} {:<20} {:<20} {:<20}".format(label, *scores),
    ]
    return "\n".join(lines) + "\n"


def _time_ratio(instance) -> float:
    """The official per-question time ratio: 0 for a wrong answer (the ves scripts' reward)."""
    return (instance.execution.get("bird_ves") or {}).get("time_ratio", 0.0) if instance.score >= 1 else 0.0


def official_lines(report: Report, layout: str = "mini-dev") -> str:
    """What the official scripts print (EX, and Soft F1 per difficulty), with strict, VES and plan costs."""
    # BIRD dev's evaluation.py labels the same table ACCURACY / accuracy; mini-dev's evaluation_ex.py EX
    groups = _by_level(report)  # once for every table below
    metric, label = ("ACCURACY", "accuracy") if layout == "dev" else ("EX", "EX")
    table = _table(groups, metric, label, _figure(None))
    lines = ["As the official script prints it (over the pairs it compares):", table.rstrip("\n")]
    lines.append(_table(groups, "EX strict", "EX strict", lambda instance: instance.strict_score).splitlines()[-1])
    lines += ["", "Soft F1 (mini-dev's evaluation_f1.py, rows compared by position):"]
    lines.append(_table(groups, "Soft-F1", "Soft-F1", _figure("soft_f1")).rstrip("\n"))
    unordered = _table(groups, "Soft-F1 unordered", "Soft-F1 unordered", _figure("soft_f1_unordered"))
    lines.append(unordered.splitlines()[-1] + "  (ours: rows paired by content)")
    metrics = report.summary.execution_metrics or {}
    if metrics.get("ves") is not None:
        lines += ["", "VES (BIRD dev's evaluation_ves.py) and R-VES (mini-dev's), as they print them:"]
        lines.append(ves_tables(report).rstrip("\n"))
        lines.append(
            f"VES (BIRD dev) {metrics['ves']:.2f}   R-VES (mini-dev) {metrics['r_ves']:.2f}   "
            f"({metrics['ves_iterations']} iterations; median ratio CV {metrics['ves_ratio_cv_median']})"
        )
    if "plan_cost_vs_time_spearman" in metrics:
        lines.append(
            f"plan cost vs time ratio: Spearman {metrics['plan_cost_vs_time_spearman']} over "
            f"{metrics['plan_cost_pairs']} question(s)"
        )
    return "\n".join(lines) + "\n"


def _percent(instances: list, figure) -> str:
    if not instances:
        return "-"
    return f"{100 * sum(map(figure, instances)) / len(instances):.2f}"
