"""Grade LiveSQLBench / BIRD-CRITIC predictions by their test cases: the official verdict per instance
(with the failing test case and its message) and the strict one beside it, in the project's `Report`.

Each instance runs in a worker process (sandbox.py) on private databases; instances run in parallel
(`num_threads`), each on its own copies, so nothing is shared between them.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from evaluators.cwd import absolute_or_none
from evaluators.errors import InstanceError
from evaluators.grading.benchmark import Benchmark, Inputs, every, item_report, run_benchmark
from evaluators.livesql import native
from evaluators.livesql.profiles import Profile, profile_for
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report

NAMES = ("official", "strict")
SANDBOX = "evaluators.livesql.sandbox:grade"  # the worker's action: one instance on private databases
CATEGORIES = ("Query", "Management")


@dataclass(frozen=True)
class LiveSQLOptions:
    benchmark: str = "livesql"  # livesql | critic
    engine: str = "sqlite"  # sqlite | postgresql
    db_root: Path | None = None  # SQLite: <root>/<db>/<db>_template.sqlite
    num_threads: int = 4
    work_dir: Path = Path(".grade-work")
    postgres_dsn: str | None = None  # PostgreSQL: the server holding <db>_template databases
    mode: str = "pred"  # gold: grade sol_sql itself (the official --mode gold)
    statement_timeout_s: float = 60.0  # PostgreSQL's statement_timeout, as LiveSQLBench sets it
    instance_timeout_s: float = 60.0  # one phase: preprocess, prediction, test cases, clean-up
    memory_limit_mb: int = 2048
    disk_limit_mb: int = 1024
    scorer: str | None = None  # a preset of profiles.PROFILES by name (a scorer version); None: the current one

    def __post_init__(self) -> None:  # the API's edge: the caller's relative paths, made absolute once
        for name in ("db_root", "work_dir"):
            object.__setattr__(self, name, absolute_or_none(getattr(self, name)))

    @property
    def profile(self) -> Profile:
        return profile_for(self.benchmark, self.engine, self.scorer)


def grade_livesql(jsonl_file: Path, gold_file: Path | None, options: LiveSQLOptions, progress=None) -> Report:
    """The Python API behind `evaluate.py livesql`: the run of `LiveSQLBenchmark` (grading/benchmark.py)."""
    return run_benchmark(LiveSQLBenchmark(jsonl_file, gold_file, options), options.num_threads, progress)


class LiveSQLBenchmark(Benchmark):
    """LiveSQLBench / BIRD-CRITIC lines, each instance graded by its test cases inside one worker."""

    semantics = "official"
    names = NAMES

    def __init__(self, jsonl_file: Path, gold_file: Path | None, options: LiveSQLOptions):
        self.jsonl_file = Path(jsonl_file).resolve()
        self.gold_file = Path(gold_file).resolve() if gold_file else None
        self.options = options

    def read(self) -> Inputs:
        problems: list = []
        predictions = native.read_lines(self.jsonl_file, problems, submitted=True)
        gold = native.read_lines(self.gold_file, problems) if self.gold_file is not None else None
        lines, unknown = native.merge(predictions, gold, problems)
        if self.options.profile.engine == "sqlite" and self.options.db_root is not None:
            problem = missing_databases(lines, self.options.db_root)
            problems = problems if problem is None else [problem, *problems]
        return Inputs(lines, len(predictions), tuple(problems), tuple(unknown), (self.gold_file or self.jsonl_file,))

    def grade(self, item: native.Line) -> InstanceReport:
        return grade_line(item, self.options)

    def broken(self, item: native.Line, words: str) -> InstanceReport:
        meta = {"category": str(item.data.get("category", "Query")), "database": native.database_of(item.data) or "?"}
        return _report(
            item, meta, "sql", every(NAMES, Verdict(0.0, "internal_error", f"{words} (instance at {item.location})"))
        )

    def figures(self, instances: list) -> dict:
        return {"livesql": category_table(instances)}

    def scorers(self) -> dict:
        return {self.options.profile.preset: self.options.profile.scorer}

    def official_lines(self, report: Report) -> str:
        table = "Pass rate per category (official, and strict beside it):\n" + official_table(report)
        return table + "\n" + official_statistics(report)

    def official_files(self, report: Report) -> dict:
        return {"report.txt": official_report_file(report)}


def missing_databases(lines: list, db_root: Path):
    """A --db_root holding none of the instances' databases is exit 2 (`database_folder`), not "0 %"; some
    missing, a problem said at the top; before anything runs."""
    from evaluators.loading.database_folder import check_database_folder

    def found(db: str) -> bool:
        if native.unsafe_database(db):
            return True  # an unsafe name is that instance's verdict (`unsafe_path`), not a missing database
        try:
            return native.sqlite_template(db_root, db) is not None
        except InstanceError:  # a link leading out of the root: that instance's verdict too
            return True

    needed = [db for line in lines if (db := native.database_of(line.data)) is not None]
    return check_database_folder("--db_root", db_root, needed, found, "{db}/{db}_template.sqlite")


def grade_line(line: native.Line, options: LiveSQLOptions) -> InstanceReport:
    data = dict(line.data)
    if options.mode == "gold":
        data["pred_sqls"] = data.get("sol_sql")
    profile = options.profile
    db = native.database_of(data)
    meta = {"category": data.get("category", "Query"), "database": db or "?"}
    missing = [f for f in profile.required if f not in data]
    if "pred_sqls" in missing:
        return _report(
            line, meta, None, every(NAMES, Verdict(0.0, "missing_prediction", "no pred_sqls for this instance"))
        )
    if missing or db is None:
        words = f"missing fields: {', '.join(missing) or 'selected_database'} (the official harness fails it)"
        return _report(line, meta, "sql", every(NAMES, Verdict(0.0, "invalid_gold", words)))
    try:
        db_ref = database_ref(db, options)
    except InstanceError as exc:  # a name that is a path, or leads out of --db_root
        return _report(line, meta, "sql", every(NAMES, Verdict(0.0, exc.reason, exc.detail)))
    if db_ref is None:
        where = f"{db}/{db}_template.sqlite under {options.db_root}"
        return _report(line, meta, "sql", every(NAMES, Verdict(0.0, "no_database", f"no database {where}")))
    event = run_instance(data, db_ref, options)
    verdicts, info = verdicts_of(event)
    return _report(line, meta, "sql", verdicts, info)


def database_ref(db: str, options: LiveSQLOptions) -> str | None:
    problem = native.unsafe_database(db)
    if problem:
        raise InstanceError("unsafe_path", problem)
    if options.profile.engine == "postgres":
        return f"{db}_template"
    if options.db_root is None:
        return None
    found = native.sqlite_template(options.db_root, db)
    return str(options.db_root / found) if found is not None else None


def run_instance(data: dict, db_ref: str, options: LiveSQLOptions) -> dict:
    from evaluators.execution import worker
    from evaluators.execution.backends.base import Request, credential_environment
    from evaluators.execution.backends.settings import ENGINE_KEY, PostgresSettings

    profile = options.profile
    key = uuid.uuid4().hex[:12]
    folder = Path(options.work_dir).resolve() / "livesql" / key
    phases = 3 if profile.checks_issue_sql else 2
    settings = {
        "timeout_s": options.instance_timeout_s * phases + 2.0,  # the parent kills the worker past this
        "phase_timeout_s": options.instance_timeout_s,
        "statement_timeout_s": options.statement_timeout_s,
        "memory_limit_mb": options.memory_limit_mb,
        "disk_limit_mb": options.disk_limit_mb,
        "db_root": str(options.db_root) if options.db_root else None,  # the worker opens the template beneath it
        ENGINE_KEY: PostgresSettings(dsn=options.postgres_dsn).to_dict(),  # the backend's own, for redaction too
    }
    backend = "sqlite" if profile.engine == "sqlite" else "postgres"
    environment = credential_environment() if backend == "postgres" else {}
    request = Request(backend, "", str(folder), db_ref, settings, environment, "inline", trusted=True)
    prefix = f"lsq_{key}"
    event: dict = {}
    try:
        event = worker.execute(request, SANDBOX, profile=profile.preset, instance=data, clone_prefix=prefix)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # a killed worker cannot remove its copies
        if backend == "postgres" and event.get("reason") != "ok":
            _drop_clones(request, prefix)
    return event


def _drop_clones(request, prefix: str) -> None:
    """The clones of a worker that was killed (a timeout, Ctrl-C): dropped from here, not through a new
    worker, because after a signal no worker starts; the grader's own administration, never the answer's."""
    from evaluators.livesql.pgclone import drop_prefixed

    try:
        drop_prefixed(request, {"clone_prefix": prefix}, None)
    except Exception:  # a server that is gone has nothing left to drop
        pass


def verdicts_of(event: dict) -> tuple[dict, dict]:
    """The official and strict verdicts from the worker's answer, and what the report keeps of it."""
    if event.get("reason") != "ok":
        failed = Verdict(0.0, event.get("reason", "exec_error"), event.get("detail", ""))
        return every(NAMES, failed), {"stage": "worker"}
    official = _phase_verdict(event["official"])
    strict = _phase_verdict(event["strict"]) if event.get("strict") else official
    info = {"official": event["official"], **({"strict": event["strict"]} if event.get("strict") else {})}
    issue = event.get("issue")
    if issue is not None:
        info["issue_sql"] = issue
        if issue.get("passed"):
            words = "issue_sql passed all tests when it should demonstrate a problem (the official verdict fails)"
            official = Verdict(0.0, "issue_sql_passed", words)
    return {"official": official, "strict": strict}, info


