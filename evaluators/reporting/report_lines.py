"""The words of a report that every rendering shares (terminal text, HTML): what each reason means, the
executed-queries line, Spider2-lite's own headline, the attempts lines.  Below `report.py` and `html.py`, so
neither needs the other (a `Report` is taken as it comes, so this module needs nothing of report.py)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evaluators.reasons import GOLD_ERROR_REASONS as GOLD_ERROR_REASONS  # read from here (report.py)
from evaluators.reasons import MEANINGS
from evaluators.reporting.execution_summary import valid_at_k_text

REASONS: dict[str, str] = {
    str(reason): words for reason, words in MEANINGS.items()
}  # what each reason means, the words every rendering shows


def count(values) -> dict:
    counts: dict = defaultdict(int)
    for v in values:
        counts[v] += 1
    return dict(counts)


def executed_line(report: Any) -> str:
    """How many instances ran queries, where their gold came from, and BigQuery's bytes; "" when none ran."""
    ran = [i for i in report.instances if i.execution.get("backend")]
    if not ran:
        return ""
    sources = count(i.execution.get("gold_source") for i in ran if i.execution.get("gold_source"))
    named = ", ".join(f"{source} {n}" for source, n in sorted(sources.items()))
    return (
        f"Queries executed for {len(ran)} instance(s); gold sources {named or 'none temporal'}; "
        f"{report.summary.bytes_processed:,} bytes processed"
    )


def lite_headline(report: Any) -> list[str]:
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


def attempt_lines(attempts: dict) -> list[str]:
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
