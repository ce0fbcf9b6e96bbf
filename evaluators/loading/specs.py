"""Reading the two jsonl files: gold specs and submission metadata.

Each line becomes one record or one `Problem` with its `file:line`; a bad line
never stops the others from loading (the types: `evaluators/specs.py`).  Only a file that cannot be opened or
decoded at all raises `SpecError` (exit code 2).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.errors import Location, SpecError
from evaluators.loading.paths import read_untrusted
from evaluators.specs import ANSWER_TYPES, GoldInstance, Loaded, Problem, Spec, SubmissionLine

GOLD_FILE = "spider2_eval.jsonl"
SUBMISSION_FILE = "results_metadata.jsonl"
MAX_JSON_DEPTH = 100  # lists and objects inside each other; no answer or spec needs more
# The metadata's size cap: 256 MiB (a million lines of short answers), or --max-file-mb when that is more.
MIN_MAX_METADATA_BYTES = 256 * 1024**2
DEFAULT_MAX_METADATA_BYTES = MIN_MAX_METADATA_BYTES
_ID_PATTERN = re.compile(r'"instance_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def iter_json_lines(path: Path, raw: bytes | None = None) -> Iterator[tuple[Location, Any, str | None]]:
    """Yield (location, object or None, error or None) for each non-blank line (of `raw` when given: the
    bytes already read from `path`)."""
    for where, obj, error, _ in _json_lines(path, raw):
        yield where, obj, error


def _json_lines(path: Path, raw: bytes | None) -> Iterator[tuple[Location, Any, str | None, str]]:
    """(location, object or None, error or None, the line's text) for each non-blank line."""
    if raw is None:
        raw = _read_trusted(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            f"not UTF-8 text (byte {exc.start})", Location(str(path), bad_line), hint="save the file as UTF-8"
        ) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = Location(str(path), number)
        try:
            obj = json.loads(line, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError) as exc:
            column = getattr(exc, "colno", None)
            yield Location(str(path), number, column), None, f"invalid JSON: {getattr(exc, 'msg', exc)}", line
            continue
        except RecursionError:  # json's decoder recurses once per level
            yield where, None, f"invalid JSON: nested more than {MAX_JSON_DEPTH} levels deep", line
            continue
        if too_deep(obj):
            yield where, None, f"invalid JSON: nested more than {MAX_JSON_DEPTH} levels deep", line
            continue
        yield where, obj, None, line


def _read_trusted(path: Path) -> bytes:
    """The operator's own file (the gold): read by its name."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SpecError("file not found", Location(str(path))) from None
    except IsADirectoryError:
        raise SpecError("is a folder, expected a jsonl file", Location(str(path))) from None


def too_deep(obj: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `obj` nests lists and objects more than `limit` levels (walked without recursion): what
    the decoder let through must not make a later repr, copy or pickle recurse past Python's limit."""
    level = [obj] if isinstance(obj, dict | list) else []
    for _ in range(limit):
        if not level:
            return False
        level = [child for item in level for child in _children(item) if isinstance(child, dict | list)]
    return bool(level)


def _children(container: dict | list):
    return container.values() if isinstance(container, dict) else container


def _guess_id(line: str) -> str | None:
    """The instance_id a broken line seems to be about (its own text, already split: no second read)."""
    found = _ID_PATTERN.search(line)
    return found.group(1) if found else None


def _instance_id(obj: Any) -> str | None:
    if isinstance(obj, dict) and isinstance(obj.get("instance_id"), str) and obj["instance_id"].strip():
        return obj["instance_id"]
    return None


def _parse_spec(obj: Any) -> Spec:
    if not isinstance(obj, dict):
        raise ValueError(f"a spec must be an object, got {type(obj).__name__}")
    unknown = set(obj) - {"func", "parameters", "temporal"}
    if unknown:
        raise ValueError(f"unknown spec key(s) {sorted(unknown)}; a spec has func, parameters, temporal")
    if not isinstance(obj.get("func"), str):
        raise ValueError("spec 'func' must be a string")
    params = obj.get("parameters", {})
    if not isinstance(params, dict):
        raise ValueError("spec 'parameters' must be an object")
    temporal = obj.get("temporal", False)
    if not isinstance(temporal, bool):
        raise ValueError("spec 'temporal' must be true or false")
    return Spec(obj["func"], params, temporal)


def _gold_instance(obj: dict, where: Location) -> GoldInstance:
    iid = obj["instance_id"]
    metadata = {k: v for k, v in obj.items() if k not in ("instance_id", "evaluation")}
    evaluation = obj.get("evaluation")
    try:
        if evaluation is None:
            raise ValueError("missing 'evaluation'")
        raw_specs = evaluation if isinstance(evaluation, list) else [evaluation]
        if not raw_specs:
            raise ValueError("'evaluation' is an empty list")
        specs = tuple(_parse_spec(s) for s in raw_specs)
    except ValueError as exc:
        return GoldInstance(iid, (), metadata, where, problem=str(exc))
    return GoldInstance(iid, specs, metadata, where)


def load_gold(gold_dir: Path) -> Loaded:
    path = Path(gold_dir) / GOLD_FILE
    return _load(path, _gold_instance, "gold")


def _submission_line(obj: dict, where: Location) -> SubmissionLine:
    answer_type = obj.get("answer_type")
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"'answer_type' must be one of {list(ANSWER_TYPES)}, got {answer_type!r}")
    attempts = obj.get("attempts")
    if attempts is not None and (not isinstance(attempts, list) or not attempts):
        raise ValueError("'attempts' must be a non-empty list")
    if "answer_or_path" not in obj and attempts is None:
        raise ValueError("missing 'answer_or_path'")
    answer = obj.get("answer_or_path", attempts[-1] if attempts else None)
    extra = {k: v for k, v in obj.items() if k not in ("instance_id", "answer_type", "answer_or_path", "attempts")}
    return SubmissionLine(
        obj["instance_id"], answer_type, answer, where, tuple(attempts) if attempts is not None else None, extra
    )


def load_submission(result_dir: Path, max_bytes: int = DEFAULT_MAX_METADATA_BYTES) -> Loaded:
    """The submission's metadata: opened as every submitted file is (paths.read_untrusted: a regular file
    in the folder, not a link, FIFO or device, within `max_bytes` or 256 MiB, whichever is more)."""
    cap = max(max_bytes, MIN_MAX_METADATA_BYTES)
    raw = read_untrusted(Path(result_dir), SUBMISSION_FILE, cap, "jsonl file")
    return _load(Path(result_dir) / SUBMISSION_FILE, _submission_line, "submission", raw)


def _load(path: Path, build, what: str, raw: bytes | None = None) -> Loaded:
    records: dict = {}
    problems: list[Problem] = []
    duplicates: dict = {}
    for where, obj, error, line in _json_lines(path, raw):
        if error:
            problems.append(Problem(where, error, _guess_id(line), hint="one JSON object per line"))
            continue
        iid = _instance_id(obj)
        if iid is None:
            message = "not a JSON object" if not isinstance(obj, dict) else "missing or empty string 'instance_id'"
            problems.append(Problem(where, message))
            continue
        try:
            record = build(obj, where)
        except ValueError as exc:
            problems.append(Problem(where, str(exc), iid))
            continue
        if iid in records:
            # Spider2's scorers build a dict from the lines, so the last line wins; we do the same and say so.
            duplicates.setdefault(iid, []).append(records[iid].location)
            problems.append(
                Problem(records[iid].location, f"duplicate instance_id {iid!r}: the later line {where.line} wins", iid)
            )
        records[iid] = record
    return Loaded(records, tuple(problems), duplicates)
