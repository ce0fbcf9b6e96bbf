"""Text from a submission, a database or an engine, made harmless for a terminal.

A file name, an instance id or an engine's error message can hold ESC, BEL, CSI/OSC sequences, C1 controls
or bidirectional overrides: printed raw, they clear the screen, set the window title, hide lines or print a
fake green "ALL TESTS PASSED" (OSC sequences act even when stdout is piped into a log that is later `cat`).
Every line the CLI prints goes through `terminal_text` (the CLI's `echo`), so no path can forget it; the
fields a report builds from untrusted text go through `one_line` too, so a newline inside a file name cannot
start a line of its own.  Characters are shown escaped (`\\x1b`, `\\u202e`), never dropped, so the reader
still sees what the submission held.  A file name's undecodable bytes (surrogate escapes) show as `\\xNN`.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # marks, embeddings, overrides, isolates
_LINES = "\u2028\u2029\u0085"  # line and paragraph separators some terminals break on
_SURROGATES = "\ud800-\udfff"  # undecodable bytes of a file name (os.fsdecode's surrogateescape)
# Every control character but tab and newline, DEL, C1, and the characters above.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_LINES}{_SURROGATES}]")
_UNSAFE_IN_A_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_LINES}{_SURROGATES}]")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}{_LINES}{_SURROGATES}]")  # json.dumps escapes C0 itself


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8: show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    """`text` with every control character except newline and tab shown escaped: what the CLI prints."""
    return _UNSAFE.sub(_escaped, str(text))


def one_line(text: object) -> str:
    """Untrusted text for one field of one line: newlines, tabs and carriage returns shown escaped too."""
    return _UNSAFE_IN_A_LINE.sub(_escaped, str(text))


def json_text(text: str) -> str:
    """JSON text (written with `ensure_ascii=False`) safe for a terminal and still the same JSON: the characters
    `json.dumps` leaves raw (DEL, C1, bidi controls, separators, lone surrogates) become `\\uXXXX` escapes,
    which only ever occur inside strings."""
    if text.isascii() and "\x7f" not in text:  # most reports: two scans in C instead of one by the regex
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile(f"[{_SURROGATES}]")


def encodable(text: str) -> str:
    """`text` that UTF-8 can write: a file name's undecodable bytes become `\\xNN`, other lone surrogates
    `\\uXXXX` (a report file must never fail to be written because of a name in the submission)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_escaped, text)
