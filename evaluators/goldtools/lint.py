"""`gold lint`: everything that would make a gold folder grade wrongly, listed at once with file:line.

Per instance: the line's schema, the spec's parameters (`registry`), the files
it names, `condition_cols` against every gold file, one column list per gold
file, `gold.sql` for temporal specs; then the self-check (`selfcheck`).  The
gold folder is only read.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import Location, SpecError
from evaluators.goldtools import structure
from evaluators.goldtools.selfcheck import self_check
from evaluators.loading.paths import unsafe_instance_id
from evaluators.loading.specs import GOLD_FILE, load_gold
from evaluators.matching import registry
from evaluators.specs import GoldInstance, Problem
from evaluators.tables.read import DEFAULT_MAX_BYTES, TableReader


@dataclass(frozen=True)
class LintResult:
    instances: int
    errors: tuple[Problem, ...]
    warnings: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def flagged(self) -> tuple[str, ...]:
        """The instance ids with at least one error, sorted."""
        return tuple(sorted({p.instance_id for p in self.errors if p.instance_id}))

    def to_text(self) -> str:
        out = [str(p) for p in self.errors] + [f"warning: {p}" for p in self.warnings]
        summary = (
            f"{self.instances} gold instance(s) linted: {len(self.errors)} error(s) in "
            f"{len(self.flagged)} instance(s), {len(self.warnings)} warning(s)"
        )
        if self.flagged:
            summary += "\nflagged: " + ", ".join(self.flagged)
        return "\n".join(out + [summary]) + "\n"


def lint_gold(
    gold_dir, max_file_bytes: int = DEFAULT_MAX_BYTES, run_self_check: bool = True, jobs: int = 1
) -> LintResult:
    gold_dir = Path(gold_dir)
    try:
        loaded = load_gold(gold_dir)
    except SpecError as exc:
        where = exc.location or Location(str(gold_dir / GOLD_FILE))
        return LintResult(0, (Problem(where, exc.message, hint=exc.hint),), ())
    errors, warnings = list(loaded.problems), []
    work = [(gold, gold_dir, max_file_bytes, run_self_check) for gold in loaded.records.values()]
    for found_errors, found_warnings in _lint_all(work, jobs):
        errors += found_errors
        warnings += found_warnings
    warnings += _orphan_folders(gold_dir, loaded.records)
    return LintResult(len(loaded.records), tuple(errors), tuple(warnings))


def _lint_all(work: list, jobs: int) -> list:
    if jobs <= 1 or len(work) < 2:
        return [lint_instance(*args) for args in work]
    size = max(1, min(32, len(work) // (jobs * 4)))  # small chunks keep the processes evenly busy
    chunks = [work[i : i + size] for i in range(0, len(work), size)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return [result for results in pool.map(_lint_chunk, chunks) for result in results]


def _lint_chunk(chunk: list) -> list:
    return [lint_instance(*args) for args in chunk]


def lint_instance(
    gold: GoldInstance, gold_dir: Path, max_file_bytes: int = DEFAULT_MAX_BYTES, run_self_check: bool = True
) -> tuple[list[Problem], list[Problem]]:
    iid = gold.instance_id
    problem = gold.problem or unsafe_instance_id(iid)
    if problem:
        return [Problem(gold.location, problem, iid)], []
    reader = TableReader("unreadable_gold", max_file_bytes)  # shared by every spec and the self-check
    errors, warnings = [], []
    for index, spec in enumerate(gold.specs, start=1):
        label = f"{iid}: spec {index} ({spec.func})" if len(gold.specs) > 1 else f"{iid} ({spec.func})"
        try:
            spec_errors, spec_warnings = _lint_spec(gold, spec, gold_dir, reader, max_file_bytes, run_self_check)
        except Exception as exc:  # a bug of ours: reported on this spec, the lint goes on
            spec_errors, spec_warnings = [f"internal error: {type(exc).__name__}: {exc} (please report this)"], []
        errors += [Problem(gold.location, f"{label}: {m}", iid) for m in spec_errors]
        warnings += [Problem(gold.location, f"{label}: {m}", iid) for m in spec_warnings]
    return errors, warnings


def _lint_spec(gold, spec, gold_dir: Path, reader: TableReader, max_bytes: int, run_self_check: bool):
    try:
        params = registry.check_parameters(spec.func, spec.parameters)
    except ValueError as exc:
        return [str(exc)], []
    found: list[str] = []
    info = registry.lookup(spec.func)
    names = registry.gold_file_names(spec.func, params)
    folder_files = structure.gold_paths(gold_dir, gold.instance_id, names, found)
    if info.gold_tables in structure.CHECKS:
        structure.CHECKS[info.gold_tables](params, folder_files, reader, found)
    if spec.temporal:
        structure.check_temporal(gold_dir / gold.instance_id, max_bytes, found)
    if found or not run_self_check:
        return found, []  # the self-check would only repeat a structural problem, less clearly
    return self_check(gold, spec, params, gold_dir, folder_files, reader, max_bytes)


def _orphan_folders(gold_dir: Path, records: dict) -> list[Problem]:
    """Instance folders without a gold line; `databases` (the default --db-dir) and folders holding a gold
    file of their own (another gold set, like gold/cypher) are not instance folders."""
    return [
        Problem(
            Location(str(path)),
            f"folder {path.name!r} has no line in {GOLD_FILE}",
            path.name,
            hint="add its spec with `gold add`, or remove the folder",
        )
        for path in sorted(gold_dir.iterdir())
        if path.is_dir()
        and not path.name.startswith(".")
        and path.name not in records
        and path.name != "databases"
        and not (path / GOLD_FILE).is_file()
    ]
