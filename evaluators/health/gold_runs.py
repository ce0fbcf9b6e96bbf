"""Each command's golds run as the predictions, through the command's own reader and official rule.

`bird`, `test-suite` and `livesql` are called as their commands call them (`grade_bird`,
`grade_test_suite`, `grade_livesql` with the official `--mode gold`: each the run of its `Benchmark` on the
one runner, grading/benchmark.py), on prediction files written in the work folder from the gold itself;
nothing of their rules is copied here.  What their reports do not say,
whether a passing gold returned any row at all, one probe per passing gold tells (`SELECT 1 FROM (gold)
LIMIT 1`, run as the gold runs: trusted, in a worker).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.execution.backends.settings import MySQLSettings, PostgresSettings
from evaluators.execution.executor import ExecConfig, run_sql
from evaluators.health.ceiling import Ceiling, Unscoreable, cause_of, ceiling_of
from evaluators.health.dates import at_reference_date
from evaluators.loading.pairing import GoldLine


def bird_ceiling(gold: Path, questions: Path | None, options, data_mode: str = "dev", reference_date=None) -> Ceiling:
    """BIRD: every gold line as its own prediction (mini-dev's predictions JSON), under BIRD's EX."""
    from evaluators.bird import native
    from evaluators.bird.official import SEPARATOR
    from evaluators.bird.run import grade_bird

    gold_file = native.resolve(gold, data_mode, "{mode}_gold.sql")
    work = _work(options.work_dir)
    lines = native.read_gold(gold_file, [])
    if reference_date:
        lines = [_at(g, reference_date, options.backend) for g in lines]
        gold_file = _write_gold(work / "gold_at_reference_date.sql", lines, gold_file)
    predictions = {str(i): f"{g.sql}{SEPARATOR}{g.db_id}" for i, g in enumerate(lines) if g is not None}
    pred_file = work / "gold_as_predictions.json"
    pred_file.write_text(json.dumps(predictions), encoding="utf-8")
    report = grade_bird(pred_file, gold_file, questions, replace(options, ves_iterations=0, plan_cost=False), data_mode)
    config = _config(options.work_dir, options.meta_time_out, options.postgres_dsn, options.mysql_dsn)

    def database(g: GoldLine) -> str | None:
        if options.backend != "sqlite":
            return None
        path = native.database_path(options.db_root, g.db_id)
        return str(path) if path is not None else None

    empty = _empty_golds(report, dict(enumerate(lines)), options.backend, database, config)
    return ceiling_of("bird", "bird", report, empty, reference_date)


def testsuite_ceiling(
    gold: Path, db_dir: Path, work_dir: Path, timeout_s: float, keep_distinct: bool = False, reference_date=None
) -> Ceiling:
    """test-suite: each gold line as its own prediction (sessions kept), under the suite's execution accuracy."""
    from evaluators.testsuite.native import database_variants, read_gold
    from evaluators.testsuite.run import SEMANTICS, grade_test_suite

    work = _work(work_dir)
    text = Path(gold).read_text(encoding="utf-8")
    if reference_date:
        text = "".join(_line_at(line, reference_date) for line in text.splitlines(keepends=True))
        gold = work / "gold_at_reference_date.txt"
        gold.write_text(text, encoding="utf-8")
    pred_file = work / "gold_as_predictions.txt"
    pred_file.write_text("".join(_sql_of(line) for line in text.splitlines(keepends=True)), encoding="utf-8")
    report = grade_test_suite(gold, pred_file, db_dir, work_dir, keep_distinct=keep_distinct, timeout_s=timeout_s)
    lines = dict(enumerate(g for session in read_gold(Path(gold), []) for g in session))

    def database(g: GoldLine) -> str | None:
        variants = database_variants(db_dir, g.db_id)
        return str(variants[0]) if variants else None

    empty = _empty_golds(report, lines, "sqlite", database, _config(work_dir, timeout_s))
    return ceiling_of("test-suite", SEMANTICS, report, empty, reference_date)


def livesql_ceiling(jsonl_file: Path, gold_file: Path | None, options, reference_date=None) -> Ceiling:
    """LiveSQLBench / BIRD-CRITIC: the official `--mode gold` (sol_sql as the prediction, its test cases run)."""
    from evaluators.livesql.run import grade_livesql

    if reference_date:
        jsonl_file = _livesql_at(jsonl_file, reference_date, options)
        gold_file = _livesql_at(gold_file, reference_date, options) if gold_file is not None else None
    report = grade_livesql(jsonl_file, gold_file, replace(options, mode="gold"))
    empty = _empty_livesql_golds(report, jsonl_file, gold_file, options) if options.engine == "sqlite" else set()
    return ceiling_of("livesql", options.profile.preset, report, empty, reference_date)


# the oracle's causes (interact/run.py) in doctor's words; its detail keeps the oracle's own name
_INTERACT_CAUSES = {
    "gold_missing": "gold_missing",
    "no_database": "gold_missing",
    "gold_does_not_run": "gold_error",
    "gold_multi_statement": "gold_error",
    "gold_today_date": "empty_gold",
    "gold_empty_or_unequal": "empty_gold",
    "gold_fails_own_test": "fails_own_tests",
}


def interact_ceiling(tasks: Path, gt: Path | None, options, jobs: int = 1) -> Ceiling:
    """BIRD-Interact: `interact --oracle` (the gold submitted in every phase); a task whose gold does not earn
    the full reward, every phase counted, is unscoreable with the oracle's cause."""
    from evaluators.interact.run import grade_interact

    report = grade_interact(tasks, gt, None, replace(options, oracle=True), jobs)
    unscoreable, passing = [], 0
    for instance in report.instances:
        if instance.score >= 1:
            passing += 1
            continue
        cause = _INTERACT_CAUSES.get(instance.reason)
        if cause == "gold_error" and "timeout" in instance.detail.lower():
            cause = "gold_timeout"
        found = (cause, f"{instance.reason}: {instance.detail}") if cause else cause_of(instance, False)
        unscoreable.append(Unscoreable(instance.instance_id, *(found or ("fails_official_rule", instance.detail))))
    rewards = [i.execution.get("oracle_reward", 0.0) for i in report.instances]
    facts = {**(report.summary.provenance or {}), "oracle_reward_mean": sum(rewards) / len(rewards) if rewards else 0.0}
    return Ceiling(
        "interact",
        f"{options.flavour}-oracle",
        len(report.instances),
        passing,
        passing,
        tuple(unscoreable),
        provenance=facts,
    )


def _empty_livesql_golds(report, jsonl_file: Path, gold_file: Path | None, options) -> set[str]:
    """The official `ex_base` fails an empty gold whatever the answer: ids of the Query instances whose one
    `sol_sql` statement, with no `preprocess_sql` before it, returns no rows on the SQLite template."""
    from evaluators.livesql import native
    from evaluators.livesql.profiles import split_field

    predictions = native.read_lines(Path(jsonl_file), [], submitted=True)
    gold = native.read_lines(Path(gold_file), []) if gold_file is not None else None
    lines = {line.instance_id: line.data for line in native.merge(predictions, gold, [])[0]}
    config = _config(options.work_dir, options.instance_timeout_s)
    empty = set()
    for instance in report.instances:
        data = lines.get(instance.instance_id) or {}
        sol, db = split_field(data, "sol_sql") if data else [], native.database_of(data) if data else None
        plain = data.get("category", "Query") == "Query" and not data.get("preprocess_sql") and len(sol) == 1
        if not plain or db is None or instance.strict_score < 1:
            continue
        template = native.sqlite_template(options.db_root, db)
        if template is not None and _returns_nothing("sqlite", str(Path(options.db_root) / template), sol[0], config):
            empty.add(instance.instance_id)
    return empty


def _livesql_at(path: Path, day: str, options) -> Path:
    dialect = "sqlite" if options.engine == "sqlite" else "postgres"
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            out.append(line)  # the reader says what is wrong with it, at its line
            continue
        if isinstance(data, dict) and isinstance(data.get("sol_sql"), str | list):
            sol = data["sol_sql"]
            data["sol_sql"] = (
                at_reference_date(sol, day, dialect)
                if isinstance(sol, str)
                else [at_reference_date(s, day, dialect) if isinstance(s, str) else s for s in sol]
            )
        out.append(json.dumps(data))
    target = _work(options.work_dir) / f"{Path(path).stem}_at_reference_date.jsonl"
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


def _empty_golds(report, lines: dict, backend: str, database, config: ExecConfig) -> set[str]:
    """Ids of the passing instances whose gold returns no rows."""
    empty = set()
    for position, instance in enumerate(report.instances):  # the runner keeps the gold's order
        gold = lines.get(position)
        if instance.score >= 1 and gold is not None and _returns_nothing(backend, database(gold), gold.sql, config):
            empty.add(instance.instance_id)
    return empty


def _returns_nothing(backend: str, db_ref: str | None, sql: str, config: ExecConfig) -> bool:
    body = sql.strip().rstrip(";").rstrip()
    probe = f"SELECT 1 FROM (\n{body}\n) AS doctor_probe LIMIT 1"
    out = Path(config.output_dir) / "doctor_probe.csv"
    result = run_sql(backend, db_ref, probe, config, out, collect="inline", trusted=True)
    if not result.ok:  # a gold the probe cannot wrap (several statements ...): read its rows instead
        result = run_sql(backend, db_ref, sql, config, out, collect="inline", trusted=True)
    return result.ok and not result.rows()[1]


def _config(work_dir: Path, timeout_s: float, postgres_dsn=None, mysql_dsn=None) -> ExecConfig:
    return ExecConfig(
        output_dir=_work(work_dir),
        timeout_s=timeout_s,
        postgres=PostgresSettings(postgres_dsn),
        mysql=MySQLSettings(mysql_dsn),
    )


def _work(work_dir: Path) -> Path:
    folder = Path(work_dir) / "doctor"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _at(gold: GoldLine | None, day: str, dialect: str) -> GoldLine | None:
    return None if gold is None else replace(gold, sql=at_reference_date(gold.sql, day, dialect))


def _write_gold(path: Path, lines: list, original: Path) -> Path:
    originals = original.read_text(encoding="utf-8").splitlines()
    text = [f"{g.sql}\t{g.db_id}" if g is not None else originals[i] for i, g in enumerate(lines)]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def _sql_of(line: str) -> str:
    """A gold line's SQL, as a prediction line (a blank line stays: it starts a session)."""
    body = line.rstrip("\n")
    return (body.rsplit("\t", 1)[0] if "\t" in body else body) + "\n"


def _line_at(line: str, day: str) -> str:
    body, end = line.rstrip("\n"), line[len(line.rstrip("\n")) :]
    if "\t" not in body:
        return line
    sql, db = body.rsplit("\t", 1)
    return f"{at_reference_date(sql, day, 'sqlite')}\t{db}{end}"


def grade_ceiling(gold_dir: Path, semantics: str = "spider2", work_dir: Path = Path(".grade-work")) -> Ceiling:
    """Spider2 folders: each gold graded as the answer to itself by `gold lint`'s self-check (the real
    matchers, every preset), a failure under `semantics` unscoreable.  execution_match golds run through
    grade itself, their SQL as the answer (`_sql_gold_causes`); temporal specs are not run here: they count
    as passing, and the report says how many."""
    from evaluators.goldtools.lint import lint_instance
    from evaluators.grading.run import excluded_by_revision
    from evaluators.loading.specs import load_gold
    from evaluators.reporting.provenance import provenance

    loaded = load_gold(Path(gold_dir))
    excluded = excluded_by_revision(loaded.records.values())
    records = {i: g for i, g in loaded.records.items() if i not in excluded}
    unscoreable = [Unscoreable(str(p.location), "gold_error", p.message) for p in loaded.problems]
    passing, empty = 0, 0  # an empty gold passes (execution_match: BIRD EX) but is unscoreable
    sql_causes = _sql_gold_causes(Path(gold_dir), records, semantics, work_dir)
    for gold in records.values():
        errors, _ = lint_instance(gold, Path(gold_dir))
        found = _grade_cause([e.message for e in errors], semantics) or sql_causes.get(gold.instance_id)
        if found is None:
            passing += 1
        else:
            unscoreable.append(Unscoreable(gold.instance_id, *found))
            empty += found[0] == "empty_gold"
    not_run = sum(1 for g in records.values() if any(s.temporal for s in g.specs))
    total = len(records) + len(loaded.problems)
    facts = {**provenance(Path(gold_dir)), "sql_golds_not_run": not_run, "excluded": excluded}
    return Ceiling("grade", semantics, total, passing + empty, passing, tuple(unscoreable), provenance=facts)


def _grade_cause(messages: list[str], semantics: str) -> tuple[str, str] | None:
    """The lint's errors of one instance as a cause; None: it passes under `semantics`."""
    if not messages:
        return None
    words = "; ".join(messages)
    if any("does not exist" in m or "not found" in m for m in messages):
        return "gold_missing", words
    self_checks = [m for m in messages if "graded as the answer to itself" in m]
    if len(self_checks) < len(messages):
        return "gold_error", words
    failing = [m for m in self_checks if semantics in m.split(" fails under ", 1)[-1].split(":", 1)[0].split(", ")]
    return ("fails_official_rule", "; ".join(failing)) if failing else None


def _sql_gold_causes(gold_dir: Path, records: dict, semantics: str, work_dir: Path) -> dict:
    """Each execution_match gold's SQL written as the answer to itself and graded by grade (its executor, the
    one opener): instance id -> its cause, or None when it passes and returns rows."""
    from evaluators.execution.executor import default_executor
    from evaluators.grading.instance import Options
    from evaluators.grading.run import grade
    from evaluators.loading.checks import read_sql_file
    from evaluators.matching import registry

    chosen = {i: g for i, g in records.items() if any(registry.is_sql_func(s.func) and not s.temporal for s in g.specs)}
    if not chosen:
        return {}
    answers, lines = _work(work_dir) / "gold_sql_as_answers", []
    for instance_id, gold in chosen.items():
        spec = next(s for s in gold.specs if registry.is_sql_func(s.func))
        name = spec.parameters.get("gold_query") or spec.parameters.get("gold_sql") or "gold.sql"
        try:
            sql = read_sql_file(gold_dir / instance_id / name, 10 << 20, "unreadable_gold")
        except InstanceError as exc:
            sql = f"-- {exc.detail}"  # grade names the unreadable gold itself
        (answers / instance_id).mkdir(parents=True, exist_ok=True)
        (answers / instance_id / "answer.sql").write_text(sql, encoding="utf-8")
        lines.append({"instance_id": instance_id, "answer_type": "file", "answer_or_path": "answer.sql"})
    (answers / "results_metadata.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    executor = default_executor(gold_dir, work_dir=_work(work_dir) / "gold_sql_runs")
    report = grade(answers, gold_dir, semantics, options=Options(executor=executor, ves_iterations=0))
    return {i.instance_id: cause_of(i, _empty_result(i)) for i in report.instances if i.instance_id in chosen}


def _empty_result(instance) -> bool:
    """The gold query's result file (written by the grader) holds a header and no row."""
    path = instance.execution.get("gold_query_csv")
    if instance.score < 1 or not path or not Path(path).is_file():
        return False
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip()) <= 1
