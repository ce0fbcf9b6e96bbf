import sqlite3
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.metrics.bird import bird_ex, outermost_has_order_by


def strict_ex(pred_rows, gold_rows):
    """The naive rule BIRD does NOT use: exact list equality."""
    return [tuple(r) for r in pred_rows] == [tuple(r) for r in gold_rows]


NAN = float("nan")


@pytest.mark.parametrize(
    ("pred", "gold", "bird", "strict"),
    [
        ([(1, "a"), (2, "b")], [(1, "a"), (2, "b")], True, True),
        ([(2, "b"), (1, "a")], [(1, "a"), (2, "b")], True, False),  # row order ignored
        ([(1,), (1,), (2,)], [(1,), (2,)], True, False),  # duplicates ignored
        ([(1,)], [(1,), (1,), (1,)], True, False),
        ([("a", 1)], [(1, "a")], False, False),  # column order matters
        ([(1, 2)], [(1,)], False, False),  # extra column
        ([(1,), (2,)], [(1,)], False, False),  # extra row
        ([], [], True, True),
        ([], [(None,)], False, False),
        ([(None,)], [(None,)], True, True),  # None == None
        ([(None, 1)], [(1, None)], False, False),
        ([(1,)], [(1.0,)], True, True),  # Python equality: 1 == 1.0
        ([(True,)], [(1,)], True, True),  # ... and True == 1
        ([(0.1 + 0.2,)], [(0.3,)], False, False),  # no float tolerance
        ([(Decimal("1.5"),)], [(1.5,)], True, True),
        (["1"], [(1,)], False, False),  # text vs number
        ([(NAN,)], [(NAN,)], True, True),  # same NaN object: set/tuple identity
        ([(float("nan"),)], [(float("nan"),)], False, False),  # distinct NaN objects
    ],
)
def test_set_semantics_against_naive_strict_rule(pred, gold, bird, strict):
    assert bird_ex(pred, gold) is bird
    assert strict_ex(pred, gold) is strict


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ([([1, 2],)], [([1, 2],)], True),
        ([([1, 2],), ([1, 2],)], [([1, 2],)], True),  # duplicates still collapse
        ([([1, 2],)], [([2, 1],)], False),  # list order inside a value matters
        ([([1, 2],)], [((1, 2),)], False),  # list != tuple, as in Python
        ([({"a": 1, "b": [1]},)], [({"b": [1], "a": 1},)], True),  # dict key order ignored
        ([({"a": 1},)], [({"a": 2},)], False),
        ([(np.array([1, 2]),)], [([1, 2],)], True),  # DuckDB LIST via numpy
        ([(bytearray(b"x"),)], [(b"x",)], True),
        ([({1, 2},)], [(frozenset({2, 1}),)], True),
        ([[1, "a"]], [(1, "a")], True),  # rows given as lists
    ],
)
def test_unhashable_values(pred, gold, expected):
    assert bird_ex(pred, gold) is expected


def test_unsupported_value_type_raises():
    class Opaque:
        __hash__ = None

    with pytest.raises(TypeError):
        bird_ex([(Opaque(),)], [(1,)])


hashable_values = st.one_of(st.none(), st.integers(-3, 3), st.floats(allow_nan=False), st.text(max_size=2))
rows = st.lists(st.tuples(hashable_values, hashable_values), max_size=6)


@given(rows, rows)
def test_matches_bird_reference_for_hashable_rows(pred, gold):
    assert bird_ex(pred, gold) == (set(pred) == set(gold))


@given(rows)
def test_invariant_under_shuffle_and_duplication(gold):
    pred = list(reversed(gold)) + gold[:2]
    assert bird_ex(pred, gold)


