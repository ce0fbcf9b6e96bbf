"""Verdict-for-verdict agreement with the official scorers, on data from the generators in tests/parity_*.py.

The official verdicts were recorded by running the official scripts unmodified (see each generator's
docstring for the command); CI compares against the recorded JSON in tests/data/parity/.
"""

import json

import pytest
import parity_testsuite

pytest.importorskip("sqlparse")


@pytest.fixture(scope="module")
def spider_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity_ts")
    parity_testsuite.build(root)
    return root


@pytest.mark.parametrize("mode", list(parity_testsuite.MODES))
def test_test_suite_verdicts_equal_the_official(spider_folder, tmp_path, mode):
    official = json.loads(parity_testsuite.RECORDED.read_text())[mode]
    ours = parity_testsuite.project_verdicts(spider_folder, tmp_path, mode)
    differ = [(i, parity_testsuite.FIXED[i], ours[i], official[i]) for i in range(len(official)) if ours[i] != official[i]]
    assert len(ours) == len(official) and not differ


def test_plug_value_never_runs_past_its_cap(spider_folder, tmp_path):
    from evaluators.testsuite.run import grade_test_suite

    report = grade_test_suite(
        spider_folder / "gold.txt",
        spider_folder / "pred.txt",
        spider_folder / "database",
        tmp_path,
        plug_value=True,
        plug_value_cap=1,
    )
    plugged = [i.execution["plug_value"] for i in report.instances if "plug_value" in (i.execution or {})]
    assert plugged and all(p["tried"] <= 1 for p in plugged)
    capped = [p for p in plugged if p["variants"] > 1]
    assert capped and all("cap" in p.get("cap_hit", "") or "matched" in p for p in capped)
