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

import functools
import re
import threading
from pathlib import Path

from evaluators.errors import InstanceError

_IMPORT_LOCK = threading.Lock()

SQL_TAGS = {
    "sql",
    "sqlite",
    "duckdb",
    "bigquery",
    "googlesql",
    "snowflake",
    "postgresql",
    "postgres",
    "mysql",
    "tsql",
    "plsql",
    "ansi",
}
DEFAULT_MAX_SQL_BYTES = 10 * 1024 * 1024
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^\n]*\n(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$", re.M | re.S
)
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
        return text[opened.end() :].strip()
    return text.strip()


def read_sql_file(path: Path, max_bytes: int = DEFAULT_MAX_SQL_BYTES, reason: str = "unreadable_prediction") -> str:
    """The SQL in a `.sql` file, fence removed; InstanceError(reason) when it is unreadable or blank."""
    path = path if isinstance(path, Path) else Path(path)  # a pinned answer stays the file it opened
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


def split_statements(sql: str, dialect: str | None = None) -> list[str]:
    """The statements of a script as they are written, split at the semicolons sqlglot's tokenizer sees
    (not those inside quotes, comments or dollar-quoted blocks)."""
    from sqlglot.tokens import TokenType

    try:
        tokens = tokenize(sql, dialect)
    except ValueError:
        return [sql.strip()] if sql.strip() else []
    statements: list[str] = []
    first: int | None = None
    last = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if first is not None:
                statements.append(sql[first : last + 1])
            first = None
            continue
        first = token.start if first is None else first
        last = token.end
    if first is not None:
        statements.append(sql[first : last + 1])
    return statements


def keyword_spans(sql: str, keyword: str, dialect: str | None = None) -> list[tuple[int, int]]:
    """(start, end) character spans of every `keyword` token in `sql` (not inside quotes or comments).

    sqlglot's tokenizer decides what is a token; text it cannot tokenize falls back to whole words."""
    try:
        tokens = tokenize(sql, dialect)
    except ValueError:
        return [m.span() for m in re.finditer(rf"\b{re.escape(keyword)}\b", sql, re.IGNORECASE)]
    word = keyword.upper()
    return [(t.start, t.end + 1) for t in tokens if t.text.upper() == word and sql[t.start : t.end + 1].upper() == word]


def tokenize(sql: str, dialect: str | None = None) -> list:
    """sqlglot's tokens of `sql` in `dialect` (each with .text, .token_type, .start, .end); ValueError
    when the text cannot be tokenized."""
    _, _, SqlglotError = _sqlglot()
    from sqlglot.dialects.dialect import Dialect

    try:
        return Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError as exc:
        raise ValueError(str(exc).splitlines()[0] if str(exc).strip() else "cannot tokenize") from None


def _sqlglot():
    with _IMPORT_LOCK:
        import logging

        import sqlglot
        from sqlglot import exp
        from sqlglot.errors import SqlglotError

        logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its fallback warnings are not the user's business
    return sqlglot, exp, SqlglotError


# MySQL and MariaDB run the text of `/*! ... */` and `/*M! ... */` (with or without a version number) as
# SQL, where every parser of ours sees a comment: `SELECT * FROM t /*! INTO OUTFILE '/path' */`.
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!", re.IGNORECASE)
_EXECUTABLE_COMMENT_DIALECTS = {"mysql", "mariadb", "doris", "starrocks", "singlestore", "tidb"}


def read_only_problem(sql: str, dialect: str, unparsed_ok: bool = False) -> str | None:
    """None when `sql` is exactly one read-only query in `dialect` (sqlglot's parser decides); else why not.

    Text sqlglot cannot parse is refused too (what cannot be read cannot be shown to be a query), unless
    `unparsed_ok`: an engine that can check the statement type itself without running it (BigQuery's dry
    run) then decides, and gives its own syntax error.  On MySQL-family engines an executable comment
    anywhere in the text (even where a lexer might see a string) is refused: the server would run it."""
    if dialect.lower() in _EXECUTABLE_COMMENT_DIALECTS and _EXECUTABLE_COMMENT.search(sql):
        return "an executable comment (/*! ... */ or /*M! ... */), which the server would run as SQL"
    sqlglot, exp, SqlglotError = _sqlglot()
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except SqlglotError as exc:
        if unparsed_ok:
            return None
        return f"cannot be parsed as {dialect} SQL ({str(exc).splitlines()[0][:120]})"
    except RecursionError:  # sqlglot's parser recurses per bracket: a few hundred nested ones exhaust it
        if unparsed_ok:
            return None
        return f"cannot be parsed as {dialect} SQL (nested too deeply for the parser)"
    if len(statements) != 1:
        return f"{len(statements)} statements; exactly one query is graded"
    statement = statements[0]
    if not isinstance(statement, exp.Query):
        return f"a {statement.key.upper()} statement, not a query"
    writes = (
        exp.Insert,
        exp.Update,
        exp.Delete,
        exp.Merge,
        exp.Create,
        exp.Drop,
        exp.Alter,
        exp.Command,
        exp.TruncateTable,
        exp.Transaction,
        exp.Commit,
        exp.Rollback,
        exp.Into,
    )
    for node in statement.walk():
        if isinstance(node, writes):
            return f"the query contains a {node.key.upper()}"
    return None