def test_on_sqlite_results(tmp_path):
    con = sqlite3.connect(tmp_path / "bird.sqlite")
    con.executescript(
        "CREATE TABLE people(name TEXT, city TEXT);"
        "INSERT INTO people VALUES ('ann','oslo'),('bob','rome'),('cid','oslo');"
    )
    gold = con.execute("SELECT city, name FROM people ORDER BY name").fetchall()
    unordered = con.execute("SELECT city, name FROM people").fetchall()
    swapped = con.execute("SELECT name, city FROM people").fetchall()
    gold_cities = con.execute("SELECT DISTINCT city FROM people").fetchall()
    dup_cities = con.execute("SELECT city FROM people").fetchall()
    con.close()
    assert bird_ex(unordered, gold)
    assert not bird_ex(swapped, gold)
    assert bird_ex(dup_cities, gold_cities) and not strict_ex(dup_cities, gold_cities)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("select a from t order by a desc limit 3", True),
        ("SELECT a FROM t\n  ORDER\n\tBY a", True),
        ("SELECT a FROM t ORDER /* why */ BY a", True),
        ("SELECT a FROM t ORDER -- why\n BY a", True),
        ("SELECT a FROM t ORDER BY a;", True),
        ("SELECT a FROM t ORDER BY a; -- trailing comment", True),
        ("SELECT a FROM t", False),
        ("SELECT a FROM t GROUP BY a", False),
        ("SELECT * FROM (SELECT a FROM t ORDER BY a) AS s", False),
        ("SELECT * FROM (SELECT a FROM t ORDER BY a) s ORDER BY a", True),
        ("WITH c AS (SELECT a FROM t ORDER BY a) SELECT a FROM c", False),
        ("WITH c AS (SELECT a FROM t) SELECT a FROM c ORDER BY a", True),
        ("SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) FROM t", False),
        ("SELECT a, RANK() OVER (ORDER BY c) r FROM t ORDER BY r", True),
        ("SELECT SUM(x) OVER w FROM t WINDOW w AS (ORDER BY y)", False),
        ("SELECT string_agg(a, ',' ORDER BY a) FROM t", False),
        ("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t", False),
        ("SELECT a FROM t WHERE b IN (SELECT b FROM u ORDER BY b LIMIT 1)", False),
        ("SELECT 'ORDER BY a' FROM t", False),
        ("SELECT 'it''s ORDER BY' FROM t", False),
        ('SELECT "order by" FROM t', False),
        ("SELECT `order by` FROM t", False),
        ("SELECT [order by] FROM t", False),
        ("SELECT $$ ORDER BY $$ FROM t", False),
        ("SELECT a FROM t -- ORDER BY a", False),
        ("SELECT a FROM t /* ORDER BY a */", False),
        ("SELECT border, by_col FROM t", False),
        ("SELECT order_id FROM t ORDER BYE", False),
        ("SELECT 'a)' FROM t ORDER BY a", True),  # paren inside a string must not count
        ("SELECT ')' , (a) FROM t ORDER BY 1", True),
        ("(SELECT a FROM t ORDER BY a)", True),  # the whole statement is parenthesised
        ("((SELECT a FROM t ORDER BY a));", True),
        ("(SELECT a FROM t) UNION (SELECT a FROM u ORDER BY a)", False),
        ("(SELECT a FROM t) UNION (SELECT a FROM u) ORDER BY a", True),
        ("SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY 1", True),
        ("SELECT a FROM t ORDER BY a; SELECT b FROM u", False),  # last statement counts
        ("SELECT b FROM u; SELECT a FROM t ORDER BY a", True),
        ("", False),
        ("-- ORDER BY\n", False),
    ],
)
def test_outermost_has_order_by(sql, expected):
    assert outermost_has_order_by(sql) is expected


@pytest.mark.parametrize(
    ("sql", "kwargs", "expected"),
    [
        (r"SELECT 'it\'s ORDER BY' FROM t", {"backslash_escapes": True}, False),
        (r"SELECT 'c:\' FROM t ORDER BY 1", {}, True),  # standard SQL: no backslash escape
        ("SELECT a FROM t # ORDER BY a", {"hash_comments": True}, False),
        ("SELECT a FROM t # ORDER BY a", {}, True),
    ],
)
def test_dialect_options(sql, kwargs, expected):
    assert outermost_has_order_by(sql, **kwargs) is expected


@given(st.sampled_from(["SELECT a FROM t ORDER BY a", "SELECT a FROM t", "SELECT 1 ORDER BY 1"]))
def test_wrapping_as_subquery_hides_order_by(inner):
    assert not outermost_has_order_by(f"SELECT * FROM ({inner}) AS s")
    assert not outermost_has_order_by(f"WITH s AS ({inner}) SELECT * FROM s")


# Pieces of SQL text, plain and not: the scanner without sqlglot (`_plain_tokens`) must give the answer
# sqlglot's tokens give wherever it answers, and leave the rest to them.
_PIECES = st.sampled_from(
    (
        "SELECT a t ORDER BY order by Order GROUP UNION ALL x1 _y BYX ( ) [ ] ; , . = <= - -- / * /* */ ' '' 'x' "
        '" "" ` `by` 1 1.5 1e5 .5 ! : :: -> $ $$ # \\ é ? @ { } E\'a\' N USER-DEFINED % USER -DEFINED /**/ 1.'
    ).split()
    + [" ", "  ", "\n", "\r", "\t", "'ORDER BY'", '"ORDER BY"', "ORDER  BY"]
)


@given(st.lists(_PIECES, max_size=14))
def test_plain_scanner_agrees_with_sqlglot_tokens(pieces):
    from evaluators.metrics.bird import _order_by_on_top, _plain_tokens, _tokens

    sql = "".join(pieces)
    plain = _plain_tokens(sql)
    if plain is not None:
        assert _order_by_on_top(plain) is _order_by_on_top(list(_tokens(sql, False, False))), sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT name FROM t WHERE v > 3 ORDER BY v LIMIT 5",
        "SELECT `a b`, \"c\" FROM t WHERE x = 'it''s' -- note\nORDER /* why */ BY 1",
        "SELECT g, max(v) FROM t GROUP BY g ORDER BY g;",
    ],
)
def test_plain_scanner_reads_common_gold_sql(sql):
    from evaluators.metrics.bird import _plain_tokens

    assert _plain_tokens(sql) is not None
    assert outermost_has_order_by(sql)
