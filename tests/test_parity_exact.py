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
