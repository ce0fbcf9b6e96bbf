"""taoyds/spider's classic `evaluation.py` (`--scorer spider`): what differs from test-suite-sql-eval's copy.

The exact set match, components and hardness are the same code in both scripts; the classic one reads
`LIMIT n` as `int(n)` (`spider_parse.parse(limit_int=True)`), keeps the text `value` as written, reads no
sessions (blank lines dropped), and has its own execution check, `eval_exec_match`, here `same_results`:
both queries run once on `<db_id>/<db_id>.sqlite`; each result becomes a map from the SELECT item (its
column unit as the scorer rebuilt it: the item's aggregate is not part of the key, a foreign key counts as
its target) to that column's values in row order; the maps are compared.  So row order matters, column
order does not, two items with the same key keep the last one's values, and a prediction the parser cannot
read (an empty SELECT, an empty map) never passes.
"""

from __future__ import annotations

SCORER = "taoyds/spider evaluation.py at cccfe7b (2020-05-26)"


def _key(val_unit: tuple):
    unit_op, first, second = val_unit
    return tuple(first) if not second else (unit_op, tuple(first), tuple(second))


def result_map(rows: list, sql: dict) -> dict:
    """The classic `res_map`: SELECT item -> its column's values, in row order (IndexError as the scorer's)."""
    return {_key(unit[1]): [row[k] for row in rows] for k, unit in enumerate(sql["select"][1])}


def same_results(gold_rows: list, pred_rows: list, gold: dict, pred: dict) -> bool:
    """The classic verdict from both results and both rebuilt structures."""
    return result_map(pred_rows, pred) == result_map(gold_rows, gold)
