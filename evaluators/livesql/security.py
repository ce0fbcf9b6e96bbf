"""The statement rules for a prediction that may write (docs/security.md, docs/livesql.md).

SQLite (the private copy is the only file it can reach):
- `SQLITE_LIMIT_ATTACHED = 0` and an authorizer that denies ATTACH/DETACH: no other database, no new file
  (`VACUUM INTO` needs an attach too).
- the `load_extension` SQL function is denied (Python leaves extension loading off as well).
- `PRAGMA temp_store = MEMORY`: temporary tables stay in memory, under the heap limit, not in /tmp.
- `PRAGMA hard_heap_limit`: the memory cap; `PRAGMA max_page_count`: the disk cap (pages the copy may
  grow by).  Predictions cannot set either back, nor the temp store or its directory.
- a progress handler stops any statement once the phase's deadline passes.
PostgreSQL: the prediction's text is refused before it runs when it names a function or statement that
reaches outside its clone (signalling other sessions, server files, other databases, roles, extensions).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time

from evaluators.execution.memory import address_space_in_use
from evaluators.execution.opener import set_heap_limit
from evaluators.limits import DEFAULT_MEMORY_LIMIT_MB

_PROGRESS_EVERY = 10_000
_LOCKED_PRAGMAS = {
    "max_page_count",
    "temp_store",
    "temp_store_directory",
    "data_store_directory",
    "hard_heap_limit",
    "wal_autocheckpoint",  # 0 would let the WAL grow without end
    "journal_size_limit",
    "cache_spill",
}
_DENIED = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}


def lock_down_sqlite(conn, memory_limit_mb, disk_limit_mb, deadline: float, copy) -> DiskWatch:
    """The copy's limits, set before the prediction runs and locked (the authorizer); the watch that holds
    the disk limit on everything the instance keeps on disk."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    set_heap_limit(conn, memory_limit_mb)
    conn.execute("PRAGMA temp_store = MEMORY")
    limit = int((disk_limit_mb or 1024) * 1024 * 1024)
    pages, size = conn.execute("PRAGMA page_count").fetchone()[0], conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + limit // size}")
    conn.execute("PRAGMA journal_mode = WAL")  # the harness's mode (helpers.py sets it again, the only one allowed)
    conn.execute(f"PRAGMA wal_autocheckpoint = {max(16, min(1000, limit // size // 4))}")
    conn.execute(f"PRAGMA journal_size_limit = {limit // 4}")  # a reset WAL shrinks back
    watch = DiskWatch(copy, limit)
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline or watch.exceeded()), _PROGRESS_EVERY)
    conn.set_authorizer(_authorize)
    return watch


class DiskWatch:
    """The instance's footprint: the copy and the files SQLite keeps beside it (WAL, its shared memory, a
    journal), against the copy's first size plus the disk limit.  Checked at every progress tick (so a
    running statement stops) and after the prediction (sandbox.py: the last commit's pages); temporary
    tables, sorts and statement journals stay in memory (`temp_store = MEMORY`), under the heap limit."""

    def __init__(self, copy, limit_bytes: int):
        self.files = [str(copy), *(f"{copy}{suffix}" for suffix in ("-wal", "-shm", "-journal"))]
        self.allowed = self.footprint() + limit_bytes
        self.over = False

    def footprint(self) -> int:
        total = 0
        for name in self.files:
            with contextlib.suppress(FileNotFoundError):
                total += os.stat(name).st_size
        return total

    def exceeded(self) -> bool:
        self.over = self.over or self.footprint() > self.allowed
        return self.over


def _authorize(action: int, arg1, arg2, database, trigger) -> int:
    if action in _DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and str(arg2 or "").lower() == "load_extension":
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and arg2 is not None:
        pragma = str(arg1 or "").lower()
        if pragma in _LOCKED_PRAGMAS or (pragma == "journal_mode" and str(arg2).lower() != "wal"):
            return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