def _phase_verdict(phase: dict) -> Verdict:
    if phase.get("stage") == "refused":
        return Verdict(0.0, "exec_error", phase["messages"][0])
    if phase.get("stage") == "preprocess":
        reason = "timeout" if phase.get("timeout") else "exec_error"
        return Verdict(0.0, reason, "set-up before the prediction: " + "; ".join(phase.get("messages", [])))
    if phase.get("stage") == "prediction":
        reason = "timeout" if phase.get("timeout") else "exec_error"
        return Verdict(0.0, reason, "prediction: " + "; ".join(phase.get("messages", [])))
    if phase.get("passed"):
        return Verdict(1.0, "match", f"{phase['total']}/{phase['total']} test case(s) passed")
    first, message = phase["failed_tests"][0], phase["messages"][0]
    return Verdict(0.0, "test_failed", f"{first} of {phase['total']} failed: {message}")


def _report(line: native.Line, meta: dict, answer_type, verdicts: dict, info: dict | None = None) -> InstanceReport:
    return item_report(
        NAMES,
        line.instance_id,
        verdicts,
        funcs=("test_cases",),
        answer_type=answer_type,
        location=str(line.location),
        metadata=meta,
        execution=info or {},
    )


def category_table(instances: list) -> dict:
    """The official figure: pass rate per category and overall (official and strict)."""
    out = {}
    for label in (*CATEGORIES, "overall"):
        chosen = [i for i in instances if label == "overall" or i.metadata.get("category") == label]
        if chosen:
            out[label] = {
                "n": len(chosen),
                "official": sum(i.score for i in chosen) / len(chosen),
                "strict": sum(i.strict_score for i in chosen) / len(chosen),
            }
    return out


