"""Shared test setup: `tests/` on the path for helper modules, emulator fixtures when present."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import hypothesis_profiles  # noqa: E402  (tests/ is on the path from the line above)

hypothesis_profiles.register()  # hypothesis: `fixed` (derandomised) unless HYPOTHESIS_PROFILE says otherwise
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

pytest_plugins = ["dbservers"]
if (Path(__file__).parent / "emulators" / "fixtures.py").exists():
    pytest_plugins.append("emulators.fixtures")


def requires_shared(path: Path):
    """A mark for tests that read ../shared: skipped with a visible reason on a user's machine, failed in CI."""
    import os

    import pytest

    if path.exists():
        return pytest.mark.usefixtures()
    if os.environ.get("CI"):
        return pytest.mark.usefixtures("shared_missing_in_ci")
    return pytest.mark.skip(reason=f"{path} is not beside the project (../shared); CI fails instead of skipping")


def _shared_missing_in_ci():
    import pytest

    pytest.fail("../shared is missing, and CI must test against it")


try:
    import pytest as _pytest

    shared_missing_in_ci = _pytest.fixture(_shared_missing_in_ci)
except ImportError:  # pragma: no cover
    pass
