"""What every backend shares: the request it runs, the failures it reports, result CSVs, redaction.

A backend is a `Backend` subclass whose `run` executes inside a worker process
(see `worker.py`); the parent only calls `secrets` (to redact what it reports)
and, after killing a worker, `cancel` (in a fresh worker) for engines that keep
running a query once the client is gone.  Drivers are imported inside these
methods, never at module import.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from evaluators.errors import MissingExtra
from evaluators.execution.backends.servers import PG_VARIABLES
from evaluators.execution.backends.settings import ENGINE_KEY
from evaluators.execution.row_files import encode_rows, rows_path, write_rows

# Reasons an execution can end with; "ok" is success.  Texts for the report live in report.REASONS.
REASONS = (
    "ok",
    "exec_error",
    "timeout",
    "cost_limit",
    "credentials_missing",
    "network_error",
    "missing_extra",
    "no_database",
    "result_too_large",
    "memory_limit",
    "disk_limit",
)
# What a run keeps: the result CSV; the CSV and the typed rows beside it (rowfile.py); or only the
# time of executing and fetching every row (VES timing runs, which write nothing).
# inline: typed rows come back in the result itself, no file; values: the driver's rows kept as they are, for
# an action that compares them in the worker (never sent over the pipe)
COLLECT = ("csv", "rows", "time", "inline", "values")
REDACTED = "[redacted]"
CREDENTIAL_VARIABLES = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "SNOWFLAKE_",
    "MYSQL_",
    *PG_VARIABLES,
)  # names, or prefixes ending in "_"
_SECRET_WORDS = ("password", "passcode", "passphrase", "secret", "private_key", "token", "key", "pwd")
_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.S)


@dataclass(frozen=True)
class Request:
    """One query for one backend; JSON-safe so it crosses the pipe to the worker unchanged."""

    backend: str
    sql: str
    out_csv: str
    db_ref: str | None
    settings: dict = field(default_factory=dict)  # ExecConfig.settings(backend): JSON-safe values
    # Credential variables as the caller sees them now: a reused worker's own environment may be older.
    environment: dict = field(default_factory=dict, repr=False)
    collect: str = "csv"  # one of COLLECT
    # A gold query is trusted; a prediction is not: engines without a read-only session refuse anything
    # but one read-only query before it reaches them (sqltext.read_only_problem).
    trusted: bool = False

    @property
    def timeout_s(self) -> float:
        return float(self.settings.get("timeout_s", 60.0))

    def setting(self, name: str, default=None):
        value = self.settings.get(name)
        return default if value is None else value

    def env(self, name: str) -> str | None:
        return self.environment.get(name) or None

    def to_dict(self) -> dict:
        """Field by field, the dicts copied one level (they hold JSON values only): `asdict`'s deep copy of
        the settings cost a query a good part of its parent-side time."""
        return {
            name: dict(value) if isinstance(value, dict) else value
            for name, value in ((f.name, getattr(self, f.name)) for f in fields(self))
        }

    @classmethod
    def from_dict(cls, data: dict) -> Request:
        return cls(**data)


_CREDENTIAL_NAMES = frozenset(name for name in CREDENTIAL_VARIABLES if not name.endswith("_"))
_CREDENTIAL_PREFIXES = tuple(name for name in CREDENTIAL_VARIABLES if name.endswith("_"))


def credential_environment() -> dict:
    """The credential variables of this process, for a request (once per query on a server: a set and one
    `startswith` per variable, where a scan of every name cost a query 0.4 ms)."""
    return {k: v for k, v in os.environ.items() if k in _CREDENTIAL_NAMES or k.startswith(_CREDENTIAL_PREFIXES)}


class Backend:
    name = "?"
    kill_grace_s = 1.0  # how long the parent waits past the timeout (for the backend's own stop) before it kills
    cancels_on_kill = False  # True: the server keeps going after a kill, so the parent calls `cancel`

    def run(self, request: Request, notify) -> Outcome:
        """Run the SQL, write `request.out_csv`; raise QueryFailed on failure.

        `notify(event)` sends a dict to the parent: {"event": "started"} when the query itself starts (the
        timeout counts from there; the worker sends it only if the query runs on, `worker._Outbox`) and
        {"event": "handle", ...} with a server-side job id, at once.
        """
        raise NotImplementedError

    def secrets(self, request: Request) -> list[str]:
        """Every credential value this request would use (never shown, only redacted)."""
        return []

    def cancel(self, request: Request, handle: dict) -> str:
        """Stop a server-side query by its handle; returns words for the report."""
        return "nothing to cancel"


class QueryFailed(Exception):
    """The query did not produce a result; `reason` is one of REASONS."""

    def __init__(self, reason: str, detail: str, bytes_processed: int | None = None):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.bytes_processed = bytes_processed


@dataclass(frozen=True)
class Outcome:
    first_cell: object
    rows: int
    columns: int
    bytes_processed: int | None = None
    query_seconds: float | None = None  # executing and fetching every row, timed inside the worker
    data: dict | None = None  # collect="inline": {"columns": [...], "rows": [[encoded cell, ...], ...]}


def first_line(text: object) -> str:
    """Engines put the useful sentence first and a query plan or stack below it.

    A first line that only announces the next one ("SQL compilation error:", as Snowflake
    writes) keeps that next line too.
    """
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if not lines:
        return str(text).strip()
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def redact(text: str, secrets) -> str:
    """`text` with every secret (and every long line of a multi-line secret) replaced by [redacted]."""
    text = _PEM_BLOCK.sub(REDACTED, str(text))
    for secret in sorted(_expanded(secrets), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _expanded(secrets) -> set:
    """A secret can reach a message verbatim, JSON-escaped, repr-escaped, one line at a time, URL-encoded
    (a connection string, a query parameter) or base64-encoded (an auth header), on its own or inside a
    longer base64 text."""
    from urllib.parse import quote, quote_plus

    out = set()
    for secret in secrets or ():
        if not isinstance(secret, str) or not secret:
            continue
        out.update(
            {
                secret,
                json.dumps(secret)[1:-1],
                repr(secret)[1:-1],
                quote(secret, safe=""),
                quote(secret),
                quote_plus(secret),
            }
        )
        out.update(line.strip() for line in secret.splitlines() if len(line.strip()) >= 8)
        out.update(_base64_forms(secret.encode("utf-8")))
    return {s for s in out if s}


def _base64_forms(secret: bytes) -> set:
    """The base64 text of `secret` at each of the three byte alignments it can have inside a longer value
    (only the characters that depend on the secret alone), standard and URL-safe alphabets."""
    import base64

    forms = {base64.b64encode(secret).decode("ascii")}
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode("ascii")
        start, end = -(-offset // 3) * 4, ((offset + len(secret)) // 3) * 4
        if end - start >= 8:
            forms.add(encoded[start:end])
    return forms | {f.replace("+", "-").replace("/", "_") for f in forms}


def secret_values(mapping: dict | None) -> list[str]:
    """Values of credential keys that look secret (password, private_key, token, ...)."""
    found = []
    for key, value in (mapping or {}).items():
        name = str(key).lower()
        if isinstance(value, dict):
            found += secret_values(value)
        elif (
            isinstance(value, str)
            and any(w in name for w in _SECRET_WORDS)
            and not name.endswith(("_uri", "_url", "_id_hint"))
        ):
            found.append(value)
    return found


def read_json_file(path: Path) -> dict | None:
    """A credentials file as a dict, or None when there is no such file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        # The message names the file and the problem, never its content.
        raise QueryFailed(
            "credentials_missing", f"{Path(path).name} cannot be read as JSON ({type(exc).__name__})"
        ) from None
    if not isinstance(data, dict):
        raise QueryFailed("credentials_missing", f"{Path(path).name} must hold a JSON object")
    return data


