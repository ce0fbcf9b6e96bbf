"""Exact set match, hardness and the official tables inside a `test-suite` run (`--etype`, `--table`).

Each graded question gets, in its report metadata, `hardness` (always: the gold is parsed with the
database's own schema, as the scorer does even for `--etype exec`), and with `--etype match|all`
`exact_match` (0/1), `components` (the scorer's partial results), `prediction_parse` (`parsed` or
`unparseable`) and its session's `interaction_match` (0/1, the same on every turn), beside `session` and
`turn` (0-based).  The tables are the scorer's, computed over the questions it compares (paired, with a
gold it can parse).  With `--etype match` nothing runs: `match_verdict` is the question's verdict.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from evaluators.errors import UsageError
from evaluators.matching.verdicts import Verdict
from evaluators.reporting.report import InstanceReport, Report
from evaluators.testsuite import official_tables
from evaluators.testsuite.hardness import hardness
from evaluators.testsuite.native import GoldLine
from evaluators.testsuite.spider_match import Judged, judged
from evaluators.testsuite.spider_parse import SchemaIds, Unparsable, parse
from evaluators.testsuite.spider_schema import database_schema, read_tables, require_described

ETYPES = ("exec", "match", "all")


class Found(NamedTuple):
    failure: str | None  # the reason when the question could not be judged (no schema, a gold the parser rejects)
    fields: dict  # the report's metadata fields
    structures: Judged | None = None  # both rebuilt structures (what the classic execution check reads)


@dataclass
class ExactMatch:
    etype: str
    db_dir: Path
    classic: bool = False  # --scorer spider: taoyds/spider's evaluation.py
    kmaps: dict = field(default_factory=dict)
    schemas: dict = field(default_factory=dict)  # db_id -> SchemaIds or the error text

    @property
    def matching(self) -> bool:
        return self.etype in ("match", "all")

    @property
    def needs_table(self) -> bool:
        """The classic script parses and rebuilds both queries in every mode (its execution check needs them)."""
        return self.matching or self.classic

    def prediction(self, pred_sql: str) -> str:
        """The prediction as the scorer reads it: test-suite's copy turns every `value` (substring,
        case-sensitive) into `1`; the classic script keeps it."""
        return pred_sql if self.classic else pred_sql.replace("value", "1")

    def schema(self, db_id: str) -> SchemaIds | str:
        if db_id not in self.schemas:
            path = self.db_dir / db_id / f"{db_id}.sqlite"
            try:
                self.schemas[db_id] = database_schema(path)
            except (OSError, sqlite3.Error) as error:  # an unreadable file is this question's note
                self.schemas[db_id] = f"cannot read the schema of {path}: {error}"
        return self.schemas[db_id]

    def fields(self, gold: GoldLine, pred_sql: str) -> Found:
        """The question's exact-match fields (`pred_sql` as `prediction` made it)."""
        schema = self.schema(gold.db_id)
        if isinstance(schema, str):
            return Found("no_database", {"hardness": None, "exact_match_error": schema})
        try:
            if not self.needs_table:
                return Found(None, {"hardness": hardness(parse(gold.sql, schema))})
            both = judged(gold.sql, pred_sql, schema, self.kmaps[gold.db_id], limit_int=self.classic)
        except Unparsable as error:
            words = f"the scorer's parser cannot read the gold: {error}"
            return Found("unreadable_gold", {"hardness": None, "exact_match_error": words})
        if self.matching:
            return Found(None, both.fields, both)
        return Found(None, {k: both.fields[k] for k in ("hardness", "prediction_parse")}, both)


def match_verdict(failure: str | None, found: dict, _structures=None) -> Verdict:
    """`--etype match`'s verdict of one question, from its exact-match fields alone (no query runs)."""
    if failure is not None:
        return Verdict(0.0, failure, found["exact_match_error"])
    if found["exact_match"] == 1:
        return Verdict(1.0, "match", "exact set match: every component and the FROM tables equal")
    if found["prediction_parse"] == "unparseable":
        return Verdict(
            0.0,
            "unreadable_prediction",
            "the scorer's parser cannot read the prediction (compared as the empty query, its eval_err_num)",
        )
    differ = [name for name, entry in found["components"].items() if entry["f1"] != 1]
    words = ", ".join(differ) if differ else "the FROM tables"
    return Verdict(0.0, "structure_mismatch", f"exact set match: {words} differ")


def prepare(etype: str, table: Path | None, db_dir: Path, golds: list, classic: bool = False) -> ExactMatch:
    """The run's exact-match context; `--etype match|all` (and every classic run) needs `--table` describing
    every gold database."""
    context = ExactMatch(etype, Path(db_dir), classic)
    if context.needs_table:
        if table is None:
            needing = "--scorer spider" if classic and not context.matching else f"--etype {etype}"
            raise UsageError(f"{needing} needs --table tables.json (the scorer's foreign keys)")
        context.kmaps = read_tables(Path(table))
        described = {g.db_id: g.location for session in golds for g in session if g is not None}
        require_described(context.kmaps, described, Path(table))
    return context


def turns(golds: list, preds: list) -> list[tuple[int, int]]:
    """(session, turn) of every pair, in `native.pair`'s order (one session when the session counts differ)."""
    if len(golds) != len(preds):
        return [(0, k) for k in range(sum(len(s) for s in golds))]
    return [(number, k) for number, session in enumerate(golds) for k in range(len(session))]


def _counted(instance: InstanceReport) -> bool:
    return instance.answer_type is not None and instance.metadata.get("hardness") is not None


def with_fields(instance: InstanceReport, place: tuple[int, int], found: Found) -> InstanceReport:
    """A compared question with its session, turn and exact-match fields (`ExactMatch.fields`; its
    interaction's verdict comes with `with_sessions`, once every question of the run is graded)."""
    session, turn = place
    return replace(instance, metadata={**instance.metadata, "session": session, "turn": turn, **found.fields})


def with_sessions(instances: list[InstanceReport], matching: bool) -> list[InstanceReport]:
    """Each instance with its session's `interaction_match` (every compared turn an exact match)."""
    if not matching:
        return instances
    joint: dict[int, bool] = {}
    for i in instances:
        if _counted(i):
            session = i.metadata["session"]
            joint[session] = joint.get(session, True) and i.metadata.get("exact_match") == 1
    return [
        replace(i, metadata={**i.metadata, "interaction_match": int(joint[i.metadata["session"]])})
        if _counted(i)
        else i
        for i in instances
    ]


def tables(report: Report, etype: str, official_name: str) -> str:
    """The scorer's printed tables for this run."""
    sessions: dict[int, list[dict]] = {}
    for i in report.instances:
        if not _counted(i):
            continue
        question = {"hardness": i.metadata["hardness"], "exec": int(i.scores.get(official_name, 0) == 1)}
        question.update(exact=i.metadata.get("exact_match", 0), partial=i.metadata.get("components", {}))
        sessions.setdefault(i.metadata["session"], []).append(question)
    ordered = [sessions[k] for k in sorted(sessions)]
    return official_tables.render(official_tables.scores(ordered, etype), etype, with_turns=len(ordered) > 1)
