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
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import Location, SpecError, UsageError
from evaluators.specs import Problem


@dataclass(frozen=True)
class GoldLine:
    sql: str
    db_id: str
    location: Location


@dataclass(frozen=True)
class PredictionValue:
    key: str
    value: object  # as the JSON holds it: a string, or anything else the official script turns into " "
    location: Location


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


def read_predictions(path: Path) -> list[PredictionValue]:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = Location(str(path), getattr(exc, "lineno", None), getattr(exc, "colno", None))
        raise SpecError(f"the predictions are not a JSON object: {exc}", where) from None
    if not isinstance(data, dict):
        raise SpecError(
            'the predictions must be a JSON object {"0": "SQL\\t----- bird -----\\tdb", ...}', Location(str(path))
        )
    lines = _key_lines(text, list(data))
    return [PredictionValue(str(k), v, Location(str(path), lines.get(k))) for k, v in data.items()]


def _key_lines(text: str, keys: list) -> dict:
    """The line each key starts on (for messages), found by scanning for `"key":` in order."""
    found, position = {}, 0
    for key in keys:
        at = text.find(json.dumps(key), position)
        if at >= 0:
            found[key] = text.count("\n", 0, at) + 1
            position = at + 1
    return found


def read_gold(path: Path, problems: list[Problem]) -> list[GoldLine | None]:
    """Every line of the gold file; one without exactly `SQL<TAB>db_id` is None and a gold problem (the
    official script stops there)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the gold file: {exc}", Location(str(path))) from None
    out: list[GoldLine | None] = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.strip().split("\t")
        where = Location(str(path), number)
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            problems.append(
                Problem(where, f"gold line has {len(fields)} tab-separated field(s), expected SQL<TAB>db_id")
            )
            out.append(None)
            continue
        out.append(GoldLine(fields[0], fields[1], where))
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
    except json.JSONDecodeError:
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
        out.append(item if isinstance(item, dict) else {})
    return out


def database_path(db_root: Path, db_id: str) -> Path | None:
    """`<db_root>/<db_id>/<db_id>.sqlite`, or None when the id cannot name a folder."""
    if not db_id or db_id in (".", "..") or "/" in db_id or "\\" in db_id:
        return None
    return Path(db_root) / db_id / f"{db_id}.sqlite"