# PostgreSQL's text rules, a second line behind the answer's privileges (docs/security.md): they look at
# statements and function calls only, never inside string literals, comments or quoted names, so a right
# answer that mentions 'CREATE USER' in a string or has a column named `role` is run.  One linear pass of
# a hand-written scanner (sqlglot's tokenizer is linear too but about 100 times slower on such text).
_PG_FUNCTIONS = {
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "pg_stat_file",
    "pg_file_write",
    "lo_import",
    "lo_export",
}
_CLUSTER_OBJECTS = {
    "database",
    "extension",
    "role",
    "user",
    "group",
    "tablespace",
    "server",
    "language",
    "subscription",
}
_SKIPPED_IN_HEAD = {"or", "replace", "trusted", "procedural"}
_BODY_STARTS = {"begin", "then", "else", "loop", "declare"}  # where a PL/pgSQL statement may start
_MAX_BODY_DEPTH = 3  # a function body inside a DO block inside ...: each level scans its text once more


def refused(pred_sqls: list, engine: str) -> str | None:
    """Why the prediction is not run, or None."""
    if engine != "postgres":
        return None  # SQLite's rules are enforced by the engine (lock_down_sqlite)
    for sql in pred_sqls:
        text = str(sql)
        lexings = (False, True) if "\\" in text else (False,)  # '...' read both ways: standard_conforming_strings
        for backslashes in lexings:
            what = _pg_refusal(text, backslashes, 0)
            if what:
                return f"not run: the prediction contains {what} (reaches outside its private database)"
    return None


def _pg_refusal(sql: str, backslashes: bool, depth: int) -> str | None:
    state = _Statement()
    starts = _BODY_STARTS if depth else ()
    for kind, value in pg_tokens(sql, backslashes):
        what = state.see(kind, value)
        if what:
            return what
        if kind == "dollar" and depth < _MAX_BODY_DEPTH and state.is_body():
            what = _pg_refusal(value, backslashes, depth + 1)
            if what:
                return what
        if kind == ";" or (kind == "word" and value in starts):
            state = _Statement()
        state.previous = (kind, value)
    return None


_NAMED_NOT_CALLED = {"table", "into", "exists", "view", "type", "index", "sequence", "function", "procedure"}


class _Statement:
    """What one statement's tokens have shown so far: its first words, whether it is a COPY, its brackets."""

    def __init__(self):
        self.head: list | None = []  # the first words, lowercased; None once something else came
        self.first = ""
        self.parens = 0
        self.previous: tuple = ("", "")
        self.before = ""  # the word before `previous`

    def see(self, kind: str, value: str) -> str | None:
        """Why the statement is refused once this token is seen, or None."""
        last_kind, last = self.previous
        if kind == "(" and last_kind in ("word", "name") and self.before not in _NAMED_NOT_CALLED:
            if last in _PG_FUNCTIONS or last.startswith("dblink"):
                return f"a call of {last}"
        self.parens += (kind == "(") - (kind == ")")
        if self.first == "copy" and self.parens <= 0 and last_kind == "word" and last in ("to", "from"):
            if kind in ("string", "dollar") or (kind == "word" and value == "program"):
                return "COPY to or from a server file or program"
        self.before = last if last_kind == "word" else ""
        if self.head is None:
            return None
        if kind == "word" and len(self.head) < 6:
            self.head.append(value)
            self.first = self.head[0]
            return _statement(self.head)
        if kind in ("string", "dollar") and self.head == ["load"]:
            return "LOAD of a library"
        self.head = None if self.head else self.head
        return None

    def is_body(self) -> bool:
        """A $$-quoted text that is code: a DO block, or a function's body (`AS $$ ... $$`)."""
        return self.first == "do" or (self.first == "create" and self.previous == ("word", "as"))


