"""Seeded gold/prediction table pairs for the benchmark.

A gold table mixes the column kinds real SQL results have: integer ids and
counts, money-like floats, free text, low-cardinality labels and flags, and
NULLs in ints, floats and text.  The prediction holds the same rows shuffled
and the columns reordered and renamed, so every semantics should accept it;
`noise` also moves each float by a relative 1e-12 (inside every tolerance),
which forces the official rule onto its string-sort path.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KINDS = ("id", "float", "text", "label", "int_null", "float_null", "text_null", "flag")


def gold_table(rows: int, cols: int, seed: int = 0) -> pd.DataFrame:
    """A `rows` x `cols` table cycling through KINDS."""
    rng = np.random.default_rng(seed)
    data = {}
    for c in range(cols):
        kind = KINDS[c % len(KINDS)]
        data[f"{kind}_{c}"] = _column(kind, rows, rng)
    return pd.DataFrame(data)


def _column(kind: str, rows: int, rng: np.random.Generator):
    if kind == "id":
        return rng.permutation(rows).astype(np.int64) + 1000
    if kind == "float":
        return np.round(rng.normal(1e4, 3e3, rows), 2)
    if kind == "text":
        return pd.array([f"item-{v:x}" for v in rng.integers(0, rows * 4 + 1, rows).tolist()], dtype="str")
    if kind == "label":
        labels = np.array(["north", "south", "east", "west", "centre", "unknown"])
        return pd.array(labels[rng.integers(0, len(labels), rows)], dtype="str")
    if kind == "flag":
        return rng.integers(0, 2, rows).astype(np.int64)
    missing = rng.random(rows) < 0.1
    if kind == "int_null":
        return pd.array(np.where(missing, None, rng.integers(0, 500, rows)), dtype="Int64")
    if kind == "float_null":
        return np.where(missing, np.nan, np.round(rng.exponential(50.0, rows), 3))
    text = pd.array([f"name {v}" for v in rng.integers(0, max(rows // 3, 1), rows).tolist()], dtype="str")
    text[missing] = None
    return text


def prediction(gold: pd.DataFrame, seed: int = 1, noise: bool = False) -> pd.DataFrame:
    """The gold's rows shuffled and its columns reordered and renamed (optionally nudged floats)."""
    rng = np.random.default_rng(seed)
    pred = gold.iloc[rng.permutation(len(gold)), rng.permutation(gold.shape[1])].reset_index(drop=True)
    if noise:
        for name in pred.columns:
            if pred[name].dtype.kind == "f":
                pred[name] = pred[name] * (1 + 1e-12)
    pred.columns = [f"c{i}" for i in range(pred.shape[1])]
    return pred


def equal_columns_table(
    rows: int = 2000, cols: int = 30, seed: int = 0, permuted: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Gold and prediction whose 30 columns hold the same few values: a trap for naive column mapping.

    Default: every column equal but the last.  `permuted`: each column a different
    shuffle of the same 0/1 values, so every column looks like every other one
    (same counts, same sorted values) and only whole rows tell them apart.
    """
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, (rows, cols))
    if permuted:
        base = np.stack([rng.permutation(base[:, 0]) for _ in range(cols)], axis=1)
    else:
        base[:, 1:] = base[:, :1]  # every column equal: 30! mappings look alike column by column
        base[rows // 2 :, -1] ^= 1  # ... except that one column differs in half of the rows
    gold = pd.DataFrame(base, columns=[f"g{i}" for i in range(cols)])
    pred = gold.iloc[rng.permutation(rows), rng.permutation(cols)].reset_index(drop=True)
    pred.columns = [f"p{i}" for i in range(cols)]
    return gold, pred


def write_pair(directory, rows: int, cols: int, seed: int = 0, noise: bool = False):
    """Write gold.csv and pred.csv; returns their paths."""
    from pathlib import Path

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    gold = gold_table(rows, cols, seed)
    gold_path, pred_path = directory / "gold.csv", directory / "pred.csv"
    gold.to_csv(gold_path, index=False)
    prediction(gold, seed + 1, noise).to_csv(pred_path, index=False)
    return gold_path, pred_path
