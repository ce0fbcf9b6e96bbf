"""Spider 1's hardness levels (easy, medium, hard, extra), by the scorer's component counts (`eval_hardness`).

Counted on the gold's structure as parsed (before values and foreign keys are rebuilt), quirks kept: the
aggregate count reads the first field of every WHERE condition (its NOT flag) and of every HAVING item
(the `and`/`or` strings count), and "more than one WHERE condition" is `len(where) > 1` (connectors too).
"""

from __future__ import annotations

from evaluators.testsuite.spider_parse import WHERE_OPS

LEVELS = ("easy", "medium", "hard", "extra")


def _aggregates(units) -> int:
    return sum(1 for unit in units if unit[0] != 0)


def _nested(sql: dict) -> int:
    units = sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]
    inside = sum(isinstance(u[3], dict) + isinstance(u[4], dict) for u in units)
    return inside + sum(sql[op] is not None for op in ("intersect", "except", "union"))


def _component1(sql: dict) -> int:
    count = sum(bool(sql[key]) for key in ("where", "groupBy", "orderBy")) + (sql["limit"] is not None)
    count += max(len(sql["from"]["table_units"]) - 1, 0)
    connectors = sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2]
    units = sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]
    return count + connectors.count("or") + sum(1 for u in units if u[1] == WHERE_OPS.index("like"))


def _others(sql: dict) -> int:
    aggregates = _aggregates(sql["select"][1]) + _aggregates(sql["where"][::2]) + _aggregates(sql["groupBy"])
    if sql["orderBy"]:
        units = sql["orderBy"][1]
        aggregates += _aggregates([u[1] for u in units if u[1]] + [u[2] for u in units if u[2]])
    aggregates += _aggregates(sql["having"])
    return (aggregates > 1) + (len(sql["select"][1]) > 1) + (len(sql["where"]) > 1) + (len(sql["groupBy"]) > 1)


def hardness(sql: dict) -> str:
    one, two, others = _component1(sql), _nested(sql), _others(sql)
    if one <= 1 and others == 0 and two == 0:
        return "easy"
    if (others <= 2 and one <= 1 and two == 0) or (one <= 2 and others < 2 and two == 0):
        return "medium"
    if (
        (others > 2 and one <= 2 and two == 0)
        or (2 < one <= 3 and others <= 2 and two == 0)
        or (one <= 1 and others == 0 and two <= 1)
    ):
        return "hard"
    return "extra"
