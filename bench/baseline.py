"""A plain, column-by-column Python reimplementation of the public Spider2 table rule.

This is the benchmark's baseline: it re-sorts both vectors for every
(gold column, predicted column) pair exactly as the public scorers do, so the
speed of `evaluators` can be compared with the algorithm it replaces.  It is
also used by the tests as an independent oracle for the official presets.
"""
from __future__ import annotations

import math

import pandas as pd

REL = 1e-9
FP = None
PRESETS = {
    "spider2": dict(tol=1e-2, null_as_zero=False, low_memory=False),
    "spider2-2024": dict(tol=1e-3, null_as_zero=False, low_memory=False),
    "spider2-lite": dict(tol=1e-2, null_as_zero=True, low_memory=True),
}


def _sort_key(x):
    return (x is None, str(x), isinstance(x, (int, float)))


def _vectors_match(v1, v2, tol, ignore_order, null_as_zero):
    try:
        if null_as_zero:
            v1 = [0 if pd.isna(x) else x for x in v1]
            v2 = [0 if pd.isna(x) else x for x in v2]
        if ignore_order:
            v1, v2 = sorted(v1, key=_sort_key), sorted(v2, key=_sort_key)
        if len(v1) != len(v2):
            return False
        for a, b in zip(v1, v2):
            if pd.isna(a) and pd.isna(b):
                continue
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if not math.isclose(float(a), float(b), abs_tol=tol, rel_tol=REL):
                    return False
            elif a != b:
                return False
        return True
    except Exception:
        return False


def compare_frames(pred: pd.DataFrame, gold: pd.DataFrame, condition_cols, ignore_order, preset="spider2"):
    p = PRESETS[preset]
    if condition_cols:
        if not isinstance(condition_cols, (list, tuple)):
            condition_cols = [condition_cols]
        gold = gold.iloc[:, condition_cols]
    gold_vectors = gold.transpose().values.tolist()
    pred_vectors = pred.transpose().values.tolist()
    for g in gold_vectors:
        if not any(_vectors_match(g, v, p["tol"], ignore_order, p["null_as_zero"]) for v in pred_vectors):
            return 0
    return 1


def table_match(pred_csv, gold_csvs, condition_cols, ignore_order, preset="spider2"):
    p = PRESETS[preset]
    pred = pd.read_csv(pred_csv, low_memory=p["low_memory"], float_precision=FP)
    if isinstance(gold_csvs, str):
        gold_csvs, condition_cols = [gold_csvs], [condition_cols or []]
    if condition_cols in ([], [[]], [None], None):
        condition_cols = [[] for _ in gold_csvs]
    elif preset == "spider2-lite" and len(gold_csvs) > 1 and not all(isinstance(c, list) for c in condition_cols):
        condition_cols = [condition_cols for _ in gold_csvs]
    for path, cols in zip(gold_csvs, condition_cols):
        gold = pd.read_csv(path, low_memory=p["low_memory"], float_precision=FP)
        try:
            if compare_frames(pred, gold, cols, ignore_order, preset):
                return 1
        except Exception:
            pass
    return 0