def _statement(head: list) -> str | None:
    """What the statement that starts with the words `head` does outside its database, if anything."""
    words = [w for w in head[1:] if w not in _SKIPPED_IN_HEAD]
    if head[0] in ("create", "alter", "drop") and words and words[0] in _CLUSTER_OBJECTS:
        return f"{head[0].upper()} {words[0].upper()} (a cluster object)"
    if head[:2] == ["alter", "system"]:
        return "ALTER SYSTEM"
    if head[0] == "set" and (
        "role" in head[1:3] or head[1:3] == ["session", "authorization"] or head[2:4] == ["session", "authorization"]
    ):
        return "a change of role"  # SET [SESSION | LOCAL] ROLE, SET [SESSION | LOCAL] SESSION AUTHORIZATION
    return None


_PG_TOKEN = re.compile(
    r"""\s*(?:(?P<estring>[eE]')|(?P<uident>[uU]&")|(?P<word>[^\W\d][\w$]*)|(?P<number>\d[\w.]*)"""
    r"""|(?P<dollar>\$(?:[^\W\d]\w*)?\$)|(?P<comment>--[^\n]*|/\*)|(?P<other>.)|(?P<end>\Z))""",
    re.S,
)
_COMMENT_MARK = re.compile(r"/\*|\*/")
_BODIES = {  # the body of a literal after its opening quote: no backtracking (the alternatives start apart)
    "'": re.compile(r"[^']*(?:''[^']*)*"),
    '"': re.compile(r'[^"]*(?:""[^"]*)*'),
    "\\": re.compile(r"[^'\\]*(?:(?:''|\\.)[^'\\]*)*", re.S),  # backslash escapes (E'...')
}


def pg_tokens(sql: str, backslashes: bool = False):
    """PostgreSQL's lexical tokens of `sql`, as (kind, value): kind is "word" (an unquoted name or keyword,
    lowercased), "name" (a "quoted" one), "string" (a '...' literal; with `backslashes`, read as when
    standard_conforming_strings is off), "dollar" (the text of a $tag$ body), "number", or the character
    itself.  Comments and spaces are skipped.  Linear: every character is looked at a bounded number of
    times (regular expressions without backtracking, `find` for closing marks); an unterminated string,
    name or comment runs to the end."""
    pos, end = 0, len(sql)
    while pos < end:
        match = _PG_TOKEN.match(sql, pos)
        if match is None:  # never: `(?P<end>\Z)` matches where nothing else does
            return
        kind = match.lastgroup or "end"
        text, pos = match.group(kind), match.end()
        if kind == "word":
            yield "word", text.lower()
        elif kind == "other" and text not in "'\"":
            yield text, text
        elif kind == "comment" and text == "/*":
            pos = _comment_end(sql, pos)
        elif kind == "dollar":
            close = sql.find(text, pos)
            close = end if close < 0 else close
            yield "dollar", sql[pos:close]
            pos = close + len(text)
        elif kind in ("estring", "other", "uident"):
            quote = '"' if text.endswith('"') else "\\" if backslashes or kind == "estring" else "'"
            body = _BODIES[quote].match(sql, pos)  # always a match, perhaps empty
            close = body.end() if body else pos
            yield ("name" if quote == '"' else "string"), sql[pos:close]
            pos = close + 1


def _comment_end(sql: str, pos: int) -> int:
    """Past the */ that closes a /* comment opened before `pos` (they nest in PostgreSQL)."""
    depth = 1
    while depth:
        mark = _COMMENT_MARK.search(sql, pos)
        if mark is None:
            return len(sql)
        depth += 1 if mark.group() == "/*" else -1
        pos = mark.end()
    return pos


@contextlib.contextmanager
def process_memory_limit(memory_limit_mb):
    """The worker's address space while it grades an instance, so a test case or driver cannot take the
    machine (room left for Python); the old limit comes back after, as the worker is reused.

    The cap is counted from the address space the worker holds already: a reused worker that had mapped
    gigabytes (DuckDB, pyarrow) failed the next instance's first allocation, so its verdict (exec_error
    instead of the test case's own failure) depended on what the worker had done before."""
    import resource

    room = int(((memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB) + 2048) * 1024 * 1024)
    wanted = address_space_in_use() + room
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
