"""One LiveSQLBench / BIRD-CRITIC instance, graded inside a worker process (execution/worker.py action
`livesql`): never in the grader's own process, so a test case that loops or a prediction that runs away
dies with the worker when the parent's timeout kills it.

SQLite: each phase runs on a fresh private copy of `<db>_template.sqlite` in the run's work folder
(`request.out_csv` names the instance's folder), deleted after; the template is only read.  PostgreSQL:
each phase runs on a database cloned from the template (`CREATE DATABASE ... TEMPLATE`, what `createdb
--template` does), owned by a role made for the phase that the whole phase runs as, both dropped after
(pgclone.py).  Writes are allowed, but only there: on SQLite by the engine's limits, on PostgreSQL by the
role's privileges (security.py's statement rules are a second line).

A phase is the official sequence: preprocess_sql, the prediction (its failure fails the instance), every
test case (trusted gold Python, with only the helper names its harness provides), clean_up_sql.  When a
test case used a lossy helper, the strict phase runs the same sequence again on a fresh copy with the
strict helpers (a Query task's gold then runs on one more fresh copy, untouched by the prediction).  A
helper called without a connection gets a new one to the phase's database, closed with the phase.
"""

from __future__ import annotations

import contextlib
import sys
import time
import traceback
import uuid
from pathlib import Path

from evaluators.execution.backends.base import QueryFailed, Request
from evaluators.execution.opener import copy_database_file
from evaluators.livesql import security
from evaluators.livesql.helpers import LOSSY, Session, captured_stdout, namespace
from evaluators.livesql.profiles import DEFAULT_TEST_CASE, PROFILES, SPARE_CONNECTIONS, Profile, split_field

_OUTPUT_TAIL = 2000


def grade(request: Request, message: dict, notify) -> dict:
    """The worker action: {"official": phase, "strict": phase or None, "issue": phase or None}."""
    with security.process_memory_limit(request.setting("memory_limit_mb")):
        return _grade(request, message, notify)


def _grade(request: Request, message: dict, notify) -> dict:
    profile = PROFILES[message["profile"]]
    instance = message["instance"]
    notify({"event": "started"})
    place = _Place(profile, request, message)
    out: dict = {"issue": None, "strict": None}
    issue_sqls = split_field(instance, "issue_sql")
    if profile.checks_issue_sql and issue_sqls:
        out["issue"] = _phase(place, profile, instance, issue_sqls, strict=False)
    refusal = security.refused(split_field(instance, "pred_sqls"), profile.engine)
    if refusal:
        out["official"] = {"passed": False, "stage": "refused", "failed_tests": [], "messages": [refusal], "total": 0}
        return out
    official = _phase(place, profile, instance, split_field(instance, "pred_sqls"), strict=False)
    out["official"] = official
    if "strict_here" in official:
        out["strict"] = official.pop("strict_here")
        out["strict"].pop("used")
        official.pop("used")
    elif set(official.pop("used")) & set(LOSSY):
        strict = _phase(place, profile, instance, split_field(instance, "pred_sqls"), strict=True)
        strict.pop("used")
        out["strict"] = strict
    if out["issue"]:
        out["issue"].pop("used")
    return out


class _Place:
    """Where a phase runs: a fresh private database each time, removed after."""

    def __init__(self, profile: Profile, request: Request, message: dict):
        self.profile, self.request, self.message = profile, request, message

    @contextlib.contextmanager
    def database(self, deadline: float):
        if self.profile.engine == "sqlite":
            with _sqlite_copy(self.request, deadline) as triple:
                yield triple
        else:
            with _postgres_clone(self.request, self.message, deadline) as pair:
                yield (*pair, None)  # a clone's disk is the server's to limit

    def connect(self, stack: contextlib.ExitStack, conn, db_arg: str, deadline: float):
        """Another connection to this phase's database with the same login as `conn` (a helper called
        without one), closed with the phase."""
        if self.profile.engine == "sqlite":
            return stack.enter_context(contextlib.closing(_open_sqlite(self.request, Path(db_arg), deadline)[0]))
        return stack.enter_context(contextlib.closing(_another_connection(conn)))

    def session(self, stack: contextlib.ExitStack, conn, db_arg: str, strict: bool, deadline: float) -> Session:
        timeout = self.request.setting("statement_timeout_s", 30.0)
        session = Session(self.profile.engine, conn, strict, statement_timeout_ms=int(timeout * 1000))
        session.connect = lambda: self.connect(stack, conn, db_arg, deadline)
        session.spare_connections = SPARE_CONNECTIONS.get(self.profile.name)
        session.distinct = self.profile.remove_distinct
        return session

    def untouched(self, stack: contextlib.ExitStack, instance: dict, deadline: float):
        """The gold's result on a fresh database with only preprocess_sql run (strict, Query tasks): the
        official ex_base re-runs the gold after the prediction, so an answer that rewrote the data could
        make the gold agree with it.  Opened at the first call, each list of statements run once."""
        found: dict = {}

        def run(sqls):
            if "session" not in found:
                conn, db_arg, _ = stack.enter_context(self.database(deadline))
                found["session"] = self.session(stack, conn, db_arg, True, deadline)
                found["session"].execute_queries(split_field(instance, "preprocess_sql"), conn)
                found["session"].deadline = deadline
            key = tuple(sqls)
            if key not in found:
                found[key] = found["session"].execute_queries(list(sqls), found["session"].conn)
            return found[key]

        return run


