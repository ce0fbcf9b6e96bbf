"""Each engine's own settings, one small frozen class per engine.

`ExecConfig` (executor.py) holds the settings every query shares (work folder, timeout, memory cap,
database folder, credentials, overrides) and one of these per engine; a request carries the common ones and
its own engine's alone, under `settings["engine"]`, and the backend reads them back with `Settings.of(request)`.
Benchmark quirks (BIRD's official statements and psycopg2 values, test-suite's undecodable text) are
settings of the engine they change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

ENGINE_KEY = "engine"  # the request settings' key holding the engine's own fields
DEFAULT_MAX_BYTES_BILLED = 10 * 1024**3
DEFAULT_MAX_RESULT_ROWS = 1_000_000


@dataclass(frozen=True)
class EngineSettings:
    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, request):
        """This engine's settings as a request carries them (the defaults where it carries none)."""
        return cls(**(request.settings.get(ENGINE_KEY) or {}))


@dataclass(frozen=True)
class DuckDBSettings(EngineSettings):
    pass  # the common settings (memory cap, spill folder) are all DuckDB reads


@dataclass(frozen=True)
class SQLiteSettings(EngineSettings):
    decode_errors: str = "strict"  # "ignore": undecodable text dropped, as test-suite-sql-eval and EHRSQL read it


@dataclass(frozen=True)
class PostgresSettings(EngineSettings):
    dsn: str | None = None  # a libpq string or postgresql:// URL; PG* variables and ~/.pgpass apply too
    official_statements: bool = False  # run the read-only statements BIRD's drivers run (official_statements.py)
    psycopg2_values: bool = False  # values as psycopg2 gives them (execution/pg_values.py; BIRD, LiveSQLBench)


@dataclass(frozen=True)
class MySQLSettings(EngineSettings):
    dsn: str | None = None  # mysql://user:password@host:port/database; MYSQL_* variables and ~/.my.cnf too
    official_statements: bool = False  # as PostgreSQL's


@dataclass(frozen=True)
class BigQuerySettings(EngineSettings):
    endpoint: str | None = None  # an emulator, say
    project: str | None = None  # for unqualified datasets
    max_bytes_billed: int = DEFAULT_MAX_BYTES_BILLED  # checked by a dry run first


@dataclass(frozen=True)
class SnowflakeSettings(EngineSettings):
    host: str | None = None
    port: int | None = None
    protocol: str | None = None  # "https" | "http"


@dataclass(frozen=True)
class CypherSettings(EngineSettings):
    max_result_rows: int = DEFAULT_MAX_RESULT_ROWS  # past it the answer is "result_too_large"
