"""BIRD's own files, read as the official scripts read them, with every problem said with its place.

- predictions: a JSON object `{"0": "SQL\\t----- bird -----\\tdb_id", ...}`, the file itself (mini-dev's
  `--predicted_sql_path`) or a folder holding `predict_<data_mode>.json` (BIRD dev's); paired with the
  gold by position, in the object's order, as the scripts' `zip` pairs them;
- gold: `SQL<TAB>db_id` a line, the file (mini-dev) or a folder holding `<data_mode>_gold.sql` (dev);
- questions (`--diff_json_path`): a JSON array (dev.json) or JSON lines (mini-dev), for `difficulty`,
  `question_id` and the rest of the metadata;
- databases: `<db_root>/<db_id>/<db_id>.sqlite`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import Location, SpecError, UsageError
from evaluators.loading import pairing
from evaluators.loading.lines import readlines
from evaluators.loading.pairing import GoldLine
from evaluators.loading.paths import read_untrusted
from evaluators.loading.specs import MAX_JSON_DEPTH, MIN_MAX_METADATA_BYTES, too_deep
from evaluators.specs import Problem

DATABASE_LAYOUT = "{db}/{db}.sqlite"  # under --db_root_path
MAX_PREDICTIONS_BYTES = MIN_MAX_METADATA_BYTES  # 256 MiB: BIRD dev's 1,534 queries are well under 1 MiB


@dataclass(frozen=True)
class PredictionValue:
    key: str
    value: object  # as the JSON holds it: a string, or anything else the official script turns into " "
    location: Location
    problem: str | None = None  # a value that could not be read (nested too deeply): graded as " "


@dataclass
class BirdInputs:
    predictions: list[PredictionValue]
    gold: list[GoldLine | None]
    questions: list[dict] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def resolve(path: Path, data_mode: str, name: str) -> Path:
    """The file itself, or the official name inside a folder."""
    path = Path(path)
    if path.is_dir():
        path = path / name.format(mode=data_mode)
    if not path.is_file():
        raise UsageError(f"{path}: no such file", hint=f"expected {name.format(mode=data_mode)} or its folder")
    return path


def read_predictions(path: Path, named: bool = True) -> list[PredictionValue]:
    """The predictions object, key by key in the file's order, with the line each key starts on.

    Read as every submitted file is (`paths.read_untrusted`: a regular file, no FIFO or device, at most
    `MAX_PREDICTIONS_BYTES`); a file the operator `named` is followed to where it is, the official name
    inside a folder must not be a link.  One pass over the text (linear in its size): a value nested
    too deeply to decode is that key's problem, not the run's."""
    text = _read_text(Path(path), named)
    try:
        pairs = _top_level_pairs(text)
    except (json.JSONDecodeError, ValueError) as exc:
        where = Location(str(path), getattr(exc, "lineno", None), getattr(exc, "colno", None))
        raise SpecError(f"the predictions are not a JSON object: {exc}", where) from None
    if pairs is None:
        raise SpecError(
            'the predictions must be a JSON object {"0": "SQL\\t----- bird -----\\tdb", ...}', Location(str(path))
        )
    values: dict = {}
    lines: dict = {}
    for key, value, line in pairs:  # json.loads' dict: a repeated key keeps its first place and last value
        values[key] = value
        lines.setdefault(key, line)
    return [_prediction(k, v, Location(str(path), lines[k])) for k, v in values.items()]


def _read_text(path: Path, named: bool) -> str:
    if named:  # the operator's own argument: followed to the file it names, which is then checked
        path = path.resolve()
    data = read_untrusted(path.parent, path.name, MAX_PREDICTIONS_BYTES, "predictions file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"the predictions are not UTF-8 (byte {exc.start})", Location(str(path))) from None


class _TooDeep:
    """The value of a key that nests more than MAX_JSON_DEPTH levels."""


def _prediction(key: str, value: object, where: Location) -> PredictionValue:
    if isinstance(value, _TooDeep):
        return PredictionValue(key, None, where, f"nested more than {MAX_JSON_DEPTH} levels deep; graded as ' '")
    return PredictionValue(key, value, where)


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()  # as json.loads decodes
# json's own pieces (C code), untyped in typeshed: a string from after its quote, a value from an index.
_SCAN_STRING = json.decoder.scanstring  # type: ignore[attr-defined]
_SCAN_VALUE = _DECODER.scan_once  # type: ignore[attr-defined]


def _space_end(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    return found.end() if found else at


def _top_level_pairs(text: str) -> list[tuple[str, object, int]] | None:
    """(key, value, line) of the top-level object in one left-to-right pass; None when the JSON is not an
    object.  Lines are counted as the scan moves on, so the whole is linear in the text's size."""
    at = _space_end(text, 0)
    if not text.startswith("{", at):
        try:
            _DECODER.decode(text)  # the error of a broken file, or a valid non-object: None below
        except RecursionError:
            pass  # a deeply nested array is no object either
        return None
    pairs: list[tuple[str, object, int]] = []
    line, counted = 1, 0
    at = _space_end(text, at + 1)
    if text.startswith("}", at):
        return _end(text, at + 1, pairs)
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        line += text.count("\n", counted, at)
        counted = at
        key, at = _SCAN_STRING(text, at + 1)
        at = _space_end(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _space_end(text, at + 1)
        value, at = _value(text, at)
        pairs.append((key, value, line))
        at = _space_end(text, at)
        if text.startswith("}", at):
            return _end(text, at + 1, pairs)
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _space_end(text, at + 1)


def _end(text: str, at: int, pairs: list) -> list:
    if _space_end(text, at) != len(text):
        raise json.JSONDecodeError("Extra data", text, at)
    return pairs


_BRACKET_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _value(text: str, at: int) -> tuple[object, int]:
    """One JSON value from `at` and where it ends; `_TooDeep()` when it nests past what is decoded."""
    try:
        value, end = _SCAN_VALUE(text, at)
    except StopIteration as exc:
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    except RecursionError:
        return _TooDeep(), _skip_nested(text, at)
    if too_deep(value):
        return _TooDeep(), end
    return value, end


def _skip_nested(text: str, at: int) -> int:
    """Where the bracketed value starting at `at` ends (strings skipped whole), without decoding it."""
    depth = 0
    for match in _BRACKET_OR_STRING.finditer(text, at):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise json.JSONDecodeError("Unterminated value", text, at)


def read_gold(path: Path, problems: list[Problem]) -> list[GoldLine | None]:
    """Every line of the gold file; one without exactly `SQL<TAB>db_id` is None and a gold problem (the
    official script stops there)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the gold file: {exc}", Location(str(path))) from None
    out: list[GoldLine | None] = []
    for number, line in enumerate(readlines(text), 1):
        where = Location(str(path), number)
        out.append(pairing.gold_line(line.strip(), where, problems))
    return out


def read_questions(path: Path | None, problems: list[Problem]) -> list[dict]:
    """dev.json (an array) or mini-dev's JSON lines; [] without a file."""
    if path is None:
        return []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the questions: {exc}", Location(str(path))) from None
    try:
        data = json.loads(text)
        if isinstance(data, list):
            return [q if isinstance(q, dict) else {} for q in data]
    except (json.JSONDecodeError, RecursionError):
        pass
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(Location(str(path), number, exc.colno), f"not JSON: {exc.msg}"))
            item = {}
        except RecursionError:
            problems.append(Problem(Location(str(path), number), "not JSON: nested too deeply"))
            item = {}
        out.append(item if isinstance(item, dict) else {})
    return out


def database_path(db_root: Path, db_id: str) -> Path | None:
    """`<db_root>/<db_id>/<db_id>.sqlite`, or None when the id cannot name a folder."""
    if not db_id or db_id in (".", "..") or "/" in db_id or "\\" in db_id:
        return None
    return Path(db_root) / DATABASE_LAYOUT.format(db=db_id)
