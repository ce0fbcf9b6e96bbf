"""Work the whole-process figures of issue 36 saved, held to what it replaced.

- A text column is dictionary-encoded once per file, for the official presets' tokens and the strict
  rule's typing alike (`kernels/tokens.dictionary_codes`, keyed by the one pyarrow array per column of
  `tables/frames.arrow_strings`).
- The strict rule's exact check of rows paired by hash reads the prediction's identities at random rows
  from a narrowed copy when they span little (`mapping_search.narrowed_identity`): the same answer as the
  int64 identities, on generated columns of every kind of cell.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pytest

from bench import shapes
from evaluators.matching.semantics import PRESETS, STRICT_TOL
from evaluators.matching.strict import mapping_search
from evaluators.matching.strict import rule as strict
from evaluators.matching.strict.cells import TokenTable
from evaluators.matching.strict.columns import strict_columns
from evaluators.matching.strict.text_cells import from_text
from evaluators.matching.table_match import TableJob, table_match
from evaluators.tables.read import TableReader


def _text_pair(tmp_path, rows: int = 6000):
    rng = np.random.default_rng(3)
    gold = pd.DataFrame(
        {
            "name": np.array(["ann", "bob", "cy", "dee"])[rng.integers(0, 4, rows)],
            "city": np.array(["oslo", "lima", "rome"])[rng.integers(0, 3, rows)],
            "n": rng.integers(0, 30, rows),
        }
    )
    pred = gold.iloc[rng.permutation(rows), ::-1].reset_index(drop=True)
    pred.columns = ["a", "b", "c"]
    gold.to_csv(tmp_path / "g.csv", index=False)
    pred.to_csv(tmp_path / "p.csv", index=False)
    return tmp_path / "p.csv", {"gold": "g.csv", "condition_cols": [], "ignore_order": True}


def test_text_columns_are_encoded_once_for_every_preset(tmp_path, monkeypatch):
    """Four text columns (two a side), every preset: four dictionary encodings of a whole column, not eight."""
    pred, params = _text_pair(tmp_path)
    real = pc.dictionary_encode
    lengths: list[int] = []

    def counted(values, *args, **kwargs):
        lengths.append(len(values))
        return real(values, *args, **kwargs)

    monkeypatch.setattr(pc, "dictionary_encode", counted)
    job = TableJob(tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"))
    verdicts = table_match(job, pred, params)
    assert all(v.passed for v in verdicts.values()), verdicts
    assert lengths.count(6000) == 4, lengths


def _column(kind: str, rng: np.random.Generator, n: int):
    """Text cells of one kind, as a CSV gives them (None: NULL)."""
    if kind == "flags":
        values = rng.integers(0, 2, n).astype(str).astype(object)
    elif kind == "small ints":
        values = rng.integers(-300, 300, n).astype(str).astype(object)
    elif kind == "wide ints":
        values = rng.integers(-(2**62), 2**62, n).astype(str).astype(object)
    elif kind == "span of 2**32":
        values = rng.choice([0, 2**32 - 1, 2**32, 7], n).astype(str).astype(object)
    elif kind == "texts":
        values = rng.choice(["x", "y", "zz", "1x"], n).astype(object)
    elif kind == "mixed":
        values = rng.choice(["x", "12", "-4", "y", "99999999999999999999"], n).astype(object)
    else:  # floats
        values = rng.choice(["1.5", "2", "-0.25", "x"], n).astype(object)
    values[rng.random(n) < 0.2] = None
    return values


KINDS = ("flags", "small ints", "wide ints", "span of 2**32", "texts", "mixed", "floats")


@pytest.mark.parametrize("kind", KINDS)
def test_narrowed_identities_give_the_wide_ones_answer(kind, monkeypatch):
    monkeypatch.setattr(mapping_search, "NARROW_MIN_ROWS", 1)
    rng = np.random.default_rng(KINDS.index(kind))
    n = 3 * mapping_search._BLOCK + 17  # several blocks and a short one
    tokens = TokenTable()
    gold_values = _column(kind, rng, n)
    partner = rng.permutation(n)
    pred_values = np.empty(n, dtype=object)
    pred_values[partner] = gold_values  # gold row r is predicted row partner[r]
    changes = [None, 0, n - 1, n // 2]
    for change in changes:
        changed = pred_values.copy()
        if change is not None:
            changed[partner[change]] = "other" if changed[partner[change]] != "other" else None
        gold = from_text("g", gold_values, tokens)
        pred = from_text("p", changed, tokens)
        wide = bool(np.array_equal(gold.identity, pred.identity[partner]))
        assert mapping_search._identities_paired(gold, pred, partner) == wide, (kind, change)
        assert wide == (change is None)


def test_narrowing_picks_the_narrowest_type_and_skips_floats():
    tokens = TokenTable()
    n = 1000
    flags = from_text("f", np.array(["0", "1"] * (n // 2), dtype=object), tokens)
    small = from_text("s", np.array([str(v) for v in range(-500, 500)], dtype=object), tokens)
    wide = from_text("w", np.array(["0", str(2**40)] * (n // 2), dtype=object), tokens)
    floats = from_text("x", np.array(["0.5", "1"] * (n // 2), dtype=object), tokens)
    assert mapping_search.narrowed_identity(flags)[0].dtype == np.uint8
    offsets, low = mapping_search.narrowed_identity(small)
    assert offsets.dtype == np.uint16 and low == -500
    assert np.array_equal(offsets.astype(np.int64) + low, small.identity)
    assert mapping_search.narrowed_identity(wide) is None
    assert mapping_search.narrowed_identity(floats) is None


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_strict_verdicts_with_narrowing_at_every_size(shape, monkeypatch):
    """The whole strict rule with narrowing from the first row: shuffled copies match, a scrambled column
    and one changed cell fail."""
    monkeypatch.setattr(mapping_search, "NARROW_MIN_ROWS", 1)
    gold, pred = shapes.pair(shape, 3000)

    def verdict(p):
        tokens = TokenTable()
        g_cols, p_cols = strict_columns(gold, tokens, lambda c: None), strict_columns(p, tokens, lambda c: None)
        return strict.compare(p_cols, g_cols, ignore_order=True, tol=STRICT_TOL)

    assert verdict(pred).passed
    scrambled = pred.copy()
    scrambled.iloc[:, 0] = np.random.default_rng(5).permutation(scrambled.iloc[:, 0].to_numpy())
    assert not verdict(scrambled).passed
    changed = pred.copy()
    changed.iloc[7, 1] = changed.iloc[8, 1] if changed.iloc[7, 1] != changed.iloc[8, 1] else changed.iloc[9, 1]
    if not changed.equals(pred):
        assert not verdict(changed).passed


def test_plain_sums_tell_apart_what_they_can_and_agree_on_identical_multisets():
    """`plain_sum` filters the identical search's candidates before `identity_sum`: equal for a shuffled
    copy of every kind of column, and different for a column with one cell changed."""
    rng = np.random.default_rng(11)
    tokens = TokenTable()
    for kind in KINDS:
        values = _column(kind, rng, 5000)
        shuffled = values[rng.permutation(len(values))]
        changed = values.copy()
        changed[0] = "other" if changed[0] != "other" else None
        column, copy, other = (from_text(kind, v, tokens) for v in (values, shuffled, changed))
        assert column.plain_sum == copy.plain_sum and column.identity_sum == copy.identity_sum, kind
        assert column.identity_sum != other.identity_sum, kind


def test_columns_alike_but_for_their_sums_are_each_others_only_partner():
    """Two year columns share length, classes and span: their plain sums pick each one's partner, and the
    costlier hash sums are not made."""
    rng = np.random.default_rng(4)
    n = 20_000
    gold = pd.DataFrame({"a": rng.integers(1990, 2025, n), "b": rng.integers(1990, 2025, n)})
    gold.iloc[0] = [1990, 1990]
    gold.iloc[1] = [2024, 2024]
    pred = gold.iloc[rng.permutation(n), ::-1].reset_index(drop=True)
    tokens = TokenTable()
    g, p = strict_columns(gold, tokens, lambda c: None), strict_columns(pred, tokens, lambda c: None)
    assert strict._identical_candidates(g, p) == [[1], [0]]
    assert not any("identity_sum" in vars(c) for c in g + p)


def _int_columns(rng: np.random.Generator, n: int):
    """Pairs of int columns of one length: a shuffled copy and a copy with one cell changed, of spans from
    tiny to past what is counted, signed and unsigned, with and without NULLs."""
    from evaluators.matching.official.column_views import COUNTED_SPAN, num_column

    for span in (3, 300, n + 5, COUNTED_SPAN + n + 10, 2**62):
        for dtype in (np.int64, np.uint64):
            low = 0 if dtype is np.uint64 else -(span // 2)
            values = (rng.integers(0, span, n) + low).astype(dtype)
            null = rng.random(n) < 0.1 if span == 300 else np.zeros(n, dtype=bool)
            order = rng.permutation(n)
            changed = values.copy()
            changed[rng.integers(0, n)] += dtype(1)
            gold = num_column("g", values, False, null=null)
            yield gold, num_column("p", values[order], False, null=null[order])
            yield gold, num_column("p", changed, False, null=null)


def test_int_counts_say_what_the_sorted_values_say():
    """The official rule's count of an int column's values (`_same_int_counts`) against the sort it replaces,
    on generated pairs; the widest spans are left to the sort."""
    from evaluators.matching.official.rule import _same_int_counts

    rng = np.random.default_rng(21)
    counted = 0
    for n in (1, 50, 4000):
        for g, p in _int_columns(rng, n):
            said = _same_int_counts(g, p)
            if said is None:
                assert g.int_counts is None or p.int_counts is None
                continue
            counted += 1
            assert said == bool(np.array_equal(g.sorted_exact, p.sorted_exact)), (n, g.exact.dtype)
    assert counted > 20
    wide = np.array([0, 2**62], dtype=np.int64)
    from evaluators.matching.official.column_views import num_column

    assert num_column("w", wide, False).int_counts is None


def test_int_columns_that_match_are_not_sorted(tmp_path, monkeypatch):
    """A shuffled copy of small-span int columns matches under every official preset without sorting them
    (the text columns' codes are counted too: nothing is sorted)."""
    from functools import cached_property

    from evaluators.matching.official import column_views

    sorted_kinds: list[str] = []
    real = column_views.Column.__dict__["sorted_exact"].func

    def spied(self):
        sorted_kinds.append(self.key_type)
        return real(self)

    spy = cached_property(spied)
    spy.__set_name__(column_views.Column, "sorted_exact")
    monkeypatch.setattr(column_views.Column, "sorted_exact", spy)
    pred, params = _text_pair(tmp_path)
    job = TableJob(tmp_path, tuple(p for p in PRESETS.values() if p.official), TableReader("unreadable_prediction"))
    verdicts = table_match(job, pred, params)
    assert all(v.passed for v in verdicts.values()), verdicts
    assert sorted_kinds == []
