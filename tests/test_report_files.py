"""The report files written the quick way (`Report.to_json` straight from the objects, `to_csv` looking at a
cell only where it may start a formula, the escapes skipped for ASCII text) against the plain rules, on
generated reports: the same JSON as `to_dict`, the same cells as `spreadsheet_cell` on each."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from hypothesis import example, given, settings
from hypothesis import strategies as st

from evaluators.reporting.report import InstanceReport, Report, build_summary, spreadsheet_cell
from evaluators.terminal_safe import encodable, json_text


@dataclass(frozen=True)
class Nested:  # a dataclass inside an instance's `execution`, as `to_dict` turns it into its fields
    label: str
    values: tuple


class Opaque:  # a value JSON has no type for: its text, both ways
    def __str__(self) -> str:
        return "opaque!"


# Texts that start like formulas, numbers in text, spaces first, non-ASCII, DEL, C1, bidi, a lone surrogate.
STARTS = st.sampled_from(["", "=", "+", "-", "@", "\t", "\r", " ", "  =", "-3.5", "+7", "é", "\x7f", "\x85", "\u202e"])
TEXT = st.builds(lambda a, b: a + b, STARTS, st.text(max_size=6)) | st.just("\udcff")
LEAF = TEXT | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
EXECUTION = st.dictionaries(
    st.text(max_size=4),
    LEAF | st.builds(Nested, TEXT, st.tuples(LEAF, LEAF)) | st.just(Opaque()) | st.lists(LEAF, max_size=3),
    max_size=3,
)


def instance(values) -> InstanceReport:
    name, detail, metadata, execution, score = values
    return InstanceReport(
        instance_id=name,
        funcs=("execution_match",),
        answer_type="sql",
        score=score,
        strict_score=0.0,
        reason="match",
        detail=detail,
        strict_reason="value_mismatch",
        strict_detail=detail[::-1],
        scores={"bird": score, "strict": 0.0},
        metadata=metadata,
        execution=execution,
    )


INSTANCES = st.lists(
    st.tuples(
        TEXT, TEXT, st.dictionaries(st.sampled_from(["db_id", "level"]), TEXT), EXECUTION, st.sampled_from([0.0, 1.0])
    ),
    max_size=5,
).map(lambda rows: [instance(r) for r in rows])


def report(instances) -> Report:
    return Report(build_summary("bird", instances, len(instances), [], [], ["bird", "strict"]), tuple(instances))


@settings(max_examples=60, deadline=None)
@given(INSTANCES)
def test_the_json_is_what_to_dict_gives(instances):
    made = report(instances)
    assert json.loads(made.to_json()) == json.loads(json.dumps(made.to_dict(), ensure_ascii=False, default=str))


@settings(max_examples=60, deadline=None)
@given(INSTANCES)
def test_each_csv_cell_is_what_the_spreadsheet_rule_gives(instances):
    """A number's text is never changed by the rule (scores, "-3.5"), so the rule applied to every cell of the
    plain CSV is what the safe CSV must hold."""
    made = report(instances)
    plain = list(csv.reader(io.StringIO(made.to_csv(spreadsheet_safe=False), newline="")))
    safe = list(csv.reader(io.StringIO(made.to_csv(), newline="")))
    assert safe == [[spreadsheet_cell(cell) for cell in row] for row in plain]


@example("a\x7fb")  # DEL is ASCII, yet escaped in JSON
@example("x\udcffy")
@given(st.text())
def test_ascii_text_is_left_as_it_is_and_the_rest_escaped_as_before(text):
    for value in (text, text.encode("ascii", "ignore").decode()):
        # "é" needs no escape and is not ASCII: the regex's own answer, never the quick path's
        assert json_text(value) == json_text("é" + value)[1:]
        assert encodable(value) == encodable("é" + value)[1:]
