"""`table_match`, `tables_match` and `duckdb_match` under every semantics at once.

Files are read once per way of reading and column views are shared between
presets, so grading under all four semantics costs little more than one.  Which
rule a preset follows is asked once (`table_rules.rules_for`); when grading moves
from one family of rules to the other, the first family's intermediates are
dropped, so a big table pair holds one family's work at a time, not both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.matching.official import out_of_core
from evaluators.matching.official import rule as official
from evaluators.matching.semantics import Preset
from evaluators.matching.strict import plain_rows
from evaluators.matching.strict.cells import TokenTable
from evaluators.matching.strict.columns import strict_columns
from evaluators.matching.table_rules import OfficialRules, StrictRules, rules_for
from evaluators.matching.verdicts import Verdict, closest_miss
from evaluators.tables.frames import column_arrays
from evaluators.tables.read import TableReader
from evaluators.tables.spill import NotExact, SpillPlan, SpillTables


@dataclass
class TableJob:
    """Everything one instance's table specs share: readers, caches and presets."""

    gold_dir: Path
    presets: tuple[Preset, ...]
    pred_reader: TableReader
    gold_reader: TableReader = None  # type: ignore[assignment]  # None: made from pred_reader in __post_init__
    views: official.ViewCache = field(default_factory=official.ViewCache)
    tokens: TokenTable = field(default_factory=TokenTable)
    _strict_cache: dict = field(default_factory=dict)
    _gold_paths: dict = field(default_factory=dict)
    spill: SpillPlan | None = None  # None: every table is read into pandas, however big
    _spilled: SpillTables | None = None
    _family: OfficialRules | StrictRules | None = None  # the family of rules graded last

    def __post_init__(self):
        if self.gold_reader is None:
            self.gold_reader = TableReader(
                "unreadable_gold", self.pred_reader.max_bytes, self.pred_reader.duckdb_loader
            )

    def rules(self, preset: Preset) -> OfficialRules | StrictRules:
        """The preset's family of rules; moving to the other family drops the last one's intermediates
        (views, typed cells: several times a big table's size), which the caches would make again if asked."""
        family = rules_for(preset)
        if self._family is not None and self._family is not family:
            self._family.release(self)
        self._family = family
        return family

    def drop_strict_cells(self) -> None:
        self._strict_cache.clear()
        self.tokens = TokenTable()

    def gold_path(self, name: str) -> Path:
        # One Path per name: every preset asks, and a Path keeps its string once made.
        if name not in self._gold_paths:
            self._gold_paths[name] = self.gold_dir / name
        return self._gold_paths[name]

    def too_big(self, pred: Path, gold: Path) -> bool:
        return self.spill is not None and self.spill.too_big(pred, gold)

    def decided_out_of_core(self, preset: Preset, pred: Path, gold: Path, cols, ignore_order: bool) -> Verdict | None:
        """The out-of-core verdict of a pair too big for pandas, or None: the pair fits, or DuckDB could not
        settle it (`undecided`), and pandas grades it as before, so a verdict never depends on the route;
        unless pandas' frames would not fit the machine's free memory either: then `memory_limit`, saying
        why DuckDB could not decide (the kernel would otherwise kill the whole run)."""
        if Path(str(pred)).suffix.lower() != ".csv" or Path(str(gold)).suffix.lower() != ".csv":
            return None  # compressed answers: their decompressed size is counted as pandas streams them
        if not self.too_big(pred, gold):
            return None
        self.pred_reader.check_size(pred)  # --max-file-mb holds on this route too
        self.gold_reader.check_size(gold)
        verdict = self.out_of_core(preset, pred, gold, cols, ignore_order)
        if verdict.reason != "undecided":
            return verdict
        if self.spill.beyond_memory(pred, gold):  # type: ignore[union-attr]  # too_big() said spill is set
            return Verdict(0.0, "memory_limit", f"{verdict.detail}; pandas would need more memory than is free")
        return None

    def out_of_core(self, preset: Preset, pred: Path, gold: Path, cols, ignore_order: bool) -> Verdict:
        """The official rule on a pair too big for pandas, in DuckDB (`official/out_of_core.py`)."""
        if self._spilled is None:
            self._spilled = SpillTables(self.spill)  # type: ignore[arg-type]  # too_big() said spill is set
        try:
            pred_table, gold_table = self._spilled.table(pred), self._spilled.table(gold)
        except NotExact as exc:  # DuckDB would not read it as pandas does: pandas grades it
            return out_of_core.undecided(str(exc))
        return rules_for(preset).out_of_core(self._spilled, preset, pred_table, gold_table, cols, ignore_order)

    def close(self) -> None:
        """Remove the out-of-core tables from the work folder, if any were made."""
        if self._spilled is not None:
            self._spilled.close()
            self._spilled = None

    def strict_csv(self, reader: TableReader, path: Path):
        key = ("csv", str(path))
        if key not in self._strict_cache:
            frame = reader.csv(path, low_memory=False)
            self._strict_cache[key] = strict_columns(frame, self.tokens, lambda cols: reader.csv_text(path, cols))
        return self._strict_cache[key]

    def plain_columns(self, reader: TableReader, path: Path):
        """(names, Python values per column) of a small plain CSV table, or None (`strict/plain_rows.py`)."""
        key = ("plain", str(path))
        if key not in self._strict_cache:
            frame = reader.csv(path, low_memory=False)
            values = plain_rows.plain_columns(frame)
            self._strict_cache[key] = None if values is None else (column_arrays(frame)[0], values)
        return self._strict_cache[key]

    def strict_frame(self, key, frame):
        if key not in self._strict_cache:
            self._strict_cache[key] = strict_columns(frame, self.tokens)
        return self._strict_cache[key]


