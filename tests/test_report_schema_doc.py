"""docs/report-schema.md describes the report the grader really writes: every key and reason is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers_io import run_cli

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "report-schema.md").read_text()


def _documented(key: str) -> bool:
    return re.search(rf'"{re.escape(key)}"\s*:', DOC) is not None or f"`{key}`" in DOC


def test_every_key_of_a_real_report_is_in_the_schema_document(tmp_path):
    out = tmp_path / "report.json"
    result = run_cli(
        "--result-dir",
        ROOT / "example_submission_folder",
        "--gold-dir",
        ROOT / "gold",
        "--output",
        out,
        "--no-plot",
        "--work-dir",
        tmp_path / "w",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert f'"version": {report["version"]}' in DOC
    missing = [k for k in report["summary"] if not _documented(k)]
    missing += [k for i in report["instances"] for k in i if not _documented(k)]
    missing += [k for i in report["instances"] for k in i["execution"] if not _documented(k)]
    missing += [k for k in report["summary"]["provenance"] if not _documented(k)]
    assert not missing, f"undocumented keys: {sorted(set(missing))}"


def test_every_reason_is_documented():
    from evaluators.reporting.report import REASONS

    assert [k for k in REASONS if f"- `{k}`:" not in DOC] == []


def _fraction_keys() -> set[str]:
    row = next(line for line in DOC.splitlines() if line.startswith("| scores, pass rates, shares | **fraction**"))
    return set(re.findall(r"`([a-z_0-9*]+)`", row))


def test_bird_run_level_soft_f1_is_a_fraction_as_the_schema_says():
    """One unit per kind of figure: the run's Soft F1 was percent (75.0) beside the instances' fractions."""
    from types import SimpleNamespace

    from evaluators.bird.run import soft_f1_summary

    assert {"soft_f1", "soft_f1_unordered", "score", "ex_bird", "llmetric_q"} <= _fraction_keys()
    instances = [
        SimpleNamespace(answer_type="sql", execution={"soft_f1": 1.0, "soft_f1_unordered": 1.0}),
        SimpleNamespace(answer_type="sql", execution={"soft_f1": 0.5, "soft_f1_unordered": 0.25}),
    ]
    summary = soft_f1_summary(instances)
    assert (summary["soft_f1"], summary["soft_f1_unordered"]) == (0.75, 0.625)
