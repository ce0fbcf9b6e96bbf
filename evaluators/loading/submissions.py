"""Submission layouts: where the answers of a submission folder are found.

`nested` (the default) is this project's format: `results_metadata.jsonl`
plus one folder per instance.  `flat` is the Spider2-lite/snow suite's:
`<id>.csv` (a result table) or `<id>.sql` (a query) side by side, no metadata
file.  A flat folder becomes the same `SubmissionLine` records, each a `file`
answer whose path `paths.answer_path(..., flat=True)` resolves to
`<result_dir>/<id>.<ext>`, so everything downstream is shared.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.errors import Location, SpecError, UsageError
from evaluators.loading.specs import DEFAULT_MAX_METADATA_BYTES, GOLD_FILE, SUBMISSION_FILE, load_submission
from evaluators.matching.semantics import did_you_mean
from evaluators.specs import Loaded, Problem, SubmissionLine

LAYOUTS = ("nested", "flat")
FLAT_SUFFIXES = (".csv", ".sql")  # when both exist for one id, the CSV is graded: it needs no database


def load_submission_in(result_dir: Path, layout: str = "nested", max_bytes: int = DEFAULT_MAX_METADATA_BYTES) -> Loaded:
    """`max_bytes`: the size cap of the metadata file, as for answers (--max-file-mb)."""
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}", hint=did_you_mean(layout, LAYOUTS))
    return load_submission(result_dir, max_bytes) if layout == "nested" else load_flat_submission(result_dir)


def check_folders(result_dir: Path, gold_dir: Path | None, layout: str = "nested") -> None:
    """The two usual slips, said before anything is read (UsageError, exit 2): --result-dir and --gold-dir
    swapped, and a flat Spider2-lite folder (<instance_id>.csv side by side) graded without --layout flat.
    Otherwise both would read as a missing results_metadata.jsonl, which names neither."""
    result, gold = Path(result_dir), Path(gold_dir) if gold_dir is not None else None
    if gold is not None and (result / GOLD_FILE).is_file() and not (gold / GOLD_FILE).is_file():
        raise UsageError(
            f"--result-dir and --gold-dir look swapped: {result} holds the gold ({GOLD_FILE}) and {gold} does not",
            hint=f"swap them: --result-dir {gold} --gold-dir {result}",
        )
    if layout == "nested" and result.is_dir() and not (result / SUBMISSION_FILE).exists():
        answers = [path for path in result.iterdir() if path.suffix.lower() in FLAT_SUFFIXES and path.is_file()]
        if answers:
            raise UsageError(
                f"{result} has no {SUBMISSION_FILE} but {len(answers)} answer file(s) side by side "
                f"(e.g. {answers[0].name}): Spider2-lite's flat layout",
                hint="add --layout flat to grade <instance_id>.csv / <instance_id>.sql files",
            )


def load_flat_submission(result_dir: Path) -> Loaded:
    folder = Path(result_dir)
    if not folder.is_dir():
        raise SpecError("not a folder", Location(str(folder)))
    found: dict[str, dict[str, Path]] = {}
    problems: list[Problem] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        suffix = path.suffix.lower()
        if suffix in FLAT_SUFFIXES and path.stem and not path.is_dir():
            found.setdefault(path.stem, {})[suffix] = path
        else:
            problems.append(_ignored(path))
    records = {iid: _flat_line(iid, by_suffix, problems) for iid, by_suffix in found.items()}
    return Loaded(records, tuple(problems), {})


def _flat_line(instance_id: str, by_suffix: dict, problems: list) -> SubmissionLine:
    path = by_suffix.get(".csv") or by_suffix[".sql"]
    if len(by_suffix) > 1:
        problems.append(
            Problem(
                Location(str(by_suffix[".sql"])),
                f"both {instance_id}.csv and {instance_id}.sql exist; the CSV is graded",
                instance_id,
                hint="keep one answer per instance",
            )
        )
    return SubmissionLine(instance_id, "file", path.name, Location(str(path)))


def _ignored(path: Path) -> Problem:
    if path.name == SUBMISSION_FILE:
        return Problem(
            Location(str(path)),
            f"{SUBMISSION_FILE} is ignored in the flat layout",
            hint="drop --layout flat to grade it (the nested layout)",
        )
    what = "folder" if path.is_dir() else "file"
    return Problem(
        Location(str(path)),
        f"{what} ignored: the flat layout reads only <instance_id>.csv and <instance_id>.sql",
        hint="remove it or use the nested layout",
    )
