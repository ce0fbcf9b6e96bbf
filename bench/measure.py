"""What the benchmark times, one table pair at a time.

- read: `pd.read_csv` of the gold and the prediction (`low_memory=False`, as
  the current suite and the strict rule read them);
- compare, per semantics: the matcher's work on frames already read, with
  fresh caches (the official rule's `compare`; for strict, typing the cells
  of both frames and `strict.compare`);
- all4: the four semantics together sharing views, as grading does;
- e2e: `table_match` on the files (reads included) under one semantics, or
  all four;
- baseline: `bench/baseline.py` (the public scorer's per-cell loop) on the
  frames already read.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import baseline  # noqa: E402
from evaluators.matching.official import rule as official  # noqa: E402
from evaluators.matching.semantics import PRESETS, STRICT_TOL  # noqa: E402
from evaluators.matching.strict import rule as strict  # noqa: E402
from evaluators.matching.strict.cells import TokenTable  # noqa: E402
from evaluators.matching.strict.columns import strict_columns  # noqa: E402
from evaluators.matching.table_match import TableJob, table_match  # noqa: E402
from evaluators.tables.read import TableReader  # noqa: E402

SEMANTICS = ("spider2", "spider2-2024", "spider2-lite", "strict")


def timed(fn, repeats: int) -> tuple[float, float, object]:
    """(median wall seconds, median CPU seconds, last result) over `repeats` calls."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def read_pair(gold_path: Path, pred_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(gold_path, low_memory=False), pd.read_csv(pred_path, low_memory=False)


def compare(
    semantics: str,
    gold: pd.DataFrame,
    pred: pd.DataFrame,
    gold_path: Path,
    pred_path: Path,
    ignore_order: bool = True,
    views=None,
    tokens=None,
) -> bool:
    """One semantics' verdict on frames already read (fresh caches unless given)."""
    if semantics == "strict":
        tokens = tokens or TokenTable()
        g = strict_columns(gold, tokens, lambda cols: _text(gold_path, cols))
        p = strict_columns(pred, tokens, lambda cols: _text(pred_path, cols))
        return strict.compare(p, g, ignore_order=ignore_order, tol=STRICT_TOL).passed
    preset = PRESETS[semantics]
    selected = official.select_condition_cols(gold, [], wrap_scalar=preset.repeat_flat_condition_cols)
    return official.compare(
        pred,
        selected,
        ignore_order=ignore_order,
        tol=preset.tol,
        null_as_zero=preset.null_as_zero,
        views=views or official.ViewCache(),
    ).passed


def _text(path: Path, columns: list[int]) -> pd.DataFrame:
    return pd.read_csv(path, dtype=object, usecols=columns, low_memory=False)


def compare_all(gold, pred, gold_path, pred_path, ignore_order: bool = True) -> dict:
    """All four semantics with shared views, as one graded instance does."""
    views = official.ViewCache()
    return {s: compare(s, gold, pred, gold_path, pred_path, ignore_order, views=views) for s in SEMANTICS}


def end_to_end(gold_path: Path, pred_path: Path, semantics: tuple[str, ...], ignore_order: bool = True) -> dict:
    """table_match on the files, reads included (fresh readers each call)."""
    job = TableJob(gold_path.parent, tuple(PRESETS[s] for s in semantics), TableReader("unreadable_prediction"))
    params = {"gold": gold_path.name, "condition_cols": [], "ignore_order": ignore_order}
    return {name: v.score for name, v in table_match(job, pred_path, params).items()}


def baseline_verdict(semantics: str, gold, pred, ignore_order: bool = True) -> bool:
    return bool(baseline.compare_frames(pred, gold, [], ignore_order, semantics))