def _phase(place: _Place, profile: Profile, instance: dict, pred_sqls: list, strict: bool) -> dict:
    deadline = time.monotonic() + place.request.setting("phase_timeout_s", 60.0)
    sol_sqls = split_field(instance, "sol_sql")
    tests, kwargs = profile.plan(instance)
    result: dict = {"passed": False, "failed_tests": [], "messages": [], "total": len(tests), "used": []}
    with contextlib.ExitStack() as stack:
        conn, db_arg, watch = stack.enter_context(place.database(deadline))
        session = place.session(stack, conn, db_arg, strict, deadline)
        prepared = session.execute_queries(split_field(instance, "preprocess_sql"), conn)  # errors ignored,
        session.deadline = deadline  # as the harness, unless the profile says a failed set-up fails the phase
        if profile.preprocess_must_pass and (prepared[1] or prepared[2]):
            result.update(stage="preprocess", timeout=prepared[2], messages=[prepared[3].strip()], used=[])
            return result
        if strict and instance.get("category", "Query") == "Query":
            session.untouched = place.untouched(stack, instance, deadline)
        outcome, failed, timed_out, message = session.execute_queries(pred_sqls, conn)
        if watch is not None and watch.exceeded():  # its last commit, or a statement the watch stopped
            failed, timed_out = True, False
            limit = place.request.setting("disk_limit_mb", 1024)
            message = f"the prediction wrote more than the disk limit ({limit} MB, the copy with its WAL)"
        if failed or timed_out:
            result.update(
                stage="prediction",
                timeout=timed_out,
                execution_error=failed,
                messages=[message.strip()],
                total=len(tests),
            )
        else:
            test_pred, test_sol = pred_sqls, sol_sqls
            if profile.name == "critic" and instance.get("efficiency"):
                test_pred, test_sol = split_field(instance, "issue_sql"), pred_sqls  # as BIRD-CRITIC calls them
            run = (profile, session, tests, outcome, test_pred, test_sol, db_arg, kwargs)
            result.update(_run_tests(*run), stage="tests")
            if not strict and set(session.used) & set(LOSSY) and _strict_here(tests, test_pred + test_sol):
                result["used"] = sorted(session.used)
                session.strict, session.used = True, set()
                result["strict_here"] = {**_run_tests(*run), "stage": "tests", "total": len(tests), "used": []}
                session.strict = False
        session.execute_queries(split_field(instance, "clean_up_sql"), conn)
        result["used"] = result.get("used") or sorted(session.used)
    return result


def _run_tests(profile, session, tests, outcome, pred_sqls, sol_sqls, db_arg, kwargs) -> dict:
    found: dict = {"failed_tests": [], "messages": []}
    for i, source in enumerate(tests, start=1):
        passed, words, printed = _run_test(profile, source, session, outcome, pred_sqls, sol_sqls, db_arg, kwargs)
        if not passed:
            found["failed_tests"].append(f"test_{i}")
            found["messages"].append(words)
            found.setdefault("printed", printed[-_OUTPUT_TAIL:])
    found["passed"] = not found["failed_tests"]
    return found


_WRITES = {"insert", "update", "delete", "merge", "create", "drop", "alter", "truncate", "replace", "grant"}
_WRITES |= {"revoke", "vacuum", "call", "do"}


