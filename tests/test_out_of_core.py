"""Tables too big for --memory-limit-mb are compared in DuckDB (issue 27); the verdicts are the in-memory
path's: what DuckDB cannot settle (`undecided`) is graded in pandas as before, so the route never changes a
verdict.  A tiny budget forces the out-of-core path on small tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_route_equivalence import both_routes

from bench import shapes
from evaluators.matching import table_match
from evaluators.matching.semantics import PRESETS
from evaluators.tables.read import TableReader
from evaluators.tables.spill import SpillPlan

ROWS = 400


def _verdicts(folder, spill, gold: pd.DataFrame, pred: pd.DataFrame, **params):
    gold.to_csv(folder / "gold.csv", index=False)
    pred.to_csv(folder / "pred.csv", index=False)
    job = table_match.TableJob(folder, tuple(PRESETS.values()), TableReader("unreadable_prediction"), spill=spill)
    spec = {"gold": "gold.csv", "condition_cols": [], "ignore_order": True} | params
    try:
        return table_match.table_match(job, folder / "pred.csv", spec)
    finally:
        job.close()


def _both(tmp_path, gold, pred, **params):
    in_memory = _verdicts(tmp_path, None, gold, pred, **params)
    spilled = _verdicts(tmp_path, SpillPlan(0, tmp_path / "work"), gold, pred, **params)
    assert not any((tmp_path / "work").iterdir()), "the spill folder is removed with the job"
    return in_memory, spilled


def _same(in_memory, spilled):
    for name, verdict in spilled.items():
        assert (verdict.score, verdict.reason) == (in_memory[name].score, in_memory[name].reason), (name, verdict)


def _out_of_core(tmp_path, gold: pd.DataFrame, pred: pd.DataFrame, preset: str, ignore_order: bool = True):
    """The DuckDB route's own verdict, before any fallback."""
    gold.to_csv(tmp_path / "gold.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    job = table_match.TableJob(
        tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"), spill=SpillPlan(0, tmp_path / "w")
    )
    try:
        return job.out_of_core(PRESETS[preset], tmp_path / "pred.csv", tmp_path / "gold.csv", [], ignore_order)
    finally:
        job.close()


@pytest.mark.parametrize("shape", shapes.SHAPES)
def test_shapes_match_as_in_memory(tmp_path, shape):
    gold, pred = shapes.pair(shape, ROWS)
    in_memory, spilled = _both(tmp_path, gold, pred)
    _same(in_memory, spilled)
    assert all("out of core" in spilled[name].detail for name in ("spider2", "spider2-2024")), spilled


@pytest.mark.parametrize("shape", ["repeated", "nulls", "floats"])
def test_broken_shapes_fail_as_in_memory(tmp_path, shape):
    gold, pred = shapes.pair(shape, ROWS)
    moved = pred.copy()
    numeric = [c for c in moved.columns if pd.api.types.is_float_dtype(moved[c])][0]
    row = int(np.flatnonzero(moved[numeric].notna().to_numpy())[3])
    moved.loc[row, numeric] += 0.5
    in_memory, spilled = _both(tmp_path, gold, moved)
    assert any(not v.passed for name, v in in_memory.items() if name != "strict")
    _same(in_memory, spilled)


def test_tolerance_nulls_text_and_counts(tmp_path):
    gold = pd.DataFrame({"a": [1.0, 2.0, None, 10.5], "b": ["x", None, "w", "y"], "c": [3, 1, 2, 12]})
    cases = [
        pd.DataFrame({"p": [2.004, 1.0, None, 10.5], "q": ["y", "x", None, "w"], "r": [12.0, 1.0, 2.0, 3.0]}),
        pd.DataFrame({"p": [2.004, 1.0, 0.0, 10.5], "q": ["y", "x", "v", "w"], "r": [12, 1, 2, 3]}),
        pd.DataFrame({"p": [2.0, 1.0, 10.5], "q": ["y", "x", "w"], "r": [12, 1, 2]}),
        pd.DataFrame({"p": [-0.0, 2.0, None, 10.5], "q": ["y", "x", None, "w"], "r": [12, 1, 2, 3]}),
    ]
    for pred in cases:
        _same(*_both(tmp_path, gold, pred))
    for cols in ([0], [1, 2], [5]):
        _same(*_both(tmp_path, gold, cases[0], condition_cols=cols))


