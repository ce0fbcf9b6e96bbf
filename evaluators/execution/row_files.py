"""Result rows as the engine's driver returned them, kept beside the result CSV.

A CSV loses types: `1` and `1.0` and `'1'` read back alike, NULL becomes an empty
field.  BIRD's EX compares the Python values `cursor.fetchall()` returns, so a
worker asked for rows (`Request.collect == "rows"`) also writes them here, one
JSON line per row after a first line with the column names:

    <out>.rows.jsonl      ["region", "amount"]
                          ["north", 10]

JSON keeps None, bool, int (any size), str and finite floats as they are.  Other
values are tagged objects `{"$": kind, "v": text}` and come back as the same
Python type: decimal, bytes, date, datetime, time, timedelta, uuid, non-finite
floats, lists (DuckDB LIST) and dicts (DuckDB STRUCT/MAP).  Anything else comes
back as its text (kind "text"), the same on both sides of a comparison.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from decimal import Decimal
from pathlib import Path

ROWS_SUFFIX = ".rows.jsonl"


def rows_path(out_csv) -> Path:
    """Where the rows of the result written to `out_csv` go."""
    path = Path(out_csv)
    return path.with_name(path.stem + ROWS_SUFFIX)


_PLAIN = frozenset({type(None), bool, int, str})  # written as JSON gives them back, as they are


def encode_rows(rows) -> tuple[list, bool]:
    """(rows for JSON, whether any value is tagged).  A row of plain values (and finite floats) goes as it is:
    checking types in one loop costs a fraction of encoding each value, and the reader can skip `decode`."""
    out: list = []
    tagged = False
    for row in rows:
        for value in row:
            kind = type(value)
            if kind not in _PLAIN and not (kind is float and math.isfinite(value)):
                out.append([encode(v) for v in row])
                tagged = True
                break
        else:
            out.append(row)
    return out, tagged


def decode_rows(rows: list, tagged: bool = True) -> list[tuple]:
    """`encode_rows`'s rows back as tuples of Python values (`tagged` False: nothing to decode)."""
    if not tagged:
        return [tuple(row) for row in rows]
    return [tuple(decode(v) for v in row) for row in rows]


def encode(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if hasattr(value, "item") and not isinstance(value, (bytes, bytearray, memoryview)):
        try:  # numpy scalars, from frames of the cloud drivers
            return encode(value.item())
        except (TypeError, ValueError):
            pass
    tagged = _tagged(value)
    if tagged is not None:
        return tagged
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return {"$": "list", "v": [encode(v) for v in items]}
    if isinstance(value, dict):
        return {"$": "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"$": "text", "v": str(value)}


def _tagged(value):
    if isinstance(value, Decimal):
        return {"$": "decimal", "v": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$": "bytes", "v": bytes(value).hex()}
    for kind, cls in (("datetime", dt.datetime), ("date", dt.date), ("time", dt.time)):  # datetime is a date
        if isinstance(value, cls):
            return {"$": kind, "v": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"$": "timedelta", "v": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, uuid.UUID):
        return {"$": "uuid", "v": str(value)}
    return None


_DECODERS = {
    "float": float,
    "decimal": Decimal,
    "bytes": bytes.fromhex,
    "datetime": dt.datetime.fromisoformat,
    "date": dt.date.fromisoformat,
    "time": dt.time.fromisoformat,
    "timedelta": lambda v: dt.timedelta(*v),
    "uuid": uuid.UUID,
    "text": str,
    "list": lambda v: [decode(x) for x in v],
    "dict": lambda v: {_hashable(decode(k)): decode(x) for k, x in v},
}


def decode(value):
    if isinstance(value, dict):
        return _DECODERS[value["$"]](value["v"])
    if isinstance(value, list):  # never written (lists are tagged); tolerated for hand-made files
        return [decode(v) for v in value]
    return value


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def write_rows(path: Path, columns: list, rows) -> None:
    """Write the columns and rows; written whole under a scratch name, then renamed."""
    from evaluators.atomic import atomic_path

    with atomic_path(path) as scratch, open(scratch, "w", encoding="utf-8") as handle:
        handle.write(json.dumps([str(c) for c in columns]) + "\n")
        for row in rows:
            handle.write(json.dumps([encode(v) for v in row], ensure_ascii=False) + "\n")


def read_rows(path: Path) -> tuple[list[str], list[tuple]]:
    """(column names, rows as tuples of Python values) from a rows file."""
    with open(path, encoding="utf-8") as handle:
        columns = json.loads(handle.readline() or "[]")
        rows = [tuple(decode(v) for v in json.loads(line)) for line in handle if line.strip()]
    return columns, rows
