"""The data model every floor shares: gold specs, submission lines, the problems found reading them, and the
two files of one run as loaded.  Frozen dataclasses, no I/O; `loading/` reads the files into them.

It sits on the ground floor (docs/architecture.md) so that `execution/`, `loading/`, `grading/` and the
formats name the same types without importing the readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluators.errors import Location

ANSWER_TYPES = ("answer", "file", "files")


@dataclass(frozen=True)
class Problem:
    location: Location
    message: str
    instance_id: str | None = None
    hint: str | None = None

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


@dataclass(frozen=True)
class Spec:
    func: str
    parameters: dict
    temporal: bool = False


@dataclass(frozen=True)
class GoldInstance:
    instance_id: str
    specs: tuple[Spec, ...]
    metadata: dict
    location: Location
    problem: str | None = None  # set when the line is broken: the instance is then ungradable


@dataclass(frozen=True)
class SubmissionLine:
    instance_id: str
    answer_type: str
    answer: Any  # text, a relative path, or a list of paths; validated by the grader
    location: Location
    attempts: tuple | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Loaded:
    records: dict
    problems: tuple[Problem, ...]
    duplicates: dict  # instance_id -> locations of the lines that lost


@dataclass(frozen=True)
class RunInputs:
    """The gold and the submission of one run, loaded once (`loading/inputs.load_inputs`) and handed from the
    CLI or the API to the run (`grading/run.grade`)."""

    gold: Loaded
    submission: Loaded

    @property
    def work(self) -> list[tuple[GoldInstance, SubmissionLine | None]]:
        """(gold instance, its submission line or None) for every gold instance, in gold order."""
        return [(g, self.submission.records.get(iid)) for iid, g in self.gold.records.items()]