def test_what_is_not_decided_says_so_and_pandas_grades_it(tmp_path):
    gold = pd.DataFrame({"a": [True, False], "b": [1, 2]})
    verdict = _out_of_core(tmp_path, gold, gold, "spider2")
    assert verdict.reason == "undecided" and "booleans" in verdict.detail
    assert _out_of_core(tmp_path, gold[["b"]], gold[["b"]], "spider2", ignore_order=False).reason == "undecided"
    in_memory, spilled = _both(tmp_path, gold, gold)
    assert spilled["spider2"].passed and "out of core" not in spilled["spider2"].detail
    _same(in_memory, spilled)


@pytest.mark.parametrize("shape", ["repeated", "nulls"])
def test_strict_decides_identical_rows(tmp_path, shape):
    gold, pred = shapes.pair(shape, ROWS)
    in_memory, spilled = _both(tmp_path, gold, pred)
    assert spilled["strict"].passed and in_memory["strict"].passed, spilled["strict"]
    assert "out of core" in spilled["strict"].detail
    scrambled = pred.copy()
    scrambled.iloc[:, 0] = np.random.default_rng(5).permutation(scrambled.iloc[:, 0].to_numpy())
    assert _out_of_core(tmp_path, gold, scrambled, "strict").reason == "undecided"
    in_memory, spilled = _both(tmp_path, gold, scrambled)
    assert not spilled["strict"].passed and spilled["strict"].reason == in_memory["strict"].reason


def test_grade_goes_out_of_core_past_the_memory_limit(tmp_path):
    """Through `grade`: the run's --memory-limit-mb decides, and the work folder keeps no spill files."""
    from casefolders import write_instance

    from evaluators import grade
    from evaluators.execution.executor import ExecConfig, Executor
    from evaluators.grading.instance import Options

    gold, pred = shapes.pair("repeated", 3000)
    spec = {"func": "table_match", "parameters": {"gold": "gold.csv", "ignore_order": True}}
    files = {"gold.csv": gold.to_csv(index=False)}, {"pred.csv": pred.to_csv(index=False)}
    write_instance(tmp_path, "big", spec, "file", "pred.csv", *files)
    for limit, words in ((1, "out of core"), (2048, "")):
        executor = Executor(ExecConfig(output_dir=tmp_path / f"work{limit}", memory_limit_mb=limit))
        report = grade(tmp_path / "sub", tmp_path / "gold", options=Options(executor=executor))
        (instance,) = report.instances
        assert instance.score == 1.0 and instance.strict_score == 1.0, instance
        assert words in instance.detail and (words in instance.strict_detail), instance
        assert not list((tmp_path / f"work{limit}").rglob("*.duckdb"))


