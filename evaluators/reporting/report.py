"""Report objects: frozen dataclasses rendered to text, JSON and CSV, written atomically."""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path

from evaluators.reporting.report_lines import (  # noqa: F401 (REASONS and GOLD_ERROR_REASONS are read from here too)
    GOLD_ERROR_REASONS,
    REASONS,
    attempt_lines,
    count,
    executed_line,
    lite_headline,
)
from evaluators.terminal_safe import encodable, json_text, one_line

REPORT_VERSION = 2  # 2: score intervals, graded scores, gold errors and provenance in the summary
MIN_WIDTH, MAX_WIDTH = 60, 400  # a narrow or absurd terminal still gets readable lines
ELLIPSIS = "..."


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
        head = json.dumps(
            {"version": REPORT_VERSION, "summary": asdict(self.summary)}, indent=2, ensure_ascii=False, default=str
        )
        lines = list(map(_INSTANCE_JSON.encode, self.instances))
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
            values = row + [i.scores.get(n, "") for n in names] + [i.metadata.get(k, "") for k in keys]
            # `cell` only where it may change something: a fifth of a large report's writing otherwise
            writer.writerow([cell(v) if isinstance(v, str) and v[:1] in _MAY_START else v for v in values])
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
_MAY_START = frozenset((*FORMULA_STARTS, " "))  # a text cell starting otherwise is never changed


def spreadsheet_cell(value):
    """A CSV cell no spreadsheet evaluates: text that starts like a formula (after any spaces) gets a leading
    `'`; numbers, and text that is only a number ("-3.5"), stay as they are."""
    if isinstance(value, str) and value.lstrip(" ").startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _same(value):
    return value


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _plain(value):
    """What `dataclasses.asdict` gives, without its deep copies (the leaves here are immutable)."""
    if type(value) in _LEAVES:  # most of a report's values: no dataclass, dict or sequence checks
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _json_value(value):
    """What `to_dict` makes of a value JSON has no type for: a dataclass its fields (the encoder goes on into
    them), anything else its text.  The instances are written straight from the objects: `_plain`'s copy of
    each, then the encoder's walk over the copy, cost more than grading a small question."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    return str(value)


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


_INSTANCE_JSON = json.JSONEncoder(ensure_ascii=False, default=_json_value)


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
        reasons=dict(sorted(count(i.reason for i in instances).items())),
        attempts=attempt_summary(instances),
        bytes_processed=sum(
            (i.execution.get("bytes_processed") or 0) + (i.execution.get("gold_bytes_processed") or 0)
            for i in instances
        ),
        execution_metrics=_execution_metrics(instances, ves_iterations),
        **_intervals(instances, graded),
        gold_errors=tuple(i.instance_id for i in instances if i.reason in GOLD_ERROR_REASONS),
    )


def _execution_metrics(instances: list, ves_iterations: int) -> dict | None:
    # The report's modules are imported when a report is built, not before the grading: a run's start waits
    from evaluators.reporting.execution_summary import execution_metrics

    return execution_metrics(instances, ves_iterations)


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
    from evaluators.reporting.execution_summary import validity_section

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


def _breakdowns(instances: list[InstanceReport]) -> dict:
    from evaluators.reporting.figures import in_benchmark_order

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
            for label, items in ((label, buckets[label]) for label in in_benchmark_order(buckets))
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
        lines += lite_headline(report)
    for key, buckets in s.breakdowns.items():
        lines += ["", f"  by {one_line(key)}:"]
        for label, b in buckets.items():
            lines.append(
                f"    {one_line(label)[:40]:<42}{b['n']:>6}  score {b['score']:>7.2%}  strict {b['strict_score']:>7.2%}"
            )
    lines += ["", "  reasons: " + ", ".join(f"{k} {v}" for k, v in s.reasons.items())]
    if s.attempts:
        lines += ["", *attempt_lines(s.attempts)]
    if s.execution_metrics:
        from evaluators.reporting.execution_summary import render_lines

        lines += ["", *render_lines(s.execution_metrics)]
    executed = executed_line(report)
    if executed:
        lines += ["", f"  {executed}"]
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


def _one_line(text: str) -> str:
    """A detail on one line: its whitespace runs become one space, its other control characters are shown escaped."""
    return one_line(" ".join(str(text).split()))


def _pip_hint(detail: str) -> str | None:
    start = detail.find("pip install")
    return detail[start:].rstrip(")") if start >= 0 else None


def _short(ids, limit=10) -> str:
    ids = [one_line(i) for i in ids]
    return ", ".join(ids[:limit]) + (f" ... (+{len(ids) - limit})" if len(ids) > limit else "")


def write_atomic(path: Path, text: str) -> None:
    """Write a report atomically (`atomic.write_text`): readers never see half a report.  Names from a submission
    may hold bytes that are not UTF-8: they are written as `\\xNN` (`terminal_safe.encodable`)."""
    from evaluators.atomic import write_text

    write_text(path, encodable(text))