def import_driver(module: str, package: str, extra: str):
    """The driver module, or QueryFailed('missing_extra') naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise QueryFailed("missing_extra", str(MissingExtra(package, extra))) from None


def json_safe(value):
    """A cell as a JSON value: numbers stay numbers, NULL/NaN become None, anything else its text.

    Decimals become their exact text (number_match reads text anyway).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if hasattr(value, "item") and not isinstance(value, (bytes, bytearray)):  # numpy scalars
        try:
            return json_safe(value.item())
        except (TypeError, ValueError):
            pass
    if _is_missing(value):
        return None
    return str(value)  # dates and times as pandas writes them into the CSV ("2024-01-31 12:00:00")


def _is_missing(value) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError, ImportError):
        return False


def save_frame(frame, out_csv: str, bytes_processed: int | None = None) -> Outcome:
    """Write the result as pandas writes it (index=False), atomically; return its first cell."""
    from evaluators.atomic import atomic_path

    with atomic_path(out_csv) as tmp:
        frame.to_csv(tmp, index=False)
        if _holds_carriage_return(tmp):
            # pandas ends lines with "\n" and so leaves a lone "\r" unquoted: read back, 'alpha\rbeta' would be
            # two rows.  With "\r\n" line ends the csv module quotes every cell holding "\r" or "\n".
            frame.to_csv(tmp, index=False, lineterminator="\r\n")
    first = json_safe(frame.iat[0, 0]) if frame.shape[0] and frame.shape[1] else None
    return Outcome(first, int(frame.shape[0]), int(frame.shape[1]), bytes_processed)


