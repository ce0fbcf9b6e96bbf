"""Valid@1 / Valid@k in grading: .sql attempts compiled on the instance's database, apart from execution errors."""

from __future__ import annotations

import json
import sqlite3

import duckdb
import pytest
from casefolders import write_instance

from evaluators import grade
from evaluators.execution.executor import ExecConfig, Executor
from evaluators.grading.instance import Options

SPEC = {"func": "execution_match", "parameters": {"gold_sql": "gold.sql"}}
GOLD_SQL = "SELECT region, sum(amount) FROM sales GROUP BY region"
RIGHT = "SELECT region, sum(amount) AS total FROM sales GROUP BY region"
WRONG = "SELECT region, max(amount) FROM sales GROUP BY region"
MISSING_COLUMN = "SELECT region, sum(price) FROM sales GROUP BY region"
# Valid, but counts far past the 2 s timeout: SQLite interrupts it.
ENDLESS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) "
    "SELECT region, count(*) FROM sales, c GROUP BY region"
)


@pytest.fixture
def dbs(tmp_path):
    folder = tmp_path / "dbs"
    folder.mkdir()
    con = sqlite3.connect(folder / "shop.sqlite")
    con.execute("CREATE TABLE sales (region TEXT, amount INTEGER)")
    con.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 10), ("south", 32), ("north", 7)])
    con.commit()
    con.close()
    con = duckdb.connect(str(folder / "shop.duckdb"))
    con.execute("CREATE TABLE sales AS SELECT * FROM (VALUES ('north', 10), ('south', 32)) v(region, amount)")
    con.close()
    return folder


def add_attempts(root, iid, attempts: list[str], metadata: dict, gold_sql: str = GOLD_SQL) -> None:
    """An instance whose submission line lists one .sql file per attempt."""
    files = {f"try{k + 1}.sql": sql for k, sql in enumerate(attempts)}
    write_instance(root, iid, SPEC, "file", None, {"gold.sql": gold_sql}, files, metadata)
    line = {"instance_id": iid, "answer_type": "file", "attempts": list(files)}
    with open(root / "sub" / "results_metadata.jsonl", "a") as handle:
        handle.write(json.dumps(line) + "\n")


def run(root, dbs, **options):
    # An empty credentials folder: a cloud instance here must fail for want of credentials, never reach a server.
    executor = Executor(
        ExecConfig(output_dir=root / "work", db_dir=dbs, timeout_s=2, credentials_dir=root / "no_credentials")
    )
    report = grade(root / "sub", root / "gold", options=Options(executor=executor, ves_iterations=3, **options))
    return report, {i.instance_id: i for i in report.instances}


def test_three_attempts_with_a_recovery_a_regression_and_validity(tmp_path, dbs):
    lite = {"type": "SQLite", "db": "shop"}
    add_attempts(tmp_path, "recovered", [MISSING_COLUMN, WRONG, RIGHT], {**lite, "difficulty": "hard"})
    add_attempts(tmp_path, "regressed", [RIGHT, ENDLESS, WRONG], {**lite, "difficulty": "easy"})
    add_attempts(tmp_path, "steady", [RIGHT, RIGHT, RIGHT], {**lite, "difficulty": "easy"})
    report, by_id = run(tmp_path, dbs)

    recovered, regressed = by_id["recovered"].attempts, by_id["regressed"].attempts
    assert [a["score"] for a in recovered] == [0, 0, 1] and [a["score"] for a in regressed] == [1, 0, 0]
    assert [a["valid"] for a in recovered] == [False, True, True]
    assert recovered[0]["validity"] == "unknown_column" and recovered[0]["reason"] == "exec_error"
    # The timed-out attempt is an execution error, not an invalid query.
    assert regressed[1]["reason"] == "timeout" and regressed[1]["valid"] is True
    assert [a["valid"] for a in regressed] == [True, True, True]

    attempts = report.summary.attempts
    overall = attempts["score"]["overall"]
    assert overall["pass_at_1"] == pytest.approx(2 / 3) and overall["pass_at_final"] == pytest.approx(2 / 3)
    assert overall["n_recovered"] == 1 and overall["recovery_rate"] == 1.0 and overall["n_regressions"] == 1
    validity = attempts["validity"]["overall"]
    assert validity["valid_at_1"] == pytest.approx(2 / 3)
    assert validity["valid_at_k"] == {1: pytest.approx(2 / 3), 2: 1.0, 3: 1.0}
    assert validity["first_attempt_reasons"] == {"unknown_column": 1, "valid": 2}
    assert attempts["validity"]["by_difficulty"]["hard"]["valid_at_1"] == 0.0
    assert attempts["validity"]["by_difficulty"]["easy"]["valid_at_1"] == 1.0

    metrics = report.summary.execution_metrics
    assert metrics["valid_at_1"] == pytest.approx(2 / 3) and metrics["valid_at_k"][3] == 1.0
    text = report.to_text()
    assert "Valid@1 66.67%" in text and "Valid@3 100.00%" in text
    # VES times the scored (last) attempt: right for "recovered" and "steady", wrong for "regressed".
    assert by_id["recovered"].execution["ves"]["correct"] is True and metrics["ves_correct"] == 2


