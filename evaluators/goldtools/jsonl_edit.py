"""Rewriting a jsonl file line by line, atomically: an interrupted edit leaves the old file whole.

Lines that are not touched are kept byte for byte (broken ones included: a
tool must not lose what it does not understand), and so are a leading BOM and
CRLF line ends.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from evaluators.atomic import write_text
from evaluators.errors import Location, SpecError

_LINES = re.compile(r"[^\n]*\n|[^\n]+$")


def to_line(obj: dict) -> str:
    """One jsonl line; NaN and Infinity are refused because the loaders refuse them."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False)


def rewrite_jsonl(path: Path, new_lines: dict[str, str]) -> None:
    """Put `new_lines` (instance_id -> line) in place of every line naming those ids, or append them."""
    path = Path(path)
    text = _read_text(path)
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom) :]
    newline = "\r\n" if "\r\n" in text else "\n"
    kept, placed = [], set()
    for raw in _LINES.findall(text):
        iid = line_id(raw)
        if iid in new_lines:
            if iid not in placed:  # the first line of that id takes the new text; its duplicates go
                kept.append(new_lines[iid] + newline)
                placed.add(iid)
            continue
        kept.append(raw)
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += newline
    kept += [line + newline for iid, line in new_lines.items() if iid not in placed]
    mode = path.stat().st_mode & 0o777 if path.exists() else None  # keep the file as readable as it was
    write_text(path, bom + "".join(kept), mode)


def line_id(raw: str) -> str | None:
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    iid = obj.get("instance_id") if isinstance(obj, dict) else None
    return iid if isinstance(iid, str) else None


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"not UTF-8 text (byte {exc.start}); refusing to rewrite it",
            Location(str(path)),
            hint="fix or re-save the file as UTF-8 first",
        ) from None
