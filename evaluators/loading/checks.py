"""Checks that grading and `validate` share, so both judge a submission the same way.

Each check raises `InstanceError` with a reason code of `evaluators.reasons.Reason`:
grading turns it into the instance's verdict, `validate` into a listed
problem with a fix hint (`HINTS`).  Path safety lives in `paths.py` and table
reading in `tables/read.py`; both are reused, not repeated, here.
"""

from __future__ import annotations

import os
from pathlib import Path

from evaluators.errors import InstanceError
from evaluators.matching import registry

DUCKDB_SUFFIXES = (".duckdb", ".ddb", ".db")
QUERY_SUFFIXES = (".sql", ".cypher")  # answers that are queries: run, then graded

HINTS = {
    "invalid_answer": "answer_or_path is the text for 'answer', a relative path for 'file', a list of paths "
    "for 'files'",
    "unsafe_path": "give a path relative to the instance folder, without '..' and without symbolic links "
    "that lead out of it",
    "missing_prediction": "put the file in the instance folder or correct answer_or_path",
    "unreadable_prediction": "write a comma-separated UTF-8 CSV with a header row (or a DuckDB file for duckdb_match)",
    "answer_type_mismatch": "use answer_type 'answer' for text golds and 'file'/'files' for table golds",
    "table_not_found": "create every table the gold names, under the same name",
    "needs_execution": "grade it with a SQL backend, or submit the result table as a CSV",
}


def answer_shape(line) -> None:
    """The JSON type of `answer_or_path` fits the `answer_type`."""
    answer, kind = line.answer, line.answer_type
    if kind == "answer" and not isinstance(answer, str):
        raise InstanceError(
            "invalid_answer", f"answer_or_path must be text, got {type(answer).__name__}: {str(answer)[:80]!r}"
        )
    if kind == "file" and not (isinstance(answer, str) and answer.strip()):
        raise InstanceError("invalid_answer", f"answer_type 'file' needs a relative path, got {answer!r}"[:200])
    if kind == "files" and not (isinstance(answer, list) and answer):
        raise InstanceError("invalid_answer", f"answer_type 'files' needs a list of paths, got {answer!r}"[:200])


def fitting_specs(answer_type: str, specs: list, sql: bool = False) -> list:
    """The (spec, parameters) pairs that can grade this answer type; none is a mismatch.

    A `.sql` file answer runs first, so table specs grade its result and text specs its first cell."""
    if sql:
        usable = [
            (s, p)
            for s, p in specs
            if registry.gold_tables(s.func) == "csv" or registry.is_answer_func(s.func) or registry.is_sql_func(s.func)
        ]
        if not usable:
            raise InstanceError(
                "answer_type_mismatch",
                "a .sql answer is graded by execution_match, table_match "
                f"or a text spec, not {sorted({s.func for s, _ in specs})}",
            )
        return usable
    text = answer_type == "answer"
    usable = [(s, p) for s, p in specs if registry.is_answer_func(s.func) == text and not registry.is_sql_func(s.func)]
    if not usable:
        funcs = sorted({s.func for s, _ in specs})
        if all(registry.is_sql_func(f) for f in funcs):
            raise InstanceError("answer_type_mismatch", f"{funcs} grade a .sql answer (a file answer ending in .sql)")
        if text:
            raise InstanceError(
                "answer_type_mismatch", f"the answer is text but the gold has only {funcs} specs, which grade files"
            )
        raise InstanceError(
            "answer_type_mismatch",
            f"the answer is a {answer_type} but the gold has only {funcs} specs, which grade text",
        )
    return usable


def check_size(path: Path, max_bytes: int, reason: str) -> None:
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise InstanceError(reason, f"{path.name}: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise InstanceError(
            reason, f"{path.name} is {size:,} bytes, over the limit of {max_bytes:,} (raise it with --max-file-mb)"
        )


def read_sql_file(path: Path, max_bytes: int, reason: str = "unreadable_prediction") -> str:
    """The text of a `.sql` file: UTF-8, within the size limit, and not blank."""
    check_size(path, max_bytes, reason)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InstanceError(reason, f"{path.name}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise InstanceError(reason, f"{path.name}: {exc.strerror or exc}") from None
    if not text.strip():
        raise InstanceError(reason, f"{path.name}: empty SQL file")
    return text


def file_kind(path: Path, funcs=()) -> str:
    """How a matcher reads this file: 'sql', 'duckdb' or 'csv' (the gold's funcs decide, else the suffix)."""
    if path.suffix.lower() in QUERY_SUFFIXES:
        return "sql"
    if funcs:
        return "duckdb" if any(registry.gold_tables(f) == "duckdb" for f in funcs) else "csv"
    return "duckdb" if path.suffix.lower() in DUCKDB_SUFFIXES else "csv"
