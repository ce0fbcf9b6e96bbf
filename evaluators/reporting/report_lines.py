"""The words of a report that every rendering shares (terminal text, HTML): what each reason means, the
executed-queries line, Spider2-lite's own headline, the attempts lines.  Below `report.py` and `html.py`, so
neither needs the other (a `Report` is taken as it comes, so this module needs nothing of report.py)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evaluators.reporting.execution_summary import valid_at_k_text

GOLD_ERROR_REASONS = ("invalid_gold", "unknown_func", "invalid_spec", "unreadable_gold")
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
    "memory_limit": "the query's worker passed its memory cap (--memory-limit-mb) and the query was stopped, or a table pair too big for memory could not be compared out of core",
    "disk_limit": "the query wrote more into its private database copy than the run allows",
    "unhashable_result": "BIRD EX: a result holds json or arrays, which the official set() cannot hold: 0",
}


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
