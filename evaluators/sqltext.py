"""SQL as submitted: read a `.sql` file and take the SQL out of a markdown fence.

Model outputs often wrap the query in a fence, with words before or after it:

    Here is the query:
    ```sql
    SELECT ...
    ```

`unwrap_fences` returns the body of the last fenced block tagged as SQL (the last
one, because a model that revises itself writes the final query last); failing
that, the last untagged block; text without a fence is returned stripped.  An
opening fence that is never closed (a cut-off answer) is dropped too.
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

from .errors import InstanceError

_IMPORT_LOCK = threading.Lock()

SQL_TAGS = {"sql", "sqlite", "duckdb", "bigquery", "googlesql", "snowflake", "postgresql", "postgres", "mysql",
            "tsql", "plsql", "ansi"}
DEFAULT_MAX_SQL_BYTES = 10 * 1024 * 1024
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^\n]*\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$",
                    re.M | re.S)
_OPENING = re.compile(r"\A\s*(`{3,}|~{3,})[^\n]*\n")


def unwrap_fences(text: str) -> str:
    blocks = [(m.group("tag").lower(), m.group("body")) for m in _FENCE.finditer(text)]
    if blocks:
        tagged = [body for tag, body in blocks if tag in SQL_TAGS]
        untagged = [body for tag, body in blocks if not tag]
        chosen = (tagged or untagged or [blocks[-1][1]])[-1]
        return chosen.strip()
    opened = _OPENING.match(text)
    if opened:  # a fence that was opened and never closed
        return text[opened.end():].strip()
    return text.strip()


def read_sql_file(path: Path, max_bytes: int = DEFAULT_MAX_SQL_BYTES,
                  reason: str = "unreadable_prediction") -> str:
    """The SQL in a `.sql` file, fence removed; InstanceError(reason) when it is unreadable or blank."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InstanceError(reason, f"{path.name} is {size:,} bytes, over the limit of {max_bytes:,}")
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InstanceError(reason, f"{path.name}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise InstanceError(reason, f"{path.name}: {exc.strerror or exc}") from None
    sql = unwrap_fences(text)
    if not sql:
        raise InstanceError(reason, f"{path.name}: no SQL in the file")
    return sql


# A statement that changes data or the catalog, judged by its leading keyword.  Anything else goes to the
# engine, so a typo still gets the engine's own syntax error.  Session-local set-up (temp functions and
# tables) is allowed: BigQuery scripts need it.
_WRITES = re.compile(r"\(*\s*(INSERT|UPDATE|DELETE|MERGE|UPSERT|TRUNCATE|DROP|UNDROP|ALTER|RENAME|REPLACE|COMMENT|"
                     r"GRANT|REVOKE|COPY|PUT|REMOVE|UNLOAD|LOAD|EXPORT|CALL|EXECUTE|VACUUM|ATTACH|DETACH|"
                     r"CREATE(?!\s+(OR\s+REPLACE\s+)?TEMP(ORARY)?\s+(FUNCTION|TABLE)\b))\b", re.I)
_QUOTES = {"'": "'", '"': '"', "`": "`"}


def split_statements(sql: str) -> list[str]:
    """The statements of a script, split at semicolons outside quotes, comments and $$ blocks; comments dropped."""
    statements, current, i = [], [], 0
    while i < len(sql):
        two = sql[i:i + 2]
        if two == "--" or sql[i] == "#":
            end = sql.find("\n", i)
            i = len(sql) if end < 0 else end
        elif two == "/*":
            end = sql.find("*/", i + 2)
            current.append(" ")
            i = len(sql) if end < 0 else end + 2
        elif sql[i] in _QUOTES or two == "$$":
            end = _closing(sql, i)
            current.append(sql[i:end])
            i = end
        elif sql[i] == ";":
            statements.append("".join(current))
            current, i = [], i + 1
        else:
            current.append(sql[i])
            i += 1
    statements.append("".join(current))
    return [s.strip() for s in statements if s.strip()]


def _closing(sql: str, start: int) -> int:
    """Index just past the quote or $$ block opened at `start` (backslash escapes, doubled quotes)."""
    if sql.startswith("$$", start):
        end = sql.find("$$", start + 2)
        return len(sql) if end < 0 else end + 2
    quote, i = sql[start], start + 1
    while i < len(sql):
        if sql[i] == "\\":
            i += 2
        elif sql[i] == quote:
            if sql[i + 1:i + 2] == quote:
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return len(sql)


def writing_statements(sql: str) -> list[str]:
    """The statements that would change data or the catalog (judged by their leading keywords)."""
    return [s for s in split_statements(sql) if _WRITES.match(s)]


def keyword_spans(sql: str, keyword: str, dialect: str | None = None) -> list[tuple[int, int]]:
    """(start, end) character spans of every `keyword` token in `sql` (not inside quotes or comments).

    sqlglot's tokenizer decides what is a token; text it cannot tokenize falls back to whole words."""
    with _IMPORT_LOCK:  # sqlglot's modules import each other: two threads importing it at once can fail
        from sqlglot.errors import SqlglotError
        from sqlglot.tokens import Tokenizer

    try:
        tokens = Tokenizer(dialect=dialect).tokenize(sql) if dialect else Tokenizer().tokenize(sql)
    except SqlglotError:
        return [m.span() for m in re.finditer(rf"\b{re.escape(keyword)}\b", sql, re.IGNORECASE)]
    word = keyword.upper()
    return [(t.start, t.end + 1) for t in tokens if t.text.upper() == word and sql[t.start:t.end + 1].upper() == word]
