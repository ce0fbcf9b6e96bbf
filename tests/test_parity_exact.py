"""Spider 1's exact set match, components, hardness and multi-turn tables equal test-suite-sql-eval's, per
question and line for line, on data from tests/parity_exact.py (official results recorded in
tests/data/parity/exact.json by running the official `evaluation.py --etype all` unmodified)."""

import json

import parity_exact
import pytest

from evaluators.testsuite import official_tables
from evaluators.testsuite.spider_match import judge
from evaluators.testsuite.spider_schema import database_schema, read_tables

RECORDED = json.loads(parity_exact.RECORDED.read_text())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity_exact")
    return root, parity_exact.build(root)


def _ours(root, sessions) -> list[list[dict]]:
    schema = database_schema(root / "database" / parity_exact.DB / f"{parity_exact.DB}.sqlite")
    kmap = read_tables(root / "tables.json")[parity_exact.DB]
    return [
        [judge(gold, pred.split("\t")[0].strip().replace("value", "1"), schema, kmap) for gold, pred in session]
        for session in sessions
    ]


def _official_partial(entry: dict) -> dict:
    return {k: [v["acc"], v["rec"], v["f1"], v["label_total"], v["pred_total"]] for k, v in entry.items()}


@pytest.mark.parametrize("name", parity_exact.SETS)
def test_each_question_equals_the_official(folder, name):
    root, built = folder
    ours = [q for session in _ours(root, built[name]) for q in session]
    official = RECORDED[name]["questions"]
    assert len(ours) == len(official)
    differ = [
        (k, q["hardness"], q["exact_match"], o["hardness"], o["exact"])
        for k, (q, o) in enumerate(zip(ours, official, strict=True))
        if (q["hardness"], q["exact_match"], _official_partial(q["components"]))
        != (o["hardness"], o["exact"], o["partial"])
    ]
    assert not differ


@pytest.mark.parametrize("name", parity_exact.SETS)
def test_the_printed_tables_equal_the_official_line_for_line(folder, name):
    root, built = folder
    official = RECORDED[name]
    flat = iter(official["questions"])
    sessions = [
        [{"hardness": q["hardness"], "exact": q["exact_match"], "partial": q["components"], "exec": next(flat)["exec"]}
         for q in session]
        for session in _ours(root, built[name])
    ]  # fmt: skip
    table = official_tables.scores(sessions, "all")
    text = official_tables.render(table, "all", with_turns=len(sessions) > 1)
    assert text.splitlines() == official["tables"].splitlines()


def test_the_command_prints_the_official_tables_and_each_question_its_fields(folder, tmp_path):
    from helpers_io import run_cli

    root, built = folder
    out = tmp_path / "ts.json"
    args = ["--gold", root / "multi_gold.txt", "--pred", root / "multi_pred.txt", "--db", root / "database"]
    result = run_cli("test-suite", *args, "--table", root / "tables.json", "--etype", "all", "--output", out)
    assert result.exit_code == 0, result.output
    official = RECORDED["multi"]
    printed = result.output[result.output.index("\n" + " " * 21 + "easy") + 1 :].splitlines()
    assert printed[: len(official["tables"].splitlines())] == official["tables"].splitlines()
    instances = json.loads(out.read_text())["instances"]
    assert [i["metadata"]["exact_match"] for i in instances] == [q["exact"] for q in official["questions"]]
    assert [i["metadata"]["hardness"] for i in instances] == [q["hardness"] for q in official["questions"]]
    sessions = [all(q["exact"] for q in s) for s in _sessions(official["questions"], built["multi"])]
    assert [i["metadata"]["interaction_match"] for i in instances] == [
        int(sessions[i["metadata"]["session"]]) for i in instances
    ]


def _sessions(flat: list, shape: list) -> list[list]:
    items = iter(flat)
    return [[next(items) for _ in session] for session in shape]


