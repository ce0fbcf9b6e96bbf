"""The official rule's cheap paths for big tables (issue 27) say exactly what the public scorers' loop says.

- `all_close`: math.isclose, block by block;
- `plain_floats_sorted`: a float column in the scorers' string order, built from its numeric sort;
- the rule itself (`official.compare`) against `bench/baseline.py` (the public scorer's per-cell loop) on
  tables past the short-column limit, where those paths run: values just outside the tolerance, -0.0, NaN,
  infinities, ints beside floats, NULL as 0, text NULLs of two flavours, and wide tables of look-alike columns.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from bench import baseline
from evaluators.matching.kernels.numeric import BLOCK, all_close
from evaluators.matching.official import rule as official
from evaluators.matching.official.column_views import SHORT, num_column, plain_floats_sorted
from evaluators.matching.semantics import PRESETS

OFFICIAL = ("spider2", "spider2-2024", "spider2-lite")
EDGES = [0.0, -0.0, 1.0, -1.0, 1 + 1e-9, 1 - 2e-9, 1e-12, 0.01, 0.0100001, 0.011, 1e-3, 0.0011, 100.0]
EDGES += [100.0000001, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, 3, -7]


@pytest.mark.parametrize("tol", [0.0, 1e-3, 1e-2, 1e-9, math.inf])
def test_all_close_is_math_isclose(tol):
    for x, y in itertools.product(EDGES, EDGES):
        want = math.isclose(x, y, abs_tol=tol)
        assert all_close(np.array([x]), np.array([y]), tol) == want, (x, y)
        assert all_close(np.array([x]), np.array([y]), tol, nan_equal=True) == (want or (x != x and y != y))


def test_all_close_reads_every_block_and_ints():
    values = np.arange(3 * BLOCK + 5, dtype=np.float64)
    moved = values * (1 + 1e-12)
    assert all_close(values, moved, 1e-2)
    moved[-1] += 0.0100001  # just outside, in the last block
    assert not all_close(values, moved, 1e-2)
    assert all_close(values.astype(np.int64), values, 0.0)  # ints beside floats
    assert not all_close(values[:-1], values, 1.0)  # lengths differ


def _scorers_sorted(values: list) -> list:
    return sorted(values, key=lambda x: (x is None, str(x), isinstance(x, (int, float))))


@pytest.mark.parametrize("null_as_zero", [False, True])
@pytest.mark.parametrize("kind", ["rounded", "signed_zeros", "wide_range", "tiny", "huge", "nulls_only"])
def test_plain_floats_sorted_is_the_scorers_sort(kind, null_as_zero):
    """Bit for bit (so -0.0 lands where the scorers put it), NULLs where their text sorts ('nan', or '0')."""
    rng = np.random.default_rng(len(kind))
    n = 3000
    values = {
        "rounded": np.round(rng.normal(0, 30, n), 2),
        "signed_zeros": rng.choice([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 10.0, -10.25, 0.001, -0.0001], n),
        "wide_range": np.round(rng.normal(0, 1, n) * 10.0 ** rng.integers(0, 14, n), 1),  # many heads: a gather
        "tiny": rng.choice([1e-5, 0.5, 2.0], n),  # prints in exponent form: not this path
        "huge": rng.choice([1e15, 0.5, 2.0], n),  # likewise
        "nulls_only": np.full(n, np.nan),
    }[kind]
    values[rng.random(n) < 0.3] = np.nan
    column = num_column("x", values, null_as_zero)
    null = np.isnan(values)
    extra, fill = ("0", 0.0) if null_as_zero else ("nan", np.nan)
    made = plain_floats_sorted(np.sort(values[~null]), column.negative_zeros, int(null.sum()), extra, fill)
    if kind in ("tiny", "huge"):
        assert made is None
        return
    assert made is not None
    want = _scorers_sorted(column.python_values())  # NULL as 0 (an int) or as NaN
    want_null = np.array([type(v) is int or v != v for v in want])
    want_bits = np.array(want, dtype=np.float64).view(np.int64)
    num, null_sorted = made
    assert np.array_equal(null_sorted, want_null)
    assert np.array_equal(num.view(np.int64)[~want_null], want_bits[~want_null])  # -0.0 in its place
    assert np.array_equal(num[want_null], np.full(int(want_null.sum()), fill), equal_nan=True)
    assert np.array_equal(column.official_sorted[0], num, equal_nan=True)


def _verdicts(gold: pd.DataFrame, pred: pd.DataFrame) -> dict:
    """{preset: (ours, the public loop's)} with ignore_order, every official preset sharing one cache."""
    views = official.ViewCache()
    found = {}
    for name in OFFICIAL:
        preset = PRESETS[name]
        ours = official.compare(
            pred, gold, ignore_order=True, tol=preset.tol, null_as_zero=preset.null_as_zero, views=views
        ).passed
        found[name] = (ours, bool(baseline.compare_frames(pred, gold, [], True, name)))
    return found


def _shuffled(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = frame.iloc[rng.permutation(len(frame)), rng.permutation(frame.shape[1])].reset_index(drop=True)
    out.columns = [f"c{i}" for i in range(out.shape[1])]
    return out


N = 2 * SHORT  # past the short-column limit: the vectorised paths, not Python's sort


def _floats(seed: int) -> np.ndarray:
    return np.round(np.random.default_rng(seed).normal(0, 50, N), 3)


def _case(name: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(gold, prediction, {preset: expected}) for one situation; expected None means 'whatever the loop says'."""
    gold = pd.DataFrame({"a": _floats(1), "b": _floats(2)})
    pred = _shuffled(gold)
    if name == "within":
        return gold, pred * (1 + 1e-12), dict.fromkeys(OFFICIAL, True)
    if name == "just_outside":  # values a unit apart: the moved one keeps its sorted place
        gold = pd.DataFrame({"a": np.arange(N) - 700.25, "b": _floats(2)})
        moved = _shuffled(gold)
        moved.iloc[5, 0] += 0.0100001 + abs(moved.iloc[5, 0]) * 1e-9  # past every preset's tolerance
        return gold, moved * (1 + 1e-12), dict.fromkeys(OFFICIAL, False)
    if name == "between_tolerances":  # inside 1e-2, outside 1e-3
        gold = pd.DataFrame({"a": np.arange(N) - 700.25, "b": _floats(2)})
        moved = _shuffled(gold)
        moved.iloc[5, 0] += 0.005
        return gold, moved, {"spider2": True, "spider2-2024": False, "spider2-lite": True}
    if name == "signed_zeros":  # -0.0 prints '-0.0' and sorts apart from 0.0
        gold = pd.DataFrame({"z": np.random.default_rng(3).choice([-0.0, 0.0, -0.5, 0.5, 1.0], N)})
        flipped = _shuffled(gold)
        flipped.iloc[:50, 0] = flipped.iloc[:50, 0].abs()
        return gold, flipped * (1 + 1e-12), dict.fromkeys(OFFICIAL, None)
    if name == "nans":
        gold.iloc[::7, 0] = np.nan
        pred = _shuffled(gold) * (1 + 1e-12)
        fewer = pred.copy()
        fewer.iloc[:, :] = fewer.fillna(0.0).to_numpy()
        return gold, fewer, {"spider2": False, "spider2-2024": False, "spider2-lite": True}
    if name == "infinities":
        gold.iloc[::11, 1] = np.inf
        gold.iloc[::13, 1] = -np.inf
        return gold, _shuffled(gold) * (1 + 1e-12), dict.fromkeys(OFFICIAL, None)
    if name == "ints_beside_floats":
        ints = pd.DataFrame({"i": np.random.default_rng(4).integers(-500, 500, N)})
        return ints, _shuffled(ints).astype(float) + 1e-9, dict.fromkeys(OFFICIAL, None)
    if name == "negatives_by_text":  # str order puts -10.x before -9.x: the text order is not the numeric one
        wide = pd.DataFrame({"n": np.round(np.random.default_rng(5).uniform(-200, 200, N), 2)})
        grown = _shuffled(wide) * (1 + 1e-13)  # magnitudes grow a hair: no text changes its head
        shrunk = _shuffled(wide) * (1 - 1e-13)  # -13.0 becomes -12.99...: its text moves among the -12s
        assert not any(ours or theirs for ours, theirs in _verdicts(wide, shrunk).values())
        return wide, grown, dict.fromkeys(OFFICIAL, True)
    raise ValueError(name)


CASES = [
    "within",
    "just_outside",
    "between_tolerances",
    "signed_zeros",
    "nans",
    "infinities",
    "ints_beside_floats",
    "negatives_by_text",
]


@pytest.mark.parametrize("name", CASES)
def test_rule_agrees_with_the_public_loop(name):
    gold, pred, expected = _case(name)
    for preset, (ours, theirs) in _verdicts(gold, pred).items():
        assert ours == theirs, (name, preset)
        if expected[preset] is not None:
            assert ours == expected[preset], (name, preset)


def test_text_nulls_of_two_flavours_and_byte_totals():
    rng = np.random.default_rng(6)
    words = np.array(["north", "south", "east", "west"], dtype=object)[rng.integers(0, 4, N)]
    with_none = words.copy()
    with_none[::9] = None
    with_nan = with_none.copy()
    with_nan[::9] = np.nan
    gold = pd.DataFrame({"w": with_none})
    for pred in (pd.DataFrame({"w": with_nan}), _shuffled(gold), pd.DataFrame({"w": pd.array(with_nan, dtype="str")})):
        for preset, (ours, theirs) in _verdicts(gold, pred).items():
            assert ours == theirs, preset
    longer = pd.DataFrame({"w": pd.array(np.where(words == "east", "eastern", words), dtype="str")})
    same = pd.DataFrame({"w": pd.array(words, dtype="str")})
    assert all(ours == theirs is False for ours, theirs in _verdicts(same, longer).values())


@pytest.mark.parametrize("in_order", [False, True])
def test_wide_look_alike_columns(in_order):
    """60 columns over one range (every one a look-alike of the others), rows repeated so no key pairs them;
    one column changed in one cell must be found, in table order or shuffled.  (Verdicts certain by
    construction: the public loop over 60 x 60 columns is too slow for a unit test.)"""
    rng = np.random.default_rng(7)
    gold = pd.DataFrame({f"y{c}": rng.integers(1990, 2025, N // 2) for c in range(60)})
    gold = pd.concat([gold, gold.iloc[: N // 4]], ignore_index=True)
    pred = gold.copy() if in_order else _shuffled(gold)
    pred.columns = [f"c{i}" for i in range(pred.shape[1])]
    changed = pred.copy()
    changed.iloc[3, 17] = 1989  # outside every column's range: no partner for that gold column
    for name in OFFICIAL:
        preset = PRESETS[name]
        for table, want in ((pred, True), (changed, False)):
            verdict = official.compare(table, gold, ignore_order=True, tol=preset.tol, null_as_zero=preset.null_as_zero)
            assert verdict.passed is want, (name, verdict.detail)