def _holds_carriage_return(path) -> bool:
    """Whether the file holds a "\\r": read whole when small, else scanned through a memory map (in C, without
    reading a large result into memory)."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= 1 << 20:
            return b"\r" in handle.read()
        import mmap

        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return view.find(b"\r") >= 0


# What a worker keeps between requests that other processes may need (a server's connection slots): a backend
# that keeps something registers how to let it go, and the worker calls each when no request came for a while
# (worker.IDLE_RELEASE_S).  An idle worker's kept sessions otherwise held slots a busy one was waiting for.
IDLE_RELEASES: list = []

FRAMED = ("csv", "rows")  # the collects `keep_result` keeps through a pandas frame (time and inline need none)


def keep_result(
    request: Request,
    frame_of,
    columns: list | None = None,
    rows: list | None = None,
    bytes_processed: int | None = None,
    query_seconds: float | None = None,
) -> Outcome:
    """Keep what `request.collect` asks for.  `frame_of()` builds the result frame (only when a CSV is
    written); `rows` are the driver's Python rows, read from the frame when a driver gives none."""
    if request.collect == "time":
        return Outcome(None, len(rows or ()), len(columns or ()), bytes_processed, query_seconds)
    if request.collect in ("inline", "values"):  # typed values over the pipe, or kept here: no file
        if rows is None:  # a driver that gives a frame (BigQuery)
            frame = frame_of()
            columns, rows = [str(c) for c in frame.columns], _frame_rows(frame)
        if request.collect == "values":
            data = {"columns": [str(c) for c in columns or []], "rows": rows}
            return Outcome(None, len(rows), len(columns or ()), bytes_processed, query_seconds, data)
        encoded, tagged = encode_rows(rows)
        first = json_safe(rows[0][0]) if rows and columns else None
        return Outcome(
            first,
            len(rows),
            len(columns or ()),
            bytes_processed,
            query_seconds,
            {"columns": [str(c) for c in columns or []], "rows": encoded, "tagged": tagged},
        )
    frame = frame_of()
    outcome = replace(save_frame(frame, request.out_csv, bytes_processed), query_seconds=query_seconds)
    if request.collect == "rows":
        if rows is None:
            columns, rows = [str(c) for c in frame.columns], _frame_rows(frame)
        write_rows(rows_path(request.out_csv), columns or [], rows)
    return outcome


def _frame_rows(frame) -> list[tuple]:
    """Rows of a driver's frame, its missing values (NaN, NA, NaT) read as NULL."""
    return [
        tuple(None if _is_scalar_missing(v) else v for v in row) for row in frame.itertuples(index=False, name=None)
    ]


def _is_scalar_missing(value) -> bool:
    """NaN, NA or NaT; a text or list cell is never missing (pd.isna would answer item by item)."""
    return value is None or (not hasattr(value, "__len__") and _is_missing(value))


def records_frame(rows: list, columns: list | None):
    """A frame as pandas.read_sql_query builds it from DB-API rows (Spider2-lite reads SQLite this way)."""
    if columns is None:
        return empty_frame()
    import pandas as pd

    return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)


def empty_frame():
    import pandas as pd

    return pd.DataFrame()


DIALECTS = {"sqlite": "sqlite", "duckdb": "duckdb"}


def one_statement_problem(sql: str | None, engine: str) -> str | None:
    from evaluators.sqltext import split_statements

    if sql is None or not sql.strip():
        return None  # the checks themselves call empty SQL a syntax error
    count = len(split_statements(sql, DIALECTS.get(engine)))
    return None if count == 1 else f"expected 1 statement, got {count}"


def refuse_unless_one_query(request: Request, dialect: str, unparsed_ok: bool = False) -> None:
    """An untrusted request runs only if it is exactly one read-only query; QueryFailed before any connection."""
    if request.trusted:
        return
    from evaluators.sqltext import read_only_problem

    problem = read_only_problem(request.sql, dialect, unparsed_ok)
    if problem:
        raise QueryFailed("exec_error", f"not run: only one read-only query is graded, and this is {problem}")


def statements_to_run(request: Request, dialect: str) -> list[str]:
    """The statements a server backend runs for `request`: its SQL when it is one read-only query; with the
    `official_statements` setting (BIRD on PostgreSQL/MySQL), the read-only statements the official
    drivers run (`official_statements.py`), the last one's rows counting.  QueryFailed before any connection."""
    if request.trusted or not request.settings.get(ENGINE_KEY, {}).get("official_statements"):
        refuse_unless_one_query(request, dialect)
        return [request.sql]
    from evaluators.official_statements import plan

    found = plan(request.sql, dialect)
    if isinstance(found, str):
        raise QueryFailed("exec_error", f"not run: only read-only statements are graded, and this is {found}")
    return list(found.statements)
