"""Report objects: frozen dataclasses rendered to text, JSON and CSV, written atomically."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path

from evaluators.reporting.execution_summary import execution_metrics, render_lines, valid_at_k_text, validity_section
from evaluators.terminal_safe import encodable, json_text, one_line

REPORT_VERSION = 2  # 2: score intervals, graded scores, gold errors and provenance in the summary
GOLD_ERROR_REASONS = ("invalid_gold", "unknown_func", "invalid_spec", "unreadable_gold")
MIN_WIDTH, MAX_WIDTH = 60, 400  # a narrow or absurd terminal still gets readable lines
ELLIPSIS = "..."
REASONS = {
    "match": "the answer passes",
    "partial": "a reward between 0 and 1 (qa_f1)",
    "value_mismatch": "same shape, different values",
    "row_count_mismatch": "the tables have different numbers of rows",
    "column_not_found": "a gold column has no matching predicted column",
    "table_not_found": "a table the gold names is missing from the predicted DuckDB file",
    "file_count_mismatch": "the answer lists a different number of files than the gold",
    "mapping_search_exhausted": "strict: too many equal-looking columns to find a mapping within budget",
    "no_number": "number_match found no number in the answer",
    "missing_prediction": "no submission line, or its file does not exist",
    "unreadable_prediction": "the predicted file cannot be read (encoding, format, size)",
    "unreadable_gold": "a gold file cannot be read",
    "invalid_answer": "answer_or_path has the wrong JSON type",
    "unsafe_path": "the answer path leaves the instance folder",
    "answer_type_mismatch": "the answer type does not fit any of the gold's specs",
    "unknown_func": "a gold spec names a func that does not exist",
    "invalid_spec": "a gold spec has unknown or ill-typed parameters",
    "invalid_gold": "the gold line itself is broken",
    "needs_execution": "SQL must run to grade this (a .sql answer or a temporal gold)",
    "internal_error": "a bug in the harness while grading this instance (the run goes on)",
    "exec_error": "the SQL failed on its engine (the engine's message is the detail)",
    "timeout": "the SQL ran past the timeout and was stopped",
    "test_failed": "LiveSQLBench/BIRD-CRITIC: a test case failed (which one and its message are the detail)",
    "issue_sql_passed": "BIRD-CRITIC: the gold's issue_sql passes its own tests, so every answer fails (official)",
    "cost_limit": "BigQuery: the query would process more bytes than --max-bytes-billed allows",
    "credentials_missing": "no credentials for the BigQuery/Snowflake backend this instance needs",
    "network_error": "a server the backend needs (a token endpoint, the warehouse) could not be reached",
    "missing_extra": "the driver for this instance's backend is not installed (pip install '.[extra]')",
    "no_database": "no database to run the SQL on (unknown backend, or no file under --db-dir)",
    "result_too_large": "the query returned more rows, or more bytes of rows, than the run allows "
    "(--max-result-rows, half of --memory-limit-mb)",
    "memory_limit": "the query's worker passed its memory cap (--memory-limit-mb) and the query was stopped",
    "disk_limit": "the query wrote more into its private database copy than the run allows",
    "unhashable_result": "BIRD EX: a result holds json or arrays, which the official set() cannot hold: 0",
}


@dataclass(frozen=True)
class InstanceReport:
    instance_id: str
    funcs: tuple
    answer_type: str | None
    score: float
    strict_score: float
    reason: str
    detail: str
    strict_reason: str
    strict_detail: str
    scores: dict
    location: str | None = None
    metadata: dict = field(default_factory=dict)
    attempts: tuple = ()  # with an `attempts` line: {score, strict_score, reason} per attempt
    execution: dict = field(default_factory=dict)  # SQL run: backend, gold_source, bytes, seconds, similarity

    @classmethod
    def from_verdicts(cls, instance_id: str, chosen, strict, scores: dict, **fields) -> InstanceReport:
        """The report of one instance from its chosen semantics' verdict and strict's."""
        return cls(
            instance_id=instance_id,
            score=chosen.score,
            strict_score=strict.score,
            reason=chosen.reason,
            detail=chosen.detail,
            strict_reason=strict.reason,
            strict_detail=strict.detail,
            scores=scores,
            **fields,
        )


@dataclass(frozen=True)
class Summary:
    semantics: str
    gold_instances: int
    submitted: int
    graded: int
    score: float  # mean over gold instances; a missing instance counts as 0
    strict_score: float
    scores: dict  # every semantics' mean, for leaderboard comparisons
    missing: tuple
    unknown_submitted: tuple
    problems: tuple
    breakdowns: dict
    likely_false_positives: tuple
    reasons: dict
    attempts: dict | None = None  # attempt metrics (Pass@1, Pass@k, refinement gain, Valid@k) when lines carry attempts
    bytes_processed: int = 0  # BigQuery bytes over all predicted and gold queries
    execution_metrics: dict | None = (
        None  # EX (BIRD, strict), VES, R-VES, Valid@k, LLMetric-Q (reporting/execution_summary.py)
    )
    score_ci95: tuple | None = None  # bootstrap 95 % interval of `score` (instances resampled, seeded)
    strict_score_ci95: tuple | None = None
    graded_score: float | None = None  # mean over graded instances only (Spider2-lite's "Final score")
    strict_graded_score: float | None = None
    gold_errors: tuple = ()  # instances whose gold is broken: not the model's failures (exit 2 by default)
    provenance: dict = field(default_factory=dict)  # version, command, time, libraries, gold file hashes


@dataclass(frozen=True)
class Report:
    summary: Summary
    instances: tuple

    def to_dict(self) -> dict:
        return {
            "version": REPORT_VERSION,
            "summary": asdict(self.summary),
            "instances": [_plain(i) for i in self.instances],
        }

    def to_json(self) -> str:
        """The report as JSON: the summary indented, then one instance per line (grep- and diff-friendly,
        and written by the C encoder: indenting hundreds of instances costs more than grading small ones)."""
        data = self.to_dict()
        head = json.dumps(
            {"version": data["version"], "summary": data["summary"]}, indent=2, ensure_ascii=False, default=str
        )
        lines = [json.dumps(i, ensure_ascii=False, default=str) for i in data["instances"]]
        instances = "[\n    " + ",\n    ".join(lines) + "\n  ]" if lines else "[]"
        return json_text(f'{head[:-2]},\n  "instances": {instances}\n}}')  # C1, bidi, lone surrogates: \\u escapes

    def to_csv(self, spreadsheet_safe: bool = True) -> str:
        """One row per instance.  Instance ids, details and metadata come from submissions: a text cell a
        spreadsheet would run as a formula (`=HYPERLINK(...)`, `+`, `-`, `@`, a leading tab or carriage return)
        gets a leading `'` (OWASP's rule for CSV exports); numbers stay numbers.  `spreadsheet_safe=False`
        gives the cells as they are, for programs (`to_pandas`)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        cell = spreadsheet_cell if spreadsheet_safe else _same
        names = sorted(self.summary.scores)
        keys = sorted(
            {
                k
                for i in self.instances
                for k, v in i.metadata.items()
                if isinstance(v, (str, int, float, bool)) and k not in ("question", "instruction")
            }
        )
        writer.writerow(
            [
                "instance_id",
                "funcs",
                "answer_type",
                "score",
                "strict_score",
                "reason",
                "detail",
                "strict_reason",
                "strict_detail",
            ]
            + [f"score_{n}" for n in names]
            + [cell(k) for k in keys]
        )
        for i in self.instances:
            row = [
                i.instance_id,
                "+".join(i.funcs),
                i.answer_type or "",
                i.score,
                i.strict_score,
                i.reason,
                i.detail,
                i.strict_reason,
                i.strict_detail,
            ]
            writer.writerow(
                [cell(v) for v in row + [i.scores.get(n, "") for n in names] + [i.metadata.get(k, "") for k in keys]]
            )
        return buffer.getvalue()

    def to_text(self, width: int | None = None) -> str:
        """The terminal's report; its lists fit `width` columns (default: the terminal's, 100 when piped)."""
        return render_text(self, width)

    def to_html(self) -> str:
        from evaluators.reporting.html import report_html

        return report_html(self)

    def to_pandas(self):
        """One row per instance: the CSV's columns, typed."""
        import io as _io

        import pandas as pd

        return pd.read_csv(
            _io.StringIO(self.to_csv(spreadsheet_safe=False)), dtype={"instance_id": str}, keep_default_na=False
        )


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP: what makes a spreadsheet read a cell as a formula


def spreadsheet_cell(value):
    """A CSV cell no spreadsheet evaluates: text that starts like a formula (after any spaces) gets a leading
    `'`; numbers, and text that is only a number ("-3.5"), stay as they are."""
    if isinstance(value, str) and value.lstrip(" ").startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _same(value):
    return value


def _plain(value):
    """What `dataclasses.asdict` gives, without its deep copies (the leaves here are immutable)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def build_summary(
    semantics: str,
    instances: list[InstanceReport],
    submitted: int,
    unknown: list,
    problems: list,
    names,
    ves_iterations: int = 0,
) -> Summary:
    n = len(instances)

    def mean(values) -> float:
        return sum(values) / n if n else 0.0

    graded = [i for i in instances if i.reason != "missing_prediction" or i.answer_type is not None]
    return Summary(
        semantics=semantics,
        gold_instances=n,
        submitted=submitted,
        graded=len(graded),
        score=mean([i.score for i in instances]),
        strict_score=mean([i.strict_score for i in instances]),
        scores={name: mean([i.scores.get(name, 0.0) for i in instances]) for name in names},
        missing=tuple(i.instance_id for i in instances if i.answer_type is None),
        unknown_submitted=tuple(unknown),
        problems=tuple(problems),
        breakdowns=_breakdowns(instances),
        likely_false_positives=tuple(i.instance_id for i in instances if i.score >= 1 > i.strict_score),
        reasons=dict(sorted(_count(i.reason for i in instances).items())),
        attempts=attempt_summary(instances),
        bytes_processed=sum(
            (i.execution.get("bytes_processed") or 0) + (i.execution.get("gold_bytes_processed") or 0)
            for i in instances
        ),
        execution_metrics=execution_metrics(instances, ves_iterations),
        **_intervals(instances, graded),
        gold_errors=tuple(i.instance_id for i in instances if i.reason in GOLD_ERROR_REASONS),
    )


def _intervals(instances: list[InstanceReport], graded: list[InstanceReport]) -> dict:
    from evaluators.metrics.stats import bootstrap_ci

    def mean(values):
        return sum(values) / len(values) if values else None

    return {
        "score_ci95": bootstrap_ci([i.score for i in instances]),
        "strict_score_ci95": bootstrap_ci([i.strict_score for i in instances]),
        "graded_score": mean([i.score for i in graded]),
        "strict_graded_score": mean([i.strict_score for i in graded]),
    }


def attempt_summary(instances: list[InstanceReport]) -> dict | None:
    """Attempt metrics under the chosen semantics and strict, overall and per breakdown."""
    from evaluators.metrics.attempts import summarize_attempts

    submitted = [i for i in instances if i.answer_type is not None]
    if not any(i.attempts for i in submitted):
        return None
    out = {}
    for label, key in (("score", "score"), ("strict", "strict_score")):
        runs = {i.instance_id: [a[key] >= 1 for a in i.attempts] or [getattr(i, key) >= 1] for i in submitted}
        section = {"overall": summarize_attempts(runs).overall.to_dict()}
        for name, groups in _attempt_groups(submitted).items():
            section[f"by_{name}"] = {g: m.to_dict() for g, m in summarize_attempts(runs, groups).by_group.items()}
        out[label] = section
    validity = validity_section(submitted, _attempt_groups(submitted))
    if validity:
        out["validity"] = validity
    return out


def _attempt_groups(instances: list[InstanceReport]) -> dict:
    groups: dict = {"func": {i.instance_id: "+".join(i.funcs) for i in instances}}
    keys = {k for i in instances for k, v in i.metadata.items() if isinstance(v, (str, int, bool))}
    for key in sorted(keys - {"instruction", "question"}):
        labels = {i.instance_id: str(i.metadata[key]) for i in instances if key in i.metadata}
        if len(set(labels.values())) <= 50:
            groups[key] = labels
    return groups


def _count(values) -> dict:
    counts: dict = defaultdict(int)
    for v in values:
        counts[v] += 1
    return dict(counts)


def _breakdowns(instances: list[InstanceReport]) -> dict:
    groups: dict = defaultdict(lambda: defaultdict(list))
    for i in instances:
        groups["func"]["+".join(i.funcs) or "?"].append(i)
        for key, value in i.metadata.items():
            if isinstance(value, (str, int, bool)) and key not in ("instruction", "question"):
                groups[key][str(value)].append(i)
    out = {}
    for key, buckets in groups.items():
        if key != "func" and len(buckets) > 50:
            continue  # free text, not a category
        out[key] = {
            label: {
                "n": len(items),
                "score": sum(x.score for x in items) / len(items),
                "strict_score": sum(x.strict_score for x in items) / len(items),
            }
            for label, items in sorted(buckets.items())
        }
    return out


def terminal_width() -> int:
    """The terminal's width, within reason; 100 when the output is piped (and COLUMNS is not set)."""
    import shutil

    return max(MIN_WIDTH, min(MAX_WIDTH, shutil.get_terminal_size((100, 24)).columns))


def fit(text: str, width: int) -> str:
    """One line of at most `width` characters, cut at a word with an ellipsis when it is longer."""
    if len(text) <= width:
        return text
    cut = text[: width - len(ELLIPSIS)]
    space = cut.rfind(" ")
    if space > width // 2:  # a word boundary not too far back; otherwise a long token is cut where it must be
        cut = cut[:space]
    return cut.rstrip(" ,;:(") + ELLIPSIS


def render_text(report: Report, width: int | None = None) -> str:
    width = width or terminal_width()
    s = report.summary
    lines = [
        f"Graded {s.graded} of {s.gold_instances} gold instances ({s.submitted} submitted lines, "
        f"{len(s.missing)} missing, {len(s.unknown_submitted)} not in the gold)",
        "",
    ]
    lines.append(f"  {'semantics':<16}{'score':>10}{'passed':>10}")
    for name, value in s.scores.items():
        mark = " <- score" if name == s.semantics else (" <- strict_score" if name == "strict" else "")
        lines.append(f"  {name:<16}{value:>10.2%}{round(value * s.gold_instances):>10}{mark}")
    if s.score_ci95 and s.strict_score_ci95:
        lines.append(
            f"  score {s.score:.2%} (95% CI {s.score_ci95[0]:.2%}-{s.score_ci95[1]:.2%}), strict "
            f"{s.strict_score:.2%} (95% CI {s.strict_score_ci95[0]:.2%}-{s.strict_score_ci95[1]:.2%}); "
            f"over the {s.graded} graded: {s.graded_score or 0:.2%} / {s.strict_graded_score or 0:.2%}"
        )
    if s.semantics == "spider2-lite":
        lines += _lite_headline(report)
    for key, buckets in s.breakdowns.items():
        lines += ["", f"  by {one_line(key)}:"]
        for label, b in buckets.items():
            lines.append(
                f"    {one_line(label)[:40]:<42}{b['n']:>6}  score {b['score']:>7.2%}  strict {b['strict_score']:>7.2%}"
            )
    lines += ["", "  reasons: " + ", ".join(f"{k} {v}" for k, v in s.reasons.items())]
    if s.attempts:
        lines += ["", *_attempt_lines(s.attempts)]
    if s.execution_metrics:
        lines += ["", *render_lines(s.execution_metrics)]
    ran = [i for i in report.instances if i.execution.get("backend")]
    if ran:
        sources = _count(i.execution.get("gold_source") for i in ran if i.execution.get("gold_source"))
        lines += [
            "",
            f"  Queries executed for {len(ran)} instance(s); gold sources {dict(sources) or 'none temporal'}; "
            f"{s.bytes_processed:,} bytes processed",
        ]
    if s.likely_false_positives:
        lines += [
            "",
            f"  Likely false positives ({len(s.likely_false_positives)}: {s.semantics} passes, strict fails):",
        ]
        lines += [f"    {one_line(i)}" for i in s.likely_false_positives[:20]]
        if len(s.likely_false_positives) > 20:
            lines.append(f"    ... and {len(s.likely_false_positives) - 20} more (see the JSON report)")
    failed = [
        i for i in report.instances if i.score < 1 and i.answer_type is not None and i.reason not in GOLD_ERROR_REASONS
    ]
    if failed:
        lines += ["", f"  Failed ({len(failed)}; reason and detail):"]
        lines += [fit(f"    {one_line(i.instance_id)}: {i.reason}: {_one_line(i.detail)}", width) for i in failed[:20]]
        if len(failed) > 20:
            lines.append(f"    ... and {len(failed) - 20} more (see the JSON or HTML report)")
    if s.gold_errors:
        lines += ["", f"  Gold errors ({len(s.gold_errors)}; the gold's problems, not the model's):"]
        by_id = {i.instance_id: i for i in report.instances}
        lines += [
            fit(f"    {one_line(g)}: {by_id[g].reason}: {_one_line(by_id[g].detail)}", width)
            for g in s.gold_errors[:20]
        ]
    extras = sorted(
        {hint for i in report.instances if i.reason == "missing_extra" and (hint := _pip_hint(i.detail)) is not None}
    )
    if extras:
        count = sum(i.reason == "missing_extra" for i in report.instances)
        lines += ["", f"  {count} instance(s) need an optional extra that is not installed: " + "; ".join(extras)]
    if s.missing:
        lines += ["", f"  Missing predictions ({len(s.missing)}, scored 0): " + _short(s.missing)]
    if s.problems:
        lines += ["", f"  Input problems ({len(s.problems)}):"] + [
            fit(f"    {one_line(p)}", width) for p in s.problems[:20]
        ]
    return "\n".join(lines) + "\n"


def _lite_headline(report: Report) -> list[str]:
    """The Spider2-lite/snow scorer's own two lines: over the instances it graded, and over every gold instance."""
    s = report.summary
    correct = sum(i.score for i in report.instances)
    graded = s.graded or 1
    total = s.gold_instances or 1
    return [
        "",
        "  As Spider2-lite's evaluate.py prints it:",
        f"    Final score: {correct / graded:.4f}, Correct examples: {correct:g}, Total examples: {s.graded}",
        f"    Real score: {correct / total:.4f}, Correct examples: {correct:g}, Total examples: {s.gold_instances}",
    ]


def _one_line(text: str) -> str:
    """A detail on one line: its whitespace runs become one space, its other control characters are shown escaped."""
    return one_line(" ".join(str(text).split()))


def _pip_hint(detail: str) -> str | None:
    start = detail.find("pip install")
    return detail[start:].rstrip(")") if start >= 0 else None


def _attempt_lines(attempts: dict) -> list[str]:
    lines = ["  Attempts (first try through last refinement):"]
    for label, section in attempts.items():
        if label == "validity":
            lines.append(f"    valid   {valid_at_k_text(section['overall']['valid_at_k'])}")
            continue
        m = section["overall"]
        passk = ", ".join(f"pass@{k} {v:.2%}" for k, v in m["pass_at_k"].items())
        recovery = "n/a" if m["recovery_rate"] is None else f"{m['recovery_rate']:.2%}"
        lines.append(
            f"    {label:<7} Pass@1 {m['pass_at_1']:.2%}  Pass@final {m['pass_at_final']:.2%}  "
            f"gain {m['refinement_gain']:+.2%}  recovery {recovery}  regressions {m['n_regressions']}"
            + (f"  ({passk})" if passk else "")
        )
    return lines


def _short(ids, limit=10) -> str:
    ids = [one_line(i) for i in ids]
    return ", ".join(ids[:limit]) + (f" ... (+{len(ids) - limit})" if len(ids) > limit else "")


def write_atomic(path: Path, text: str) -> None:
    """Write a report atomically (`atomic.write_text`): readers never see half a report.  Names from a submission
    may hold bytes that are not UTF-8: they are written as `\\xNN` (`terminal_safe.encodable`)."""
    from evaluators.atomic import write_text

    write_text(path, encodable(text))
