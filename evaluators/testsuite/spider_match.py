"""One question's exact set match, components and hardness, as test-suite-sql-eval's `evaluation.py` judges it."""

from __future__ import annotations

from evaluators.testsuite.exact_match import exact_match, rebuild
from evaluators.testsuite.hardness import hardness
from evaluators.testsuite.spider_parse import SchemaIds, Unparsable, empty_sql, parse


def judge(gold_sql: str, pred_sql: str, schema: SchemaIds, kmap: dict[str, str]) -> dict:
    """`pred_sql` as the scorer has it (`value` already `1`).  A gold the parser cannot read raises
    `Unparsable` (the scorer stops there); a prediction it cannot read is compared as the empty query."""
    gold = parse(gold_sql, schema)
    level = hardness(gold)
    try:
        pred, parsed = parse(pred_sql, schema), True
    except Unparsable:
        pred, parsed = empty_sql(), False
    verdict, partial = exact_match(rebuild(pred, schema, kmap), rebuild(gold, schema, kmap))
    parse_label = "parsed" if parsed else "unparseable"  # words in a breakdown, not a Python bool
    return {"hardness": level, "exact_match": verdict, "components": partial, "prediction_parse": parse_label}
