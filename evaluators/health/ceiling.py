"""The achievable ceiling: every gold run as the prediction under a command's official rule.

A perfect model scores what the gold scores against itself, and no more.  Each instance whose gold does not
pass as its own answer is unscoreable, with its cause; an empty gold passes but tells nothing (any empty
answer passes too), so it is counted apart as well.  Two denominators, as published numbers mix them: every
gold instance, and the scoreable ones.
"""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field

from evaluators.reporting.report import GOLD_ERROR_REASONS, InstanceReport, Report

CAUSES = {
    "gold_missing": "the gold (file, line or database) is missing or misnamed",
    "gold_error": "the gold does not run",
    "gold_timeout": "the gold runs past the timeout",
    "empty_gold": "the gold returns no rows, so it tells nothing (e.g. CURRENT_DATE past the data): BIRD and "
    "test-suite pass any empty answer, LiveSQLBench's ex_base fails every answer",
    "fails_own_tests": "the gold fails its own test cases",
    "issue_sql_passes": "BIRD-CRITIC: the issue_sql passes the tests it should fail, so no answer can pass",
    "broken_by_preprocessing": "the scorer's own preprocessing breaks the gold (strict passes it, e.g. remove_distinct)",
    "fails_official_rule": "the gold runs, yet the official rule rejects it as its own answer",
}
_MISSING = ("missing_prediction", "no_database", "missing_gold")


@dataclass(frozen=True)
class Unscoreable:
    instance_id: str
    cause: str
    detail: str


@dataclass(frozen=True)
class Ceiling:
    command: str
    rule: str  # the official preset the golds were graded under
    total: int
    achievable: int  # golds that pass as their own answer (empty golds included where they pass)
    achievable_scoreable: int  # of those, the scoreable ones
    unscoreable: tuple[Unscoreable, ...]
    official: bool = True  # False with --reference-date: the golds ran against a fixed date, not today
    reference_date: str | None = None
    provenance: dict = field(default_factory=dict)

    @property
    def scoreable(self) -> int:
        return self.total - len(self.unscoreable)

    def causes(self) -> dict[str, int]:
        counts = {cause: 0 for cause in CAUSES}
        for item in self.unscoreable:
            counts[item.cause] += 1
        return {cause: n for cause, n in counts.items() if n}

    def to_dict(self) -> dict:
        return {
            "command": self.command,
            "rule": self.rule,
            "official": self.official,
            "reference_date": self.reference_date,
            "gold_instances": self.total,
            "achievable": self.achievable,
            "ceiling": _ratio(self.achievable, self.total),
            "scoreable": self.scoreable,
            "ceiling_scoreable": _ratio(self.achievable_scoreable, self.scoreable),
            "causes": self.causes(),
            "cause_words": {cause: CAUSES[cause] for cause in self.causes()},
            "unscoreable": [asdict(u) for u in self.unscoreable],
            "provenance": self.provenance,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_text(self) -> str:
        d = self.to_dict()
        lines = [
            f"doctor {self.command} ({self.rule}{'' if self.official else ', NOT OFFICIAL: golds run at ' + str(self.reference_date)}):",
            f"  ceiling {d['ceiling']:.4f} = {self.achievable}/{self.total} gold instances pass as their own answer",
            f"  ceiling {d['ceiling_scoreable']:.4f} = {self.achievable_scoreable}/{self.scoreable} over the scoreable ones",
        ]
        lines += [f"  {n} {cause}: {CAUSES[cause]}" for cause, n in self.causes().items()]
        lines += [f"    {u.instance_id}: {u.cause}: {u.detail[:200]}" for u in self.unscoreable[:50]]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        d = self.to_dict()
        rows = "".join(
            f"<tr><td>{_e(u.instance_id)}</td><td>{_e(u.cause)}</td><td>{_e(u.detail)}</td></tr>"
            for u in self.unscoreable
        )
        causes = "".join(f"<li>{n} <b>{_e(c)}</b>: {_e(CAUSES[c])}</li>" for c, n in self.causes().items())
        note = "" if self.official else f"<p><b>Not official:</b> golds run at {_e(str(self.reference_date))}.</p>"
        return (
            "<!doctype html><html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'>"
            f"<title>doctor {_e(self.command)}</title><style>body{{font-family:sans-serif;max-width:60em;margin:1em auto;"
            "padding:0 1em}td,th{border-bottom:1px solid #ccc;padding:.2em .5em;text-align:left;overflow-wrap:anywhere}"
            "table{border-collapse:collapse;width:100%}</style></head><body>"
            f"<h1>Ceiling: {_e(self.command)} ({_e(self.rule)})</h1>{note}"
            f"<p>{d['ceiling']:.4f} = {self.achievable}/{self.total} gold instances; "
            f"{d['ceiling_scoreable']:.4f} = {self.achievable_scoreable}/{self.scoreable} scoreable.</p>"
            f"<ul>{causes}</ul><table><tr><th>instance</th><th>cause</th><th>detail</th></tr>{rows}</table>"
            "</body></html>\n"
        )


def _e(text: str) -> str:
    return html.escape(str(text))


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def cause_of(instance: InstanceReport, empty: bool) -> tuple[str, str] | None:
    """Why the gold, as its own answer, leaves this instance unscoreable; None: it is scoreable."""
    words = f"{instance.reason}: {instance.detail}"
    if empty:
        return "empty_gold", "the gold returns no rows" + ("" if instance.score >= 1 else f" ({words})")
    if instance.score >= 1:
        return None
    if instance.reason == "issue_sql_passed":
        return "issue_sql_passes", words
    if instance.reason in _MISSING or (instance.reason in GOLD_ERROR_REASONS and _says_missing(instance.detail)):
        return "gold_missing", words
    if instance.reason == "timeout" or "(timeout)" in instance.detail:
        return "gold_timeout", words
    if instance.reason in ("exec_error", *GOLD_ERROR_REASONS):
        return "gold_error", words
    if instance.strict_score >= 1:
        return "broken_by_preprocessing", f"{words} (strict, without the preprocessing, passes)"
    if instance.reason == "test_failed":
        return "fails_own_tests", words
    return "fails_official_rule", words


def _says_missing(detail: str) -> bool:
    lowered = detail.lower()
    return any(word in lowered for word in ("no such file", "not found", "missing", "does not exist"))


def ceiling_of(command: str, rule: str, report: Report, empty: set[str], reference_date: str | None) -> Ceiling:
    unscoreable, scoreable_passes = [], 0
    for instance in report.instances:
        found = cause_of(instance, instance.instance_id in empty)
        if found is not None:
            unscoreable.append(Unscoreable(instance.instance_id, *found))
        elif instance.score >= 1:
            scoreable_passes += 1
    return Ceiling(
        command,
        rule,
        len(report.instances),
        sum(1 for i in report.instances if i.score >= 1),
        scoreable_passes,
        tuple(unscoreable),
        official=reference_date is None,
        reference_date=reference_date,
        provenance=dict(report.summary.provenance or {}),
    )
