"""execution_match end to end: BIRD EX beside strict, typed rows from the worker, VES/R-VES, plan cost, LLMetric-Q."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from decimal import Decimal

import duckdb
import pytest
from casefolders import write_instance

from evaluators import grade
from evaluators.errors import Location
from evaluators.execution.executor import ExecConfig, Executor
from evaluators.execution.row_files import decode, encode, read_rows, rows_path, write_rows
from evaluators.grading.instance import Options
from evaluators.metrics.similarity import jaro_winkler, rouge_l
from evaluators.specs import GoldInstance

SPEC = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
SQLITE = {"type": "SQLite", "db": "shop"}
DUCKDB = {"type": "DuckDB", "db": "shop"}
OFFICIAL = ("spider2", "spider2-2024", "spider2-lite")
SLOW_COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) FROM c"


@pytest.fixture
def dbs(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    rows = [("north", 10, 1.5), ("south", 32, 2.25), ("north", 7, None), ("east", 5, 0.5)]
    con = sqlite3.connect(folder / "shop.sqlite")
    con.execute("CREATE TABLE sales (region TEXT, amount INTEGER, rate REAL)")
    con.executemany("INSERT INTO sales VALUES (?, ?, ?)", rows)
    con.execute("CREATE TABLE numbers (n INTEGER)")
    con.executemany("INSERT INTO numbers VALUES (?)", [(i,) for i in range(3000)])
    con.commit()
    con.close()
    con = duckdb.connect(str(folder / "shop.duckdb"))
    con.execute("CREATE TABLE sales (region VARCHAR, amount INTEGER, price DECIMAL(6, 2))")
    con.executemany("INSERT INTO sales VALUES (?, ?, ?)", [(r, a, p) for r, a, p in rows])
    con.execute("CREATE TABLE numbers AS SELECT range AS n FROM range(5000)")
    con.close()
    return folder


def add(root, iid, gold_sql, pred_sql, metadata=SQLITE, spec=SPEC):
    write_instance(root, iid, spec, "file", "pred.sql", {"gold.sql": gold_sql}, {"pred.sql": pred_sql}, metadata)


def run(root, dbs, ves_iterations=0):
    executor = Executor(ExecConfig(output_dir=root / "work", db_dir=dbs, timeout_s=2))
    report = grade(root / "sub", root / "gold", options=Options(executor=executor, ves_iterations=ves_iterations))
    return report, {i.instance_id: i for i in report.instances}


def bird(instance) -> float:
    scores = {instance.scores[name] for name in OFFICIAL}
    assert len(scores) == 1, "every official preset scores BIRD EX"
    return scores.pop()


# ------------------------------------------------------------------ BIRD EX beside strict


def test_duplicates_pass_bird_and_fail_strict(tmp_path, dbs):
    add(tmp_path, "dup", "SELECT DISTINCT region FROM sales", "SELECT region FROM sales")
    _, by_id = run(tmp_path, dbs)
    i = by_id["dup"]
    assert bird(i) == 1.0 and i.execution["ex_bird"] is True
    assert i.scores["strict"] == 0.0 and i.strict_reason == "row_count_mismatch"
    assert "BIRD EX" in i.detail and "strict table rule" in i.strict_detail


def test_column_order_fails_bird_and_passes_strict(tmp_path, dbs):
    add(tmp_path, "cols", "SELECT region, amount FROM sales", "SELECT amount, region FROM sales")
    _, by_id = run(tmp_path, dbs)
    i = by_id["cols"]
    assert bird(i) == 0.0 and i.reason == "value_mismatch" and "not among the predicted rows" in i.detail
    assert i.scores["strict"] == 1.0 and i.execution["ex_strict"] is True


def test_row_order_counts_for_strict_only_under_an_outer_order_by(tmp_path, dbs):
    add(
        tmp_path,
        "ordered",
        "SELECT region, amount FROM sales ORDER BY amount DESC",
        "SELECT region, amount FROM sales ORDER BY amount ASC",
    )
    add(
        tmp_path,
        "unordered",
        "SELECT region, amount FROM (SELECT * FROM sales ORDER BY amount DESC)",
        "SELECT region, amount FROM sales ORDER BY amount ASC",
    )
    _, by_id = run(tmp_path, dbs)
    assert bird(by_id["ordered"]) == 1.0 and by_id["ordered"].scores["strict"] == 0.0
    assert by_id["ordered"].execution["gold_order_by"] is True and "in order" in by_id["ordered"].strict_detail
    assert bird(by_id["unordered"]) == 1.0 and by_id["unordered"].scores["strict"] == 1.0
    assert by_id["unordered"].execution["gold_order_by"] is False  # the ORDER BY is inside a subquery


@pytest.mark.parametrize(
    "gold_sql, pred_sql, equal",
    [
        ("SELECT 1", "SELECT 1.0", True),  # Python: 1 == 1.0, as in BIRD
        ("SELECT '1'", "SELECT 1", False),  # a CSV would read both as 1; the driver's values differ
        ("SELECT NULL", "SELECT 0", False),  # NULL is None, never 0
        ("SELECT NULL", "SELECT NULL", True),
        ("SELECT 0.1 + 0.2", "SELECT 0.3", False),  # no tolerance
    ],
)
def test_bird_compares_the_drivers_values_not_csv_text(tmp_path, dbs, gold_sql, pred_sql, equal):
    add(tmp_path, "typed", gold_sql, pred_sql)
    _, by_id = run(tmp_path, dbs)
    assert bird(by_id["typed"]) == float(equal)


def test_duckdb_decimals_compare_as_numbers(tmp_path, dbs):
    add(tmp_path, "dec", "SELECT sum(price) FROM sales", "SELECT 4.25::DOUBLE", DUCKDB)
    add(tmp_path, "dec_text", "SELECT sum(price) FROM sales", "SELECT '4.25'", DUCKDB)
    _, by_id = run(tmp_path, dbs)
    assert bird(by_id["dec"]) == 1.0  # Decimal('4.25') == 4.25
    assert bird(by_id["dec_text"]) == 0.0


def test_summary_reports_both_ex_figures_over_every_execution_match_instance(tmp_path, dbs):
    add(tmp_path, "dup", "SELECT DISTINCT region FROM sales", "SELECT region FROM sales")
    add(tmp_path, "cols", "SELECT region, amount FROM sales", "SELECT amount, region FROM sales")
    add(tmp_path, "same", "SELECT count(*) FROM sales", "select COUNT(*) from sales")
    write_instance(tmp_path, "missing", SPEC, "file", None, {"gold.sql": "SELECT 1"}, metadata=SQLITE)
    report, _ = run(tmp_path, dbs)
    metrics = report.summary.execution_metrics
    assert metrics["execution_match_instances"] == 4
    assert metrics["ex_bird"] == pytest.approx(2 / 4)  # dup, same; the missing answer counts 0
    assert metrics["ex_strict"] == pytest.approx(2 / 4)  # cols, same
    assert report.summary.scores["spider2"] == pytest.approx(metrics["ex_bird"])
    assert report.summary.scores["strict"] == pytest.approx(metrics["ex_strict"])
    text = report.to_text()
    assert "EX (BIRD sets of rows, the official presets) 50.00%" in text and "strict 50.00%" in text
    assert json.loads(report.to_json())["summary"]["execution_metrics"]["ex_bird"] == 0.5


def test_the_spec_db_overrides_the_gold_line(tmp_path, dbs):
    spec = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql", "db": "shop"}}
    add(tmp_path, "other_db", "SELECT count(*) FROM sales", "SELECT 4", {"type": "SQLite", "db": "nowhere"}, spec)
    _, by_id = run(tmp_path, dbs)
    assert bird(by_id["other_db"]) == 1.0


def test_a_failing_gold_query_is_the_golds_problem(tmp_path, dbs):
    add(tmp_path, "bad_gold", "SELECT nope FROM sales", "SELECT 1")
    _, by_id = run(tmp_path, dbs)
    assert by_id["bad_gold"].reason == "unreadable_gold" and "gold query failed" in by_id["bad_gold"].detail


def test_a_failing_prediction_is_an_execution_error(tmp_path, dbs):
    add(tmp_path, "bad_pred", "SELECT region FROM sales", "SELECT regio FROM sales")
    report, by_id = run(tmp_path, dbs)
    assert by_id["bad_pred"].reason == "exec_error" and "regio" in by_id["bad_pred"].detail
    assert report.summary.execution_metrics["ex_bird"] == 0.0


def test_a_csv_answer_is_not_graded_by_execution_match(tmp_path, dbs):
    write_instance(tmp_path, "csv", SPEC, "file", "out.csv", {"gold.sql": "SELECT 1"}, {"out.csv": "a\n1\n"}, SQLITE)
    _, by_id = run(tmp_path, dbs)
    assert by_id["csv"].reason == "answer_type_mismatch" and ".sql" in by_id["csv"].detail


def test_with_sql_switched_off_it_needs_execution(tmp_path):
    add(tmp_path, "offline", "SELECT 1", "SELECT 1")
    report = grade(tmp_path / "sub", tmp_path / "gold", options=Options(execute_sql=False))
    assert report.instances[0].reason == "needs_execution"
    by_default = grade(tmp_path / "sub", tmp_path / "gold")  # the API runs SQL as the CLI does
    assert by_default.instances[0].reason != "needs_execution"


# ------------------------------------------------------------------ typed rows from the worker


def test_rows_codec_keeps_python_types(tmp_path):
    row = (
        7,
        2**70,
        1.5,
        float("inf"),
        None,
        True,
        "x",
        Decimal("1.50"),
        b"\x00\xff",
        dt.date(2024, 1, 31),
        dt.datetime(2024, 1, 31, 12, 30),
        dt.time(8, 15),
        dt.timedelta(days=2, seconds=5),
        [1, [2, 3]],
        {"a": 1, "b": [True]},
    )
    path = tmp_path / "r.rows.jsonl"
    write_rows(path, ["c"] * len(row), [row])
    columns, rows = read_rows(path)
    assert columns == ["c"] * len(row) and rows == [row]
    assert [type(v) for v in rows[0]] == [type(v) for v in row]
    assert math.isnan(decode(encode(float("nan"))))


def test_the_executor_returns_rows_and_times_without_writing(tmp_path, dbs):
    executor = Executor(ExecConfig(output_dir=tmp_path / "work", db_dir=dbs, timeout_s=2))
    gold = GoldInstance("t", (), SQLITE, Location("g"))
    result = executor.run_prediction(
        gold, "SELECT region, amount, rate FROM sales WHERE region = 'north'", collect="rows"
    )
    assert result.ok and result.rows() == (["region", "amount", "rate"], [("north", 10, 1.5), ("north", 7, None)])
    assert result.query_seconds is not None and 0 < result.query_seconds <= result.seconds
    timed = executor.run_prediction(gold, "SELECT 1", collect="time")
    assert timed.ok and timed.csv_path is None and timed.query_seconds > 0
    assert result.csv_path.is_file() and rows_path(result.csv_path).is_file(), "a timing run keeps the last result"
    with pytest.raises(ValueError):
        executor.run_prediction(gold, "SELECT 1").rows()


# ------------------------------------------------------------------ VES and R-VES


def test_identical_queries_have_a_time_ratio_near_one(tmp_path, dbs):
    query = "SELECT n % 7 AS k, count(*) FROM numbers GROUP BY k"
    add(tmp_path, "same", query, query)
    add(tmp_path, "wrong", "SELECT 1", "SELECT 2")
    report, by_id = run(tmp_path, dbs, ves_iterations=3)
    ves = by_id["same"].execution["ves"]
    assert ves["iterations"] == 3 and ves["correct"] is True
    assert ves["ratio"] > 0 and 0.2 < ves["ratio"] < 5  # loose: timings vary, and never by much for one query
    assert ves["ves"] == pytest.approx(math.sqrt(ves["ratio"]) * 100)
    assert ves["pred_min_s"] <= ves["pred_mean_s"] <= ves["pred_max_s"] and ves["pred_cv"] is not None
    assert by_id["wrong"].execution["ves"]["ves"] == 0.0 and by_id["wrong"].execution["ves"]["ratio"] is None
    m = report.summary.execution_metrics
    assert m["ves_iterations"] == 3 and m["ves_correct"] == 1
    assert m["ves"] == pytest.approx(ves["ves"] / 2)  # a mean over both instances, the wrong one counting 0
    assert "machine-dependent" in m["timing_note"] and "inside the worker" in m["timing_note"]
    assert "VES" in report.to_text() and "machine-dependent" in report.to_text()


def test_rves_buckets_follow_the_time_ratio(tmp_path, dbs):
    # The slow side counts 200 000 rows in a recursive CTE; the fast side returns a constant:
    # thousands of times faster, far from any bucket boundary on any machine.
    add(tmp_path, "faster", SLOW_COUNT, "SELECT 200000")
    add(tmp_path, "slower", "SELECT 200000", SLOW_COUNT)
    report, by_id = run(tmp_path, dbs, ves_iterations=3)
    faster, slower = by_id["faster"].execution["ves"], by_id["slower"].execution["ves"]
    assert faster["ratio"] >= 2 and faster["reward"] == 1.25 and faster["rves"] == pytest.approx(math.sqrt(1.25) * 100)
    assert slower["ratio"] < 0.25 and slower["reward"] == 0.25 and slower["rves"] == pytest.approx(50.0)
    m = report.summary.execution_metrics
    assert m["r_ves_buckets"]["ratio >= 2"] == 1 and m["r_ves_buckets"]["ratio < 0.25"] == 1
    assert m["r_ves"] == pytest.approx((math.sqrt(1.25) * 100 + 50.0) / 2)
    assert m["ratio_min"] == slower["ratio"] and m["ratio_max"] == faster["ratio"]


def test_ves_iterations_zero_disables_ves(tmp_path, dbs):
    add(tmp_path, "same", "SELECT 1", "SELECT 1")
    report, by_id = run(tmp_path, dbs, ves_iterations=0)
    assert "ves" not in by_id["same"].execution
    m = report.summary.execution_metrics
    assert m["ves"] is None and m["ves_iterations"] == 0 and "not measured" in m["timing_note"]


# ------------------------------------------------------------------ plan cost


def test_plan_cost_for_sqlite_and_duckdb(tmp_path, dbs):
    add(tmp_path, "lite", "SELECT region FROM sales WHERE rowid = 1", "SELECT region FROM sales ORDER BY amount")
    add(tmp_path, "duck", "SELECT 42", "SELECT n FROM numbers ORDER BY n", DUCKDB)
    _, by_id = run(tmp_path, dbs)
    lite, duck = by_id["lite"].execution["plan_cost"], by_id["duck"].execution["plan_cost"]
    assert lite == {"engine": "sqlite", "pred": 150, "gold": 0}  # full scan + sort vs rowid lookup
    assert duck["engine"] == "duckdb" and duck["pred"] >= 5000 > duck["gold"]


# ------------------------------------------------------------------ LLMetric-Q


def test_llmetric_q_by_hand(tmp_path, dbs):
    gold_sql, pred_sql = "SELECT region FROM sales", "SELECT region FROM sales WHERE amount > 6"
    add(tmp_path, "llm", gold_sql, pred_sql)
    report, by_id = run(tmp_path, dbs)
    # Pass@1 (strict): 3 rows for 4, so 0; valid: 1; rows as sets: {north, south} of {north, south, east}.
    text = (jaro_winkler(pred_sql, gold_sql) + rouge_l(pred_sql, gold_sql)) / 2
    expected = 0.3 * 0 + 0.4 * 1 + 0.2 * (2 / 3) + 0.1 * text
    assert by_id["llm"].scores["strict"] == 0.0
    assert by_id["llm"].execution["llmetric_q"] == pytest.approx(expected)
    assert report.summary.execution_metrics["llmetric_q"] == pytest.approx(expected)
    assert "LLMetric-Q" in report.to_text()


def test_llmetric_q_for_a_table_spec_with_a_gold_sql(tmp_path, dbs):
    spec = {"func": "table_match", "parameters": {"gold": "result.csv"}}
    gold_sql = "SELECT region, amount FROM sales WHERE amount > 6"
    write_instance(
        tmp_path,
        "tab",
        spec,
        "file",
        "pred.sql",
        {"gold.sql": gold_sql, "result.csv": "region,amount\nnorth,10\nsouth,32\nnorth,7\n"},
        {"pred.sql": gold_sql},
        SQLITE,
    )
    _, by_id = run(tmp_path, dbs)
    i = by_id["tab"]
    assert i.strict_score == 1.0 and i.execution["validity"]["valid"] is True
    assert i.execution["llmetric_q"] == pytest.approx(1.0)  # right, valid, same rows, same text


# ------------------------------------------------------------------ command line


def test_the_command_line_takes_ves_iterations(tmp_path, dbs):
    from click.testing import CliRunner

    from evaluators.cli import main

    add(tmp_path, "same", "SELECT count(*) FROM sales", "SELECT count(*) FROM sales")
    out = tmp_path / "out" / "report.json"
    result = CliRunner().invoke(
        main,
        [
            str(a)
            for a in (
                "grade",
                "--result-dir",
                tmp_path / "sub",
                "--gold-dir",
                tmp_path / "gold",
                "--db-dir",
                dbs,
                "--timeout",
                2,
                "--ves-iterations",
                2,
                "--output",
                out,
            )
        ],
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(out.read_text())["summary"]["execution_metrics"]
    assert metrics["ves_iterations"] == 2 and metrics["ex_bird"] == 1.0 and metrics["ves"] > 0
    assert "2 alternating run(s)" in result.output
    bad = CliRunner().invoke(
        main,
        [
            "grade",
            "--result-dir",
            str(tmp_path / "sub"),
            "--gold-dir",
            str(tmp_path / "gold"),
            "--ves-iterations",
            "-1",
        ],
    )
    assert bad.exit_code == 2
