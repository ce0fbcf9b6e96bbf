"""`gold import-spider2-lite`: Spider2-lite/snow gold in this format, checked on a small folder and the real corpus."""

import csv
import json
import os
import re

import pytest
from conftest import SHARED, requires_shared
from helpers_io import TABLE, run_cli, tree_hash, write_lines

from evaluators import grade
from evaluators.goldtools.lint import lint_gold
from evaluators.goldtools.lite_import import import_spider2_lite, lite_parameters
from evaluators.grading.instance import Options
from evaluators.loading.validate import validate

CORPUS = SHARED / "corpora" / "spider2-lite"
BROKEN = SHARED / "cases" / "dev" / "broken_specs.txt"


def _lite_folder(root, eval_name="spider2lite_eval.jsonl"):
    lite = root / "lite"
    (lite / "exec_result").mkdir(parents=True)
    (lite / "sql").mkdir()
    files = {
        "one.csv": TABLE,
        "var_b.csv": "k,v\n1,2\n",
        "var_a.csv": TABLE,
        "var_c.csv": "v\n2.5\n3.5\n",
        "bad_a.csv": TABLE,
        "bad_b.csv": TABLE,
        "one_extra.csv": TABLE,
    }
    for name, text in files.items():
        (lite / "exec_result" / name).write_text(text)
    (lite / "sql" / "one.sql").write_text("SELECT 1")
    write_lines(
        lite / eval_name,
        [
            {"instance_id": "one", "condition_cols": [[0, 2]], "ignore_order": True, "toks": "12", "temporal": True},
            {"instance_id": "var", "condition_cols": [0], "ignore_order": False},
            {"instance_id": "bad", "condition_cols": [[0], [1], [2]], "ignore_order": True},
            {"instance_id": "gone", "condition_cols": [], "ignore_order": True},
            '{"instance_id": "broken", ',
        ],
    )
    return lite


@pytest.mark.parametrize(
    "files, cols, expected",
    [
        (["a.csv"], [1, 2], ("a.csv", [1, 2])),
        (["a.csv"], [[1, 2]], ("a.csv", [1, 2])),
        (["a.csv"], None, ("a.csv", [])),
        (["a.csv", "b.csv"], [1], (["a.csv", "b.csv"], [[1], [1]])),  # the lite scorer repeats a flat list
        (["a.csv", "b.csv"], [[1], [0, 2]], (["a.csv", "b.csv"], [[1], [0, 2]])),
        (["a.csv", "b.csv"], [[]], (["a.csv", "b.csv"], [])),
        (["a.csv"], [[1], [2]], (["a.csv"], [[1], [2]])),  # does not fit: kept for lint to report
    ],
)
def test_lite_condition_cols_keep_their_meaning(files, cols, expected):
    params = lite_parameters(files, {"condition_cols": cols, "ignore_order": True})
    assert (params["gold"], params["condition_cols"]) == expected and params["ignore_order"] is True


def test_import_converts_copies_and_reports(tmp_path):
    lite = _lite_folder(tmp_path)
    before = tree_hash(lite)
    result = import_spider2_lite(lite, tmp_path / "gold")
    assert tree_hash(lite) == before, "the source is only read"
    lines = {
        line["instance_id"]: line
        for line in map(json.loads, (tmp_path / "gold" / "spider2_eval.jsonl").read_text().splitlines())
    }
    assert lines["one"] == {
        "instance_id": "one",
        "evaluation": {
            "func": "table_match",
            "parameters": {"gold": "one.csv", "condition_cols": [0, 2], "ignore_order": True},
        },
        "toks": "12",
        "temporal": True,
    }
    assert lines["var"]["evaluation"]["parameters"] == {
        "gold": ["var_a.csv", "var_b.csv", "var_c.csv"],
        "condition_cols": [[0], [0], [0]],
        "ignore_order": False,
    }
    assert sorted(os.listdir(tmp_path / "gold" / "one")) == ["gold.sql", "one.csv"]  # one_extra.csv is another id's
    assert "temporal" not in lines["one"]["evaluation"]  # gold.sql is kept for reference; the CSV stays the gold
    text = result.to_text()
    assert "gone: no gold file in exec_result/" in text and "the spec names gone.csv, which does not exist" in text
    assert f"{lite / 'spider2lite_eval.jsonl'}:5:" in text and "invalid JSON" in text
    assert (result.instances, result.files, result.sqls, len(result.problems)) == (4, 6, 1, 3)
    assert "no task file found" in text and "--tasks" in text  # routing is not silently left out
    lint = lint_gold(tmp_path / "gold")
    assert lint.flagged == ("bad", "gone")
    assert "2 gold file(s) but 3 condition_cols lists" in lint.to_text()


