"""The SQL context of one instance: one object carried from `grading/instance.py` down.

`instance` makes it, `sql_answers` runs a `.sql` answer with it, `execution_match` compares the rows,
and only its methods reach the executor (`execution.Executor`) for the prediction and a temporal gold;
nothing below calls back up.  Without an executor (the Python API's default) SQL answers and temporal
golds are reported as `needs_execution`, never scored silently.  What ran, where the gold came from and
how many bytes it cost are collected in `info` for the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the execution layer loads only when SQL runs
    from evaluators.execution.executor import Executor

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.loading import checks
from evaluators.matching import registry
from evaluators.specs import GoldInstance
from evaluators.sqltext import unwrap_fences


@dataclass
class SqlContext:
    gold: GoldInstance
    gold_root: Path  # the gold folder (holding <instance_id>/gold.sql)
    executor: Executor | None
    max_file_bytes: int
    info: dict = field(default_factory=dict)
    # Kept for the instance's last steps, never reported as such:
    pred_sql: str | None = None  # the predicted SQL once read, fences removed
    llmetric_inputs: dict | None = None  # rows and gold SQL for LLMetric-Q (execution_match.add_llmetric_q)
    timing: object | None = None  # execution_match.TimingJob: what VES times, for an execution_match answer

    @property
    def folder(self) -> Path:
        """The instance's gold folder."""
        return self.gold_root / self.gold.instance_id

    def needs_executor(self, what: str) -> Executor:
        if self.executor is None:
            raise InstanceError("needs_execution", f"{what}: grading it needs a SQL backend")
        return self.executor

    def temporal_params(self, spec, params: dict) -> dict:
        """The spec's parameters with the gold replaced by what gold.sql returns now (or its cache)."""
        if not spec.temporal:
            return params
        becomes = registry.lookup(spec.func).temporal
        if becomes is None:
            raise InstanceError(
                "invalid_spec", f"a temporal spec needs {', '.join(registry.TEMPORAL_FUNCS)}, not {spec.func}"
            )
        if self.executor is None:
            raise InstanceError(
                "needs_execution", f"{spec.func} spec is temporal: its gold comes from running gold.sql"
            )
        stored = params.get("gold") if becomes == "table" else None
        result = self.executor.temporal_gold(self.gold, self.gold_root, stored)
        if not result.ok:
            raise result.instance_error()
        self.info.update(
            backend=result.backend,
            gold_source=result.source,
            gold_cached_at=result.cached_at,
            gold_drifted=result.drifted,
            gold_bytes_processed=result.bytes_processed,
        )
        if becomes == "table":
            cols = params.get("condition_cols")
            if isinstance(params.get("gold"), list) and isinstance(cols, list) and cols and isinstance(cols[0], list):
                cols = cols[0]  # the live result stands for the first stored variant
            return {**params, "gold": str(result.csv_path), "condition_cols": cols}
        if result.first_cell is None:
            raise InstanceError("unreadable_gold", "gold.sql returned no rows: no first cell to compare with")
        value = result.first_cell
        return {**params, "gold": [str(value)] if becomes == "text" or isinstance(value, str) else [value]}

    def run_answer(
        self, path: Path, collect: str = "csv", gold: GoldInstance | None = None, gold_sql: str | None = None
    ):
        """Run a predicted `.sql` file; returns the ExecResult (its CSV lives in the output folder).

        First its validity is checked on the instance's local database (explain.py), and with the gold
        query given, both plan costs are read.  `gold` stands in for self.gold when a spec names another
        database; `collect` is passed to the executor (execution.run_sql)."""
        from evaluators.execution.explain import inspect_sql

        sql = checks.read_sql_file(path, self.max_file_bytes)
        executor = self.needs_executor(f"{path.name} is SQL")
        target = gold or self.gold
        self.pred_sql = unwrap_fences(sql)
        plans = {"pred": self.pred_sql, "gold": unwrap_fences(gold_sql)} if gold_sql else None
        self.info.update(inspect_sql(executor, target, self.pred_sql, plans))
        result = executor.run_prediction(target, sql, collect)
        self.info.update(
            backend=result.backend,
            bytes_processed=result.bytes_processed,
            seconds=result.seconds,
            prediction_csv=str(result.csv_path) if result.csv_path else None,
        )
        self._add_similarity(self.pred_sql, gold_sql)
        if not result.ok:
            raise result.instance_error()
        return result

    @contextmanager
    def unreadable_sql_is_invalid(self):
        """A .sql answer whose SQL cannot be read (no file, unsafe path, not UTF-8) is not a valid query."""
        try:
            yield
        except InstanceError as exc:
            if self.executor is not None and self.pred_sql is None and "validity" not in self.info:
                self.info["validity"] = {
                    "valid": False,
                    "reason": "invalid",
                    "message": f"no SQL to check: {exc.detail}",
                }
            raise

    def gold_sql_text(self) -> str | None:
        """The instance's gold.sql, or None when there is none (or it cannot be read)."""
        path = self.folder / "gold.sql"
        try:
            return path.read_text(encoding="utf-8-sig") if path.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    def read_gold_sql(self, name: str) -> str:
        """A gold query file named by a spec, with the answer's size limit."""
        return checks.read_sql_file(self.folder / name, self.max_file_bytes, "unreadable_gold")

    def _add_similarity(self, pred_sql: str, gold_sql: str | None = None) -> None:
        """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard against the gold query (gold.sql unless given):
        supporting figures, never the score; computed in a worker, under the run's limits."""
        from evaluators.execution.similarity_worker import query_similarity

        gold_path = self.folder / "gold.sql"
        if gold_sql is None and not gold_path.is_file():
            return
        try:
            gold_text = gold_sql if gold_sql is not None else gold_path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            self.info["similarity"] = {"error": f"gold.sql unreadable: {exc}"}
            return
        settings = self.needs_executor("query similarity").config.settings()
        self.info["similarity"] = query_similarity(settings, pred_sql, unwrap_fences(gold_text))
