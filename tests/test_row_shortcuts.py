"""The shortcuts for equal results (strict's identical rows, Soft F1's equal row lists) give what the long way
gives, on generated results: the same verdict, reason and words; the same F1 to the last bit."""

from __future__ import annotations

import sys
from decimal import Decimal
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hypothesis_profiles import sized  # noqa: E402

from evaluators.matching import typed_rows  # noqa: E402
from evaluators.metrics import soft_f1 as f1  # noqa: E402

CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from([0.0, -0.0, 1.0, 1, "1", "a", b"a", Decimal("1.0"), Decimal("1")]),
    st.text(max_size=2),
    st.lists(st.integers(0, 1), max_size=2),
)


@st.composite
def results(draw):
    width = draw(st.integers(1, 3))
    gold = draw(st.lists(st.tuples(*[CELLS] * width), max_size=6))
    kind = draw(st.sampled_from(["same objects", "as lists", "copied", "shuffled", "changed"]))
    if kind == "same objects":
        pred = list(gold)
    elif kind == "as lists":  # rows decoded from JSON beside rows from a driver
        pred = [list(row) for row in gold]
    elif kind == "copied":  # equal values, other objects (NaN is then unequal to itself)
        pred = [tuple(float(repr(v)) if isinstance(v, float) else v for v in row) for row in gold]
    elif kind == "shuffled":
        pred = draw(st.permutations(gold))
    else:
        pred = [*gold[:-1], draw(st.tuples(*[CELLS] * width))] if gold else []
    return gold, pred, draw(st.booleans())


def _long_way(monkeypatch, function, *args):
    with monkeypatch.context() as patched:
        patched.setattr(typed_rows, "_identical", lambda gold, pred: False)
        patched.setattr(f1, "_same_rows", lambda pred, gold: False)
        return function(*args)


def _outcome(function, *args):
    try:
        return function(*args)
    except Exception as exc:  # the official Soft F1 raises on unhashable rows: both ways must
        return type(exc)


@sized(400)
@given(case=results())
def test_strict_rows_shortcut_gives_the_long_verdict(case, monkeypatch):
    gold, pred, ordered = case
    quick = typed_rows.strict_rows(gold, pred, ordered)
    slow = _long_way(monkeypatch, typed_rows.strict_rows, gold, pred, ordered)
    assert (quick.score, quick.reason, quick.detail) == (slow.score, slow.reason, slow.detail)


@sized(400)
@given(case=results())
def test_soft_f1_shortcut_gives_the_long_figure(case, monkeypatch):
    gold, pred, _ = case
    for function in (f1.soft_f1, f1.soft_f1_unordered):
        quick = _outcome(function, pred, gold)
        slow = _long_way(monkeypatch, _outcome, function, pred, gold)
        assert repr(quick) == repr(slow), function.__name__
