"""The paths that keep big tables linear (issue 27) reach the same verdicts as the slow ones.

Small tables of the benchmark's shapes (bench/shapes.py), where rows repeat, so no key pairs them:
identical cells are matched by row hashes, tolerance by the search, and a table whose columns agree
one by one but whose rows are scrambled still fails under every semantics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scorer_order import columns_with_scorer_order

from bench import shapes
from evaluators.matching.kernels import row_pairing
from evaluators.matching.official import rule as official
from evaluators.matching.official.column_views import _text_ranks
from evaluators.matching.semantics import PRESETS, STRICT_TOL
from evaluators.matching.strict import rule as strict
from evaluators.matching.strict.cells import TokenTable
from evaluators.matching.strict.columns import strict_columns


def _verdict(semantics: str, gold: pd.DataFrame, pred: pd.DataFrame):
    if semantics == "strict":
        tokens = TokenTable()
        g, p = strict_columns(gold, tokens, lambda c: None), strict_columns(pred, tokens, lambda c: None)
        return strict.compare(p, g, ignore_order=True, tol=STRICT_TOL)
    preset = PRESETS[semantics]
    return official.compare(pred, gold, ignore_order=True, tol=preset.tol, null_as_zero=preset.null_as_zero)


@pytest.mark.parametrize("shape", shapes.SHAPES)
@pytest.mark.parametrize("semantics", list(PRESETS))
def test_shuffled_copies_match(shape, semantics):
    gold, pred = shapes.pair(shape, 3000)
    verdict = _verdict(semantics, gold, pred)
    assert verdict.passed, verdict.detail


@pytest.mark.parametrize("semantics", list(PRESETS))
def test_scrambled_rows_fail(semantics):
    """Every column keeps its values, but two columns are shuffled apart: strict fails, the official rule
    (columns one by one) still matches."""
    gold, pred = shapes.pair("repeated", 3000)
    pred = pred.copy()
    pred.iloc[:, 0] = np.random.default_rng(5).permutation(pred.iloc[:, 0].to_numpy())
    verdict = _verdict(semantics, gold, pred)
    if semantics == "strict":
        assert not verdict.passed and verdict.reason == "value_mismatch", verdict
    else:
        assert verdict.passed, verdict.detail


def test_strict_duplicates_count():
    """Rows as multisets: one duplicate row swapped for another breaks the match."""
    gold, pred = shapes.pair("repeated", 2000)
    changed = pred.copy()
    changed.iloc[0] = changed.iloc[1]
    assert not _verdict("strict", gold, changed).passed


def test_floats_beyond_tolerance_fail():
    gold, pred = shapes.pair("floats", 2000)
    moved = pred.copy()
    moved.iloc[7, 3] += 0.5
    for semantics in PRESETS:
        assert not _verdict(semantics, gold, moved).passed, semantics


def test_repeated_key_is_seen_early_and_distinct_key_is_not():
    distinct = np.random.default_rng(0).permutation(10_000)
    assert not row_pairing._repeats_early(distinct)
    assert row_pairing._repeats_early(distinct % 50)
    assert not row_pairing._repeats_early(distinct % 50, distinct)


def test_text_ranks_order_like_numpy_unique():
    rng = np.random.default_rng(1)
    for _ in range(200):
        values = np.unique(np.round(rng.normal(0, 3, rng.integers(0, 40)), 1))
        texts = list(dict.fromkeys(map(str, values.tolist())))
        for extra in ("0", "nan", "<NA>", "0.0", "-1.0"):
            ours = _text_ranks(texts, extra)
            _, theirs = np.unique(np.array([*texts, extra], dtype=str), return_inverse=True)
            cells = rng.integers(0, len(texts) + 1, 100)
            assert np.array_equal(
                np.argsort(ours[cells], kind="stable"), np.argsort(theirs.reshape(-1)[cells], kind="stable")
            )


@pytest.mark.parametrize("n", [999, 1001, 4000])
@pytest.mark.parametrize("null_as_zero", [False, True])
@pytest.mark.parametrize("plain", [False, True])
def test_official_sorted_is_the_scorers_sort(n, null_as_zero, plain):
    """The columns in the scorers' order without sorting cells equal the cells gathered by their sort."""
    rng = np.random.default_rng(n)
    if plain:  # printed without exponent: ranked from integer heads, nothing printed per value
        floats = np.where(
            rng.random(n) < 0.1,
            np.nan,
            np.round(rng.normal(0, 300, n) * 10.0 ** rng.integers(0, 4, n)) / 10.0 ** rng.integers(0, 4, n),
        )
    else:
        floats = rng.choice([0.0, -0.0, 0.1, 0.1 + 0.2, 0.3, 10.0, 9.995, np.nan, 1e16, 1e-5, -1.0, 2.5], n)
    for column, want in columns_with_scorer_order(rng, floats, [1, 0, 30, None], null_as_zero):
        num, null = column.official_sorted
        assert np.array_equal(num, column.num[want], equal_nan=True), column.name
        if not null_as_zero:
            assert np.array_equal(null, column.null[want]), column.name


def test_floats_past_one_block_match_and_a_late_swap_fails():
    """FLOAT-only columns are compared block by block along the gold rows (`MappingSearch._paired_equal`):
    a shuffled copy within tolerance matches, and two cells traded in the second block are still seen."""
    gold, pred = shapes.pair("floats", 70_000)
    verdict = _verdict("strict", gold, pred)
    assert verdict.passed, verdict.detail
    swapped = gold.copy()
    swapped.iloc[[66_000, 66_001], 3] = swapped.iloc[[66_001, 66_000], 3].to_numpy()  # same column values
    verdict = _verdict("strict", swapped, pred)
    assert not verdict.passed and verdict.reason == "value_mismatch", verdict