def test_the_file_size_limit_holds_on_the_out_of_core_route(tmp_path):
    gold, pred = shapes.pair("repeated", ROWS)
    gold.to_csv(tmp_path / "gold.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    reader = TableReader("unreadable_prediction", max_bytes=1_000)
    job = table_match.TableJob(tmp_path, tuple(PRESETS.values()), reader, spill=SpillPlan(0, tmp_path / "work"))
    try:
        verdicts = table_match.table_match(
            job, tmp_path / "pred.csv", {"gold": "gold.csv", "condition_cols": [], "ignore_order": True}
        )
    finally:
        job.close()
    assert {v.reason for v in verdicts.values()} == {"unreadable_prediction"}
    assert all("--max-file-mb" in v.detail for v in verdicts.values()), verdicts


# Cells pandas' reader types in its own way (padding, signs, exponents, NA words, booleans, hex, 19 digits):
# the out-of-core typing either reproduces pandas' verdict or answers `undecided` (pandas then grades).
EDGE_CELLS = [
    " 1", "1 ", "\t1", "+1", "-0", "1.", ".5", "+.5", "1e0", "1E0", "1.e0", "nan", "NaN", '"nan"', '"NA"', "NA",
    "inf", "-inf", "Infinity", "True", "false", "TRUE", "0x1", "1_0", '"1,0"', "9" * 19, "-" + "9" * 18, "9" * 18,
    "", '""', '" "', "1e-5", "1e15", "0.0001", "-0.0", "00001", "1d0", "+-1", "१",
]  # fmt: skip


def _raw_verdicts(tmp_path, gold_rows: list[str], pred_rows: list[str]):
    """The in-memory verdicts and the DuckDB route's own (before any fallback) on CSVs written cell by cell."""
    gold = "a,b\n" + "".join(f"{cell},t{k % 3}\n" for k, cell in enumerate(gold_rows))
    pred = "y,x\n" + "".join(f"t{k % 3},{cell}\n" for k, cell in enumerate(pred_rows))
    return both_routes(tmp_path, gold.encode(), pred.encode())


@pytest.mark.parametrize("cell", EDGE_CELLS)
@pytest.mark.parametrize("context", [["2", "3", "4"], ["x", "y", "z"], ["2.5", "", "4"]])
def test_typing_edges_agree_with_pandas_or_stay_undecided(tmp_path, cell, context):
    gold = [cell, *context]
    for pred in ([*reversed(context), cell], [*context[::-1], "1"]):
        in_memory, own = _raw_verdicts(tmp_path, gold, pred)
        for name, verdict in own.items():
            if verdict.reason != "undecided":
                assert (verdict.score, verdict.reason) == (in_memory[name].score, in_memory[name].reason), (
                    name, cell, context, pred, verdict, in_memory[name],
                )  # fmt: skip


def test_plain_number_is_the_pattern_without_a_regex():
    """The typing pass's cast-based test of plain notation against the pattern it replaces, on every
    string of up to 5 characters over the characters that matter, and on longer cases."""
    import itertools

    import duckdb

    from evaluators.matching.official.out_of_core import plain_number

    alphabet = "01+-.eE _\tinfxd"
    cells = ["".join(t) for n in range(1, 6) for t in itertools.product(alphabet, repeat=n)]
    cells += ["inf", "-Infinity", "nan", "-nan", "0x10", "1_000", "9" * 19, "+" + "9" * 400, "1e99999", "\x0b1", "१"]
    con = duckdb.connect()
    con.register("cells", pd.DataFrame({"c": cells}))
    pattern = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
    wrong = con.execute(
        f"SELECT c FROM cells WHERE regexp_full_match(c, '{pattern}') IS DISTINCT FROM {plain_number('c')} LIMIT 5"
    ).fetchall()
    assert not wrong


@pytest.mark.parametrize("order", [("spider2", "spider2-2024"), ("spider2-2024", "spider2")])
def test_one_sort_serves_every_tolerance(tmp_path, order):
    """The sorted comparison is kept as the smallest tolerance that passes, so the next preset reuses it:
    a gap of 0.004 passes 1e-2 and fails 1e-3, whichever preset asks first."""
    gold = pd.DataFrame({"a": [1.0, 2.0, 3.5, 10.25], "b": ["x", "y", "z", "w"]})
    pred = pd.DataFrame({"q": ["w", "z", "y", "x"], "p": [10.25, 3.5, 2.004, 1.0]})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    pred.to_csv(tmp_path / "pred.csv", index=False)
    job = table_match.TableJob(
        tmp_path, tuple(PRESETS.values()), TableReader("unreadable_prediction"), spill=SpillPlan(0, tmp_path / "w")
    )
    try:
        own = {
            name: job.out_of_core(PRESETS[name], tmp_path / "pred.csv", tmp_path / "gold.csv", [], True)
            for name in order
        }
    finally:
        job.close()
    assert own["spider2"].passed and "out of core" in own["spider2"].detail
    assert own["spider2-2024"].reason == "column_not_found", own


def test_an_undecided_pair_beyond_free_memory_is_that_instances_memory_limit(tmp_path):
    """When pandas' frames would not fit the machine's free memory either, the fallback would have the kernel
    kill the run: the pair gets `memory_limit`, saying why DuckDB could not decide; the decided presets stand."""
    gold, pred = shapes.pair("lookalike", ROWS)
    no_room = SpillPlan(0, tmp_path / "work", free_bytes=0)
    verdicts = _verdicts(tmp_path, no_room, gold, pred)
    assert verdicts["strict"].reason == "memory_limit" and "look-alike" in verdicts["strict"].detail, verdicts
    assert all(verdicts[name].passed and "out of core" in verdicts[name].detail for name in PRESETS if name != "strict")
    roomy = _verdicts(tmp_path, SpillPlan(0, tmp_path / "work", free_bytes=1 << 40), gold, pred)
    assert roomy["strict"].passed and "out of core" not in roomy["strict"].detail, roomy["strict"]