def test_llmetric_q_of_an_instance_is_its_first_attempts(tmp_path, dbs):
    add_attempts(tmp_path, "recovered", [MISSING_COLUMN, RIGHT], {"type": "SQLite", "db": "shop"})
    _, by_id = run(tmp_path, dbs)
    i = by_id["recovered"]
    assert i.score == 1.0
    # The first attempt: not right, not valid, no rows; only its text resembles the gold.
    assert 0 < i.execution["llmetric_q"] <= 0.1


def test_single_sql_answers_count_as_one_attempt(tmp_path, dbs):
    lite = {"type": "SQLite", "db": "shop"}
    write_instance(tmp_path, "ok", SPEC, "file", "a.sql", {"gold.sql": GOLD_SQL}, {"a.sql": RIGHT}, lite)
    write_instance(tmp_path, "syntax", SPEC, "file", "a.sql", {"gold.sql": GOLD_SQL}, {"a.sql": "SELEC 1"}, lite)
    write_instance(
        tmp_path, "table", SPEC, "file", "a.sql", {"gold.sql": GOLD_SQL}, {"a.sql": "SELECT * FROM nowhere"}, lite
    )
    write_instance(tmp_path, "no_file", SPEC, "file", "absent.sql", {"gold.sql": GOLD_SQL}, {}, lite)
    report, by_id = run(tmp_path, dbs)
    assert report.summary.attempts is None
    reasons = {iid: i.execution["validity"]["reason"] for iid, i in by_id.items()}
    assert reasons == {"ok": "valid", "syntax": "syntax_error", "table": "unknown_table", "no_file": "invalid"}
    assert by_id["no_file"].reason == "missing_prediction"
    metrics = report.summary.execution_metrics
    assert metrics["valid_at_1"] == pytest.approx(1 / 4) and metrics["validity_instances"] == 4
    assert "Valid@1 25.00%" in report.to_text()


def test_duckdb_attempts_are_checked_on_duckdb(tmp_path, dbs):
    add_attempts(tmp_path, "duck", [MISSING_COLUMN, RIGHT], {"type": "DuckDB", "db": "shop"})
    _, by_id = run(tmp_path, dbs)
    assert [a["validity"] for a in by_id["duck"].attempts] == ["unknown_column", "valid"]
    assert by_id["duck"].score == 1.0


def test_cloud_backends_are_not_checked(tmp_path, dbs, monkeypatch):
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    add_attempts(tmp_path, "cloud", [RIGHT], {"type": "Bigquery", "db": "proj.data"})
    add_attempts(tmp_path, "local", [RIGHT], {"type": "SQLite", "db": "shop"})
    report, by_id = run(tmp_path, dbs)
    assert by_id["cloud"].attempts[0]["valid"] is None and by_id["cloud"].attempts[0]["validity"] == "not_checked"
    assert by_id["cloud"].reason in ("credentials_missing", "missing_extra")  # it cannot run here either
    assert "llmetric_q" not in by_id["cloud"].execution or by_id["cloud"].execution["llmetric_q"] is None
    metrics = report.summary.execution_metrics
    assert metrics["valid_at_1"] == 1.0 and metrics["validity_undetermined_at_k"][1] == 1


def test_text_answers_have_no_validity(tmp_path, dbs):
    write_instance(tmp_path, "text", {"func": "string_match", "parameters": {"gold": "x"}}, "answer", "x")
    report, by_id = run(tmp_path, dbs)
    assert "validity" not in by_id["text"].execution and report.summary.execution_metrics is None
