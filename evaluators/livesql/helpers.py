"""The helper functions the official harnesses hand to test cases, written here from their documented
behaviour (LiveSQLBench `test_utils.py`, mini_dev `live_sql_bench_sqlite/evaluation/test_utils.py`,
BIRD-CRITIC `*_test_utils.py`), quirks included, plus their strict twins.

They run inside a worker process only (sandbox.py), never in the grader.  `Session` carries what the
official module-level functions read from globals (the connection, the engine, the strict switch), and
`namespace()` gives the names a test case sees, exactly those its harness provides.

Official behaviour reproduced on purpose (docs/livesql.md):
- `execute_queries` runs every statement and keeps only the **last** statement's result; the first
  failure stops it and sets the error flag (the harness swallows the exception).
- `perform_query_*` commits after every statement (SQLite: after anything that does not start with
  SELECT/WITH), so a prediction's writes stay for the test cases.
- `ex_base` returns 0 when either side has **no rows** (a gold with no rows fails every prediction),
  rounds floats and Decimals to 2 places, writes dates as YYYY-MM-DD, and compares as sets (duplicates
  ignored) unless `conditions["order"]`.
- `remove_distinct` drops every space-separated token equal to DISTINCT; `remove_round` unwraps ROUND(x, n).
- SQLite `performance_compare_by_qep` counts 1.0 per EXPLAIN-able statement (no real cost in SQLite).

Strict (`Session.strict`): `remove_distinct` and `remove_round` leave the SQL alone, `preprocess_results`
does not round, and `ex_base` compares multisets (ordered when asked), empty results included.
"""

from __future__ import annotations

import io
import json
import math
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

MAX_ROWS = 10000  # the official fetch limit
LOSSY = ("ex_base", "remove_distinct", "remove_round", "preprocess_results")


@dataclass
class Session:
    """One instance's connection as the helpers see it."""

    engine: str  # "sqlite" or "postgres"
    conn: object
    strict: bool = False
    used: set = field(default_factory=set)  # helper names a test case called (lossy ones trigger strict)
    statement_timeout_ms: int = 60000
    deadline: float | None = None  # past it, a failed statement counts as a timeout (the progress handler)
    # A helper called without a connection gets a new one to the same database, as the harnesses' pools
    # give one (it sees committed rows, not the session's TEMP tables or settings); None: reuse `conn`.
    connect: Callable | None = None
    spare_connections: int | None = None  # how many the harness's pool can still give (then PoolError)
    # Strict, Query tasks: the gold's result on the untouched database (preprocess_sql applied, the
    # prediction not), given the gold's statements; None: the gold runs on the current state, as officially.
    untouched: Callable | None = None
    distinct: str = "space"  # the harness's remove_distinct variant (profiles.DISTINCT_VARIANTS)

    # ------------------------------------------------------------ running SQL as the harness does

    def perform_query(self, query: str, conn=None):
        conn = conn if conn is not None else self._new_connection()
        if self.engine == "sqlite":
            return _sqlite_query(query, conn)
        return _postgres_query(query, conn, self.statement_timeout_ms)

    def _new_connection(self):
        if self.connect is None:
            return self.conn
        if self.spare_connections is not None:
            if self.spare_connections <= 0:
                raise ConnectionError("connection pool exhausted")  # psycopg2.pool.PoolError's words
            self.spare_connections -= 1
        return self.connect()

    def execute_queries(self, queries, conn=None):
        """(last result, execution error, timeout error, message): the harness's loop over statements."""
        if isinstance(queries, str):
            queries = [queries]
        result, failed, timed_out, message = None, False, False, ""
        for i, query in enumerate(queries, start=1):
            try:
                result, conn = self.perform_query(query, conn)
            except Exception as exc:  # the harness catches everything and stops at the first failure
                text = str(exc)
                if self.deadline is not None and time.monotonic() > self.deadline:
                    timed_out = True
                    message += f"Timeout executing query {i}: {exc}\n"
                elif self.engine == "sqlite" and isinstance(exc, sqlite3.OperationalError) and _sqlite_timeout(text):
                    timed_out = True
                    message += f"Timeout/Skip error executing query {i}: {exc}\n"
                elif self.engine == "postgres" and getattr(exc, "sqlstate", None) == "57014":
                    timed_out = True
                    message += f"Timeout executing query {i}: {exc}\n"
                else:
                    failed = True
                    message += f"Error executing query {i}: {exc}\n"
                break
        return result, failed, timed_out, message


