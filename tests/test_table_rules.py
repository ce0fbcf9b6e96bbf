"""The two rule families of table_match (matching/table_rules.py): one object each, chosen once from the
preset, and only one family's intermediates kept at a time, with the verdicts of one preset graded alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluators.matching.official.rule import ViewCache
from evaluators.matching.official.rule import compare as official_compare
from evaluators.matching.semantics import PRESETS
from evaluators.matching.table_match import TableJob, table_match
from evaluators.matching.table_rules import OFFICIAL, STRICT, rules_for
from evaluators.tables.read import TableReader


def _pair(tmp_path, rows: int = 3000, noise: float = 0.0):
    """A gold with repeated rows (no row pairing: the sorted path) and its prediction shuffled and renamed."""
    rng = np.random.default_rng(7)
    gold = pd.DataFrame(
        {
            "name": np.array(["ann", "bob", "cy"])[rng.integers(0, 3, rows)],
            "n": rng.integers(0, 40, rows),
            "x": np.round(rng.normal(10, 3, rows), 2),
            "maybe": np.where(rng.random(rows) < 0.5, np.nan, rng.integers(0, 9, rows)),
        }
    )
    gold = pd.concat([gold, gold.iloc[:50]], ignore_index=True)
    pred = gold.iloc[rng.permutation(len(gold)), ::-1].reset_index(drop=True)
    pred["x"] = pred["x"] * (1 + noise)
    pred.columns = [f"c{i}" for i in range(pred.shape[1])]
    gold.to_csv(tmp_path / "g.csv", index=False)
    pred.to_csv(tmp_path / "p.csv", index=False)
    return tmp_path / "p.csv", {"gold": "g.csv", "condition_cols": [], "ignore_order": True}


def _alone(tmp_path, pred, params) -> dict:
    out = {}
    for preset in PRESETS.values():
        job = TableJob(tmp_path, (preset,), TableReader("unreadable_prediction"))
        out |= table_match(job, pred, params)
    return out


def test_each_preset_names_its_family_once():
    assert {name: rules_for(p) for name, p in PRESETS.items()} == {
        "spider2": OFFICIAL,
        "spider2-2024": OFFICIAL,
        "spider2-lite": OFFICIAL,
        "strict": STRICT,
    }


@pytest.mark.parametrize("noise", [0.0, 1e-5, 0.5])
def test_the_official_views_are_dropped_when_strict_starts(tmp_path, noise):
    pred, params = _pair(tmp_path, noise=noise)
    job = TableJob(tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"))
    together = table_match(job, pred, params)
    assert not job.views._frames  # strict ran last: the official presets' column views are gone
    assert job._strict_cache  # and strict's typed cells are what is held
    assert together == _alone(tmp_path, pred, params)


def test_families_taken_in_turn_give_the_verdicts_of_each_alone(tmp_path):
    pred, params = _pair(tmp_path, noise=1e-5)
    order = (PRESETS["strict"], PRESETS["spider2-lite"], PRESETS["spider2"])
    job = TableJob(tmp_path, order, TableReader("unreadable_prediction"))
    first = table_match(job, pred, params)
    assert not job._strict_cache  # the official presets came after strict: its typed cells are gone
    job.presets = (PRESETS["strict"], PRESETS["spider2-2024"])
    second = table_match(job, pred, params)
    assert first | second == _alone(tmp_path, pred, params)


def test_a_column_shown_to_hold_the_same_values_keeps_no_sorted_copy(tmp_path):
    """Gold columns matched on their very values are proven for every preset; their sorted copies (and, with
    every gold column proven, the prediction's) are dropped, and the next preset still finds the match."""
    pred, params = _pair(tmp_path)
    gold_frame, pred_frame = pd.read_csv(tmp_path / "g.csv"), pd.read_csv(pred)
    views = ViewCache()
    for preset in (PRESETS["spider2"], PRESETS["spider2-2024"], PRESETS["spider2-lite"]):
        verdict = official_compare(
            pred_frame, gold_frame, ignore_order=True, tol=preset.tol, null_as_zero=preset.null_as_zero, views=views
        )
        assert verdict.passed
        held = [c for f in views._frames.values() for c in f._columns.values() if "sorted_exact" in c.__dict__]
        assert not held
