"""Statements the official BIRD scripts run on PostgreSQL and MySQL that cannot change data.

psycopg2 and PyMySQL run whatever text they are given; the official verdict of `SHOW TABLES`, `VALUES (1)`,
`SELECT ... FOR UPDATE`, `SET @x = 1` or (psycopg2) `SELECT 1; SELECT name FROM t` is that of the rows
they return.  The project runs these too, still inside its read-only transaction, and refuses what could
write.  Allowed, statement by statement (sqlglot parses each in the server's dialect):

- a query without a write (the rule of `sqltext.read_only_problem`), locking clauses included
  (`FOR UPDATE`, `FOR SHARE`: PostgreSQL and MariaDB refuse them in a read-only transaction, so they are
  cut from the text, which leaves the rows unchanged; `LOCK IN SHARE MODE` runs as written);
- `VALUES (...)`; `SHOW ...`;
- MySQL: `SET @user_variable = expression` (a session variable, no data) and `SELECT ... INTO @variable`;
- several statements only on PostgreSQL (psycopg2 returns the last one's rows; PyMySQL without
  MULTI_STATEMENTS refuses them, so the official verdict there is an error);
- on MySQL, a text of comments only: the server answers with no rows (nothing is sent here); on
  PostgreSQL it is an error (no result to fetch).

MySQL's executable comments `/*! ... */` are never accepted (the server runs their text).
"""

from __future__ import annotations

from dataclasses import dataclass

WRITES = (
    "Insert",
    "Update",
    "Delete",
    "Merge",
    "Create",
    "Drop",
    "Alter",
    "TruncateTable",
    "Transaction",
    "Commit",
    "Rollback",
)


@dataclass(frozen=True)
class Plan:
    statements: tuple[str, ...]  # run in order, in one read-only transaction; the last one's rows count


def plan(sql: str, dialect: str) -> Plan | str:
    """How to run `sql` as the official driver does, read-only; or why it is refused."""
    from evaluators.sqltext import split_statements

    if dialect == "mysql" and "/*!" in sql:
        return "a MySQL executable comment (/*! ... */), which the server would run"
    statements = split_statements(sql, dialect)
    if not statements:
        # Comments only: MySQL answers with no rows, PostgreSQL with no result set (psycopg2's fetchall raises);
        # a bare `;` is a syntax error on both.
        return Plan(()) if dialect == "mysql" and sql.strip() and not _tokens(sql, dialect) else "an empty query"
    if len(statements) > 1 and dialect != "postgres":
        return f"{len(statements)} statements (the official driver runs one)"
    out = []
    for statement in statements:
        checked = _statement(statement, dialect)
        if checked.startswith("!"):
            return checked[1:]
        out.append(checked)
    return Plan(tuple(out))


def _statement(text: str, dialect: str) -> str:
    """The statement to run (locks cut on PostgreSQL), or `!why` it is refused."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    first = text.lstrip().split(None, 1)[0].upper() if text.strip() else ""
    if first == "SHOW":
        return text if _plain_show(text, dialect) else "!a SHOW this project cannot show to be read-only"
    try:
        parsed = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except SqlglotError as exc:
        return f"!cannot be parsed as {dialect} SQL ({str(exc).splitlines()[0][:120]})"
    if len(parsed) != 1:
        return "!not one statement"
    node = parsed[0]
    for inner in node.walk():
        if type(inner).__name__ in WRITES or isinstance(inner, exp.Command):
            return f"!it contains a {inner.key.upper()}"
    if first == "VALUES" and isinstance(node, (exp.Values, exp.Anonymous)):
        return text
    if isinstance(node, exp.Set):
        return text if dialect == "mysql" and _user_variables(node) else "!a SET of a server setting"
    if not isinstance(node, exp.Query):
        return f"!a {node.key.upper()} statement, not a query"
    into = node.args.get("into")
    if into is not None and not (dialect == "mysql" and isinstance(into.this, exp.Table) and _is_variable(into.this)):
        return "!SELECT ... INTO writes a table or a file"
    return _without_locks(text, dialect) if node.find(exp.Lock) else text


def _tokens(sql: str, dialect: str) -> list:
    from evaluators.sqltext import tokenize

    try:
        return tokenize(sql, dialect)
    except ValueError:
        return [sql]


def _is_variable(table) -> bool:
    from sqlglot import exp

    return isinstance(table.this, exp.Parameter)


def _user_variables(node) -> bool:
    """Every item is `@name = expression`."""
    from sqlglot import exp

    items = node.expressions
    return bool(items) and all(
        isinstance(item, exp.SetItem) and isinstance(item.this, exp.EQ) and isinstance(item.this.this, exp.Parameter)
        for item in items
    )


def _plain_show(text: str, dialect: str) -> bool:
    """`SHOW` followed by words only (names, `LIKE 'x'`): it reads the catalog or a setting."""
    from evaluators.sqltext import tokenize

    try:
        tokens = tokenize(text, dialect)
    except ValueError:
        return False
    return all(t.token_type.name in ("VAR", "STRING", "LIKE", "FROM", "IN", "SHOW") or t.text.isalpha() for t in tokens)


def _without_locks(text: str, dialect: str) -> str:
    """The text cut at the outermost `FOR UPDATE` / `FOR SHARE` / `FOR NO KEY UPDATE` / `FOR KEY SHARE`."""
    from evaluators.sqltext import tokenize

    depth = 0
    tokens = tokenize(text, dialect)
    for k, token in enumerate(tokens):
        depth += {"(": 1, ")": -1}.get(token.text, 0)
        following = tokens[k + 1].text.upper() if k + 1 < len(tokens) else ""
        if depth == 0 and token.text.upper() == "FOR" and following in ("UPDATE", "SHARE", "NO", "KEY"):
            return text[: token.start].rstrip()
    return text
