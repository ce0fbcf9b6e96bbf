"""Lines as the official scorers read them: `open(path).readlines()` in text mode.

Python's universal newlines end a line at `\\n`, `\\r` or `\\r\\n` only.  `str.splitlines()` also splits at a
form feed, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028` and `\\u2029`; a prediction holding one of those would become
two lines and shift every later prediction against the scorers' pairing.
"""

from __future__ import annotations

import re

_NEWLINE = re.compile(r"\r\n|\r|\n")


def readlines(text: str) -> list[str]:
    """The lines of `text` without their endings, split where `readlines()` splits them."""
    if not text:
        return []
    lines = _NEWLINE.split(text)
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start an empty one
    return lines