def _sqlite_timeout(text: str) -> bool:
    lowered = text.lower()
    return "database is locked" in lowered or "timeout" in lowered or "complex query skipped" in lowered


def _sqlite_query(query: str, conn):
    conn.execute("PRAGMA journal_mode = WAL")  # as the harness: every call, on the private copy only
    conn.execute("PRAGMA synchronous = OFF")
    cursor = conn.cursor()
    try:
        cursor.execute(query)
        if query.strip().lower().startswith(("select", "with")):
            return cursor.fetchall()[:MAX_ROWS], conn
        conn.commit()
        try:
            return cursor.fetchall(), conn
        except Exception:
            return None, conn
    except Exception:
        conn.rollback()
        raise
    finally:
        cursor.close()


class EmptyQuery(Exception):
    """What psycopg2 raises (a ProgrammingError) for a statement that is empty or only a comment."""


def _postgres_query(query: str, conn, timeout_ms: int):
    cursor = conn.cursor()
    try:
        cursor.execute(f"SET statement_timeout = '{timeout_ms}ms'")
        cursor.execute(query)
        while cursor.nextset():  # several statements in one text: psycopg2 (the harness) keeps the last result
            pass
        if _empty_query(cursor):
            raise EmptyQuery("can't execute an empty query")
        conn.commit()
        if cursor.description is None:
            return None, conn  # psycopg2 raises ProgrammingError on fetch here; the harness returns None
        return cursor.fetchmany(MAX_ROWS + 1)[:MAX_ROWS], conn
    except Exception:
        conn.rollback()
        raise
    finally:
        cursor.close()


def _empty_query(cursor) -> bool:
    from psycopg import pq

    result = cursor.pgresult
    return result is not None and result.status == pq.ExecStatus.EMPTY_QUERY


# ---------------------------------------------------------------- pure helpers


def remove_comments(sql_list: list) -> list:
    """The harness's three substitutions (`/\\*.*?\\*/` with DOTALL, `--.*?(\\r\\n|\\r|\\n)` -> the line end,
    `\\n\\s*\\n+` -> one newline), each made in one pass: the patterns backtrack to the end of the text at
    every start that does not close (quadratic: 16 KB of dashes took 24 s), and the text is the submission's."""
    return [_blank_lines(_line_comments(_block_comments(sql))).strip() for sql in sql_list]


def _block_comments(text: str) -> str:
    kept, at = [], 0
    while (start := text.find("/*", at)) != -1 and (end := text.find("*/", start + 2)) != -1:
        kept.append(text[at:start])
        at = end + 2
    return "".join(kept) + text[at:]


_LINE_END = re.compile(r"\r\n|\r|\n")


def _line_comments(text: str) -> str:
    kept, at = [], 0  # a last-line comment without its line end stays, as in the harness
    while (start := text.find("--", at)) != -1 and (end := _LINE_END.search(text, start + 2)) is not None:
        kept.append(text[at:start] + end.group())
        at = end.end()
    return "".join(kept) + text[at:]


def _blank_lines(text: str) -> str:
    """A run of white space holding two newlines or more: from its first newline to its last, one newline."""

    def one(run: re.Match) -> str:
        found = run.group()
        first, last = found.find("\n"), found.rfind("\n")
        return found if first == last else found[:first] + "\n" + found[last + 1 :]

    return re.sub(r"\s+", one, text)


def remove_distinct(sql_list: list, variant: str = "space") -> list:
    """The harnesses' `remove_distinct`, by variant (profiles.DISTINCT_VARIANTS): `space` drops each token
    of `split(" ")` equal to DISTINCT; `whitespace` each of `split()`, joined by single spaces; `regex`
    removes every whole word DISTINCT, `COUNT(DISTINCT x)` included."""
    if variant == "regex":
        return [re.sub(r"\bDISTINCT\b", "", sql, flags=re.IGNORECASE) for sql in sql_list]
    split = (lambda sql: sql.split()) if variant == "whitespace" else (lambda sql: sql.split(" "))
    return [" ".join(t for t in split(sql) if t.lower() != "distinct") for sql in sql_list]


