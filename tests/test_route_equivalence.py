"""The out-of-core route reads CSV files exactly as pandas does, or declines (issue V, item 1).

A pair past `--memory-limit-mb`/8 is read into DuckDB (`tables/spill.py`); the route exists for memory,
never for verdicts.  Here the route is forced (a budget of 0 MB) on generated files: junk and blank first
lines, byte-order marks, quoting of every kind, LF/CRLF/CR and their mixes, blank lines, blanks beside
quotes, ragged rows, padding columns, one column or several, and every verdict the route decides itself
must be the in-memory verdict, under every semantics; what it declines, pandas grades.  A cheaper
property, on many more files, checks the reading itself: a file DuckDB loads holds pandas' cells.
"""

from __future__ import annotations

import functools
import itertools

import pandas as pd
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st
from hypothesis_profiles import sized

from evaluators.matching import table_match
from evaluators.matching.semantics import PRESETS
from evaluators.tables.read import TableReader
from evaluators.tables.spill import NotExact, SpillPlan, SpillTables

SPEC = {"gold": "gold.csv", "condition_cols": [], "ignore_order": True}

# Fields as written in the file: numbers, text, pandas' NA words, quoting of every kind; then the odd
# ones, drawn less often so that most files are ones the route loads.
PLAIN = [
    "1", "2", "-3", "007", "1.5", "2.0", "1e3", "-0.0", "a", "b", "x y", "#c", "NA", "null", "",
    '""', '"a,b"', '"x""y"', '"two\nlines"', '"two\r\nlines"', '"1"', '"NA"', "\t", " 1", "a ",
]  # fmt: skip
ODD = ["100000000000000000000", "True", ' "q"', '"q" ', '"q"\t', 'x"y', '"x"y', '"open', "\x00", "\xe9"]
ENDINGS = ["\n", "\r\n", "\r"]
# Strategies made once (`between` once per bounds): hypothesis validates every new strategy object, and a
# fresh one per cell or blank line cost more than the checks (drawing the 200 files below took 16 CPU s, now
# 3). The same objects draw the same values: the examples are the ones drawn before.
ONE_IN_5, ONE_IN_12, COIN = st.integers(0, 4), st.integers(0, 11), st.booleans()
ODD_FIELDS, PLAIN_FIELDS, LINE_ENDS = st.sampled_from(ODD), st.sampled_from(PLAIN), st.sampled_from(ENDINGS)
PADDING = st.sampled_from(["p", "", "pp" * 8])
BLANKISH = st.sampled_from(["", " ", "\t", ","])
FIRST_LINES = st.sampled_from(["junk", "", " ", "# comment", "x,y", '"q"', "a,b,c"])
BOMS = st.sampled_from([b"", b"", b"\xef\xbb\xbf"])
WIDTHS, ROW_COUNTS = st.integers(1, 3), st.integers(0, 5)
HOW = st.sampled_from(["same", "shuffled", "other"])


