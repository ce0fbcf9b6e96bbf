"""The self-check: a gold graded as the answer to itself must pass under every semantics.

Tables go through the real matchers (`matchers.tables`) with one shared
reader per instance, so each gold file is read once; a `table_match` file is
graded against a spec naming only itself (with its own `condition_cols`), so
the cost grows with the number of variants, not its square.  Text answers go
through `grading.grade_instance` itself.  A failure means
no submission could ever pass that instance under some semantics.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from evaluators.goldtools.structure import as_list, table_match_cols
from evaluators.grading.instance import ALL_PRESETS, Options, grade_instance
from evaluators.matching import registry, table_match
from evaluators.specs import GoldInstance, SubmissionLine
from evaluators.tables.read import TableReader


def self_check(
    gold: GoldInstance, spec, params: dict, gold_dir: Path, folder_files: dict, reader: TableReader, max_bytes: int
) -> tuple[list, list]:
    """(errors, warnings) for one checked spec; temporal specs and execution_match are not self-checked
    (their gold is SQL, which the lint does not run)."""
    info = registry.lookup(spec.func)
    if spec.temporal or info.trajectory or info.answers == "sql":  # a trajectory or SQL gold: nothing to grade
        return [], []
    if info.gold_tables:
        return _table_self_check(spec.func, params, gold_dir / gold.instance_id, folder_files, reader), []
    return _answer_self_check(gold, spec, params, gold_dir, max_bytes)


def _table_self_check(func: str, params: dict, folder: Path, folder_files: dict, reader: TableReader) -> list:
    job = table_match.TableJob(folder, ALL_PRESETS, reader, reader)
    grade, kind = registry.grader(func), registry.gold_tables(func)
    if kind == "csvs":
        answers = {"the gold files": grade(job, [folder_files[g] for g in params["gold"]], params)}
    elif kind == "duckdb":
        answers = {params["gold"]: grade(job, folder_files[params["gold"]], params)}
    else:
        answers = {name: grade(job, folder_files[name], one) for name, one in _each_file(params)}
    return [message for name, verdicts in answers.items() for message in _failures(name, verdicts)]


def _each_file(params: dict):
    """Each gold file with a table_match spec of its own: a file is checked against itself, not its variants."""
    golds = as_list(params["gold"])
    for name, cols in zip(golds, table_match_cols(golds, params["condition_cols"], []), strict=False):
        yield name, {"gold": name, "condition_cols": cols, "ignore_order": params["ignore_order"]}


def _answer_self_check(gold: GoldInstance, spec, params: dict, gold_dir: Path, max_bytes: int):
    alone = replace(gold, specs=(spec,))
    errors, warnings = [], []
    for text in answer_texts(spec.func, params):
        line = SubmissionLine(gold.instance_id, "answer", text, gold.location)
        verdicts = grade_instance(alone, line, gold_dir, gold_dir, Options(max_file_bytes=max_bytes)).verdicts
        if any(v.reason == "missing_extra" for v in verdicts.values()):
            warnings.append(f"not self-checked: {next(iter(verdicts.values())).detail}")
            break
        errors += _failures(repr(text), verdicts)
    return errors, warnings


def answer_texts(func: str, params: dict) -> list[str]:
    """The answers a gold author would write: each gold text alone, or all of them when `conj` is 'and'."""
    if "gold" not in params:
        return [""]  # reward funcs check their own parameters: grading the empty answer names what is missing
    golds = [_as_text(g) for g in as_list(params["gold"])]
    if params.get("conj") == "and":
        return [" and ".join(golds)]
    return golds


def _as_text(value) -> str:
    if isinstance(value, float):
        return np.format_float_positional(value, trim="-")  # never an exponent: the official pattern has none
    return str(value)


def _failures(answer: str, verdicts: dict) -> list[str]:
    """One message per distinct failure, naming the semantics that share it."""
    failing: dict = {}
    for name, verdict in verdicts.items():
        if not verdict.passed:
            failing.setdefault((verdict.reason, verdict.detail), []).append(name)
    return [
        f"graded as the answer to itself, {answer} fails under {', '.join(names)}: {reason}: {detail}"
        for (reason, detail), names in failing.items()
    ]