def lenient_tokens(sql: str, backslash_escapes: bool = False, hash_comments: bool = False) -> list:
    """sqlglot tokens under one lexing that fits any engine's gold SQL well enough to find its structure:
    '...' strings ('' escapes, and \\ ones with `backslash_escapes`), "..." and `...` identifiers,
    $$ and $tag$ blocks, -- and /* */ comments (and # with `hash_comments`).  ValueError when the text
    cannot be tokenized (an unterminated string)."""
    _, _, SqlglotError = _sqlglot()
    try:
        return _lenient_tokenizer(backslash_escapes, hash_comments)().tokenize(sql)
    except SqlglotError as exc:
        raise ValueError(str(exc).splitlines()[0] if str(exc).strip() else "cannot tokenize") from None


@functools.cache
def _lenient_tokenizer(backslash_escapes: bool, hash_comments: bool, cypher: bool = False):
    from sqlglot.dialects.postgres import Postgres  # its tokenizer knows $tag$ blocks

    class Lenient(Postgres.Tokenizer):
        QUOTES = ["'", '"'] if cypher else ["'"]
        IDENTIFIERS = ["`"] if cypher else ['"', "`"]
        STRING_ESCAPES = ["'", "\\"] if backslash_escapes or cypher else ["'"]
        # In Cypher `--` draws an undirected relationship, and `//` starts a comment.
        COMMENTS = ["//", ("/*", "*/")] if cypher else ["--", ("/*", "*/"), *(["#"] if hash_comments else [])]

    return Lenient


_OPEN_BRACKETS = {"L_PAREN", "L_BRACKET", "L_BRACE"}
_CLOSE_BRACKETS = {"R_PAREN", "R_BRACKET", "R_BRACE"}


def cypher_return_ordered(query: str) -> bool:
    """Whether the final RETURN of a Cypher query (outside brackets and subquery braces) has ORDER BY:
    the only case where row order is part of the answer."""
    _, _, SqlglotError = _sqlglot()
    try:
        tokens = _lenient_tokenizer(False, False, True)().tokenize(query)
    except SqlglotError:
        return False
    depth, ordered, previous = 0, False, ""
    for token in tokens:
        kind = token.token_type.name
        depth += (kind in _OPEN_BRACKETS) - (kind in _CLOSE_BRACKETS)
        word = token.text.upper() if query[token.start : token.end + 1].upper() == token.text.upper() else ""
        if depth == 0 and word == "RETURN":
            ordered = False  # a later RETURN (after UNION, or after WITH ... RETURN) is the final one
        elif depth == 0 and (kind == "ORDER_BY" or (previous == "ORDER" and word == "BY")):
            ordered = True
        previous = word if depth == 0 else previous
    return ordered


@functools.cache
def _cypher_words_tokenizer() -> type:
    base: type = _lenient_tokenizer(False, False, True)

    class Words(base):  # type: ignore[misc, valid-type]
        COMMANDS: set = set()  # `CALL { ... }` is a subquery in Cypher, not a command whose rest is text

    return Words


_LOAD_CSV = re.compile(r"\bLOAD\s*(/\*.*?\*/\s*)*CSV\b", re.IGNORECASE | re.DOTALL)


def cypher_loads_csv(query: str) -> bool:
    """Whether a Cypher query has a `LOAD CSV` clause (outside strings, comments and `quoted` names): it makes
    the graph server fetch a URL or read a file.  Text that cannot be tokenized is judged by its words."""
    _, _, SqlglotError = _sqlglot()
    try:
        tokens = _cypher_words_tokenizer()().tokenize(query)
    except SqlglotError:
        return bool(_LOAD_CSV.search(query))
    words = [t.text.upper() if t.token_type.name not in ("STRING", "IDENTIFIER") else "" for t in tokens]
    return any(a == "LOAD" and b == "CSV" for a, b in zip(words, words[1:], strict=False))
