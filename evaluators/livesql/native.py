"""The official files: instances as JSON lines (LiveSQLBench / BIRD-CRITIC), predictions as the official
post-processing writes them (the instance line with `pred_sqls`, a list of statements), and the gold
fields (`sol_sql`, `test_cases`, ...) either in the same lines or in a separate file matched by
`instance_id` (the public sets ship without them, LiveSQLBench's GT file holds only those)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from evaluators.errors import Location, UsageError
from evaluators.loading.paths import open_inside, read_untrusted
from evaluators.loading.specs import MAX_JSON_DEPTH, MIN_MAX_METADATA_BYTES, too_deep
from evaluators.specs import Problem

MAX_PREDICTIONS_BYTES = MIN_MAX_METADATA_BYTES  # 256 MiB
_TOO_DEEP = object()  # what a line nested past json's recursion decodes to


@dataclass(frozen=True)
class Line:
    data: dict
    location: Location

    @property
    def instance_id(self) -> str:
        return str(self.data.get("instance_id", self.location.line))


def read_lines(path: Path, problems: list, submitted: bool = False) -> list[Line]:
    """Every JSON object line with its place; a broken line is a problem, not the end of the run.  A
    `submitted` file (the predictions) is read as every submitted file is (`paths.read_untrusted`: the
    name the operator gave is followed, then a regular file, no FIFO or device, at most 256 MiB)."""
    try:
        if submitted:
            real = Path(path).resolve()
            text = read_untrusted(real.parent, real.name, MAX_PREDICTIONS_BYTES, "jsonl file").decode("utf-8-sig")
        else:
            text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = Location(str(path), number)
        try:
            data = json.loads(raw)
        except ValueError as exc:
            problems.append(Problem(where, f"not JSON: {exc}"))
            continue
        except RecursionError:  # json's decoder recurses once per level
            data = _TOO_DEEP
        if data is _TOO_DEEP or too_deep(data):
            problems.append(Problem(where, f"not JSON: nested more than {MAX_JSON_DEPTH} levels deep"))
            continue
        if not isinstance(data, dict):
            problems.append(Problem(where, "a line must be a JSON object"))
            continue
        lines.append(Line(data, where))
    return lines


# The fields LiveSQLBench keeps out of its public file: its `integrate_gt_data.py` lays a GT line's copies
# of these over the public line and keeps every other public field.
PROTECTED = ("sol_sql", "test_cases", "external_knowledge")


def merge(predictions: list[Line], gold: list[Line] | None, problems: list) -> tuple[list[Line], list[str]]:
    """The instances to grade: with a gold file, each predictions line (the public line with `pred_sqls`,
    as post-processing writes it) with the gold line of its `instance_id` laid over it, as
    `integrate_gt_data.py` does; the solution and the test code (PROTECTED) come from the gold file only,
    never from the submitted one, and where both files give another field differently the gold's wins, with
    a warning.  Without a gold file, the predictions lines themselves.  Also the ids predicted but not in
    the gold."""
    if gold is None:
        return predictions, []
    by_id: dict = {}
    for line in predictions:
        if line.instance_id in by_id:
            problems.append(Problem(line.location, f"instance {line.instance_id} predicted twice; the first is kept"))
            continue
        by_id[line.instance_id] = line
    merged = [_merged(by_id.get(line.instance_id), line, problems) for line in gold]
    known = {line.instance_id for line in gold}
    return merged, [i for i in by_id if i not in known]


def _merged(pred: Line | None, gold: Line, problems: list) -> Line:
    gold_data = {k: v for k, v in gold.data.items() if k != "pred_sqls"}
    if pred is None:
        return Line(gold_data, gold.location)
    public = {k: v for k, v in pred.data.items() if k not in PROTECTED}
    for name in sorted(set(public) & set(gold_data) - {"instance_id", "pred_sqls"}):
        if public[name] != gold_data[name] and public[name] not in ("", [], {}, None):
            problems.append(
                Problem(
                    pred.location,
                    f"instance {pred.instance_id}: {name!r} differs from the gold's ({gold.location}); the gold's is used",
                )
            )
    for name in PROTECTED:
        if pred.data.get(name) not in ("", [], {}, None) and name not in gold_data:
            problems.append(
                Problem(pred.location, f"instance {pred.instance_id}: {name!r} ignored, the gold file has none")
            )
    return Line({**public, **gold_data}, pred.location)


def database_of(data: dict) -> str | None:
    value = data.get("selected_database", data.get("db_id"))
    return str(value) if value else None


def unsafe_database(db: str) -> str | None:
    """Why `db` cannot name a database, or None: it is a name inside --db_root (the submission chooses it
    when no gold file is given), never a path."""
    if db in (".", "..") or any(sep in db for sep in ("/", "\\", "\0")):
        return f"selected_database {db[:100]!r} is not a database name (no '/' or '\\', not '.' or '..')"
    return None


def sqlite_template(db_root: Path, db: str) -> str | None:
    """`<db>/<db>_template.sqlite`, else `<db>/<db>.sqlite` (the harness's own fallback): the first that is a
    regular file under `db_root`, relative to it; links are followed only while they stay inside
    (InstanceError `unsafe_path` otherwise).  The worker opens it again the same way (sandbox.py)."""
    for relative in (f"{db}/{db}_template.sqlite", f"{db}/{db}.sqlite"):
        fd = open_inside(db_root, relative)
        if fd is not None:
            os.close(fd)
            return relative
    return None
