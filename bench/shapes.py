"""Table shapes for the scale benchmark (`bench/scale.py`): gold and prediction frames, seeded.

Every prediction holds the gold's rows shuffled and its columns permuted and renamed, so every
semantics should accept it with `ignore_order`.  The shapes are the ones where grading used to
grow faster than the rows:

- repeated: 10 columns of categories, small integers and rounded floats, 10 % duplicate rows
  (no column, nor any two, tells the rows apart);
- nulls: 10 columns, 60 % of each NULL;
- floats: 10 float columns, the prediction's moved by a relative 1e-12 (inside every tolerance, never
  identical, and the scorers' string sort keeps its order);
- wide: 200 columns of the repeated kinds (rows / 20, so as many cells as the others);
- lookalike: 10 columns each a different shuffle of the same 0..9 values (only whole rows tell the
  columns apart).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

SHAPES = ("repeated", "nulls", "floats", "wide", "lookalike")
WIDE = 200


def pair(shape: str, rows: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    if shape == "wide":
        gold = _repeated(max(rows // (WIDE // 10), 1), WIDE, rng)
    elif shape == "repeated":
        gold = _repeated(rows, 10, rng)
    elif shape == "nulls":
        gold = _nulls(rows, rng)
    elif shape == "floats":
        gold = pd.DataFrame({f"f{c}": np.round(rng.normal(100, 30, rows), 3) for c in range(10)})
    elif shape == "lookalike":
        values = rng.integers(0, 10, rows)
        gold = pd.DataFrame({f"k{c}": rng.permutation(values) for c in range(10)})
    else:
        raise ValueError(f"unknown shape {shape!r}")
    pred = gold.iloc[rng.permutation(len(gold)), rng.permutation(gold.shape[1])].reset_index(drop=True)
    if shape == "floats":
        pred = pred * (1 + 1e-12)
    pred.columns = [f"c{i}" for i in range(pred.shape[1])]
    return gold, pred


def _repeated(rows: int, cols: int, rng: np.random.Generator) -> pd.DataFrame:
    distinct = rows - rows // 10
    data = {}
    for c in range(cols):
        kind = c % 5
        if kind == 0:
            data[f"cat{c}"] = np.array([f"name{i}" for i in range(7 + c)])[rng.integers(0, 7 + c, distinct)]
        elif kind == 1:
            data[f"n{c}"] = rng.integers(0, 20 + 50 * c, distinct)
        elif kind == 2:
            data[f"f{c}"] = np.round(rng.normal(100, 30, distinct), 1)
        elif kind == 3:
            data[f"y{c}"] = rng.integers(1990, 2025, distinct)
        else:
            data[f"r{c}"] = np.round(rng.random(distinct) * 10, 2)
    frame = pd.DataFrame(data)
    duplicates = frame.iloc[rng.integers(0, distinct, rows - distinct)]
    return pd.concat([frame, duplicates], ignore_index=True)


def _nulls(rows: int, rng: np.random.Generator) -> pd.DataFrame:
    data = {}
    for c in range(10):
        missing = rng.random(rows) < 0.6
        if c % 3 == 0:
            values = pd.array(np.array([f"v{i}" for i in range(30)])[rng.integers(0, 30, rows)], dtype="str")
            values[missing] = None
        elif c % 3 == 1:
            values = np.where(missing, np.nan, rng.integers(0, 1000, rows).astype(float))
        else:
            values = np.where(missing, np.nan, np.round(rng.normal(50, 10, rows), 2))
        data[f"c{c}"] = values
    return pd.DataFrame(data)


def write(directory, shape: str, rows: int) -> tuple:
    """gold.csv and pred.csv of one shape under `directory` (kept when already there)."""
    from pathlib import Path

    directory = Path(directory) / f"{shape}-{rows}"
    gold_path, pred_path = directory / "gold.csv", directory / "pred.csv"
    if not (gold_path.exists() and pred_path.exists()):
        directory.mkdir(parents=True, exist_ok=True)
        gold, pred = pair(shape, rows)
        for frame, path in ((gold, gold_path), (pred, pred_path)):
            # Written aside and renamed: a run reading a pair while another writes it sees whole files.
            aside = path.with_suffix(f".{os.getpid()}.tmp")
            frame.to_csv(aside, index=False)
            aside.rename(path)
    return gold_path, pred_path
