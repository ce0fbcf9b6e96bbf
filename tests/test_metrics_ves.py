import math
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.metrics import ves
from evaluators.metrics.ves import (
    TIME_FLOOR_S,
    aggregate_ves,
    filter_outliers,
    rves_reward,
    score_instance,
    time_alternately,
    time_ratio,
)


@pytest.mark.parametrize(
    ("times", "kept"),
    [
        ([1.0] * 19 + [100.0], [1.0] * 19),  # z = sqrt(19) > 3: dropped
        ([1.0] * 10 + [100.0], [1.0] * 10),  # n = 11 is the smallest n that can drop
        ([1.0] * 9 + [100.0], [1.0] * 9 + [100.0]),  # n = 10: z = 3 exactly, kept
        ([2.0, 2.0, 2.0], [2.0, 2.0, 2.0]),  # sigma = 0 keeps all
        ([682.8387195716998] * 3, [682.8387195716998] * 3),  # fmean rounds off this value
        ([0.0, 0.0], [0.0, 0.0]),
        ([5.0], [5.0]),  # fewer than 2 timings
        ([], []),
        ([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]),
    ],
)
def test_outlier_filter(times, kept):
    assert filter_outliers(times) == kept


def test_outlier_filter_drops_both_tails():
    times = [1.0] * 30 + [50.0] + [1.0] * 30 + [-0.0]  # -0.0 is not negative
    assert filter_outliers(times) == [1.0] * 60 + [-0.0]
    slow_and_fast = [10.0] * 40 + [1000.0, 0.0]
    assert filter_outliers(slow_and_fast) == [10.0] * 40 + [0.0]  # 0.0 lies within 3 sigma


@given(st.lists(st.floats(0, 1e3), min_size=2, max_size=9))
def test_nothing_is_dropped_from_few_timings(times):
    # Samuelson: |x - mean| <= sqrt(n - 1) * sigma < 3 sigma when n <= 9
    # (n = 10 reaches exactly 3 sigma; that boundary case is in the table above).
    assert len(filter_outliers(times)) == len(times)


@pytest.mark.parametrize("bad", [[1.0, -0.5], [float("nan")], [1.0, float("inf")]])
def test_outlier_filter_rejects_bad_timings(bad):
    with pytest.raises(ValueError):
        filter_outliers(bad)


@pytest.mark.parametrize(
    ("gold", "pred", "ratio"),
    [
        ([2.0, 2.0], [1.0, 1.0], 2.0),
        ([1.0, 3.0], [4.0], 0.5),  # means: 2 / 4
        ([1.0] * 19 + [100.0], [1.0] * 20, 1.0),  # gold outlier filtered first
        ([0.0, 0.0], [0.0, 0.0], 1.0),  # both zero: no division by zero, ratio 1
        ([0.5], [0.0], 0.5 / TIME_FLOOR_S),  # pred zero: floored
        ([0.0], [0.5], TIME_FLOOR_S / 0.5),
        ([1e-12], [1e-15], 1.0),  # both below the floor
    ],
)
def test_time_ratio(gold, pred, ratio):
    assert time_ratio(gold, pred) == pytest.approx(ratio)


def test_time_ratio_needs_timings():
    with pytest.raises(ValueError):
        time_ratio([], [1.0])


@pytest.mark.parametrize(
    ("ratio", "reward"),
    [
        (100.0, 1.25),
        (2.0, 1.25),  # edge: 2 belongs to the top bucket
        (1.9999, 1.0),
        (1.0, 1.0),  # edge
        (0.9999, 0.75),
        (0.5, 0.75),  # edge
        (0.4999, 0.5),
        (0.25, 0.5),  # edge
        (0.2499, 0.25),
        (1e-9, 0.25),
    ],
)
def test_rves_bucket_edges(ratio, reward):
    assert rves_reward(ratio) == reward


@pytest.mark.parametrize(("gold", "ratio"), [([2.0] * 3, 2.0), ([1.0] * 3, 1.0), ([0.5] * 3, 0.5), ([0.25] * 3, 0.25)])
def test_bucket_edges_through_timings(gold, ratio):
    inst = score_instance(True, gold, [1.0] * 3)
    assert inst.ratio == ratio
    assert inst.reward == rves_reward(ratio)
    assert inst.ves == pytest.approx(math.sqrt(ratio) * 100)


