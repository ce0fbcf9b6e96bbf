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
from evaluators.specs import RunInputs

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


def prepare(
    result_dir: Path,
    gold_dir: Path,
    layout: str,
    jobs: int | str,
    ray_address: str | None = None,
    max_bytes: int | None = None,
) -> RunInputs:
    """The one entry point of a run's start: load its two files (`loading/inputs.py`; `max_bytes`: the
    metadata's size cap, --max-file-mb) and, when it grades in this process (no Ray, one job), start the
    worker it will need.  The CLI calls it before the heavy imports, `grading/run.grade` when it is not
    handed the inputs: either way once per run."""
    from evaluators.loading.inputs import load_inputs

    inputs = load_inputs(result_dir, gold_dir, layout, max_bytes)
    if ray_address is None and resolve_jobs(jobs, len(inputs.gold.records)) <= 1:
        warm_for(inputs.work)
    return inputs


def warm_from_folders(
    result_dir: Path,
    gold_dir: Path,
    layout: str,
    jobs: int | str,
    ray_address: str | None = None,
    max_bytes: int | None = None,
) -> RunInputs | None:
    """`prepare` for the CLI, which has not checked its other flags yet: None when the files cannot be
    loaded, so that the run says why, after those checks, as it always has."""
    from evaluators.errors import EvalError

    try:
        return prepare(result_dir, gold_dir, layout, jobs, ray_address, max_bytes)
    except (EvalError, OSError):
        return None


def _engine(gold, line) -> str | None:
    answer = line.answer.lower() if line is not None and isinstance(line.answer, str) else ""
    if answer.endswith(DUCKDB_SUFFIXES) or any(registry.gold_tables(s.func) == "duckdb" for s in gold.specs):
        return "duckdb"
    if answer.endswith(QUERY_SUFFIXES) or any(s.temporal or registry.is_sql_func(s.func) for s in gold.specs):
        return canonical_name(gold.metadata.get("type"))
    return None
