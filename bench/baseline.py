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
        for a, b in zip(v1, v2, strict=False):
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
    for path, cols in zip(gold_csvs, condition_cols, strict=False):
        gold = pd.read_csv(path, low_memory=p["low_memory"], float_precision=FP)
        try:
            if compare_frames(pred, gold, cols, ignore_order, preset):
                return 1
        except Exception:
            pass
    return 0


def grade_folders(gold_dir, result_dir, preset="spider2") -> dict:
    """Grade a submission folder of this project's format (table_match specs, file answers) with the baseline.

    Returns {instance_id: 0 or 1}.  Only what the self-grade needs: one table_match spec per
    instance and answers that are one CSV file inside `<result_dir>/<instance_id>/`.
    """
    import json
    from pathlib import Path

    gold_dir, result_dir = Path(gold_dir), Path(result_dir)
    answers = {}
    for line in (result_dir / "results_metadata.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            answers[record["instance_id"]] = record["answer_or_path"]
    scores = {}
    for line in (gold_dir / "spider2_eval.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        iid, spec = record["instance_id"], record["evaluation"]
        spec = spec[-1] if isinstance(spec, list) else spec
        if spec.get("func") != "table_match" or iid not in answers:
            continue
        params = spec["parameters"]
        golds = params["gold"]
        golds = str(gold_dir / iid / golds) if isinstance(golds, str) else [str(gold_dir / iid / g) for g in golds]
        scores[iid] = table_match(
            str(result_dir / iid / answers[iid]),
            golds,
            params.get("condition_cols"),
            params.get("ignore_order", False),
            preset,
        )
    return scores


if __name__ == "__main__":
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(description="Grade a self-grade folder with the plain baseline rule.")
    parser.add_argument("gold_dir")
    parser.add_argument("result_dir")
    parser.add_argument("--semantics", default="spider2", choices=sorted(PRESETS))
    parser.add_argument("--output", help="write {instance_id: score} as JSON here")
    args = parser.parse_args()
    result = grade_folders(args.gold_dir, args.result_dir, args.semantics)
    if args.output:
        with open(args.output, "w") as out:
            json.dump(result, out)
    print(f"baseline {args.semantics}: {sum(result.values())}/{len(result)} instance(s) match", file=sys.stderr)