def test_import_cli_refuses_existing_ids_unless_replace(tmp_path):
    lite = _lite_folder(tmp_path, "spider2snow_eval.jsonl")
    gold = tmp_path / "gold"
    first = run_cli("gold", "import-spider2-lite", "--from", lite, "--to", gold)
    assert first.exit_code == 1 and "imported 4 instance(s)" in first.output  # written, with 2 problems listed
    again = run_cli("gold", "import-spider2-lite", "--from", lite, "--to", gold)
    assert "'one' is already in" in again.output and "imported 0 instance(s)" in again.output
    (lite / "exec_result" / "one.csv").write_text("a\n9\n")
    replaced = run_cli("gold", "import-spider2-lite", "--from", lite, "--to", gold, "--replace")
    assert "imported 4 instance(s)" in replaced.output and (gold / "one" / "one.csv").read_text() == "a\n9\n"
    assert len((gold / "spider2_eval.jsonl").read_text().splitlines()) == 4


def test_import_needs_one_eval_file_and_an_exec_result_folder(tmp_path):
    lite = _lite_folder(tmp_path)
    (lite / "spider2snow_eval.jsonl").write_text("")
    both = run_cli("gold", "import-spider2-lite", "--from", lite, "--to", tmp_path / "g")
    assert both.exit_code == 2 and "found both" in both.output and "--eval-file" in both.output
    chosen = run_cli(
        "gold", "import-spider2-lite", "--from", lite, "--to", tmp_path / "g", "--eval-file", "spider2lite_eval.jsonl"
    )
    assert "imported 4 instance(s)" in chosen.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        "exec_result is not a folder"
        in run_cli("gold", "import-spider2-lite", "--from", empty, "--to", tmp_path / "h").output
    )


def test_flat_submission_grades_against_imported_gold(tmp_path):
    lite = _lite_folder(tmp_path)
    gold = tmp_path / "gold"
    import_spider2_lite(lite, gold)
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "one.csv").write_text("x,a,y,c\n0,1,0,2.5\n0,2,0,3.5\n")
    (flat / "var.csv").write_text("v\n2.5\n3.5\n")
    (flat / "bad.sql").write_text("SELECT 1")
    report = grade(flat, gold, options=Options(layout="flat", execute_sql=False))
    reasons = {i.instance_id: i.reason for i in report.instances}
    assert reasons == {"one": "match", "var": "match", "bad": "needs_execution", "gone": "missing_prediction"}
    lite = grade(flat, gold, semantics="spider2-lite", options=Options(layout="flat", execute_sql=False))
    assert "Final score: 0.6667, Correct examples: 2, Total examples: 3" in lite.to_text(), "over the graded"
    assert "Real score: 0.5000, Correct examples: 2, Total examples: 4" in lite.to_text(), "over all gold instances"
    gone = next(i for i in report.instances if i.instance_id == "gone")
    assert gone.detail == "no gone.csv or gone.sql in the submission folder", "said in the layout the user chose"
    assert validate(flat, gold, layout="flat").missing_ids == ("gone",)


# ---- the real Spider2-lite gold ----------------------------------------------------------------


def _lite_files(exec_dir):
    names = os.listdir(exec_dir)
    return lambda iid: sorted(n for n in names if re.fullmatch(rf"{re.escape(iid)}(_[a-z])?\.csv", n))


