"""A line-by-line look at a CSV file, so `validate` can say where it goes wrong.

The graders read CSV files with pandas, which reports a bad byte by offset
and silently pads short rows.  This scan finds the line: the first byte that is
not UTF-8, rows whose field count differs from the header, and a header that
looks split by another delimiter.  Whether a file is readable at all is still
decided by the graders' own reader (`tables.read.TableReader`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

SHOWN_PER_KIND = 5  # ragged rows listed one by one; the rest are counted
OTHER_DELIMITERS = {";": "semicolon", "\t": "tab", "|": "pipe"}


@dataclass(frozen=True)
class CsvFinding:
    line: int | None
    message: str
    hint: str
    error: bool = False  # True: the graders cannot read the file either


def scan_csv(path: Path) -> list[CsvFinding]:
    bad = _encoding_problem(path)  # the same (possibly pinned) file, not its name again
    if bad:
        return [bad]
    with open(path, encoding="utf-8-sig", newline="") as handle:
        try:
            return _scan_rows(csv.reader(handle))
        except csv.Error as exc:
            return [CsvFinding(None, f"CSV syntax: {exc}", "check the quoting")]


def _encoding_problem(path: Path) -> CsvFinding | None:
    with open(path, "rb") as handle:
        start = handle.read(2)
        if start in (b"\xff\xfe", b"\xfe\xff"):
            return CsvFinding(1, "the file is UTF-16 text", "save it as UTF-8", error=True)
        handle.seek(0)
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")  # a newline byte never sits inside a multi-byte character
            except UnicodeDecodeError as exc:
                return CsvFinding(
                    number,
                    f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1} is not UTF-8",
                    "save the file as UTF-8",
                    error=True,
                )
    return None


def _scan_rows(reader) -> list[CsvFinding]:
    findings: list[CsvFinding] = []
    header, header_line, longer, shorter = None, None, [], []
    next_line = 1
    for row in reader:
        line, next_line = next_line, reader.line_num + 1  # a quoted newline makes one row span lines
        if not row:
            continue  # blank lines are skipped by pandas too
        if header is None:
            header, header_line = row, line
            findings += _delimiter_finding(row, line)
        elif len(row) > len(header):
            longer.append((line, len(row)))
        elif len(row) < len(header):
            shorter.append((line, len(row)))
    if header is None or header_line is None:
        return [
            CsvFinding(None, "empty file: no header row", "write a header row, even for an empty result", error=True)
        ]
    findings += _ragged(
        longer,
        len(header),
        header_line,
        "more",
        "pandas rejects such rows, or reads the first column as a row index and drops it",
    )
    findings += _ragged(shorter, len(header), header_line, "fewer", "pandas fills the missing cells with NULL")
    return findings


def _delimiter_finding(header: list, line: int) -> list[CsvFinding]:
    if len(header) != 1:
        return []
    for char, name in OTHER_DELIMITERS.items():
        if char in header[0]:
            return [
                CsvFinding(
                    line,
                    f"the header is one column holding {name}s: is the file {name}-separated?",
                    "the graders split on commas only; write a comma-separated file",
                )
            ]
    return []


def _ragged(rows: list, width: int, header_line: int, word: str, effect: str) -> list[CsvFinding]:
    findings = [
        CsvFinding(
            line,
            f"row has {count} fields, the header (line {header_line}) has {width}",
            f"rows with {word} fields than the header: {effect}",
        )
        for line, count in rows[:SHOWN_PER_KIND]
    ]
    if len(rows) > SHOWN_PER_KIND:
        findings.append(
            CsvFinding(
                rows[SHOWN_PER_KIND][0],
                f"... and {len(rows) - SHOWN_PER_KIND} more rows with {word} fields than the header",
                "fix them the same way",
            )
        )
    return findings
