"""Spider 1's exact set match and partial (component) matching, as test-suite-sql-eval's `evaluation.py` scores.

Before comparing, both structures are rebuilt as the scorer rebuilds them: every literal value becomes None
(a subquery stays), DISTINCT is dropped everywhere, and a column linked by foreign keys (tables.json) is
replaced by the lowest-numbered column of its linked set when its table is in the top-level FROM (the
outer FROM's tables decide, in INTERSECT/UNION/EXCEPT too; a subquery in WHERE or FROM is not rebuilt).
Components are then compared as the scorer does, quirks kept: GROUP BY compares column names without their
table; `and/or` returns (pred, gold) totals in swapped places on a mismatch; the JOIN ON conditions are
compared nowhere; exact match needs F1 = 1 on every component and, when the gold has a FROM, the same
sorted table units.
"""

from __future__ import annotations

import copy
from collections import Counter

from evaluators.testsuite.spider_parse import WHERE_OPS, SchemaIds

COMPONENTS = (
    "select",
    "select(no AGG)",
    "where",
    "where(no OP)",
    "group(no Having)",
    "group",
    "order",
    "and/or",
    "IUEN",
    "keywords",
)


# ------------------------------------------------------------------ the rebuild (values, DISTINCT, foreign keys)


def _without_values(sql: dict | None) -> dict | None:
    if sql is None:
        return None
    for key in ("having", "where"):
        sql[key] = _condition_without_values(sql[key])
    sql["from"]["conds"] = _condition_without_values(sql["from"]["conds"])
    for op in ("intersect", "except", "union"):
        sql[op] = _without_values(sql[op])
    return sql


def _condition_without_values(condition: list) -> list:
    out = []
    for k, item in enumerate(condition):
        if k % 2:
            out.append(item)
            continue
        negated, op, unit, first, second = item
        first = _without_values(first) if isinstance(first, dict) else None
        second = _without_values(second) if isinstance(second, dict) else None
        out.append((negated, op, unit, first, second))
    return out


class _Columns:
    def __init__(self, valid: set[str], kmap: dict[str, str]):
        self.valid, self.kmap = valid, kmap

    def col(self, unit):
        if unit is None:
            return None
        agg, column, _distinct = unit
        if column in self.kmap and column in self.valid:
            column = self.kmap[column]
        return agg, column, None

    def val(self, unit):
        return None if unit is None else (unit[0], self.col(unit[1]), self.col(unit[2]))

    def condition(self, condition: list) -> list:
        return [c if k % 2 else (c[0], c[1], self.val(c[2]), c[3], c[4]) for k, c in enumerate(condition)]

    def sql(self, sql: dict | None) -> dict | None:
        if sql is None:
            return None
        sql["select"] = (None, [(agg, self.val(unit)) for agg, unit in sql["select"][1]])
        sql["from"]["conds"] = self.condition(sql["from"]["conds"])
        sql["where"] = self.condition(sql["where"])
        sql["groupBy"] = [self.col(unit) for unit in sql["groupBy"]]
        if sql["orderBy"]:
            sql["orderBy"] = (sql["orderBy"][0], [self.val(unit) for unit in sql["orderBy"][1]])
        sql["having"] = self.condition(sql["having"])
        for op in ("intersect", "except", "union"):
            sql[op] = self.sql(sql[op])
        return sql


def rebuild(sql: dict, schema: SchemaIds, kmap: dict[str, str]) -> dict:
    """A copy of `sql` as the scorer compares it (values gone, DISTINCT gone, foreign keys as one column)."""
    sql = copy.deepcopy(sql)
    prefixes = {unit[1][:-2] for unit in sql["from"]["table_units"] if unit[0] == "table_unit"}
    valid = {c for c in schema.all_column_ids() if c[: c.index(".")] in prefixes}
    rebuilt = _Columns(valid, kmap).sql(_without_values(sql))
    assert rebuilt is not None  # a structure in, a structure out
    return rebuilt


# ------------------------------------------------------------------ components


def _scores(count: int, pred_total: int, label_total: int) -> int:
    return 1 if pred_total == label_total and count == pred_total else 0


def _take(found, pool: list) -> int:
    if found in pool:
        pool.remove(found)
        return 1
    return 0


def _select(pred: dict, gold: dict) -> tuple:
    units, cols = list(gold["select"][1]), [u[1] for u in gold["select"][1]]
    exact = sum(_take(u, units) for u in pred["select"][1])
    no_agg = sum(_take(u[1], cols) for u in pred["select"][1])
    return len(gold["select"][1]), len(pred["select"][1]), exact, no_agg


def _where(pred: dict, gold: dict) -> tuple:
    gold_conds, pred_conds = gold["where"][::2], pred["where"][::2]
    units, no_op = list(gold_conds), [c[2] for c in gold_conds]
    exact = sum(_take(c, units) for c in pred_conds)
    loose = sum(_take(c[2], no_op) for c in pred_conds)
    return len(gold_conds), len(pred_conds), exact, loose