def _width(path):
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return len(next(row for row in csv.reader(handle) if row))


def _inconsistent(line, files, exec_dir) -> bool:
    """Does this lite spec name a column, or a per-file list, its gold files do not have? (the csv module's view)"""
    cols = line["condition_cols"] or []
    per_file = cols if cols and all(isinstance(c, list) for c in cols) else [cols] * len(files)
    if len(per_file) != len(files) and not (len(files) == 1 and len(per_file) == 1):
        return True
    return any(i >= _width(exec_dir / name) for name, c in zip(files, per_file, strict=False) for i in c or [])


@requires_shared(CORPUS)
def test_real_corpus_import_and_lint_flag_exactly_the_broken_specs(tmp_path):
    source = CORPUS / "gold"
    imported = import_spider2_lite(source, tmp_path / "gold")
    lines = [json.loads(x) for x in (source / "spider2lite_eval.jsonl").read_text().splitlines() if x.strip()]
    files_of = _lite_files(source / "exec_result")
    absent = {line["instance_id"] for line in lines if not files_of(line["instance_id"])}
    inconsistent = {
        line["instance_id"]
        for line in lines
        if files_of(line["instance_id"]) and _inconsistent(line, files_of(line["instance_id"]), source / "exec_result")
    }
    broken = set(BROKEN.read_text().split()) if BROKEN.exists() else set()

    assert imported.instances == len(lines) and {p.instance_id for p in imported.problems} == absent
    assert absent and all("which does not exist" in p.message for p in imported.problems)
    lint = lint_gold(tmp_path / "gold", jobs=2)
    assert broken <= inconsistent, "the csv module's view agrees with the listed broken specs"
    assert set(lint.flagged) == broken | absent | inconsistent, lint.to_text()
    for iid in absent:
        assert any(
            p.instance_id == iid and "the spec names a file that does not exist" in p.message for p in lint.errors
        )
    # Every other instance passed the self-check: its gold files, graded as answers, pass every semantics.
    assert lint.instances - len(lint.flagged) > 500


def _routed_folder(root):
    """A Spider2-lite-shaped repository: suite gold two levels below the task file, one sf_ SQL named bare."""
    gold = root / "spider2-lite" / "evaluation_suite" / "gold"
    (gold / "exec_result").mkdir(parents=True)
    (gold / "sql").mkdir()
    ids = ["bq001", "ga002", "local003", "sf_bq004", "sf005"]
    for iid in ids:
        (gold / "exec_result" / f"{iid}.csv").write_text(TABLE)
    for name in ("bq001.sql", "bq004.sql", "local003.sql", "stray.sql"):
        (gold / "sql" / name).write_text("SELECT 1")
    write_lines(
        gold / "spider2lite_eval.jsonl", [{"instance_id": i, "condition_cols": [], "ignore_order": True} for i in ids]
    )
    write_lines(
        root / "spider2-lite" / "spider2-lite.jsonl",
        [{"instance_id": i, "db": f"db_{i}", "question": "?"} for i in ids],
    )
    return gold


def test_import_routes_every_line_by_the_task_file(tmp_path):
    gold = _routed_folder(tmp_path)
    result = import_spider2_lite(gold, tmp_path / "out")
    lines = {
        x["instance_id"]: x for x in map(json.loads, (tmp_path / "out" / "spider2_eval.jsonl").read_text().splitlines())
    }
    assert {i: (x["type"], x["db"]) for i, x in lines.items()} == {
        "bq001": ("BigQuery", "db_bq001"),
        "ga002": ("BigQuery", "db_ga002"),
        "local003": ("SQLite", "db_local003"),
        "sf_bq004": ("Snowflake", "db_sf_bq004"),
        "sf005": ("Snowflake", "db_sf005"),
    }
    assert result.routed == {"BigQuery": 2, "SQLite": 1, "Snowflake": 2}
    assert (tmp_path / "out" / "sf_bq004" / "gold.sql").is_file(), "bq004.sql belongs to sf_bq004"
    assert result.sqls == 3
    assert [p.message for p in result.problems] == ["stray.sql belongs to no imported instance; not imported"]
    assert "routed by" in result.to_text() and "2 on Snowflake" in result.to_text()


