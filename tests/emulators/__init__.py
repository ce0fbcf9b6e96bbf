"""Local BigQuery and Snowflake emulators for the test suite.

install.py builds their venvs once per machine in the temp folder, servers.py runs them,
fixtures.py exposes them to pytest. See README.md for measured behaviour.
"""

from .servers import BigQueryEmulator, EmulatorStartError, SnowflakeEmulator

__all__ = ["BigQueryEmulator", "EmulatorStartError", "SnowflakeEmulator"]