def _strict_here(tests: list, sqls: list) -> bool:
    """The strict run may reuse this database when it only re-runs the default test on reading SQL: the
    state it sees is the one a fresh copy would reach (saves a second copy or clone per Query task).
    Reading SQL: one statement (a `;` only at its end) that starts with SELECT or WITH and has none of
    the writing words outside strings, comments and quoted names (one linear scan)."""
    if tests != [DEFAULT_TEST_CASE]:
        return False
    for sql in sqls:
        first, ended = None, False
        for kind, value in security.pg_tokens(str(sql)):
            opening = first is None and (kind != "word" or value not in ("select", "with"))
            if ended or opening or (kind == "word" and value in _WRITES):
                return False
            first, ended = value, kind == ";"
        if first is None:
            return False
    return True


def _run_test(profile, source, session, outcome, pred_sqls, sol_sqls, db_arg, kwargs) -> tuple[bool, str, str]:
    """Run one test case as the harness does (exec with its names); (passed, message, what it printed)."""
    default = profile.default_harness if source == DEFAULT_TEST_CASE else None
    env = namespace(session, default or profile.name, outcome)
    local = {"conn": session.conn, "pred_sqls": pred_sqls, "sol_sqls": sol_sqls, "db_path": db_arg, "kwargs": kwargs}
    code = profile.prelude + source + "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_path, conn, **kwargs)"
    buffer = captured_stdout()
    saved = sys.stdout
    sys.stdout = buffer
    try:
        exec(compile(code, "<test_case>", "exec"), env, local)  # trusted gold code, in this worker only
        return True, "", buffer.getvalue()
    except AssertionError as exc:
        return False, f"Test case failed due to assertion error: {exc}", buffer.getvalue()
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        line = f" (test_case line {where.lineno})" if where.filename == "<test_case>" else ""
        words = str(exc) or type(exc).__name__  # MemoryError says nothing of itself
        return False, f"Test case failed due to error: {words}{line}", buffer.getvalue()
    finally:
        sys.stdout = saved


@contextlib.contextmanager
def _sqlite_copy(request: Request, deadline: float):
    folder = Path(request.out_csv)
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / f"{uuid.uuid4().hex}.sqlite"
    try:
        _copy_template(request, copy)
        conn, watch = _open_sqlite(request, copy, deadline)
        try:
            yield conn, str(copy), watch
        finally:
            conn.close()
    finally:
        for leftover in (copy, *(copy.with_name(copy.name + s) for s in ("-journal", "-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


def _open_sqlite(request: Request, copy: Path, deadline: float):
    """A connection to the phase's copy, locked down, and the watch over its disk footprint."""
    import sqlite3

    conn = sqlite3.connect(str(copy), timeout=30)
    limits = (request.setting("memory_limit_mb"), request.setting("disk_limit_mb"))
    return conn, security.lock_down_sqlite(conn, *limits, deadline, copy)


def _another_connection(conn):
    """A new PostgreSQL connection as `conn` logged in (same server, database and role), whose values are
    those psycopg2 gives (the harness's driver)."""
    import psycopg

    from evaluators.execution.backends.servers import pg_no_room, when_room
    from evaluators.execution.pg_values import load_as_psycopg2

    dsn, password = conn.info.dsn, conn.info.password
    other = when_room(lambda: psycopg.connect(dsn, password=password, connect_timeout=10), pg_no_room)
    load_as_psycopg2(other)
    return other


def _copy_template(request: Request, copy: Path) -> None:
    """The template opened again beneath --db_root (the name came from the submission), then copied."""
    import os

    from evaluators.loading.paths import open_inside

    root = Path(request.setting("db_root"))
    fd = open_inside(root, os.path.relpath(str(request.db_ref), root))
    if fd is None:
        raise QueryFailed("no_database", f"no database {request.db_ref}")
    try:
        copy_database_file(fd, copy)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _postgres_clone(request: Request, message: dict, deadline: float):
    """The phase's clone, reached as a role made for it (pgclone.answer_clone): the answer and the test
    cases run with the clone owner's privileges, never the grader's."""
    from evaluators.execution.backends.base import import_driver
    from evaluators.execution.pg_values import load_as_psycopg2
    from evaluators.livesql import pgclone

    psycopg = import_driver("psycopg", "psycopg[binary]", "postgres")
    name = pgclone.clone_name(message["clone_prefix"])
    with pgclone.answer_clone(psycopg, request, str(request.db_ref), name) as conn:
        load_as_psycopg2(conn)  # values as psycopg2, the harness's driver, gives them
        yield conn, name