def _column_name(column: str) -> str:
    return column.split(".")[1] if "." in column else column


def _group(pred: dict, gold: dict) -> tuple:
    names = [_column_name(u[1]) for u in gold["groupBy"]]
    count = sum(_take(_column_name(u[1]), names) for u in pred["groupBy"])
    return len(gold["groupBy"]), len(pred["groupBy"]), count


def _having(pred: dict, gold: dict) -> tuple:
    pred_total, gold_total = int(bool(pred["groupBy"])), int(bool(gold["groupBy"]))
    same = [u[1] for u in pred["groupBy"]] == [u[1] for u in gold["groupBy"]] and pred["having"] == gold["having"]
    return gold_total, pred_total, int(pred_total == gold_total == 1 and same)


def _order(pred: dict, gold: dict) -> tuple:
    limits = (pred["limit"] is None) == (gold["limit"] is None)
    count = int(bool(gold["orderBy"]) and pred["orderBy"] == gold["orderBy"] and limits)
    return int(bool(gold["orderBy"])), int(bool(pred["orderBy"])), count


def _and_or(pred: dict, gold: dict) -> tuple:
    pred_ops, gold_ops = set(pred["where"][1::2]), set(gold["where"][1::2])
    if pred_ops == gold_ops:
        return 1, 1, 1
    return len(pred_ops), len(gold_ops), 0  # the scorer's order: the prediction's total lands as the gold's


def _iuen(pred: dict, gold: dict) -> tuple:
    gold_total = pred_total = count = 0
    for op in ("intersect", "except", "union"):
        gold_total += gold[op] is not None
        pred_total += pred[op] is not None
        if gold[op] is not None and pred[op] is not None:
            count += exact_match(pred[op], gold[op])[0]
    return gold_total, pred_total, count


def keywords(sql: dict) -> set[str]:
    found = {name for name, key in (("where", "where"), ("group", "groupBy"), ("having", "having")) if sql[key]}
    if sql["orderBy"]:
        found |= {sql["orderBy"][0], "order"}
    found |= {name for name in ("limit", "except", "union", "intersect") if sql[name] is not None}
    connectors = sql["from"]["conds"][1::2] + sql["where"][1::2] + sql["having"][1::2]
    units = sql["from"]["conds"][::2] + sql["where"][::2] + sql["having"][::2]
    if "or" in connectors:
        found.add("or")
    if any(u[0] for u in units):
        found.add("not")
    found |= {name for name in ("in", "like") if any(u[1] == WHERE_OPS.index(name) for u in units)}
    return found


def _keywords(pred: dict, gold: dict) -> tuple:
    pred_words, gold_words = keywords(pred), keywords(gold)
    return len(gold_words), len(pred_words), len(pred_words & gold_words)


def partial_match(pred: dict, gold: dict) -> dict[str, dict]:
    """Each component's acc, rec, f1 (each 0 or 1) and its gold and predicted totals, as the scorer keeps them."""
    out = {}
    gold_total, pred_total, exact, loose = _select(pred, gold)
    out["select"], out["select(no AGG)"] = _entry(exact, pred_total, gold_total), _entry(loose, pred_total, gold_total)
    gold_total, pred_total, exact, loose = _where(pred, gold)
    out["where"], out["where(no OP)"] = _entry(exact, pred_total, gold_total), _entry(loose, pred_total, gold_total)
    for name, component in (
        ("group(no Having)", _group),
        ("group", _having),
        ("order", _order),
        ("and/or", _and_or),
        ("IUEN", _iuen),
        ("keywords", _keywords),
    ):
        gold_total, pred_total, count = component(pred, gold)
        out[name] = _entry(count, pred_total, gold_total)
    return out


def _entry(count: int, pred_total: int, gold_total: int) -> dict:
    score = _scores(count, pred_total, gold_total)
    return {"acc": score, "rec": score, "f1": score, "label_total": gold_total, "pred_total": pred_total}


def exact_match(pred: dict, gold: dict) -> tuple[int, dict]:
    """(the exact-set-match verdict 0/1, the partial results) of two rebuilt structures."""
    partial = partial_match(pred, gold)
    if any(entry["f1"] != 1 for entry in partial.values()):
        return 0, partial
    if gold["from"]["table_units"]:
        return int(_same_tables(pred["from"]["table_units"], gold["from"]["table_units"])), partial
    return 1, partial


def _same_tables(pred_units: list, gold_units: list) -> bool:
    try:
        return sorted(pred_units) == sorted(gold_units)
    except TypeError:  # two subqueries in one FROM: the scorer's sort fails there; compared as multisets
        return Counter(map(repr, pred_units)) == Counter(map(repr, gold_units))
