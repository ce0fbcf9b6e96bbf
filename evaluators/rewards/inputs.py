"""What every answer reward shares: its inputs checked where they were written, and its optional libraries
imported only when used, with the extra to install.  A module of its own so that the rewards import it
and the package (`evaluators.rewards`) imports them, never the other way round."""

from __future__ import annotations

from collections.abc import Sequence

# Defined beside query similarity, on the metrics floor that grading imports too.
from evaluators.metrics.similarity import import_optional as import_optional
from evaluators.metrics.similarity import require_str as require_str

INSTALL_HINT = "pip install '.[rewards]'"


def answer_list(answer: object, name: str = "answer") -> list[str]:
    """Return the acceptable answers as a non-empty list of strings.

    A bare string is one acceptable answer; a list or tuple lists several.
    Anything else is rejected rather than coerced, so that a gold of ``5``
    (int) or ``None`` is caught where it was written instead of silently
    becoming the string ``"5"`` or ``"None"``.
    """
    if isinstance(answer, str):
        return [answer]
    if isinstance(answer, Sequence) and not isinstance(answer, (bytes, bytearray)):
        items = list(answer)
        if not items:
            raise ValueError(f"{name} must not be an empty list")
        for i, item in enumerate(items):
            if not isinstance(item, str):
                raise ValueError(f"{name}[{i}] must be a string, got {type(item).__name__}")
        return items
    raise ValueError(f"{name} must be a string or a list of strings, got {type(answer).__name__}")
