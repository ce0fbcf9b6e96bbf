"""Scorer versions by name: LiveSQLBench and BIRD-CRITIC's `remove_distinct` variants as presets of their
own (token by token vs BIRD-CRITIC's regular expression since 8264017, 2025-12-11), named in --help and the
report, chosen with `livesql --scorer`."""

from __future__ import annotations

import json

import pytest
from helpers_io import run_cli

from evaluators.errors import UsageError
from evaluators.livesql.helpers import Session, namespace
from evaluators.livesql.profiles import HARNESS_NAMES, PROFILES, profile_for

SQL = ["SELECT COUNT(DISTINCT status) FROM orders", "SELECT\nDISTINCT status FROM orders", "SELECT DISTINCT a"]
EXPECTED = {
    "space": ["SELECT COUNT(DISTINCT status) FROM orders", "SELECT\nDISTINCT status FROM orders", "SELECT a"],
    "whitespace": ["SELECT COUNT(DISTINCT status) FROM orders", "SELECT status FROM orders", "SELECT a"],
    "regex": ["SELECT COUNT( status) FROM orders", "SELECT\n status FROM orders", "SELECT  a"],
}


# BIRD-Interact's custom test cases see only execute_queries (profiles.py), so no remove_distinct to look at.
@pytest.mark.parametrize("preset", [p for p, f in PROFILES.items() if "remove_distinct" in HARNESS_NAMES[f.name]])
def test_a_test_case_sees_the_remove_distinct_of_its_preset(preset):
    profile = PROFILES[preset]
    session = Session(profile.engine, None, distinct=profile.remove_distinct)
    seen = namespace(session, profile.name, None)["remove_distinct"](SQL)
    assert seen == EXPECTED[profile.remove_distinct]


def test_bird_critic_postgresql_is_the_regex_now_and_the_tokens_before_8264017():
    assert profile_for("critic", "postgresql").remove_distinct == "regex"
    assert "8264017" in profile_for("critic", "postgresql").scorer
    before = profile_for("critic", "postgresql", "critic-before-2025-12-11")
    assert before.remove_distinct == "whitespace" and before.name == "critic"
    assert profile_for("livesql", "postgresql").remove_distinct == "space"  # LiveSQLBench kept the tokens
    with pytest.raises(UsageError, match="not a livesql scorer on sqlite"):
        profile_for("livesql", "sqlite", "critic")


def test_the_livesql_report_and_help_name_the_scorer(tmp_path):
    from livesql_generator import write

    generated = write(tmp_path / "gen")
    out = tmp_path / "live.json"
    args = ["livesql", "--jsonl_file", generated["critic"], "--db_root", generated["root"], "--benchmark", "critic"]
    result = run_cli(*args, "--work-dir", tmp_path / "work", "--output", out)
    assert result.exit_code == 0, result.output
    scorers = json.loads(out.read_text())["summary"]["provenance"]["scorers"]
    assert scorers == {"critic-sqlite": PROFILES["critic-sqlite"].scorer}
    assert "scorer: critic-sqlite: bird-bench/BIRD-CRITIC-1 evaluation/src/sqlite_test_utils.py" in result.output
    helped = "".join(run_cli("livesql", "--help").output.split())
    assert all("".join(p.scorer.split()) in helped for p in PROFILES.values())
