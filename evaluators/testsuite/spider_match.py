"""One question's exact set match, components and hardness, as test-suite-sql-eval's `evaluation.py` judges it
(and taoyds/spider's classic one: `limit_int`)."""

from __future__ import annotations

from typing import NamedTuple

from evaluators.testsuite.exact_match import exact_match, rebuild
from evaluators.testsuite.hardness import hardness
from evaluators.testsuite.spider_parse import SchemaIds, Unparsable, empty_sql, parse


class Judged(NamedTuple):
    fields: dict  # hardness, exact_match, components, prediction_parse
    pred: dict  # both structures as the scorer compares them (the classic execution check reads their SELECT)
    gold: dict


def judge(gold_sql: str, pred_sql: str, schema: SchemaIds, kmap: dict[str, str]) -> dict:
    """`pred_sql` as the scorer has it (`value` already `1`).  A gold the parser cannot read raises
    `Unparsable` (the scorer stops there); a prediction it cannot read is compared as the empty query."""
    return judged(gold_sql, pred_sql, schema, kmap).fields


def judged(gold_sql: str, pred_sql: str, schema: SchemaIds, kmap: dict[str, str], limit_int: bool = False) -> Judged:
    """`judge`, with the rebuilt structures; `limit_int`: `LIMIT n` read as the classic script reads it."""
    gold = parse(gold_sql, schema, limit_int)
    level = hardness(gold)
    try:
        pred, parsed = parse(pred_sql, schema, limit_int), True
    except Unparsable:
        pred, parsed = empty_sql(), False
    pred, gold = rebuild(pred, schema, kmap), rebuild(gold, schema, kmap)
    verdict, partial = exact_match(pred, gold)
    parse_label = "parsed" if parsed else "unparseable"  # words in a breakdown, not a Python bool
    found = {"hardness": level, "exact_match": verdict, "components": partial, "prediction_parse": parse_label}
    return Judged(found, pred, gold)
