import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.metrics.attempts import UNGROUPED, select_score, summarize_attempts

T, F = True, False

# A 3-attempt submission: first try, two refinements.
SUBMISSION = {
    "stays_right": [T, T, T],
    "recovers_late": [F, F, T],  # recovery
    "regresses": [T, F, F],  # regression
    "never": [F, F, F],
    "recovers_early": [F, T, T],  # recovery
}
GROUPS = {
    "stays_right": "easy",
    "recovers_late": "easy",
    "regresses": "hard",
    "never": "hard",
    "recovers_early": "hard",
}


def test_three_attempt_submission_overall():
    m = summarize_attempts(SUBMISSION).overall
    assert m.n_instances == 5
    assert (m.min_attempts, m.max_attempts) == (3, 3)
    assert m.pass_at_1 == pytest.approx(2 / 5)
    assert m.pass_at_final == pytest.approx(3 / 5)
    assert m.refinement_gain == pytest.approx(1 / 5)
    assert (m.n_initially_failed, m.n_recovered) == (3, 2)
    assert m.recovery_rate == pytest.approx(2 / 3)
    assert (m.n_initially_passed, m.n_regressions) == (2, 1)
    assert m.regression_rate == pytest.approx(1 / 2)


def test_three_attempt_submission_pass_at_k():
    m = summarize_attempts(SUBMISSION).overall
    # Unbiased estimator per instance (n=3, c = correct attempts), then mean.
    # k=1: c/n = 1, 1/3, 1/3, 0, 2/3; k=2: 1, 2/3, 2/3, 0, 1; k=3: 1, 1, 1, 0, 1.
    assert m.pass_at_k == pytest.approx({1: 7 / 15, 2: 10 / 15, 3: 4 / 5})
    # Sequential "solved within the first k attempts".
    assert m.any_correct_at_k == pytest.approx({1: 2 / 5, 2: 3 / 5, 3: 4 / 5})
    assert m.any_correct_at_k[1] == m.pass_at_1


def test_groups_are_broken_down():
    report = summarize_attempts(SUBMISSION, GROUPS)
    assert set(report.by_group) == {"easy", "hard"}
    easy, hard = report.by_group["easy"], report.by_group["hard"]
    assert (easy.n_instances, easy.pass_at_1, easy.pass_at_final) == (2, 0.5, 1.0)
    assert easy.recovery_rate == 1.0 and easy.regression_rate == 0.0
    assert hard.n_instances == 3
    assert hard.pass_at_1 == pytest.approx(1 / 3) and hard.pass_at_final == pytest.approx(1 / 3)
    assert hard.refinement_gain == pytest.approx(0.0)
    assert hard.recovery_rate == pytest.approx(1 / 2) and hard.regression_rate == 1.0


def test_no_groups_gives_empty_breakdown_and_missing_labels_are_ungrouped():
    assert summarize_attempts(SUBMISSION).by_group == {}
    report = summarize_attempts(SUBMISSION, {"never": "hard"})
    assert report.by_group["hard"].n_instances == 1
    assert report.by_group[UNGROUPED].n_instances == 4


def test_k_is_reported_only_when_every_instance_has_k_attempts():
    report = summarize_attempts(
        {"short": [F], "long1": [F, T, T], "long2": [T, T, F]},
        {"short": "a", "long1": "b", "long2": "b"},
    )
    assert set(report.overall.pass_at_k) == {1}
    assert set(report.overall.any_correct_at_k) == {1}
    assert (report.overall.min_attempts, report.overall.max_attempts) == (1, 3)
    assert set(report.by_group["b"].pass_at_k) == {1, 2, 3}
    # Pass@final uses each instance's own last attempt.
    assert report.overall.pass_at_final == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("verdicts", "recovery", "regression"),
    [
        ({"a": [T, T], "b": [T, F]}, None, 0.5),  # nothing failed initially
        ({"a": [F, T], "b": [F, F]}, 0.5, None),  # nothing passed initially
        ({"a": [T]}, None, 0.0),  # single attempt: first is last
    ],
)
def test_undefined_rates_are_none(verdicts, recovery, regression):
    m = summarize_attempts(verdicts).overall
    assert m.recovery_rate == recovery
    assert m.regression_rate == regression


def test_numpy_bools_and_0_1_are_accepted():
    m = summarize_attempts({"a": [np.bool_(False), np.bool_(True)], "b": [1, 0]}).overall
    assert (m.n_recovered, m.n_regressions) == (1, 1)


@pytest.mark.parametrize("bad", [{}, {"a": []}, {"a": [True, None]}, {"a": ["yes"]}, {"a": [0.5]}])
def test_invalid_input_raises(bad):
    with pytest.raises(ValueError):
        summarize_attempts(bad)


def test_to_dict_is_json_serialisable():
    data = summarize_attempts(SUBMISSION, GROUPS).to_dict()
    assert data["overall"]["pass_at_1"] == pytest.approx(0.4)
    assert data["by_group"]["easy"]["n_recovered"] == 1
    json.dumps(data)


def test_results_are_frozen():
    m = summarize_attempts(SUBMISSION).overall
    with pytest.raises(AttributeError):
        m.pass_at_1 = 1.0


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.lists(st.booleans(), min_size=1, max_size=5), min_size=1))
def test_gain_equals_recoveries_minus_regressions(verdicts):
    m = summarize_attempts(verdicts).overall
    assert m.refinement_gain == pytest.approx((m.n_recovered - m.n_regressions) / m.n_instances)
    within = [m.any_correct_at_k[k] for k in sorted(m.any_correct_at_k)]
    assert within == sorted(within)  # more attempts never solve fewer instances
    assert all(0.0 <= v <= 1.0 for v in m.pass_at_k.values())


@pytest.mark.parametrize(
    ("verdicts", "policy", "expected"),
    [
        ([T, F, F], "last", F),
        ([T, F, F], "best", T),
        ([F, F, T], "last", T),
        ([F, F, F], "best", F),
        ([0.2, 0.9, 0.5], "best", 0.9),
        ([0.2, 0.9, 0.5], "last", 0.5),
    ],
)
def test_select_score(verdicts, policy, expected):
    assert select_score(verdicts, policy) == expected


def test_select_score_defaults_to_last_and_validates():
    assert select_score([T, F]) is F
    with pytest.raises(ValueError):
        select_score([T], "first")
    with pytest.raises(ValueError):
        select_score([], "last")