def test_import_snow_routes_everything_to_snowflake(tmp_path):
    gold = tmp_path / "snow"
    (gold / "exec_result").mkdir(parents=True)
    for iid in ("sf_bq001", "sf_local002"):
        (gold / "exec_result" / f"{iid}.csv").write_text(TABLE)
    write_lines(
        gold / "spider2snow_eval.jsonl",
        [{"instance_id": i, "condition_cols": [], "ignore_order": True} for i in ("sf_bq001", "sf_local002")],
    )
    tasks = tmp_path / "spider2-snow.jsonl"
    write_lines(tasks, [{"instance_id": "sf_bq001", "db_id": "GA4"}, {"instance_id": "sf_local002", "db_id": "F1"}])
    result = run_cli(
        "gold",
        "import-spider2-lite",
        "--from",
        gold,
        "--to",
        tmp_path / "out",
        "--eval-file",
        "spider2snow_eval.jsonl",
        "--tasks",
        tasks,
    )
    assert result.exit_code == 0, result.output
    assert "routed by" in result.output and "2 on Snowflake" in result.output
    lines = [json.loads(x) for x in (tmp_path / "out" / "spider2_eval.jsonl").read_text().splitlines()]
    assert {(x["type"], x["db"]) for x in lines} == {("Snowflake", "GA4"), ("Snowflake", "F1")}


@requires_shared(CORPUS)
def test_real_corpus_import_routes_all_instances_and_brings_every_gold_sql(tmp_path):
    source = CORPUS / "gold"
    result = import_spider2_lite(source, tmp_path / "gold")
    tasks = {
        x["instance_id"]: x["db"] for x in map(json.loads, (CORPUS / "spider2-lite.jsonl").read_text().splitlines())
    }
    lines = [json.loads(x) for x in (tmp_path / "gold" / "spider2_eval.jsonl").read_text().splitlines()]
    assert len(lines) == len(tasks) == sum(result.routed.values())
    assert all(line["db"] == tasks[line["instance_id"]] for line in lines)
    assert all(line["type"] in ("BigQuery", "SQLite", "Snowflake") for line in lines)
    assert result.sqls == len(os.listdir(source / "sql"))
    assert not [p for p in result.problems if p.message.endswith("not imported")]


def test_imported_routes_grade_each_instance_on_its_own_engine(tmp_path, monkeypatch):
    import sqlite3

    from evaluators.execution.executor import ExecConfig, Executor

    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    gold_src = _routed_folder(tmp_path)
    gold = tmp_path / "gold"
    import_spider2_lite(gold_src, gold)
    dbs = tmp_path / "dbs"
    dbs.mkdir()
    con = sqlite3.connect(dbs / "db_local003.sqlite")
    con.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL)")
    con.executemany("INSERT INTO t VALUES (?,?,?)", [(1, "x", 2.5), (2, "y", 3.5)])
    con.commit()
    con.close()
    flat = tmp_path / "flat"
    flat.mkdir()
    for iid in ("local003", "bq001", "sf_bq004"):
        (flat / f"{iid}.sql").write_text("SELECT a, b, c FROM t")
    executor = Executor(ExecConfig(output_dir=tmp_path / "work", db_dir=dbs, credentials_dir=tmp_path / "nocreds"))
    report = grade(flat, gold, options=Options(layout="flat", executor=executor))
    reasons = {i.instance_id: (i.reason, i.execution.get("backend")) for i in report.instances}
    assert reasons["local003"] == ("match", "sqlite")
    assert reasons["bq001"][0] in ("credentials_missing", "missing_extra")
    assert reasons["sf_bq004"][0] in ("credentials_missing", "missing_extra")
