"""`ExecConfig`: where and how queries run, in a module of its own so that a command builds one without
importing the executor (and sqlglot with it) before a query runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.cwd import absolute_or_none
from evaluators.execution.backends import canonical_name
from evaluators.execution.backends.settings import (
    ENGINE_KEY,
    BigQuerySettings,
    CypherSettings,
    DuckDBSettings,
    MySQLSettings,
    PostgresSettings,
    SnowflakeSettings,
    SQLiteSettings,
)
from evaluators.execution.opener import DEFAULT_MEMORY_LIMIT_MB


@dataclass(frozen=True)
class ExecConfig:
    """Where and how queries run: the settings every query shares, then each engine's own (backends/settings.py),
    of which a request carries only its engine's:

        ExecConfig(Path("work"), timeout_s=30, postgres=PostgresSettings(dsn="postgresql://localhost/db"))"""

    output_dir: Path  # where result CSVs and the gold cache go (never the submission/gold folders)
    db_dir: Path | None = None
    credentials_dir: Path = Path("credentials")
    backend_override: str | None = None  # a backend name: every instance runs there
    db_override: str | None = None
    timeout_s: float = 60.0
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB  # per query, for the local engines (execution/opener.py)
    refresh_gold: bool = False  # temporal golds run again instead of read from the cache
    duckdb: DuckDBSettings = DuckDBSettings()
    sqlite: SQLiteSettings = SQLiteSettings()
    postgres: PostgresSettings = PostgresSettings()
    mysql: MySQLSettings = MySQLSettings()
    bigquery: BigQuerySettings = BigQuerySettings()
    snowflake: SnowflakeSettings = SnowflakeSettings()
    cypher: CypherSettings = CypherSettings()

    def __post_init__(self) -> None:  # the API's edge: the caller's relative paths, made absolute once
        for name in ("output_dir", "db_dir", "credentials_dir"):
            object.__setattr__(self, name, absolute_or_none(getattr(self, name)))

    def settings(self, backend: str | None = None) -> dict:
        """The JSON-safe settings a request to `backend` carries: the common ones, paths made absolute for the
        worker, and that engine's own under `"engine"` (none without a backend: a worker action needing only
        the limits).  Engines spill into the work folder (`temp_dir`), never beside a database.  Made once per
        config and backend (a fresh dict each call): every query of a run asks, and `asdict` with a `resolve()`
        per path cost BIRD a millisecond a query."""
        key = (self, backend)
        made = _SETTINGS.get(key)
        if made is None:
            made = {name: _json_safe(getattr(self, name)) for name in COMMON_SETTINGS}
            made["temp_dir"] = str(Path(self.output_dir).resolve() / "engine_tmp")
            if backend is not None:
                made[ENGINE_KEY] = getattr(self, canonical_name(backend) or backend).to_dict()
            if len(_SETTINGS) >= 256:  # a long-lived process (a trainer's rewards) making configs without end
                _SETTINGS.clear()
            _SETTINGS[key] = made  # keyed by value, not kept on the instance: `ExecConfig(**c.__dict__)` works
        return dict(made)


COMMON_SETTINGS = ("output_dir", "db_dir", "credentials_dir", "timeout_s", "memory_limit_mb")


def _json_safe(value):
    return str(Path(value).resolve()) if isinstance(value, Path) else value


_SETTINGS: dict[tuple, dict] = {}