def test_correct_instance_scores_and_spread():
    inst = score_instance(True, [4.0, 4.0], [0.5, 1.5])
    assert inst.ratio == pytest.approx(4.0)
    assert inst.ves == pytest.approx(200.0)
    assert inst.reward == 1.25
    assert inst.rves == pytest.approx(math.sqrt(1.25) * 100)
    assert (inst.gold_mean_s, inst.pred_mean_s) == (4.0, 1.0)
    assert (inst.pred_min_s, inst.pred_max_s) == (0.5, 1.5)
    assert inst.pred_cv == pytest.approx(0.5)  # pstdev 0.5 / mean 1.0
    assert (inst.gold_dropped, inst.pred_dropped) == (0, 0)


def test_dropped_counts_are_reported():
    inst = score_instance(True, [1.0] * 20, [1.0] * 19 + [100.0])
    assert inst.pred_dropped == 1 and inst.gold_dropped == 0
    assert inst.ratio == pytest.approx(1.0)
    assert inst.pred_max_s == 1.0 and inst.pred_cv == 0.0


def test_wrong_instance_scores_zero_but_keeps_its_ratio():
    inst = score_instance(False, [4.0], [1.0])
    assert (inst.ves, inst.reward, inst.rves) == (0.0, 0.0, 0.0)
    assert inst.ratio == pytest.approx(4.0)
    untimed = score_instance(False)
    assert untimed.ratio is None and untimed.ves == 0.0 and untimed.pred_cv is None


def test_correct_instance_needs_timings():
    with pytest.raises(ValueError):
        score_instance(True, [], [1.0])


def test_aggregate_is_mean_over_all_instances_with_wrong_as_zero():
    instances = [
        score_instance(True, [4.0], [1.0]),  # ratio 4: VES 200, reward 1.25
        score_instance(True, [1.0], [1.0]),  # ratio 1: VES 100, reward 1
        score_instance(False, [9.0], [1.0]),  # wrong: 0 despite being fast
        score_instance(True, [0.1], [1.0]),  # ratio 0.1: VES sqrt(0.1)*100, reward 0.25
    ]
    summary = aggregate_ves(instances)
    assert summary.n_instances == 4 and summary.n_correct == 3
    assert summary.ves == pytest.approx((200 + 100 + 0 + math.sqrt(0.1) * 100) / 4)
    assert summary.rves == pytest.approx((math.sqrt(1.25) + 1 + 0 + math.sqrt(0.25)) * 100 / 4)
    assert summary.median_ratio == pytest.approx(1.0)  # of 4, 1, 0.1: wrong one excluded
    assert summary.to_dict()["ves"] == summary.ves


def test_aggregate_edge_cases():
    with pytest.raises(ValueError):
        aggregate_ves([])
    only_wrong = aggregate_ves([score_instance(False)])
    assert (only_wrong.ves, only_wrong.rves, only_wrong.median_ratio) == (0.0, 0.0, None)


def test_results_are_frozen():
    inst = score_instance(True, [1.0], [1.0])
    with pytest.raises(AttributeError):
        inst.ves = 0.0


def test_time_alternately_interleaves_and_measures(monkeypatch):
    clock = [0.0]
    calls = []

    def fake_perf_counter():
        return clock[0]

    def run(name, seconds):
        def _run():
            calls.append(name)
            clock[0] += seconds

        return _run

    monkeypatch.setattr(ves.time, "perf_counter", fake_perf_counter)
    gold, pred = time_alternately(run("gold", 2.0), run("pred", 0.5), 3)
    assert calls == ["gold", "pred"] * 3
    assert gold == [2.0] * 3 and pred == [0.5] * 3


def test_time_alternately_validates_iterations():
    with pytest.raises(ValueError):
        time_alternately(lambda: None, lambda: None, 0)


def test_time_alternately_on_sqlite(tmp_path):
    con = sqlite3.connect(tmp_path / "ves.sqlite")
    con.execute("CREATE TABLE t(x INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
    gold_sql = "SELECT x FROM t WHERE x % 7 = 0"
    pred_sql = "SELECT x FROM t WHERE x IN (SELECT x FROM t WHERE x % 7 = 0)"
    gold, pred = time_alternately(lambda: con.execute(gold_sql).fetchall(), lambda: con.execute(pred_sql).fetchall(), 5)
    same = sorted(con.execute(gold_sql).fetchall()) == sorted(con.execute(pred_sql).fetchall())
    con.close()
    assert len(gold) == len(pred) == 5
    assert all(t > 0 for t in gold + pred)
    inst = score_instance(same, gold, pred)
    assert inst.correct and inst.ratio > 0 and inst.ves == pytest.approx(math.sqrt(inst.ratio) * 100)
