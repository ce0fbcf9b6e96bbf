"""Session-scoped pytest fixtures for the emulators.

Register them as a plugin (tests/conftest.py does) rather than importing the
functions into several modules, which would start one server per module::

    pytest_plugins = ["emulators.fixtures"]

Each fixture installs its emulator on first use (a no-op when already
installed; see install.py) and starts one server for the whole session.
Tests share that server, so they should use their own dataset/database names.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .servers import BigQueryEmulator, SnowflakeEmulator


@pytest.fixture(scope="session")
def bigquery_emulator() -> Iterator[BigQueryEmulator]:
    with BigQueryEmulator() as server:
        yield server


@pytest.fixture(scope="session")
def snowflake_emulator() -> Iterator[SnowflakeEmulator]:
    with SnowflakeEmulator() as server:
        yield server
