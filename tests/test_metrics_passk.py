import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluators.metrics.passk import mean_pass_at_k, pass_at_k


# Hand-computed with 1 - C(n-c, k) / C(n, k).
@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # 1 - 3/5
        (5, 2, 2, 0.7),  # 1 - 3/10
        (5, 2, 3, 0.9),  # 1 - 1/10
        (5, 2, 4, 1.0),  # n - c = 3 < 4
        (5, 2, 5, 1.0),
        (5, 0, 1, 0.0),  # c = 0: never passes
        (5, 0, 3, 0.0),
        (5, 0, 5, 0.0),
        (5, 5, 1, 1.0),  # c = n: always passes
        (5, 5, 5, 1.0),
        (1, 0, 1, 0.0),
        (1, 1, 1, 1.0),
        (10, 1, 1, 0.1),
        (10, 3, 2, 1 - 21 / 45),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    ],
)
def test_pass_at_k_hand_table(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_product_form_matches_binomial_definition(nck):
    n, c, k = nck
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-9)


@given(st.integers(2, 40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n - 1), st.integers(1, n - 1))))
def test_monotone_in_c_and_k(nck):
    n, c, k = nck
    assert pass_at_k(n, c + 1, k) >= pass_at_k(n, c, k)
    assert pass_at_k(n, c, k + 1) >= pass_at_k(n, c, k)


def test_large_n_is_numerically_stable():
    # C(10000, 5000) overflows a float; the product form must not.
    assert pass_at_k(10_000, 1, 1) == pytest.approx(1e-4, rel=1e-9)
    assert pass_at_k(10_000, 5_000, 1) == pytest.approx(0.5, rel=1e-9)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [(5, 2, 6), (5, 2, 0), (5, 6, 1), (5, -1, 1), (0, 0, 1), (3, 1, -1)],
)
def test_undefined_arguments_raise(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


@pytest.mark.parametrize("bad", [(5.0, 2, 1), (5, 2.0, 1), (5, 2, True)])
def test_non_integer_arguments_raise(bad):
    with pytest.raises(TypeError):
        pass_at_k(*bad)


def test_mean_over_instances():
    assert mean_pass_at_k([(5, 2), (5, 0), (5, 5)], 1) == pytest.approx((0.4 + 0 + 1) / 3)
    assert mean_pass_at_k([(5, 2), (3, 3)], 3) == pytest.approx((0.9 + 1.0) / 2)


def test_mean_rejects_empty_and_too_few_attempts():
    with pytest.raises(ValueError):
        mean_pass_at_k([], 1)
    with pytest.raises(ValueError):
        mean_pass_at_k([(5, 2), (2, 1)], 3)
