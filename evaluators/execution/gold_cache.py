"""The on-disk cache of temporal gold results, and the helpers that go with it (its drift check, its first cell).

A gold result is keyed by backend, database and the SHA-256 of the gold SQL:

    <output_dir>/gold_cache/<backend>/<db>/<sha256>.csv    the result table
    <output_dir>/gold_cache/<backend>/<db>/<sha256>.json   when it ran, first cell, bytes, seconds

The JSON is written after the CSV, so an entry counts only once both are complete;
writers use a private scratch name and rename, so parallel graders never see half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

from evaluators.execution.backends.base import json_safe


def safe_name(text: str) -> str:
    """A file name for an instance id or database; a short hash keeps renamed names apart."""
    clean = re.sub(r"[^\w.-]", "_", str(text)).strip(".") or "_"
    if clean != str(text):
        clean += "-" + hashlib.sha256(str(text).encode()).hexdigest()[:8]
    return clean[:150]


class GoldCache:
    def __init__(self, root: Path, backend: str, db: str | None, sql: str):
        self.key = hashlib.sha256(sql.encode("utf-8")).hexdigest()
        self.folder = Path(root) / backend / safe_name(db if db is not None else "_no_database")
        self.csv = self.folder / f"{self.key}.csv"
        self.meta = self.folder / f"{self.key}.json"

    def load(self) -> dict | None:
        """The entry's metadata (with "csv_path"), or None when there is no complete entry."""
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not self.csv.is_file() or meta.get("sha256") != self.key:
            return None
        return {**meta, "csv_path": self.csv}

    def scratch_path(self) -> Path:
        """Where a live run writes, so a failed refresh leaves the old entry whole."""
        return self.folder / f".{self.key}.{os.getpid()}.{threading.get_ident()}.csv"

    def store(
        self,
        scratch: Path,
        *,
        backend: str,
        db: str | None,
        instance_id: str,
        first_cell,
        bytes_processed: int | None,
        seconds: float | None,
    ) -> dict:
        os.replace(scratch, self.csv)
        meta = {
            "sha256": self.key,
            "backend": backend,
            "db": db,
            "instance_id": instance_id,
            "cached_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "first_cell": first_cell,
            "bytes_processed": bytes_processed,
            "seconds": seconds,
        }
        _write_atomic(self.meta, json.dumps(meta, indent=1, default=str))
        return {**meta, "csv_path": self.csv}


def _write_atomic(path: Path, text: str) -> None:
    from evaluators.atomic import write_text

    write_text(path, text)


def _cached_frame(path: Path):
    """A result CSV this cache wrote, as pandas reads it by default; one of no columns is an empty frame.
    Only the cache's own drift check and first cell: grading reads every CSV with `tables/read.py`."""
    import pandas as pd

    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def compare_csv(left: Path, right: Path) -> bool:
    """Plain frame equality after reading both as CSV (the drift check of a live gold)."""
    return bool(_cached_frame(left).equals(_cached_frame(right)))


def first_cell_of(path: Path):
    frame = _cached_frame(path)
    return json_safe(frame.iat[0, 0]) if frame.shape[0] and frame.shape[1] else None
