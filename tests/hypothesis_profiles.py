"""Hypothesis profiles (registered and loaded by tests/conftest.py before any test module).

- `fixed` (the default, and always under CI): derandomised, no example database, so a run's result
  depends on the code alone; a counterexample once found is kept in its test as an explicit `@example`.
- `explore`: random, with the local example database, `EXPLORE_SCALE` times the examples: run on purpose
  (`HYPOTHESIS_PROFILE=explore pytest ...` or `python bench/properties.py`) to look for new counterexamples.

`HYPOTHESIS_PROFILE` names the profile; without it (CI set or not) the profile is `fixed`.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXPLORE_SCALE = 20
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or "fixed"


def register() -> None:
    settings.register_profile("fixed", derandomize=True, database=None, deadline=None, print_blob=True)
    settings.register_profile("explore", derandomize=False, deadline=None, print_blob=True)
    settings.load_profile(PROFILE)


def sized(examples: int, **more) -> settings:
    """Settings for a property: `examples` under `fixed` (sized to what it proves), more under `explore`."""
    scale = EXPLORE_SCALE if PROFILE == "explore" else 1
    more.setdefault("suppress_health_check", list(HealthCheck))
    return settings(max_examples=examples * scale, **more)
