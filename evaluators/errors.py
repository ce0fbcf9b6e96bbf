"""One error family for the whole harness.

Every error a user can cause carries an exit code and, where it has one, the
place (file, line, column) it came from.  The CLI catches `EvalError` in one
place and turns it into a one-line message and the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_GRADED = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


@dataclass(frozen=True)
class Location:
    path: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        parts = [self.path]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


class EvalError(Exception):
    """Base class: a problem the user can fix; `exit_code` says how the CLI exits."""

    exit_code = EXIT_USAGE
    label = "error: "  # how the CLI introduces the message

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        return f"{text} (hint: {self.hint})" if self.hint else text


class Failed(EvalError):
    """The work was done and its outcome is the failure the caller asked to hear about (exit 1): a score
    below --fail-under, problems found by `validate`, `gold lint` or an import.  What failed is already
    printed; the message says why the exit is 1."""

    exit_code = EXIT_BELOW_THRESHOLD
    label = ""


class GoldErrors(EvalError):
    """The gold itself is broken (exit 2): the gold's problems, not the model's."""


class SpecError(EvalError):
    """The gold spec file or the submission metadata cannot be read as a whole."""


class UsageError(EvalError):
    """Bad command-line input: unknown semantics, missing folder, ..."""


class MissingExtra(EvalError, ImportError):
    """An optional dependency is needed for this instance but not installed (an ImportError too, so code
    that guards an optional import keeps working); graded instances get the reason `missing_extra`."""

    def __init__(self, package: str, extra: str):
        super().__init__(f"{package} is not installed", hint=f"pip install '.[{extra}]'")
        self.extra = extra


class InstanceError(Exception):
    """Raised inside grading of one instance; becomes that instance's reason.

    `reason` is a code of `evaluators.reasons.Reason`; `detail` is the words.
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
