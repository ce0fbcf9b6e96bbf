"""Starting a local engine's worker early, so its start-up overlaps the grading instead of delaying it.

A worker is a fresh Python process that imports its driver (DuckDB, with pandas for reading tables):
about half a second.  The CLI looks at the two jsonl files before it imports the grading (which takes
as long again), and starts one idle worker when some instance will need a local engine.  This module
imports nothing heavy.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.execution.backends import canonical_name
from evaluators.grading.jobs import resolve_jobs
from evaluators.loading.checks import DUCKDB_SUFFIXES, QUERY_SUFFIXES
from evaluators.matching import registry

WARM = {
    "duckdb": ("duckdb", "pandas", "evaluators.execution.backends.duckdb_backend"),
    "sqlite": ("pandas", "evaluators.execution.backends.sqlite_backend"),
}


def warm_for(work: list) -> None:
    """`work`: (gold instance, submission line or None) pairs, as the run grades them."""
    engine = next((e for gold, line in work if (e := _engine(gold, line)) in WARM), None)
    if engine is not None:
        from evaluators.execution import worker

        worker.prestart(WARM[engine])


def warm_from_folders(
    result_dir: Path, gold_dir: Path, layout: str, jobs: int | str, max_bytes: int | None = None
) -> tuple | None:
    """The same, from the folders, for a run in this process.  Returns the (gold, submission) it loaded, for
    the run to grade without reading them again; None when they cannot be loaded (the run says why)."""
    from evaluators.errors import EvalError
    from evaluators.loading.specs import load_gold
    from evaluators.loading.submissions import load_submission_in

    try:
        gold = load_gold(Path(gold_dir))
        submission = load_submission_in(Path(result_dir), layout, *([max_bytes] if max_bytes else []))
    except (EvalError, OSError):
        return None
    if resolve_jobs(jobs, len(gold.records)) <= 1:
        warm_for([(g, submission.records.get(iid)) for iid, g in gold.records.items()])
    return gold, submission


def _engine(gold, line) -> str | None:
    answer = line.answer.lower() if line is not None and isinstance(line.answer, str) else ""
    if answer.endswith(DUCKDB_SUFFIXES) or any(registry.gold_tables(s.func) == "duckdb" for s in gold.specs):
        return "duckdb"
    if answer.endswith(QUERY_SUFFIXES) or any(s.temporal or registry.is_sql_func(s.func) for s in gold.specs):
        return canonical_name(gold.metadata.get("type"))
    return None
