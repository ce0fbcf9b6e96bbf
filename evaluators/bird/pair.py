"""One BIRD question's comparison: the official EX, strict EX and Soft F1 of a prediction's rows against the gold's.

`compare` is the one comparison, wherever the rows come from.  On SQLite it runs in the SQL worker itself
(`grade_in_worker`, a worker action): the gold and the prediction run there in turn and only the verdicts
cross the pipe, so a run of small fast questions spends its time on the workers' cores, side by side, not
on encoding rows, sending them and comparing them in the one grading process.  The private copy's rows
(`run._official_pair`) and the servers' rows (PostgreSQL, MySQL: gold cached in the grading process) are
compared by the same `compare` there.
"""

from __future__ import annotations

from evaluators.bird import official

GOLD_CACHE_CELLS = 2_000_000  # a worker's cached gold cells, past which its cache starts again


def compare(pred_rows: list, gold_rows: list, gold_sql: str) -> tuple[dict, dict]:
    """(the verdicts as plain data, by name, see `verdict_data`; what the report keeps in `execution`)."""
    from evaluators.matching.typed_rows import strict_rows
    from evaluators.metrics.bird import outermost_has_order_by

    unhashable = official.unhashable(pred_rows, gold_rows)
    bird = False if unhashable else official.ex(pred_rows, gold_rows)
    ordered = outermost_has_order_by(gold_sql)
    strict = strict_rows(gold_rows, pred_rows, ordered)
    info = {"ex_bird": bird, "ex_strict": strict.passed, "gold_order_by": ordered, **soft_f1(pred_rows, gold_rows)}
    if unhashable:
        info["ex_bird_note"] = unhashable
        words, reason = unhashable, "unhashable_result"
    else:
        words = "BIRD EX: " + ("equal as sets of rows" if bird else difference(pred_rows, gold_rows))
        reason = "match" if bird else "value_mismatch"
    verdicts = {"bird": [float(bird), reason, words], "strict": verdict_data(strict)}
    return verdicts, info


def verdict_data(verdict) -> list:
    """A verdict as JSON values: [score, reason, detail, mapping]."""
    return [verdict.score, verdict.reason, verdict.detail, list(verdict.mapping)]


def verdicts_from(data: dict) -> dict:
    from evaluators.matching.verdicts import Verdict

    return {name: Verdict(v[0], v[1], v[2], tuple(v[3]) if len(v) > 3 else ()) for name, v in data.items()}


def difference(pred_rows: list, gold_rows: list) -> str:
    """Why the sets differ, as `grade` says it: the row counts and a gold row the prediction lacks (or the
    other way round), cut short."""
    words = f"different sets of rows ({len(gold_rows)} gold, {len(pred_rows)} predicted"
    predicted, gold = set(pred_rows), set(gold_rows)  # hashable: BIRD EX compared them as sets
    missing = next((row for row in gold_rows if row not in predicted), None)
    if missing is not None:
        return f"{words}; gold row {_row_text(missing)} not predicted)"
    extra = next((row for row in pred_rows if row not in gold), None)
    return f"{words}; predicted row {_row_text(extra)} not in the gold)" if extra is not None else words + ")"


def _row_text(row: tuple) -> str:
    text = "(" + ", ".join(map(str, row)) + ")"
    return text if len(text) <= 120 else text[:117] + "..."


def soft_f1(pred_rows: list, gold_rows: list) -> dict:
    """mini-dev's Soft F1 as written (0 where it raises), and ours with rows paired by content."""
    from evaluators.metrics.soft_f1 import soft_f1 as official_f1
    from evaluators.metrics.soft_f1 import soft_f1_unordered

    try:
        figure = official_f1(pred_rows, gold_rows)
    except TypeError:
        figure = 0.0  # an unhashable value: evaluation_f1.py's set() raises, the question scores 0
    return {"soft_f1": figure, "soft_f1_unordered": soft_f1_unordered(pred_rows, gold_rows)}


# ---------------------------------------------------------------- in the SQL worker

_gold_rows: dict[tuple, tuple] = {}  # this worker's gold results: key -> ("ok", rows) or (reason, detail)
_gold_cells = 0


def grade_in_worker(request, message: dict, send) -> dict:
    """The gold (`message["gold_sql"]`, once per database state in this worker), then the prediction
    (`request`), then `compare`.  The result says which failed: `gold_failed` {reason, detail} in an ok
    answer, or the prediction's own failure as the worker reports any query's (the queries' "started"
    events name their phase, so a kill says which one it stopped)."""
    gold = _gold(request, message["gold_sql"], send)
    if gold[0] != "ok":
        return {"gold_failed": {"reason": gold[0], "detail": gold[1]}}
    pred_rows, seconds = [], None
    if request.sql.strip():  # an empty text gets no rows, as the official script's sqlite3 gives it
        outcome = _run(request, "pred", send)
        pred_rows, seconds = outcome.data["rows"], outcome.query_seconds
    verdicts, info = compare(pred_rows, gold[1], message["gold_sql"])
    if seconds is not None:
        info["pred_seconds"] = seconds
    return {"verdicts": verdicts, "info": info}


def grade_many_in_worker(request, message: dict, send) -> dict:
    """`grade_in_worker` for each [prediction, gold, database] of `message["pairs"]`, in turn, on `request`'s
    settings: one round trip for several questions.  Each result is what a single one's event would hold."""
    from dataclasses import replace

    from evaluators.execution.backends.base import QueryFailed
    from evaluators.execution.worker import query_failure

    results = []
    for sql, gold_sql, database in message["pairs"]:
        one = replace(request, sql=sql, db_ref=database)
        try:
            results.append({"reason": "ok", **grade_in_worker(one, {"gold_sql": gold_sql}, send)})
        except QueryFailed as exc:
            results.append(query_failure(exc, one))
    return {"results": results}  # anything else fails the batch: its questions are then graded one by one


def _run(request, phase: str, send):
    from dataclasses import replace

    from evaluators.execution.backends import get_backend

    def notify(event: dict) -> None:
        send({**event, "phase": phase} if event.get("event") == "started" else event)

    values = request if request.collect == "values" else replace(request, collect="values")  # a batch's already is
    return get_backend(request.backend).run(values, notify)


def _gold(request, gold_sql: str, send) -> tuple:
    from dataclasses import replace

    from evaluators.execution.backends.base import QueryFailed
    from evaluators.execution.opener import file_state
    from evaluators.execution.worker import query_failure

    key = (
        request.backend,
        request.db_ref,
        file_state(request.db_ref),
        gold_sql,
        repr(sorted(request.settings.items())),
    )
    if key in _gold_rows:
        return _gold_rows[key]
    try:
        outcome = _run(replace(request, sql=gold_sql, trusted=True), "gold", send)
        found: tuple = ("ok", outcome.data["rows"])
    except QueryFailed as exc:
        failure = query_failure(exc, request)
        found = (failure["reason"], failure["detail"])
    except MemoryError:
        found = ("memory_limit", "the gold's rows passed the worker's memory cap")
    _keep(key, found)
    return found


def _keep(key: tuple, found: tuple) -> None:
    global _gold_cells
    cells = sum(len(row) for row in found[1]) if found[0] == "ok" else 1
    if _gold_cells + cells > GOLD_CACHE_CELLS:
        _gold_rows.clear()
        _gold_cells = 0
    _gold_rows[key] = found
    _gold_cells += cells