_ROUND = re.compile(r"ROUND\s*\(", re.IGNORECASE)


def remove_round(sql_list: list) -> list:
    return [_unwrap_round(sql) for sql in sql_list]


def _unwrap_round(sql: str) -> str:
    """ROUND(expr, n) -> expr, outermost first, until none is left (or the parentheses do not close)."""
    while True:
        found = _ROUND.search(sql)
        if not found:
            return sql
        open_at = found.end() - 1
        close_at = _closing(sql, open_at)
        if close_at == -1:
            return sql
        first_end = _first_argument_end(sql, open_at + 1)
        sql = sql[: found.start()] + sql[open_at + 1 : first_end].strip() + sql[close_at + 1 :]


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if text[i] == ")" and depth == 0:
            return i
    return -1


def _first_argument_end(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        char = text[i]
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return i
            depth -= 1
        elif char == "," and depth == 0:
            return i
    return len(text)


def round_value(item, places: int):
    if isinstance(item, Decimal):
        return item.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if isinstance(item, float):
        return round(item, places)
    if isinstance(item, (list, tuple)):
        return type(item)(round_value(x, places) for x in item)
    if isinstance(item, dict):
        return {k: round_value(v, places) for k, v in item.items()}
    return item


def preprocess_results(results, decimal_places: int = 2, rounding: bool = True, lenient_json: bool = False) -> list:
    """The harness's normalisation: dates as YYYY-MM-DD, numbers rounded, lists and dicts as sorted JSON.
    The official helper calls plain `json.dumps`, which raises on a Decimal or a date inside a list or dict
    (a numeric[] or date[] column fails the test case whatever the answer); `lenient_json` (strict) writes
    them with `str` instead."""
    processed = []
    for row in results:
        cells = []
        for item in row:
            if isinstance(item, (date, datetime)):
                cells.append(item.strftime("%Y-%m-%d"))
                continue
            value = round_value(item, decimal_places) if rounding else item
            if isinstance(value, (dict, list)):
                value = json.dumps(value, sort_keys=True, default=str if lenient_json else None)
            cells.append(value)
        processed.append(tuple(cells))
    return processed


def check_sql_function_usage(sqls, required_keywords) -> int:
    if not sqls:
        return 0
    combined = " ".join(sql.lower() for sql in sqls)
    return int(all(keyword.lower() in combined for keyword in required_keywords))


def strict_rows_equal(pred: list, gold: list, ordered: bool) -> bool:
    """Rows equal as multisets (as lists when `ordered`); floats within 1e-9 relative, NULLs equal."""
    if len(pred) != len(gold):
        return False
    if ordered:
        return all(_row_equal(p, g) for p, g in zip(pred, gold, strict=True))
    remaining = list(gold)
    for row in pred:
        for k, candidate in enumerate(remaining):
            if _row_equal(row, candidate):
                del remaining[k]
                break
        else:
            return False
    return True


def _row_equal(a, b) -> bool:
    return len(a) == len(b) and all(_cell_equal(x, y) for x, y in zip(a, b, strict=True))


def _cell_equal(x, y) -> bool:
    if isinstance(x, (int, float, Decimal)) and isinstance(y, (int, float, Decimal)):
        if isinstance(x, bool) != isinstance(y, bool):
            return False
        return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-12)
    return x == y


# ---------------------------------------------------------------- the namespace a test case sees


def namespace(session: Session, harness: str, pred_result) -> dict:
    """The globals of a test case: the names `harness` provides (profiles.HARNESS_NAMES), bound to `session`."""
    from evaluators.livesql.profiles import HARNESS_NAMES

    available = {**_functions(session), "date": date}
    names = HARNESS_NAMES[harness]
    env = {name: available[name] for name in names if name in available}
    if harness == "critic":  # BIRD-CRITIC's PostgreSQL ex_base takes no conditions (passing them fails)
        four = available["ex_base"]
        env["ex_base"] = lambda pred_sqls, sol_sqls, db_name, conn: four(pred_sqls, sol_sqls, db_name, conn)
    env["pred_query_result"] = pred_result
    return env


