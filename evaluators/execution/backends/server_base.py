"""What the PostgreSQL and MySQL backends do alike: run a query on a server, stop it, fetch under limits.

One skeleton (`ServerBackend.run`): connect (as the answer's own login where the server has one), send the
parent a handle to stop the query by, set the server-side timeout and begin a read-only transaction, run
the statements the official drivers would run, fetch the last one's rows in batches under the fetch budget
(memory.py), roll back, and hand the connection back (`release`: closed, or kept for the worker's next
request where the backend can reset a session).  A driver error becomes `timeout` when the server says it
stopped the query, else `exec_error`.  `cancel` stops a query from a fresh connection, for a worker that is
killed.  Each backend keeps only what differs: its driver, connection, handle, timeout statement, cursor
and kill statement.
"""

from __future__ import annotations

import contextlib
import time

from evaluators.execution.backends import base
from evaluators.execution.backends.base import Backend, Outcome, QueryFailed, Request
from evaluators.execution.backends.servers import server_secrets
from evaluators.execution.backends.settings import MySQLSettings, PostgresSettings
from evaluators.execution.memory import limit_of


class ServerBackend(Backend):
    kill_grace_s = 2.0
    cancels_on_kill = True
    driver: tuple[str, str, str]  # module, pip package, extra (import_driver's arguments)
    settings_class: type[PostgresSettings] | type[MySQLSettings]  # the engine's own (settings.py), with its DSN
    password_variable: str  # the standard variable a password may come in

    def secrets(self, request: Request) -> list[str]:
        return server_secrets(self.settings_class.of(request).dsn, request, self.password_variable)

    def run(self, request: Request, notify) -> Outcome:
        driver = base.import_driver(*self.driver)
        statements = self.statements(request)  # None: the text as given, the server refusing what it must
        with self.login(driver, request) as login:
            con = self.connect(driver, request, login)
            try:
                notify({"event": "handle", **self.handle(con, login)})
                self.begin(driver, con, request)
                notify({"event": "started"})
                started = time.perf_counter()
                try:
                    if statements is None:
                        columns, rows = self.as_given(driver, con, request)
                    else:
                        columns, rows = self._run_statements(driver, con, request, statements)
                except self.driver_error(driver) as exc:
                    if self.timed_out(exc):
                        raise QueryFailed("timeout", f"stopped by the server after {request.timeout_s:g} s") from None
                    raise QueryFailed("exec_error", base.first_line(self.error_text(exc))) from None
                seconds = time.perf_counter() - started
                con.rollback()
                return base.keep_result(
                    request, lambda: base.records_frame(rows, columns), columns, rows, query_seconds=seconds
                )
            finally:
                self.release(driver, con, request, login)

    def cancel(self, request: Request, handle: dict) -> str:
        driver = base.import_driver(*self.driver)
        con = self.admin_connect(driver, request)
        try:
            return self.stop(driver, con, handle)
        finally:
            con.close()

    def _run_statements(self, driver, con, request: Request, statements: list[str]) -> tuple[list | None, list]:
        """The last statement's columns and rows (none for a text of comments only)."""
        for statement in statements[:-1]:  # SET @x = ...: what the official drivers run first
            con.cursor().execute(statement)
        if not statements:
            return None, []
        return self.last_rows(driver, con, request, statements[-1], limit_of(request.settings))

    # What each server does its own way.
    def statements(self, request: Request) -> list[str] | None:
        """The statements to run, checked before any connection (what a prediction may never run: base.py);
        None: the request's text goes to the server as it is (`as_given`)."""
        return base.statements_to_run(request, self.name)

    def as_given(self, driver, con, request: Request) -> tuple[list | None, list]:
        raise NotImplementedError

    def login(self, driver, request: Request) -> contextlib.AbstractContextManager[dict]:
        """Another user and password to run this request as, for the block's time; {}: the DSN's."""
        return contextlib.nullcontext({})

    def connect(self, driver, request: Request, login: dict):
        raise NotImplementedError

    def release(self, driver, con, request: Request, login: dict) -> None:
        """The request is over (its transaction rolled back or failed): the connection is closed."""
        con.close()

    def admin_connect(self, driver, request: Request):
        """The connection `cancel` stops a query from."""
        return self.connect(driver, request, {})

    def handle(self, con, login: dict) -> dict:
        """What the parent needs to stop this connection's query (`cancel`'s `handle`)."""
        raise NotImplementedError

    def begin(self, driver, con, request: Request) -> None:
        """Set the server-side timeout and begin the read-only transaction."""
        raise NotImplementedError

    def last_rows(self, driver, con, request: Request, statement: str, limit_mb: int) -> tuple[list | None, list]:
        raise NotImplementedError

    def driver_error(self, driver) -> type[Exception]:
        raise NotImplementedError

    def timed_out(self, exc: Exception) -> bool:
        raise NotImplementedError

    def error_text(self, exc: Exception) -> object:
        return exc

    def stop(self, driver, con, handle: dict) -> str:
        raise NotImplementedError
