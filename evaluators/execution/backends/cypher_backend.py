"""Cypher on the embedded FalkorDB server (`execution/graphs.py` starts it and builds the graphs).

A prediction runs as `GRAPH.RO_QUERY`, so CREATE, MERGE, SET, DELETE and writing procedures are refused by
the engine itself; the gold query too (it is a query, not a script).  The server's own timeout is asked
for; where it does not stop a query (an aggregation over a huge UNWIND runs on), the parent kills this
worker, and `cancel` kills the server, which the parent starts again for the next query.

Values cross to the grader typed: numbers, strings, booleans, NULL, lists and maps as they are; a node
or a relationship as `{"__graph__": "node" | "edge", "id": ...}`; a path as
`{"__graph__": "path", "nodes": [ids], "edges": [ids]}`.
"""

from __future__ import annotations

import os
import signal
import time

from evaluators.execution.backends import base
from evaluators.execution.backends.base import Backend, Outcome, QueryFailed, Request
from evaluators.execution.backends.settings import CypherSettings
from evaluators.execution.memory import check_rows, limit_of

TIMEOUT_WORDS = ("timed out", "timeout")
READ_ONLY_WORDS = "read-only"
MEMORY_WORDS = "exceeded capacity"  # "Query's mem consumption exceeded capacity" (QUERY_MEM_CAPACITY)


class CypherBackend(Backend):
    name = "cypher"
    kill_grace_s = 1.0
    cancels_on_kill = True

    def run(self, request: Request, notify) -> Outcome:
        _refuse_load_csv(request)
        graph = _graph(request)
        notify({"event": "handle", "server_pid": _ref(request).server_pid})
        notify({"event": "started"})
        started = time.perf_counter()
        try:
            result = graph.ro_query(request.sql, timeout=max(1, int(request.timeout_s * 1000)))
        except Exception as exc:  # the driver's ResponseError and connection errors alike
            raise _failure(exc, request) from None
        seconds = time.perf_counter() - started
        rows = result.result_set
        limit = CypherSettings.of(request).max_result_rows
        if len(rows) > limit:
            raise QueryFailed("result_too_large", f"{len(rows):,} rows, over the limit of {limit:,}")
        columns = [str(h[1]) if isinstance(h, (list, tuple)) else str(h) for h in result.header]
        plain = [tuple(graph_value(v) for v in row) for row in rows]
        check_rows(plain, limit_of(request.settings))
        return base.keep_result(
            request, lambda: base.records_frame(plain, columns), columns, plain, query_seconds=seconds
        )

    def cancel(self, request: Request, handle: dict) -> str:
        """The server went on past the timeout: stop it (the grader starts a fresh one for the next query)."""
        pid = handle.get("server_pid")
        if not isinstance(pid, int):
            return "nothing to cancel"
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return "the graph server had already stopped"
        return "the graph server was stopped (it is started again for the next query)"


def _refuse_load_csv(request: Request) -> None:
    """The server would fetch a LOAD CSV URL (any host and port) or read a file: never for a prediction."""
    from evaluators.sqltext import cypher_loads_csv

    if not request.trusted and cypher_loads_csv(request.sql):
        raise QueryFailed("exec_error", "not run: LOAD CSV reads files or URLs, and a prediction may not")


def _ref(request: Request):
    from evaluators.execution.graphs import GraphRef

    return GraphRef.from_text(str(request.db_ref))


def _graph(request: Request):
    falkordb = base.import_driver("falkordb", "falkordblite", "cypher")
    ref = _ref(request)
    try:
        client = falkordb.FalkorDB(unix_socket_path=ref.socket)
        client.connection.ping()
    except Exception as exc:
        raise QueryFailed("exec_error", f"the graph server cannot be reached: {base.first_line(exc)}") from None
    return client.select_graph(ref.graph)


def _failure(exc: Exception, request: Request) -> QueryFailed:
    text = base.first_line(exc)
    if any(word in text.lower() for word in TIMEOUT_WORDS):
        return QueryFailed("timeout", f"stopped after {request.timeout_s:g} s ({text})")
    if MEMORY_WORDS in text.lower():
        return QueryFailed("memory_limit", f"the graph server stopped the query at its memory cap ({text})")
    if READ_ONLY_WORDS in text.lower():
        return QueryFailed("exec_error", f"write refused: the graph is read-only ({text})")
    return QueryFailed("exec_error", text)


def graph_value(value):
    """A result value as plain Python data (see the module's docstring)."""
    kind = type(value).__name__
    if kind == "Node" or kind == "Edge":
        return {"__graph__": "node" if kind == "Node" else "edge", "id": value.id}
    if kind == "Path":
        return {"__graph__": "path", "nodes": [n.id for n in value.nodes()], "edges": [e.id for e in value.edges()]}
    if isinstance(value, dict):
        return {str(k): graph_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [graph_value(v) for v in value]
    return value


def kg_validity(request: Request, notify) -> dict:
    """OpenCyVer's three validators on `request.sql` against the graph's own schema (read-only queries, some
    built from the prediction's own patterns, so LOAD CSV is refused here too)."""
    _refuse_load_csv(request)
    graph = _graph(request)
    try:
        import opencyver
    except ImportError:
        raise QueryFailed("missing_extra", "opencyver is not installed (pip install '.[cypher]')") from None
    notify({"event": "started"})
    syntax_ok, syntax_notes = opencyver.SyntaxValidator(graph).validate(request.sql)
    schema_score, schema_notes = opencyver.SchemaValidator(graph).validate(request.sql)
    properties_score, property_notes = opencyver.PropertiesValidator(graph).validate(request.sql)
    return {
        "syntax": bool(syntax_ok),
        "schema_score": schema_score,
        "properties_score": properties_score,
        "notes": [
            {"validator": name, "code": str(note.get("code", "")), "description": str(note.get("description", ""))}
            for name, notes in (("syntax", syntax_notes), ("schema", schema_notes), ("properties", property_notes))
            for note in notes or []
        ],
    }
