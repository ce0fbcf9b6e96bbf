"""The test-suite scorer's rules, as test-suite-sql-eval's `exec_eval.py` applies them.

Quirks kept on purpose (they decide published numbers):

- every `value` in the prediction's text becomes `1`, wherever it stands (inside a
  name or a quoted string too): `evaluation.py` does this before anything else
  (`replace_value`);
- `> =`, `< =` and `! =` are joined first (`postprocess`);
- unless `--keep-distinct`, both queries are cut to their first statement (sqlparse's), and every
  DISTINCT token is cut from them, so `COUNT(DISTINCT x)` is scored as `COUNT(x)` and
  `SELECT a FROM t; SELECT 1` as `SELECT a FROM t;` (`remove_distinct`);
- `YEAR(CURDATE())` becomes `2020` (`replace_cur_year`);
- row order matters exactly when the text `order by` occurs in the gold query,
  lower-cased, anywhere (a subquery's ORDER BY counts; `ORDER  BY` with two spaces
  does not) (`order_matters`);
- results are compared as bags of rows under some permutation of the
  prediction's columns; two empty results are equal whatever their columns; the
  column counts must agree otherwise (`result_eq`);
- values compare with Python `==` and hashing: `1 == 1.0`, no float tolerance;
- a prediction passes when it is equal on every database of the suite; an
  exception or a timeout on any of them fails it.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import product

_CUR_YEAR = re.compile(r"YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*", re.IGNORECASE)


def replace_value(prediction: str) -> str:
    return prediction.replace("value", "1")


def postprocess(query: str) -> str:
    return query.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")


def replace_cur_year(query: str) -> str:
    return _CUR_YEAR.sub("2020", query)


def sqlparse_module():
    """sqlparse, which the scorer reads queries with (the `testsuite` extra)."""
    try:
        import sqlparse
    except ImportError:
        from evaluators.errors import UsageError

        raise UsageError(
            "test-suite's official verdict reads queries with sqlparse, which is not installed",
            hint="pip install '.[testsuite]' (or pass --keep-distinct without --plug-value)",
        ) from None
    return sqlparse


class Unparsable(ValueError):
    """A query sqlparse gives up on (its grouping depth, Python's recursion limit): that pair's problem."""


def remove_distinct(query: str) -> str:
    """The scorer's `remove_distinct`: sqlparse's first statement only (`sqlparse.parse(s)[0]`), every token
    whose text is `distinct` in any case dropped.  Quoted names (`"distinct"`, `[distinct]`) are one token
    with their quotes and stay; strings are read as sqlparse reads them (`'x\\'` escapes its quote)."""
    sqlparse = sqlparse_module()
    try:
        statements = sqlparse.parse(query)
    except (sqlparse.exceptions.SQLParseError, RecursionError) as error:
        raise Unparsable(f"sqlparse cannot read it ({error}); the official scorer stops its whole run here") from None
    if not statements:
        return query  # the scorer raises IndexError here and stops; a blank line never reaches it
    return "".join(token.value for token in statements[0].flatten() if token.value.lower() != "distinct")


def order_matters(gold_query: str) -> bool:
    return "order by" in gold_query.lower()


def unorder_row(row: tuple) -> tuple:
    return tuple(sorted(row, key=lambda x: str(x) + str(type(x))))


def _quick_reject(gold: list, pred: list, ordered: bool) -> bool:
    """True when the rows, each sorted on its own, already differ (so no permutation can help)."""
    left, right = [unorder_row(r) for r in gold], [unorder_row(r) for r in pred]
    return left != right if ordered else set(left) != set(right)


def _multiset_eq(left: list, right: list) -> bool:
    return len(left) == len(right) and Counter(left) == Counter(right)


def _permutations(gold: list, pred: list, width: int):
    """Column permutations to try. The scorer samples rows to prune candidates when there are more than
    three columns; a pruned candidate can never give equal results, so checking every row prunes exactly
    the ones a lucky sample would and the verdict does not depend on the sample."""
    candidates = [set(range(width)) for _ in range(width)]
    if width > 3:
        gold_columns = [{row[i] for row in gold} for i in range(width)]
        for row in pred:
            for i in range(width):
                candidates[i] = {j for j in candidates[i] if row[j] in gold_columns[i]}
    return product(*candidates)


def result_eq(gold: list, pred: list, ordered: bool) -> bool:
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    width = len(gold[0])
    if len(pred[0]) != width:
        return False
    if _quick_reject(gold, pred, ordered):
        return False
    for perm in _permutations(gold, pred, width):
        if len(set(perm)) != len(perm):
            continue
        permuted = pred if width == 1 else [tuple(row[i] for i in perm) for row in pred]
        if ordered:
            if gold == permuted:
                return True
        elif set(gold) == set(permuted) and _multiset_eq(gold, permuted):
            return True
    return False


def prepare(query: str, keep_distinct: bool) -> str:
    """A query as the scorer runs it (before replace_cur_year, which it applies at execution)."""
    query = postprocess(query)
    return query if keep_distinct else remove_distinct(query)
