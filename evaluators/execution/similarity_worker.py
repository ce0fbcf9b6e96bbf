"""Query similarity of a graded SQL answer, computed in a worker like every query (issue 24).

The prediction is untrusted: its text is bounded by a token cap (`metrics/similarity.py`), and the
figures are computed in a killable worker under the run's timeout and memory cap, one round trip
beside the query's own (about half a millisecond; docs/security.md).
"""

from __future__ import annotations

from evaluators.execution.backends.base import Request

INSTALL_HINT = "pip install '.[rewards]'"


def query_similarity(settings: dict, pred_sql: str, gold_sql: str) -> dict:
    """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard, or {"error": why not}; `settings`: the executor's."""
    from evaluators.execution import worker

    # No database is opened: the request names a local engine only so that the worker can serve it.
    request = Request("sqlite", "", "", None, settings, {}, "csv")
    event = worker.execute(request, "similarity", pred_sql=pred_sql, gold_sql=gold_sql)
    if event.get("reason") == "ok":
        return event["similarity"]
    detail = str(event.get("detail") or "")
    if "not installed" in detail and "pip install" not in detail:
        detail += f" ({INSTALL_HINT})"
    return {"error": f"{event.get('reason')}: {detail}" if event.get("reason") != "exec_error" else detail}