def _guarded(fn):
    """Run one semantics' comparison; a file or spec problem becomes that semantics' verdict."""
    try:
        return fn()
    except InstanceError as exc:
        return Verdict(0.0, exc.reason, exc.detail)
    except IndexError as exc:
        return Verdict(0.0, "invalid_spec", f"condition_cols out of range: {exc}")


def table_match(job: TableJob, pred: Path, params: dict) -> dict:
    golds = params["gold"] if isinstance(params["gold"], list) else [params["gold"]]
    cond = params["condition_cols"]
    if not isinstance(params["gold"], list):
        cond = [cond]  # a single gold file takes condition_cols as given
    out = {}
    for preset in job.presets:
        rules = job.rules(preset)
        out[preset.name] = _guarded(
            lambda preset=preset, rules=rules: _table(job, rules, preset, pred, golds, cond, params["ignore_order"])
        )
    return out


def _table(job, rules, preset, pred, golds, cond, ignore_order) -> Verdict:
    """The first gold variant the prediction matches, else the closest miss."""
    failures = []
    for name, cols in rules.per_gold(golds, rules.gold_cols(preset, golds, cond)):
        gold = job.gold_path(name)
        verdict = job.decided_out_of_core(preset, pred, gold, cols, ignore_order)
        if verdict is None:
            verdict = rules.csv_verdict(job, preset, pred, gold, cols, ignore_order, preset.low_memory)
        if verdict.passed:
            return Verdict(1.0, "match", _variant(name, golds) + verdict.detail)
        failures.append((name, verdict))
    return _closest_failure(failures, golds)


def _variant(name: str, golds: list) -> str:
    return f"{name}: " if len(golds) > 1 else ""


def _closest_failure(failures, golds) -> Verdict:
    if not failures:
        return Verdict(0.0, "invalid_spec", "no gold file to compare with")
    name, verdict = closest_miss(failures)
    more = f" (the closest; {len(golds) - 1} other gold variant(s) also fail)" if len(golds) > 1 else ""
    return Verdict(0.0, verdict.reason, f"{_variant(name, golds)}{verdict.detail}{more}")


def tables_match(job: TableJob, preds: list[Path], params: dict) -> dict:
    golds = params["gold"]
    out = {}
    for preset in job.presets:
        rules = job.rules(preset)
        out[preset.name] = _guarded(
            lambda preset=preset, rules=rules: _pairwise(job, rules, preset, preds, golds, params)
        )
    return out


def _pairwise(job, rules, preset, preds, golds, params) -> Verdict:
    n = len(golds)
    if len(preds) != n:
        return Verdict(0.0, "file_count_mismatch", f"gold has {n} file(s), the answer lists {len(preds)}")
    orders = params["ignore_orders"] or [False] * n
    cols = params["condition_cols"] or [[] for _ in range(n)]
    if len(orders) != n or len(cols) != n:
        raise InstanceError("invalid_spec", "ignore_orders and condition_cols need one entry per gold file")
    for k, (pred, gold) in enumerate(zip(preds, golds, strict=False)):
        verdict = _one_pair(job, rules, preset, pred, job.gold_path(gold), cols[k], orders[k])
        if not verdict.passed:
            return Verdict(0.0, verdict.reason, f"file {k + 1} ({gold}): {verdict.detail}")
    return Verdict(1.0, "match", f"all {n} file(s) match pairwise")


def _one_pair(job, rules, preset, pred, gold, cols, ignore_order) -> Verdict:
    v = job.decided_out_of_core(preset, pred, gold, cols, ignore_order)
    if v is None:
        # The suite reads these files with pandas' defaults, low_memory included, under every preset.
        v = rules.csv_verdict(job, preset, pred, gold, cols, ignore_order, True)
    return Verdict(float(v.passed), v.reason, v.detail)


def duckdb_match(job: TableJob, pred: Path, params: dict) -> dict:
    gold = job.gold_path(params["gold"])
    out = {}
    for preset in job.presets:
        rules = job.rules(preset)
        out[preset.name] = _guarded(
            lambda preset=preset, rules=rules: _duckdb_tables(job, rules, preset, pred, gold, params)
        )
    return out


def _duckdb_tables(job, rules, preset, pred, gold, params) -> Verdict:
    tabs = params["condition_tabs"] or job.gold_reader.duckdb_tables(gold)
    n = len(tabs)
    orders = params["ignore_orders"] if params["ignore_orders"] is not None else [False] * n
    cols = params["condition_cols"] if params["condition_cols"] is not None else [[] for _ in range(n)]
    if len(orders) != n or len(cols) != n:
        raise InstanceError(
            "invalid_spec", f"{n} table(s) but {len(cols)} condition_cols and {len(orders)} ignore_orders entries"
        )
    unreadable = rules.table_names_problem(tabs)
    if unreadable is not None:
        return unreadable
    job.gold_reader.duckdb_prefetch(gold, tabs)
    job.pred_reader.duckdb_prefetch(pred, tabs)
    gold_frames = [job.gold_reader.duckdb_table(gold, t) for t in tabs]
    for k, table in enumerate(tabs):
        try:
            pred_frame = job.pred_reader.duckdb_table(pred, table)
        except InstanceError as exc:
            reason = "table_not_found" if exc.reason == "table_not_found" else exc.reason
            return Verdict(0.0, reason, f"table {table!r} missing from the prediction: {exc.detail}")
        v = rules.frame_verdict(
            job, preset, (pred, table), pred_frame, (gold, table), gold_frames[k], cols[k], orders[k]
        )
        if not v.passed:
            return Verdict(0.0, v.reason, f"table {table!r}: {v.detail}")
    return Verdict(1.0, "match", f"all {n} table(s) match")
