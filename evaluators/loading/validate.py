"""Checking a submission folder before anyone grades it: every problem at once, each with a place and a fix.

Errors are exactly what grading would turn into a failing reason (a broken
line, an unsafe or missing path, an unreadable file, an answer type the gold
cannot grade, a DuckDB table the gold names but the file lacks), found by the
same code (`checks`, `paths`, `tables.read`), plus ids the gold does not know
and gold instances left without an answer.  Warnings are legal but likely
mistakes (ragged CSV rows, a header split by another delimiter); they are
listed and do not fail the run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path

from evaluators.errors import InstanceError, Location, SpecError
from evaluators.loading import checks
from evaluators.loading.csv_lines import scan_csv
from evaluators.loading.paths import answer_path
from evaluators.loading.specs import SUBMISSION_FILE, load_gold
from evaluators.loading.submissions import check_folders, load_submission_in
from evaluators.matching import registry
from evaluators.specs import GoldInstance, Problem, SubmissionLine
from evaluators.tables.read import DEFAULT_MAX_BYTES, TableReader
from evaluators.terminal_safe import one_line

MISSING = "gold instance"  # how the problems of gold instances without a submission begin
SHOWN_MISSING = 10  # those listed one by one; the rest share one line
SUGGESTED = 50  # unknown ids that get a "did you mean"


@dataclass(frozen=True)
class Validation:
    lines: int
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    unknown_ids: tuple[str, ...] = ()
    missing_ids: tuple[str, ...] = ()
    with_gold: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_text(self) -> str:
        missing = [p for p in self.errors if p.message.startswith(MISSING)]
        out = [one_line(p) for p in self.errors if not p.message.startswith(MISSING)]
        out += [one_line(p) for p in missing[:SHOWN_MISSING]]
        if len(missing) > SHOWN_MISSING:
            rest = [p.instance_id for p in missing[SHOWN_MISSING:]]
            out.append(
                f"{one_line(missing[0].location.path)}: and {len(rest)} more gold instances without a submission: "
                + ", ".join(one_line(r) for r in rest)
            )
        out += [f"warning: {one_line(p)}" for p in self.warnings]
        summary = (
            f"{self.lines} submission line(s) checked: {len(self.errors)} error(s), {len(self.warnings)} warning(s)"
        )
        if self.with_gold:
            summary += (
                f"; {len(self.unknown_ids)} instance id(s) not in the gold, "
                f"{len(self.missing_ids)} gold instance(s) without a submission"
            )
        return "\n".join(out + [summary + (": ready to grade" if self.ok else "")]) + "\n"


@dataclass
class _Found:
    errors: list
    warnings: list


def validate(result_dir, gold_dir=None, layout: str = "nested", max_file_bytes: int = DEFAULT_MAX_BYTES) -> Validation:
    """Check `result_dir` (against `gold_dir` when given). Only an unreadable gold raises (`SpecError`)."""
    result_dir = Path(result_dir)
    check_folders(result_dir, gold_dir, layout)
    gold = load_gold(Path(gold_dir)).records if gold_dir is not None else None
    try:
        submission = load_submission_in(result_dir, layout, max_file_bytes)
    except SpecError as exc:
        where = exc.location or Location(str(result_dir / SUBMISSION_FILE))
        return Validation(0, (Problem(where, exc.message, hint=exc.hint or "one JSON object per line, UTF-8"),), ())
    found = _Found([], [])
    (found.warnings if layout == "flat" else found.errors).extend(_with_hint(p) for p in submission.problems)
    unknown, missing = (), ()
    if gold is not None:
        unknown, missing = _match_ids(submission.records, gold, found)
    for iid, line in submission.records.items():
        gold_instance = gold.get(iid) if gold is not None else None
        check_line(
            line,
            gold_instance,
            result_dir,
            Path(gold_dir) if gold_dir else None,
            layout == "flat",
            max_file_bytes,
            found,
        )
    return Validation(
        len(submission.records),
        _in_file_order(found.errors),
        _in_file_order(found.warnings),
        unknown,
        missing,
        gold is not None,
    )


LINE_HINTS = (
    ("'answer_type'", "answer_type is 'answer' (text), 'file' (one path) or 'files' (a list of paths)"),
    ("duplicate instance_id", "keep one line per instance: the later line is the one graded"),
    ("instance_id", "every line needs a non-empty text 'instance_id'"),
    ("answer_or_path", "give the answer text or the path(s) in 'answer_or_path'"),
    ("attempts", "'attempts' is a non-empty list of answers, the last one graded"),
)


def _with_hint(problem: Problem) -> Problem:
    if problem.hint:
        return problem
    hint = next(
        (h for key, h in LINE_HINTS if key in problem.message),
        "one JSON object per line: instance_id, answer_type, answer_or_path",
    )
    return replace(problem, hint=hint)


def _in_file_order(problems: list) -> tuple:
    """By line within each file; files in the order they first came up (the submission's first)."""
    first: dict[str, int] = {}
    for p in problems:
        first.setdefault(p.location.path, len(first))
    return tuple(sorted(problems, key=lambda p: (first[p.location.path], p.location.line or 0, p.location.column or 0)))


def _match_ids(records: dict, gold: dict, found: _Found) -> tuple[tuple, tuple]:
    unknown = tuple(iid for iid in records if iid not in gold)
    missing = tuple(iid for iid in gold if iid not in records)
    for k, iid in enumerate(unknown):
        # Suggestions cost a pass over the gold ids each; a submission for another benchmark needs none.
        close = difflib.get_close_matches(iid, list(gold), n=1) if k < SUGGESTED else []
        hint = f"did you mean {close[0]!r}?" if close else "check the id, or remove the line"
        found.errors.append(Problem(records[iid].location, f"instance_id {iid!r} is not in the gold", iid, hint))
    for iid in missing:
        found.errors.append(
            Problem(
                gold[iid].location,
                f"{MISSING} {iid!r} has no submission line (scored 0)",
                iid,
                hint="add its answer, or accept a 0 for it",
            )
        )
    return unknown, missing


def check_line(
    line: SubmissionLine,
    gold: GoldInstance | None,
    result_dir: Path,
    gold_dir: Path | None,
    flat: bool,
    max_file_bytes: int,
    found: _Found,
) -> None:
    """Everything grading would check for this line: its answer's shape, the gold's fit, its files."""
    try:
        usable = _usable_specs(line, gold)
        checks.answer_shape(line)
    except InstanceError as exc:
        found.errors.append(_problem(line, exc))
        return
    if line.answer_type == "answer":
        return
    relatives = line.answer if line.answer_type == "files" else [line.answer]
    for relative in relatives:
        try:
            path = answer_path(result_dir, line.instance_id, relative, flat)
            _check_file(path, line, usable, gold_dir, max_file_bytes, found)
        except InstanceError as exc:
            found.errors.append(_problem(line, exc))
        except Exception as exc:  # a bug of ours must not hide the other problems; it is reported, not swallowed
            found.errors.append(
                Problem(
                    line.location,
                    f"internal error while checking {relative!r:.100}: {type(exc).__name__}: {exc}",
                    line.instance_id,
                    "please report this",
                )
            )


def _usable_specs(line: SubmissionLine, gold: GoldInstance | None) -> list:
    """The gold specs that would grade this answer; [] when there is no gold to compare with."""
    if gold is None or gold.problem:
        return []
    try:
        specs = [(s, registry.check_parameters(s.func, s.parameters)) for s in gold.specs]
    except ValueError:
        return []  # a broken gold spec is the gold's problem (`gold lint`), not the submission's
    sql = (
        line.answer_type == "file"
        and isinstance(line.answer, str)
        and line.answer.lower().endswith(checks.QUERY_SUFFIXES)
    )
    return checks.fitting_specs(line.answer_type, specs, sql=sql)


def _problem(line: SubmissionLine, exc: InstanceError) -> Problem:
    return Problem(line.location, exc.detail, line.instance_id, checks.HINTS.get(exc.reason))


def _check_file(path: Path, line, usable: list, gold_dir: Path | None, max_file_bytes: int, found: _Found) -> None:
    funcs = {s.func for s, _ in usable}
    kind = checks.file_kind(path, funcs)
    checks.check_size(path, max_file_bytes, "unreadable_prediction")
    reader = TableReader("unreadable_prediction", max_file_bytes)
    if kind == "sql":
        checks.read_sql_file(path, max_file_bytes)
    elif kind == "duckdb":
        _check_duckdb(path, reader, line, usable, gold_dir, found)
    else:
        _check_csv(path, reader, found, line.instance_id)


def _check_csv(path: Path, reader: TableReader, found: _Found, iid: str) -> None:
    for finding in scan_csv(path):
        problem = Problem(Location(str(path), finding.line), finding.message, iid, finding.hint)
        (found.errors if finding.error else found.warnings).append(problem)
        if finding.error:
            return  # the reader would only repeat it, less precisely
    reader.csv(path, low_memory=False)
    reader.csv(path, low_memory=True)  # the spider2-lite preset reads with pandas' defaults


def _check_duckdb(path: Path, reader: TableReader, line, usable: list, gold_dir: Path | None, found: _Found) -> None:
    tables = set(reader.duckdb_tables(path))
    for spec, params in usable:
        if registry.gold_tables(spec.func) != "duckdb":
            continue
        wanted = params["condition_tabs"] or _gold_tables(gold_dir / line.instance_id / params["gold"])
        lacking = [t for t in wanted if t not in tables]
        if lacking:
            raise InstanceError(
                "table_not_found", f"{path.name} lacks table(s) {lacking} named by the gold (it has {sorted(tables)})"
            )


def _gold_tables(gold_path: Path) -> list:
    try:
        return TableReader("unreadable_gold").duckdb_tables(gold_path)
    except InstanceError:
        return []  # an unreadable gold is `gold lint`'s to report
