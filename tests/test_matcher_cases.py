"""Each matcher's behaviour as a readable table: tests/cases/<matcher>.yaml."""

from pathlib import Path

import pytest
from casefolders import SEMANTICS, load_cases, write_instance

from evaluators import grade

CASES = Path(__file__).parent / "cases"
TABLES = sorted(CASES.glob("*.yaml"))


def _params():
    for path in TABLES:
        for case in load_cases(path):
            yield pytest.param(case, id=f"{path.stem}: {case['name']}")


@pytest.mark.parametrize("case", list(_params()))
def test_case_table(case, tmp_path):
    pred_files = case.get("pred_files", {})
    answer = case.get("answer", next(iter(pred_files), None))
    answer_type = case.get("answer_type", "file" if pred_files else "answer")
    write_instance(tmp_path, "case", case["spec"], answer_type, answer, case.get("gold_files"), pred_files)
    report = grade(tmp_path / "sub", tmp_path / "gold", progress=False)
    (instance,) = report.instances
    got = {name: int(instance.scores[name]) for name in SEMANTICS}
    assert got == case["expect"], f"{instance.reason}: {instance.detail} | strict: {instance.strict_detail}"


def test_every_matcher_has_a_table():
    assert {p.stem for p in TABLES} >= {"string_match", "number_match", "table_match", "duckdb_match", "tables_match"}


def test_a_typo_in_a_case_table_fails(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "matcher: string_match\ncases:\n  - name: x\n    spec: {func: string_match}\n"
        "    answr: oops\n    expect: {spider2: 1, spider2-2024: 1, spider2-lite: 1, strict: 1}\n"
    )
    with pytest.raises(ValueError, match="unknown keys"):
        load_cases(bad)
