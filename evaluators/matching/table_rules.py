"""The two families of table rules behind `table_match.py`, one object each, chosen once from the preset.

`OFFICIAL` is the public scorers' rule (three presets share its views); `STRICT` is ours.  Each says how its
family reads condition_cols, grades a pair of CSV files, a pair of frames (DuckDB tables) and a pair too big
for pandas, and what it keeps in the job's caches, so that the job can drop one family's intermediates
before the other builds its own (`TableJob.rules`): only one family's work is in memory at a time.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.matching.official import out_of_core
from evaluators.matching.official import rule as official
from evaluators.matching.semantics import STRICT_TOL, Preset
from evaluators.matching.strict import plain_rows
from evaluators.matching.strict import rule as strict
from evaluators.matching.verdicts import Verdict
from evaluators.tables.memory import GIVE_BACK_ROWS, give_back_memory


def _no_cols(condition_cols) -> bool:
    return condition_cols in ([], [[]], [None], None)


class OfficialRules:
    """The public Spider2 rule, with each preset's tolerance, NULL-as-0 and condition_cols quirks."""

    name = "official"

    def gold_cols(self, preset: Preset, golds: list, condition_cols) -> list:
        """condition_cols per gold file, as the preset's scorer reads the spec."""
        if _no_cols(condition_cols):
            return [[] for _ in golds]
        repeat = preset.repeat_flat_condition_cols and len(golds) > 1
        if repeat and not all(isinstance(c, list) for c in condition_cols):
            return [condition_cols for _ in golds]
        if not isinstance(condition_cols, list):
            return [condition_cols for _ in golds]
        return condition_cols

    def per_gold(self, golds: list, per_gold: list):
        """(gold, its condition_cols): the scorers index condition_cols per gold file and fail only when they
        get that far."""
        for index, name in enumerate(golds):
            if index >= len(per_gold):
                raise InstanceError("invalid_spec", f"{len(golds)} gold files but {len(per_gold)} condition_cols lists")
            yield name, per_gold[index]

    def csv_verdict(self, job, preset: Preset, pred: Path, gold: Path, cols, ignore_order: bool, low_memory: bool):
        frame = job.pred_reader.csv(pred, low_memory)  # cached: read once for every gold
        gold_frame = job.gold_reader.csv(gold, low_memory)
        selected = official.select_condition_cols(gold_frame, cols, wrap_scalar=preset.repeat_flat_condition_cols)
        return self._compare(job, preset, frame, selected, ignore_order)

    def frame_verdict(self, job, preset: Preset, pred_key, pred_frame, gold_key, gold_frame, cols, ignore_order):
        selected = official.select_condition_cols(gold_frame, cols, wrap_scalar=False)
        return self._compare(job, preset, pred_frame, selected, ignore_order)

    @staticmethod
    def _compare(job, preset: Preset, frame, selected, ignore_order: bool) -> Verdict:
        return official.compare(
            frame,
            selected,
            ignore_order=ignore_order,
            tol=preset.tol,
            null_as_zero=preset.null_as_zero,
            views=job.views,
        )

    def out_of_core(self, spilled, preset: Preset, pred_table: str, gold_table: str, cols, ignore_order: bool):
        return out_of_core.compare(
            spilled.con,
            pred_table,
            gold_table,
            cols,
            wrap_scalar=preset.repeat_flat_condition_cols,
            ignore_order=ignore_order,
            tol=preset.tol,
            null_as_zero=preset.null_as_zero,
            low_memory=preset.low_memory,
            cache=spilled.cache,
        )

    def table_names_problem(self, tabs: list) -> Verdict | None:
        """The official scorer reads both DuckDB files' tables unquoted; a failed read scores 0."""
        from evaluators.matching.official.table_names import unquoted_problem

        found = next(((t, p) for t in tabs if (p := unquoted_problem(t))), None)
        if found is None:
            return None
        table, problem = found
        return Verdict(
            0.0, "table_not_found", f"table {table!r}: the official duckdb_match reads it unquoted: {problem}"
        )

    def release(self, job) -> None:
        """Drop the column views the official presets shared (and give their memory back when it was much)."""
        rows = sum(len(views.frame) for views in job.views._frames.values())
        job.views = official.ViewCache()
        if rows >= GIVE_BACK_ROWS:
            give_back_memory()


class StrictRules:
    """This project's rule: typed cells, whole rows, one-to-one columns (`strict/rule.py`)."""

    name = "strict"

    def gold_cols(self, preset: Preset, golds: list, condition_cols) -> list:
        if _no_cols(condition_cols):
            return [[] for _ in golds]
        if not isinstance(condition_cols, list):
            return [[condition_cols] for _ in golds]
        if all(isinstance(c, int) for c in condition_cols):
            return [condition_cols for _ in golds]
        return [c or [] for c in condition_cols]

    def per_gold(self, golds: list, per_gold: list):
        return zip(golds, per_gold, strict=False)

    def csv_verdict(self, job, preset: Preset, pred: Path, gold: Path, cols, ignore_order: bool, low_memory: bool):
        shown = self._plain_match(job, pred, gold, cols, ignore_order)
        if shown:
            return Verdict(1.0, "match", shown)
        gold_cols = job.strict_csv(job.gold_reader, gold)
        selected = [gold_cols[i] for i in cols] if cols else gold_cols
        return strict.compare(
            job.strict_csv(job.pred_reader, pred), selected, ignore_order=ignore_order, tol=STRICT_TOL
        )

    @staticmethod
    def _plain_match(job, pred: Path, gold: Path, cols, ignore_order) -> str | None:
        """The strict rule's words for a match shown on Python values (small plain tables), else None."""
        pred_table, gold_table = job.plain_columns(job.pred_reader, pred), job.plain_columns(job.gold_reader, gold)
        if pred_table is None or gold_table is None:
            return None
        (pred_names, pred_values), (gold_names, gold_values) = pred_table, gold_table
        chosen = [gold_values[i] for i in cols] if cols else gold_values
        names = [gold_names[i] for i in cols] if cols else gold_names
        mapping = plain_rows.matching_columns(chosen, pred_values, ignore_order)
        if mapping is None:
            return None
        return strict.mapping_words(names, [pred_names[j] for j in mapping])

    def frame_verdict(self, job, preset: Preset, pred_key, pred_frame, gold_key, gold_frame, cols, ignore_order):
        gold_cols = job.strict_frame(gold_key, gold_frame)
        selected = [gold_cols[i] for i in cols] if cols else gold_cols
        pred_cols = job.strict_frame(pred_key, pred_frame)
        return strict.compare(pred_cols, selected, ignore_order=ignore_order, tol=STRICT_TOL)

    def out_of_core(self, spilled, preset: Preset, pred_table: str, gold_table: str, cols, ignore_order: bool):
        if not ignore_order:
            return out_of_core.undecided("row order kept (ignore_order false) is not compared out of core")
        return out_of_core.strict_identical(spilled.con, pred_table, gold_table, cols, cache=spilled.cache)

    def table_names_problem(self, tabs: list) -> Verdict | None:
        return None  # ours reads every table quoted

    def release(self, job) -> None:
        """Drop the typed cells (and their tokens) the strict rule made."""
        job.drop_strict_cells()


OFFICIAL, STRICT = OfficialRules(), StrictRules()


def rules_for(preset: Preset) -> OfficialRules | StrictRules:
    """The one place that asks which family a preset belongs to."""
    return OFFICIAL if preset.official else STRICT