def _functions(session: Session) -> dict:
    def mark(name):
        session.used.add(name)

    def ex_base(pred_sqls, sol_sqls, db, conn, conditions=None):
        mark("ex_base")
        if not pred_sqls or not sol_sqls:
            return 0
        pred, pred_err, pred_to, _ = session.execute_queries(pred_sqls, conn)
        print(f"Predicted results: {pred}")
        if session.strict and session.untouched is not None:
            gold, gold_err, gold_to, _ = session.untouched(sol_sqls)
        else:
            gold, gold_err, gold_to, _ = session.execute_queries(sol_sqls, conn)
        print(f"Ground truth results: {gold}")
        if any((pred_err, pred_to, gold_err, gold_to)):
            return 0
        ordered = bool(conditions is not None and conditions.get("order", False))
        if session.strict:
            pred_rows, gold_rows = list(pred or []), list(gold or [])
            return int(strict_rows_equal(pred_rows, gold_rows, ordered))
        pred_rows, gold_rows = preprocess_results(pred or []), preprocess_results(gold or [])
        if not pred_rows or not gold_rows:
            return 0
        return int(pred_rows == gold_rows) if ordered else int(set(pred_rows) == set(gold_rows))

    def strict_or(name, lossy):
        def helper(sql_list):
            mark(name)
            return list(sql_list) if session.strict else lossy(sql_list)

        return helper

    def preprocess(results, decimal_places=2):
        mark("preprocess_results")
        return preprocess_results(results, decimal_places, rounding=not session.strict, lenient_json=session.strict)

    def perform(query, db=None, conn=None, query_timeout=30):
        return session.perform_query(query, conn)

    def execute_queries(queries, db=None, conn=None, logger=None, section_title="", return_error=False):
        result, failed, timed_out, message = session.execute_queries(queries, conn)
        return (result, failed, timed_out, message) if return_error else (result, failed, timed_out)

    def qep(old_sqls, sol_sqls, db, conn):
        return performance_compare_by_qep(session, old_sqls, sol_sqls, conn)

    return {
        "ex_base": ex_base,
        "remove_distinct": strict_or("remove_distinct", lambda sql_list: remove_distinct(sql_list, session.distinct)),
        "remove_round": strict_or("remove_round", remove_round),
        "remove_comments": remove_comments,
        "preprocess_results": preprocess,
        "check_sql_function_usage": check_sql_function_usage,
        "perform_query_on_sqlite_databases": perform,
        "perform_query_on_postgresql_databases": perform,
        "execute_queries": execute_queries,
        "performance_compare_by_qep": qep,
    }


def performance_compare_by_qep(session: Session, old_sqls, sol_sqls, conn) -> int:
    """1 when the solution's summed plan cost is below the old one's, each side measured inside a
    BEGIN ... ROLLBACK (PostgreSQL: EXPLAIN (FORMAT JSON) Total Cost; SQLite: 1.0 per statement)."""
    if not old_sqls or not sol_sqls:
        return 0
    costs = []  # a None `conn` takes a new connection for every statement, as the harness's pool does
    for sqls in (old_sqls, sol_sqls):
        try:
            session.perform_query("BEGIN", conn)
            costs.append(_plan_cost(session, sqls, conn))
        finally:
            session.perform_query("ROLLBACK", conn)
    return int(costs[1] < costs[0])


def _plan_cost(session: Session, sqls, conn) -> float:
    total = 0.0
    for sql in sqls:
        if not sql.strip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            try:
                session.perform_query(sql, conn)
            except Exception:
                pass  # the harness prints and goes on
            continue
        explain = ("EXPLAIN QUERY PLAN " if session.engine == "sqlite" else "EXPLAIN (FORMAT JSON) ") + sql
        try:
            rows, _ = session.perform_query(explain, conn)
        except Exception:
            continue
        if not rows:
            continue
        total += 1.0 if session.engine == "sqlite" else _json_total_cost(rows[0][0])
    return total


def _json_total_cost(plan) -> float:
    if isinstance(plan, str):
        plan = json.loads(plan)
    if isinstance(plan, list) and plan:
        return float(plan[0].get("Plan", {}).get("Total Cost", 0.0))
    return 0.0


def captured_stdout():
    """A buffer to hold what a test case prints (the harness logs it; we keep its tail)."""
    return io.StringIO()
