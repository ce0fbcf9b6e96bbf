"""The one entry point that reads a run's two files: the gold folder's specs and the submission folder's
answers, in the layout asked for.  The CLI, the Python API and a Ray run all load through here, once."""

from __future__ import annotations

from pathlib import Path

from evaluators.loading.specs import load_gold
from evaluators.loading.submissions import check_folders, load_submission_in
from evaluators.specs import RunInputs


def load_inputs(result_dir: Path, gold_dir: Path, layout: str = "nested", max_bytes: int | None = None) -> RunInputs:
    """`max_bytes`: the size cap of the submission's metadata file (--max-file-mb; None: the default cap)."""
    check_folders(Path(result_dir), Path(gold_dir), layout)
    submission = load_submission_in(Path(result_dir), layout, *([max_bytes] if max_bytes else []))
    return RunInputs(load_gold(Path(gold_dir)), submission)