def test_exact_match_needs_a_tables_json_that_describes_every_gold_database(folder, tmp_path):
    from helpers_io import run_cli

    root, _ = folder
    args = ["--gold", root / "single_gold.txt", "--pred", root / "single_pred.txt", "--db", root / "database"]
    result = run_cli("test-suite", *args, "--etype", "match")
    assert result.exit_code == 2 and "--etype match needs --table" in result.output
    other = tmp_path / "tables.json"
    other.write_text(json.dumps([{**parity_exact.tables_json()[0], "db_id": "other_db"}]))
    result = run_cli("test-suite", *args, "--etype", "all", "--table", other)
    assert result.exit_code == 2 and "not described in" in result.output and "concert_1" in result.output


def _one_question(root, gold: str, pred: str):
    (root / "g.txt").write_text(f"{gold}\t{parity_exact.DB}\n")
    (root / "p.txt").write_text(pred + "\n")
    return ["--gold", root / "g.txt", "--pred", root / "p.txt", "--table", root / "tables.json"]


def test_match_runs_no_query_and_its_verdict_is_the_exact_set_match(tmp_path):
    """The scorer's `--etype match` executes nothing: values differ (execution 0) but the structure is equal, and
    a suite database that is not SQLite at all (it would fail any query) is never opened."""
    from helpers_io import run_cli

    parity_exact.build(tmp_path)
    (tmp_path / "database" / parity_exact.DB / "broken_variant.sqlite").write_bytes(b"not a database")
    args = _one_question(tmp_path, "SELECT name FROM singer WHERE age > 30", "SELECT name FROM singer WHERE age > 40")
    out = tmp_path / "m.json"
    result = run_cli("test-suite", *args, "--db", tmp_path / "database", "--etype", "match", "--output", out)
    assert result.exit_code == 0, result.output
    [instance] = json.loads(out.read_text())["instances"]
    assert (instance["score"], instance["reason"], instance["strict_score"]) == (1.0, "match", 1.0)
    assert instance["execution"] == {} and instance["metadata"]["prediction_parse"] == "parsed"
    assert "exact match (test-suite-sql-eval's figure" in result.output
    result = run_cli("test-suite", *args, "--db", tmp_path / "database", "--etype", "all", "--output", out)
    [instance] = json.loads(out.read_text())["instances"]
    assert instance["reason"] == "unreadable_gold" and "broken_variant" in instance["detail"]  # `all` executes


def test_match_verdicts_say_what_differs(tmp_path):
    from helpers_io import run_cli

    parity_exact.build(tmp_path)
    cases = [
        ("SELECT name FROM singer", "SELECT name, age FROM singer", "structure_mismatch", "select"),
        ("SELECT name FROM singer", "SELECT s.name AS n FROM singer AS s", "unreadable_prediction", "eval_err_num"),
    ]
    for gold, pred, reason, words in cases:
        out = tmp_path / "m.json"
        args = _one_question(tmp_path, gold, pred)
        result = run_cli("test-suite", *args, "--db", tmp_path / "database", "--etype", "match", "--output", out)
        [instance] = json.loads(out.read_text())["instances"]
        assert (instance["score"], instance["reason"]) == (0.0, reason), result.output
        assert words in instance["detail"]


def test_progress_bar_for_each_datapoint_says_each_database_of_a_question(tmp_path):
    """The scorer's --progress_bar_for_each_datapoint: per question, progress over its suite's databases."""
    import shutil

    from helpers_io import run_cli

    parity_exact.build(tmp_path)
    folder = tmp_path / "database" / parity_exact.DB
    shutil.copy(folder / f"{parity_exact.DB}.sqlite", folder / "variant_b.sqlite")
    args = [
        *_one_question(tmp_path, "SELECT name FROM singer", "SELECT name FROM singer"),
        "--db",
        tmp_path / "database",
    ]
    quiet = run_cli("test-suite", *args, "--output", tmp_path / "a.json")
    assert quiet.exit_code == 0 and "database 1/2" not in quiet.output
    for spelling in ("--progress_bar_for_each_datapoint", "--progress-bar-for-each-datapoint"):
        result = run_cli("test-suite", *args, spelling, "--output", tmp_path / "b.json")
        assert result.exit_code == 0, result.output
        assert f"question 0 ({parity_exact.DB}): database 1/2 (" in result.output
        assert f"question 0 ({parity_exact.DB}): database 2/2 (" in result.output


