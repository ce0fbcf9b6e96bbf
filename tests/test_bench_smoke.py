"""The benchmark at tiny sizes: it runs, writes what it promises, and its tables are graded right.

Timings are not checked (benchmarks are not tests); verdicts and the shape of the output are.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import baseline, gen, measure  # noqa: E402
from bench import run as bench_run  # noqa: E402

TABLE = "id,name,score\n1,a,1.5\n2,b,\n3,,2.25\n"


def _mini_corpus(root: Path) -> Path:
    """A Spider2-lite-shaped corpus of three instances (one with two gold variants)."""
    exec_dir = root / "gold" / "exec_result"
    exec_dir.mkdir(parents=True)
    (exec_dir / "one.csv").write_text(TABLE)
    (exec_dir / "two_a.csv").write_text(TABLE)
    (exec_dir / "two_b.csv").write_text("k\n1\n")
    (exec_dir / "three.csv").write_text("x,y\n1,2\n3,4\n")
    lines = [
        {"instance_id": "one", "condition_cols": [0, 2], "ignore_order": True},
        {"instance_id": "two", "condition_cols": [[0], [0]], "ignore_order": False},
        {"instance_id": "three", "condition_cols": [], "ignore_order": True},
    ]
    (root / "gold" / "spider2lite_eval.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


def test_generator_is_seeded_and_predictions_are_permutations():
    a, b = gen.gold_table(300, 12, seed=5), gen.gold_table(300, 12, seed=5)
    pd.testing.assert_frame_equal(a, b)
    pred = gen.prediction(a, seed=6)
    assert sorted(map(str, pred.iloc[:, 0].tolist())) != [] and pred.shape == a.shape
    assert list(pred.columns) != list(a.columns)  # renamed and reordered


def test_bench_runs_and_all_semantics_agree_with_the_baseline(tmp_path):
    corpus = _mini_corpus(tmp_path / "corpus")
    out = tmp_path / "results"
    results = bench_run.main(
        [
            "--sizes",
            "100,200,600",
            "--cols",
            "7",
            "--repeats",
            "1",
            "--baseline-max-rows",
            "200",
            "--noise",
            "--out",
            str(out),
            "--corpus",
            str(corpus),
            "--memory-rows",
            "300",
        ]
    )
    saved = json.loads((out / "bench.json").read_text())
    assert (out / "bench.png").stat().st_size > 1000
    assert {"machine", "settings", "pairs", "equal_columns", "memory", "corpus"} <= set(saved)
    assert len(saved["pairs"]) == 6  # three sizes, each plain and with float noise
    for pair in saved["pairs"]:
        assert {"rows", "cols", "read", "compare", "all4", "e2e", "baseline"} <= set(pair)
        assert set(pair["compare"]) == set(measure.SEMANTICS)
        assert all(pair["compare"][s]["ok"] for s in measure.SEMANTICS), pair["compare"]
        assert pair["all4"]["ok"] and pair["e2e"]["all4"]["ok"]
        assert pair["baseline"]["extrapolated"] == (pair["rows"] > 200)
        if not pair["baseline"]["extrapolated"]:
            assert pair["baseline"]["ok"] is True
    memory = saved["memory"]
    assert memory["rows"] == 300 and memory["tables_bytes"] > 0 and memory["peak_rss_bytes"] > 0
    assert all(memory["verdicts"].values())
    corpus_result = saved["corpus"]
    assert corpus_result["instances"] == 3 and corpus_result["matched_ours"] == corpus_result["matched_baseline"] == 3
    assert corpus_result["verdicts_differ"] == []
    for kind in ("columns equal", "columns shuffled apart"):
        assert results["equal_columns"][f"{kind}, same rows"]["ok"]
        assert not results["equal_columns"][f"{kind}, one column scrambled"]["ok"]


def test_generated_tables_get_the_baseline_verdict_under_each_preset(tmp_path):
    """Each official preset against the baseline's own preset, on the bench's tables and broken copies of them."""
    gold_path, pred_path = gen.write_pair(tmp_path, 300, 9, seed=2, noise=True)
    gold, pred = measure.read_pair(gold_path, pred_path)
    broken = pred.copy()
    broken.iloc[3, 1] = broken.iloc[4, 1]
    for frame in (pred, broken):
        for semantics in ("spider2", "spider2-2024", "spider2-lite"):
            want = bool(baseline.compare_frames(frame, gold, [], True, semantics))
            assert measure.compare(semantics, gold, frame, gold_path, pred_path) == want, semantics
