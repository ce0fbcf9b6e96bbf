"""Numeric columns of every kind beside the order the public scorers' sort gives their cells: what the tests
of the official rule's string order (`column_views`) check both ways of computing it against."""

from __future__ import annotations

import numpy as np
import pandas as pd


def columns_with_scorer_order(rng, floats: np.ndarray, masked_choices: list, null_as_zero: bool):
    """(column, row order of the scorers' sort) for a float, an int, a bool and a masked Int64 column."""
    from evaluators.matching.official.column_views import _masked_column, num_column

    n = len(floats)
    ints = rng.choice([-3, 0, 7, 10, 2**53 + 1, 123], n)
    masked = pd.Series(pd.array(rng.choice(masked_choices, n), dtype="Int64"))
    for column in (
        num_column("f", floats, null_as_zero),
        num_column("i", ints, null_as_zero),
        num_column("b", ints > 5, null_as_zero),
        _masked_column("m", masked, null_as_zero),
    ):
        values = column.python_values()
        want = sorted(range(n), key=lambda i: (values[i] is None, str(values[i]), isinstance(values[i], (int, float))))
        yield column, want