@functools.cache
def between(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@st.composite
def field(draw):
    return draw(ODD_FIELDS if draw(ONE_IN_12) == 0 else PLAIN_FIELDS)


FIELD = field()


@st.composite
def tables(draw):
    """Rows of raw fields (the first is the header)."""
    width = draw(WIDTHS)
    rows = draw(ROW_COUNTS)
    header = [f"h{k}" for k in range(width)]
    body = [[draw(FIELD) for _ in range(width)] for _ in range(rows)]
    return [header, *body]


def rarely(draw) -> bool:
    return draw(ONE_IN_5) == 0


@st.composite
def written(draw, rows: list[list[str]]):
    """The rows as a file, with whatever pandas and DuckDB might read apart."""
    rows = [list(r) for r in rows]
    if draw(COIN):  # a padding column, which the official rule allows
        at = draw(between(0, len(rows[0])))
        for k, row in enumerate(rows):
            row.insert(at, "pad" if k == 0 else draw(PADDING))
    if len(rows) > 1 and rarely(draw):  # a ragged row
        row = rows[draw(between(1, len(rows) - 1))]
        row.pop() if draw(COIN) and len(row) > 1 else row.append("extra")
    lines = [",".join(r) for r in rows]
    while rarely(draw):  # blank and blank-looking lines
        lines.insert(draw(between(1, len(lines))), draw(BLANKISH))
    if rarely(draw):
        lines.insert(0, draw(FIRST_LINES))
    if rarely(draw):  # mixed line ends
        endings = [draw(LINE_ENDS) for _ in lines]
    else:
        endings = [draw(LINE_ENDS)] * len(lines)
    text = "".join(line + end for line, end in zip(lines, endings, strict=True))
    if draw(COIN):
        text = text.rstrip("\r\n")
    bom = draw(BOMS)
    encoding = "cp1252" if rarely(draw) else "utf-8"  # then an "\xe9" field is not UTF-8
    return bom + text.encode(encoding, errors="replace")


@st.composite
def pairs(draw):
    gold_rows = draw(tables())
    how = draw(HOW)
    if how == "other":
        pred_rows = draw(tables())
    else:
        body = gold_rows[1:]
        if how == "shuffled":
            body = draw(st.permutations(body))
        pred_rows = [[f"p{k}" for k in range(len(gold_rows[0]))], *body]
    return draw(written(gold_rows)), draw(written(pred_rows)), draw(COIN)


def both_routes(folder, gold: bytes, pred: bytes, ignore_order: bool = True) -> tuple[dict, dict]:
    """(in-memory verdicts, the route's own verdicts before any fallback), every semantics."""
    (folder / "gold.csv").write_bytes(gold)
    (folder / "pred.csv").write_bytes(pred)
    spec = SPEC | {"ignore_order": ignore_order}
    presets = tuple(PRESETS.values())
    in_memory = table_match.table_match(
        table_match.TableJob(folder, presets, TableReader("unreadable_prediction")), folder / "pred.csv", spec
    )
    job = table_match.TableJob(
        folder, presets, TableReader("unreadable_prediction"), spill=SpillPlan(0, folder / "work")
    )
    try:
        own = {
            name: job.out_of_core(preset, folder / "pred.csv", folder / "gold.csv", [], ignore_order)
            for name, preset in PRESETS.items()
        }
    finally:
        job.close()
    return in_memory, own


def assert_route_agrees(in_memory: dict, own: dict) -> None:
    for name, verdict in own.items():
        if verdict.reason != "undecided":
            assert (verdict.score, verdict.reason) == (in_memory[name].score, in_memory[name].reason), (
                name, verdict, in_memory[name],
            )  # fmt: skip


GOLD = b"a,b\n1,x\n2,y\n3,z\n"
# Counterexamples found so far, kept: under the `fixed` profile they run first, every time.
FOUND = [
    (GOLD, b"junk\n" + GOLD, True),  # DuckDB's sniffer skipped the junk line pandas takes as the header
    (GOLD, b"junk\na,b,pad\n1,x,p\n2,y,p\n3,z,p\n", True),  # the same, with a padding column
    (GOLD, b"\na,b\n1,x\n2,y\n3,z\n", True),  # a blank first line: pandas takes the next as the header
    (GOLD, b"# c\n" + GOLD, True),  # a comment-looking first line is pandas' header too
    (b'a,b\n1, "x"\n', b'a,b\n1, "x"\n', True),  # DuckDB trims the blank before a quote, pandas keeps it
    (b"a\n1\n\n2\n", b"a\n1\n2\n", True),  # a one-column file's blank line: pandas skips it
    (b"a\n1\n \n2\n", b"a\n1\n2\n", True),
    (b"\xef\xbb\xbf" + GOLD, GOLD.replace(b"\n", b"\r\n"), True),
]


@sized(30)  # each example grades a pair twice under four semantics; the reading property covers more files
@given(pairs())
@example(FOUND[0])
@example(FOUND[1])
@example(FOUND[2])
@example(FOUND[3])
@example(FOUND[4])
@example(FOUND[5])
@example(FOUND[6])
@example(FOUND[7])
def test_the_route_decides_as_pandas_reads(tmp_path_factory, case):
    gold, pred, ignore_order = case
    assert_route_agrees(*both_routes(tmp_path_factory.mktemp("pair"), gold, pred, ignore_order))


def test_a_junk_first_line_is_the_header_on_both_routes(tmp_path):
    """The issue's case through grading: a padding column makes the prediction big enough for the route,
    and its junk first line is pandas' header; the verdict is pandas' on either route (0 here)."""
    gold = "a,b\n" + "".join(f"{k},t{k % 7}\n" for k in range(200))
    pad = "p" * 1000
    pred = "junk\n" + "a,b,pad\n" + "".join(f"{k},t{k % 7},{pad}\n" for k in range(200))
    (tmp_path / "gold.csv").write_text(gold)
    (tmp_path / "pred.csv").write_text(pred)
    plan = SpillPlan(1, tmp_path / "work")  # 1 MB: the prediction's 200 KB pass it, the gold alone would not
    assert plan.too_big(tmp_path / "pred.csv", tmp_path / "gold.csv")
    out = {}
    for spill in (None, plan):
        job = table_match.TableJob(tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"), spill=spill)
        try:
            out[spill is None] = table_match.table_match(job, tmp_path / "pred.csv", SPEC)
        finally:
            job.close()
    for name in PRESETS:
        assert out[False][name].score == out[True][name].score == 0.0, (name, out[False][name], out[True][name])
    assert not any("out of core" in v.detail for v in out[False].values()), out[False]


@pytest.fixture(scope="module")
def spilled(tmp_path_factory):
    tables = SpillTables(SpillPlan(0, tmp_path_factory.mktemp("spill")))
    tables.names = itertools.count()
    yield tables, tmp_path_factory.mktemp("files")
    tables.close()


def pandas_cells(path) -> tuple[int, list] | None:
    """(width, rows of str or None) as pandas reads the file's text, or None when pandas refuses it."""
    try:
        frame = pd.read_csv(path, dtype=object)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):  # EmptyDataError is a ValueError
        return None
    if not isinstance(frame.index, pd.RangeIndex):
        return frame.shape[1], ["an index was inferred from the first column"]
    return frame.shape[1], [[None if pd.isna(v) else v for v in row] for row in frame.itertuples(index=False)]


@sized(200)
@given(st.one_of(tables().flatmap(written), st.sampled_from([pred for _, pred, _ in FOUND])))
def test_a_file_the_route_loads_holds_pandas_cells(spilled, raw):
    tables, folder = spilled
    path = folder / f"f{next(tables.names)}.csv"
    path.write_bytes(raw)
    try:
        name = tables.table(path)
    except NotExact as exc:
        event(f"declined: {str(exc).split(': ', 1)[1][:40]}")
        return  # declined: pandas reads it (or reports why it cannot)
    event("loaded")
    rows = [list(row) for row in tables.con.execute(f"SELECT * FROM {name}").fetchall()]
    width = len(tables.con.execute(f"DESCRIBE {name}").fetchall())
    assert pandas_cells(path) == (width, rows), raw