def test_breakdown_labels_are_words_and_no_result_files_are_left_in_the_work_folder(folder, tmp_path):
    """`prediction_parse` reads `parsed` / `unparseable` in the breakdowns (not True/False); the queries' rows come
    back through the execution layer's RowRunner, so the work folder holds no result CSVs."""
    from helpers_io import run_cli

    root, _ = folder
    out, work = tmp_path / "ts.json", tmp_path / "work"
    args = ["--gold", root / "single_gold.txt", "--pred", root / "single_pred.txt", "--db", root / "database"]
    result = run_cli("test-suite", *args, "--table", root / "tables.json", "--etype", "all", "--output", out,
                     "--work-dir", work)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert set(json.loads(out.read_text())["summary"]["breakdowns"]["prediction_parse"]) == {"parsed", "unparseable"}
    assert not list(work.rglob("*.csv"))


CLASSIC = json.loads(parity_exact.RECORDED_CLASSIC.read_text())


@pytest.mark.parametrize("name", parity_exact.SETS)
def test_the_classic_scorer_equals_taoyds_spider_per_question_and_line_for_line(folder, tmp_path, name):
    """`--scorer spider` against taoyds/spider's evaluation.py --etype all run unmodified (recorded): hardness,
    exact verdict, every component and the execution check per question, `eval_err_num`, and the printed
    tables line for line (the multi-turn file is one flat list there: no sessions, no turn tables)."""
    from helpers_io import run_cli

    root, _ = folder
    out = tmp_path / "classic.json"
    args = ["--gold", root / f"{name}_gold.txt", "--pred", root / f"{name}_pred.txt", "--db", root / "database"]
    result = run_cli("test-suite", *args, "--table", root / "tables.json", "--etype", "all", "--scorer", "spider",
                     "--output", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    official = CLASSIC[name]
    report = json.loads(out.read_text())
    ours = [
        (i["metadata"]["hardness"], i["metadata"]["exact_match"], _official_partial(i["metadata"]["components"]),
         int(i["scores"]["spider"]))
        for i in report["instances"]
    ]  # fmt: skip
    assert ours == [(q["hardness"], q["exact"], q["partial"], q["exec"]) for q in official["questions"]]
    assert (
        report["summary"]["semantics"] == "spider"
        and "taoyds/spider" in report["summary"]["provenance"]["scorers"]["spider"]
    )
    assert f"eval_err_num:{official['eval_err_num']}\n" in result.output
    printed = result.output[result.output.index("\n" + " " * 21 + "easy") + 1 :].splitlines()
    assert printed[: len(official["tables"].splitlines())] == official["tables"].splitlines()


def test_the_classic_parser_reads_limit_as_an_integer(folder):
    """taoyds/spider's parse_limit is `int(toks[idx-1])`: a LIMIT that is not an integer makes the prediction
    unreadable there, while test-suite-sql-eval's copy reads every LIMIT as 1."""
    from evaluators.testsuite.spider_match import judged

    root, _ = folder
    schema = database_schema(root / "database" / parity_exact.DB / f"{parity_exact.DB}.sqlite")
    kmap = read_tables(root / "tables.json")[parity_exact.DB]
    gold = "SELECT name FROM singer LIMIT 3"
    for pred, classic in (
        ("SELECT name FROM singer LIMIT value", "unparseable"),
        ("SELECT name FROM singer LIMIT 7", "parsed"),
    ):
        assert judged(gold, pred, schema, kmap).fields["prediction_parse"] == "parsed"
        assert judged(gold, pred, schema, kmap, limit_int=True).fields["prediction_parse"] == classic
    assert judged(gold, "SELECT name FROM singer LIMIT 7", schema, kmap, limit_int=True).pred["limit"] == 7
