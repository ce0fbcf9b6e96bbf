"""Property tests: reshaping a prediction in ways that keep its meaning never changes a verdict."""

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import sized

from evaluators.matching.semantics import PRESETS
from evaluators.matching.table_match import TableJob, table_match
from evaluators.tables.read import TableReader

cell = st.one_of(
    st.integers(-50, 50),
    st.floats(-100, 100, allow_nan=False).map(lambda x: round(x, 3)),
    st.sampled_from(["a", "b", "c", "dd"]),
    st.none(),
)


@st.composite
def tables(draw):
    n_rows = draw(st.integers(1, 6))
    n_cols = draw(st.integers(1, 4))
    columns = {}
    for c in range(n_cols):
        kind = draw(st.sampled_from(["int", "float", "str", "mixed"]))
        strategy = {
            "int": st.integers(-20, 20),
            "float": st.floats(-50, 50, allow_nan=False).map(lambda x: round(x, 2)),
            "str": st.sampled_from(["x", "y", "z"]),
            "mixed": cell,
        }[kind]
        columns[f"c{c}"] = draw(st.lists(strategy, min_size=n_rows, max_size=n_rows))
    return pd.DataFrame(columns)


def _verdicts(tmp_path, gold: pd.DataFrame, pred: pd.DataFrame, ignore_order: bool) -> dict:
    gold.to_csv(tmp_path / "g.csv", index=False)
    pred.to_csv(tmp_path / "p.csv", index=False)
    job = TableJob(tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"))
    out = table_match(job, tmp_path / "p.csv", {"gold": "g.csv", "condition_cols": [], "ignore_order": ignore_order})
    return {name: v.score for name, v in out.items()}


SETTINGS = sized(60)


@SETTINGS
@given(gold=tables(), pred=tables(), seed=st.integers(0, 10_000))
def test_row_shuffle_under_ignore_order_keeps_verdicts(tmp_path, gold, pred, seed):
    if len(pred) != len(gold):
        pred = gold.copy()
    before = _verdicts(tmp_path, gold, pred, True)
    shuffled = pred.sample(frac=1, random_state=seed).reset_index(drop=True)
    assert _verdicts(tmp_path, gold, shuffled, True) == before


@SETTINGS
@given(gold=tables(), seed=st.integers(0, 10_000), ignore_order=st.booleans())
def test_column_reorder_rename_and_extra_column_keep_verdicts(tmp_path, gold, seed, ignore_order):
    pred = gold.copy()
    before = _verdicts(tmp_path, gold, pred, ignore_order)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pred.columns))
    reshaped = pred.iloc[:, order].copy()
    reshaped.columns = [f"renamed_{i}" for i in range(len(order))]
    reshaped.insert(int(rng.integers(0, len(order) + 1)), "extra", "noise")
    assert before["strict"] == 1.0
    assert _verdicts(tmp_path, gold, reshaped, ignore_order) == before


@SETTINGS
@given(rows=st.integers(2, 8), seed=st.integers(0, 10_000))
def test_a_cross_row_scramble_never_passes_strict(tmp_path, rows, seed):
    keys = [f"k{i}" for i in range(rows)]
    values = list(range(100, 100 + rows))
    gold = pd.DataFrame({"key": keys, "value": values})
    shift = 1 + seed % (rows - 1)
    scrambled = pd.DataFrame({"key": keys, "value": values[shift:] + values[:shift]})
    got = _verdicts(tmp_path, gold, scrambled, True)
    assert got["strict"] == 0.0
    assert got["spider2"] == 1.0  # the public rule cannot see it: each column alone is right
