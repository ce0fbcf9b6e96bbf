"""Spider 1's SQL structure, read as `process_sql.get_sql` of the official scorers reads a query.

The structure is the scorer's own, in the same Python shapes (tuples and lists compare as they do there):

    sql = {'select': (distinct, [(agg, val_unit), ...]), 'from': {'table_units': [...], 'conds': cond},
           'where': cond, 'groupBy': [col_unit, ...], 'having': cond, 'orderBy': (direction, [val_unit, ...]) or [],
           'limit': None or 1, 'intersect'/'union'/'except': None or sql}
    col_unit = (agg, column, distinct); val_unit = (unit_op, col_unit, col_unit or None)
    cond = [cond_unit, 'and'/'or', cond_unit, ...]; cond_unit = (not, op, val_unit, val1, val2)

Columns and tables are the scorer's ids (`__table.column__`, `__table__`, `__all__`) from the database's
own tables (not tables.json, as in the scorer).  Its quirks are kept: `LIMIT n` is `LIMIT 1` (a token is
never an int); one direction for the whole ORDER BY (the last one written); the SELECT list is read from
the start while FROM is the first `from` after it; a query ends where the grammar stops (text after it is
ignored); aliases are every `x AS y` anywhere, and one equal to a table name makes the query unreadable.
Anything the scorer's parser rejects raises `Unparsable`.  `parse(..., limit_int=True)` reads `LIMIT n` as
taoyds/spider's classic `process_sql.py` does: `int(n)` (a token `int()` refuses makes the query unreadable).
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.testsuite.spider_tokens import Unparsable, tokenize

CLAUSE_KEYWORDS = ("select", "from", "where", "group", "order", "limit", "intersect", "union", "except")
JOIN_KEYWORDS = ("join", "on", "as")
WHERE_OPS = ("not", "between", "=", ">", "<", ">=", "<=", "!=", "in", "like", "is", "exists")
UNIT_OPS = ("none", "-", "+", "*", "/")
AGG_OPS = ("none", "max", "min", "count", "sum", "avg")
SQL_OPS = ("intersect", "union", "except")
ORDER_OPS = ("desc", "asc")
_STOPS = (")", ";")


@dataclass(frozen=True)
class SchemaIds:
    """A database's tables and their columns, lower-cased, in the database's order."""

    tables: dict[str, list[str]]

    def column_id(self, table: str, column: str) -> str:
        if column not in self.tables.get(table, ()):
            raise Unparsable(f"no column {table}.{column}")
        return f"__{table}.{column}__"

    def table_id(self, table: str) -> str:
        if table not in self.tables:
            raise Unparsable(f"no table {table}")
        return f"__{table}__"

    def all_column_ids(self) -> list[str]:
        return [f"__{t}.{c}__" for t, columns in self.tables.items() for c in columns]


def _need(condition: bool, message: str) -> None:
    if not condition:
        raise Unparsable(message)


class _Reader:
    """One query's tokens, its aliases and the schema; each method returns (next index, part)."""

    def __init__(
        self, tokens: list[str], schema: SchemaIds, aliases: dict[str, str] | None = None, limit_int: bool = False
    ):
        self.toks = tokens
        self.schema = schema
        self.aliases = self._aliases() if aliases is None else aliases
        self.limit_int = limit_int

    def tok(self, at: int) -> str:
        if not -len(self.toks) <= at < len(self.toks):
            raise Unparsable("the query ends too soon")
        return self.toks[at]

    def _aliases(self) -> dict[str, str]:
        found = {self.tok(i + 1): self.tok(i - 1) for i, t in enumerate(self.toks) if t == "as"}
        for table in self.schema.tables:
            _need(table not in found, f"alias {table} has the same name as a table")
            found[table] = table
        return found

    def table_of(self, alias: str) -> str:
        if alias not in self.aliases:
            raise Unparsable(f"unknown table or alias {alias}")
        return self.aliases[alias]

    def column(self, at: int, defaults: list[str] | None) -> tuple[int, str]:
        tok = self.tok(at)
        if tok == "*":
            return at + 1, "__all__"
        if "." in tok:
            parts = tok.split(".")
            _need(len(parts) == 2, f"column {tok}")
            return at + 1, self.schema.column_id(self.table_of(parts[0]), parts[1])
        _need(bool(defaults), "no table for a column")
        for alias in defaults or ():
            table = self.table_of(alias)
            if tok in self.schema.tables.get(table, ()):
                return at + 1, self.schema.column_id(table, tok)
        raise Unparsable(f"Error col: {tok}")

    def col_unit(self, at: int, defaults) -> tuple[int, tuple]:
        block = self.tok(at) == "("
        at += block
        if self.tok(at) in AGG_OPS:
            agg = AGG_OPS.index(self.tok(at))
            _need(at + 1 < len(self.toks) and self.tok(at + 1) == "(", "( after an aggregate")
            at += 2
            distinct = self.tok(at) == "distinct"
            at, column = self.column(at + distinct, defaults)
            _need(at < len(self.toks) and self.tok(at) == ")", ") after an aggregate")
            return at + 1, (agg, column, distinct)  # the block's `)` is left for the caller, as in the scorer
        distinct = self.tok(at) == "distinct"
        at, column = self.column(at + distinct, defaults)
        if block:
            _need(self.tok(at) == ")", "unclosed (")
            at += 1
        return at, (0, column, distinct)

    def val_unit(self, at: int, defaults) -> tuple[int, tuple]:
        block = self.tok(at) == "("
        at += block
        at, first = self.col_unit(at, defaults)
        op, second = 0, None
        if at < len(self.toks) and self.tok(at) in UNIT_OPS:
            op = UNIT_OPS.index(self.tok(at))
            at, second = self.col_unit(at + 1, defaults)
        if block:
            _need(self.tok(at) == ")", "unclosed (")
            at += 1
        return at, (op, first, second)

    def value(self, at: int, defaults):
        start = at
        block = self.tok(at) == "("
        at += block
        tok = self.tok(at)
        found: dict | str | float | tuple
        if tok == "select":
            at, found = self.sql(at)
        elif '"' in tok:
            found, at = tok, at + 1
        else:
            try:
                found, at = float(tok), at + 1
            except ValueError:
                end = at
                while end < len(self.toks) and not _ends_value(self.toks[end]):
                    end += 1
                # a column as the value: read from the value's start (its `(` too), up to where it ends
                found = _Reader(self.toks[start:end], self.schema, self.aliases).col_unit(0, defaults)[1]
                at = end
        if block:
            _need(self.tok(at) == ")", "unclosed (")
            at += 1
        return at, found

    def condition(self, at: int, defaults) -> tuple[int, list]:
        conds: list = []
        while at < len(self.toks):
            at, unit = self.val_unit(at, defaults)
            negated = self.tok(at) == "not"
            at += negated
            _need(at < len(self.toks) and self.tok(at) in WHERE_OPS, "Error condition")
            op = WHERE_OPS.index(self.tok(at))
            at, first = self.value(at + 1, defaults)
            second = None
            if op == WHERE_OPS.index("between"):
                _need(self.tok(at) == "and", "BETWEEN without AND")
                at, second = self.value(at + 1, defaults)
            conds.append((negated, op, unit, first, second))
            if at < len(self.toks) and _ends_condition(self.toks[at]):
                break
            if at < len(self.toks) and self.toks[at] in ("and", "or"):
                conds.append(self.toks[at])
                at += 1
        return at, conds

    def select(self, at: int, defaults) -> tuple[int, tuple]:
        _need(self.tok(at) == "select", "'select' not found")
        at += 1
        distinct = at < len(self.toks) and self.toks[at] == "distinct"
        at += distinct
        units = []
        while at < len(self.toks) and self.toks[at] not in CLAUSE_KEYWORDS:
            agg = 0
            if self.toks[at] in AGG_OPS:
                agg, at = AGG_OPS.index(self.toks[at]), at + 1
            at, unit = self.val_unit(at, defaults)
            units.append((agg, unit))
            at += at < len(self.toks) and self.toks[at] == ","
        return at, (distinct, units)

    def from_(self, start: int) -> tuple[int, list, list, list[str]]:
        _need("from" in self.toks[start:], "'from' not found")
        at = self.toks.index("from", start) + 1
        defaults: list[str] = []
        units: list = []
        conds: list = []
        while at < len(self.toks):
            block = self.tok(at) == "("
            at += block
            if self.tok(at) == "select":
                at, nested = self.sql(at)
                units.append(("sql", nested))
            else:
                at += at < len(self.toks) and self.toks[at] == "join"
                table = self.table_of(self.tok(at))
                at += 3 if at + 1 < len(self.toks) and self.toks[at + 1] == "as" else 1
                units.append(("table_unit", self.schema.table_id(table)))
                defaults.append(table)
            if at < len(self.toks) and self.toks[at] == "on":
                at, more = self.condition(at + 1, defaults)
                conds += (["and"] if conds else []) + more
            if block:
                _need(self.tok(at) == ")", "unclosed (")
                at += 1
            if at < len(self.toks) and (self.toks[at] in CLAUSE_KEYWORDS or self.toks[at] in _STOPS):
                break
        return at, units, conds, defaults

    def clause_condition(self, at: int, keyword: str, defaults) -> tuple[int, list]:
        if at >= len(self.toks) or self.toks[at] != keyword:
            return at, []
        return self.condition(at + 1, defaults)

    def group_by(self, at: int, defaults) -> tuple[int, list]:
        if at >= len(self.toks) or self.toks[at] != "group":
            return at, []
        _need(self.tok(at + 1) == "by", "GROUP without BY")
        at += 2
        units = []
        while at < len(self.toks) and not _ends_clause(self.toks[at]):
            at, unit = self.col_unit(at, defaults)
            units.append(unit)
            if not (at < len(self.toks) and self.toks[at] == ","):
                break
            at += 1
        return at, units

    def order_by(self, at: int, defaults):
        if at >= len(self.toks) or self.toks[at] != "order":
            return at, []
        _need(self.tok(at + 1) == "by", "ORDER without BY")
        at += 2
        units, direction = [], "asc"
        while at < len(self.toks) and not _ends_clause(self.toks[at]):
            at, unit = self.val_unit(at, defaults)
            units.append(unit)
            if at < len(self.toks) and self.toks[at] in ORDER_OPS:
                direction, at = self.toks[at], at + 1
            if not (at < len(self.toks) and self.toks[at] == ","):
                break
            at += 1
        return at, (direction, units)

    def limit(self, at: int) -> tuple[int, int | None]:
        if at < len(self.toks) and self.toks[at] == "limit":
            number = self.tok(at + 1)  # `LIMIT` as the last token is an error; any token after it reads as 1
            if not self.limit_int:
                return at + 2, 1
            try:
                return at + 2, int(number)  # the classic script's own `int()`, with what Python accepts
            except ValueError:
                raise Unparsable(f"LIMIT {number} is not an integer") from None
        return at, None

    def sql(self, start: int) -> tuple[int, dict]:
        block = self.tok(start) == "("
        at = start + block
        end, units, conds, defaults = self.from_(start)
        _, select = self.select(at, defaults)
        found: dict = {"from": {"table_units": units, "conds": conds}, "select": select}
        at, found["where"] = self.clause_condition(end, "where", defaults)
        at, found["groupBy"] = self.group_by(at, defaults)
        at, found["having"] = self.clause_condition(at, "having", defaults)
        at, found["orderBy"] = self.order_by(at, defaults)
        at, found["limit"] = self.limit(at)
        at = self._skip_semicolons(at)
        if block:
            _need(self.tok(at) == ")", "unclosed (")
            at += 1
        at = self._skip_semicolons(at)
        for op in SQL_OPS:
            found[op] = None
        if at < len(self.toks) and self.toks[at] in SQL_OPS:
            op = self.toks[at]
            at, found[op] = self.sql(at + 1)
        return at, found

    def _skip_semicolons(self, at: int) -> int:
        while at < len(self.toks) and self.toks[at] == ";":
            at += 1
        return at


def _ends_value(tok: str) -> bool:
    return tok in (",", ")", "and") or tok in CLAUSE_KEYWORDS or tok in JOIN_KEYWORDS


def _ends_condition(tok: str) -> bool:
    return tok in CLAUSE_KEYWORDS or tok in _STOPS or tok in JOIN_KEYWORDS


def _ends_clause(tok: str) -> bool:
    return tok in CLAUSE_KEYWORDS or tok in _STOPS


def parse(query: str, schema: SchemaIds, limit_int: bool = False) -> dict:
    """The scorer's structure of `query`; `Unparsable` where the scorer's parser fails (`limit_int`: the classic
    script's `LIMIT n`)."""
    try:
        return _Reader(tokenize(query), schema, limit_int=limit_int).sql(0)[1]
    except (Unparsable, RecursionError) as error:
        raise Unparsable(str(error) or type(error).__name__) from None


def empty_sql() -> dict:
    """What the scorer compares an unreadable prediction as (every clause empty)."""
    return {
        "except": None,
        "from": {"conds": [], "table_units": []},
        "groupBy": [],
        "having": [],
        "intersect": None,
        "limit": None,
        "orderBy": [],
        "select": [False, []],
        "union": None,
        "where": [],
    }