def official_table(report: Report) -> str:
    table = (report.summary.execution_metrics or {}).get("livesql", {})
    lines = [f"{'category':12} {'count':>6} {'official %':>11} {'strict %':>9}"]
    for label, row in table.items():
        lines.append(f"{label:12} {row['n']:>6} {100 * row['official']:>11.2f} {100 * row['strict']:>9.2f}")
    return "\n".join(lines) + "\n"


RULE = "-" * 50
TIMEOUTS = frozenset({"timeout"})
ASSERTIONS = frozenset({"test_failed", "issue_sql_passed"})  # a test case (or the issue_sql check) said no


def official_report_file(report: Report, now: datetime | None = None) -> str:
    """The official evaluation.py's `report.txt`: the statistics block, its `Timestamp:` line, then one line
    per instance sorted by `instance_id` as it sorts them, in its words (`Question_<id>: (passed/total) test
    cases passed, failed test cases: ...`, and which of the three errors the instance had)."""
    stamp = (now or datetime.now()).isoformat(sep=" ", timespec="microseconds")
    lines = [official_statistics(report).rstrip("\n"), f"Timestamp: {stamp}", ""]
    for instance in sorted(report.instances, key=lambda i: i.instance_id):
        lines.append(_question_line(instance))
    return "\n".join(lines) + "\n"


def _question_line(instance: InstanceReport) -> str:
    phase = (instance.execution or {}).get("official") or {}
    total = int(phase.get("total", 0))
    ran = phase.get("stage") == "tests"
    failed = list(phase.get("failed_tests", [])) if ran else []
    passed = total - len(failed) if ran else 0
    listed = ", ".join(failed) if total - passed > 0 else "None"
    note = ""
    if instance.score < 1:
        if instance.reason in TIMEOUTS:
            note = " | Eval Phase: Timeout Error"
        elif instance.reason in ASSERTIONS:
            note = " | Eval Phase: Assertion Error"
        else:
            note = " | Eval Phase: Execution Error"
    return f"Question_{instance.instance_id}: ({passed}/{total}) test cases passed, failed test cases: {listed}{note}"


def official_statistics(report: Report) -> str:
    """The official evaluation.py's statistics block, worded and laid out as its report.txt has it (the
    header names BIRD-Interact and Postgres whatever the run, as the official one does): every failing
    instance counted once, a timeout, a failed test case (assertion) or else an execution error."""
    graded = report.instances  # every line, as the official one counts its data_list
    failed = [i for i in graded if i.score < 1]
    timeouts = sum(i.reason in TIMEOUTS for i in failed)
    assertions = sum(i.reason in ASSERTIONS for i in failed)
    errors = len(failed) - timeouts - assertions
    accuracy = 100 * (len(graded) - len(failed)) / len(graded) if graded else 0.0
    lines = [
        RULE,
        "BIRD-Interact Statistics (Postgres, Multi-Thread):",
        f"Number of Instances: {len(graded)}",
        f"Number of Execution Errors: {errors}",
        f"Number of Timeouts: {timeouts}",
        f"Number of Assertion Errors: {assertions}",
        f"Total Errors: {len(failed)}",
        f"Overall Accuracy: {accuracy:.2f}%",
    ]
    return "\n".join(lines) + "\n"
