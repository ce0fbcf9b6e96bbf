"""verl's reward shapes: generated databases and queries, hostile writes, timeouts that stop."""

from __future__ import annotations

import numpy as np
import pytest
from processes import busy_descendants
from rlcases import folder_fingerprint, make_database, oracle, query_pairs

from evaluators.rewards import verl
from evaluators.rewards.verl import compute_score, compute_score_batch, extract_sql

RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"


@pytest.fixture(scope="module")
def databases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dbs")
    return [make_database(folder / f"shop{seed}.sqlite", seed) for seed in (1, 2)]


def fenced(sql: str) -> str:
    return f"<think>the tables are customer and orders</think>\nHere it is:\n```sql\n{sql}\n```"


@pytest.mark.parametrize(
    "completion, expected",
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("```SQL\nSELECT 1;\n``` then ```sql\nSELECT 2\n```", "SELECT 2"),  # the last fence
        ("<think>maybe ```sql\nSELECT 1\n``` no</think> SELECT 3;", "SELECT 1"),  # a fence wins over </think>
        ("<think>a</think>x<think>b</think>\n SELECT 4 ", "SELECT 4"),  # after the last </think>
        ("SELECT 5", None),  # neither a fence nor </think>
        ("<think>only thinking</think>   ", None),
        ("```python\nprint(1)\n```", None),
        ("```sql\nSELECT 6", None),  # an unclosed fence is not a block
        ("```sql SELECT 7```", "SELECT 7"),
        ("```sqlite\nSELECT 8\n```", None),  # another language's fence
    ],
)
def test_sql_extraction(completion, expected):
    assert extract_sql(completion) == expected


def test_scores_equal_the_oracle_on_generated_pairs(databases):
    items = [(db, gold, pred) for seed, db in enumerate(databases) for gold, pred in query_pairs(seed)]
    expected = [oracle(db, gold, pred) for db, gold, pred in items]
    assert 0 < sum(expected) < len(expected)  # the set has right and wrong answers
    results = compute_score_batch(
        ["bird"] * len(items),
        [fenced(p) for _, _, p in items],
        [g for _, g, _ in items],
        [{"db_path": str(db)} for db, _, _ in items],
    )
    assert [r["score"] for r in results] == expected
    singles = [compute_score("spider", fenced(p), g, {"db_path": str(db)})["score"] for db, g, p in items[:12]]
    assert singles == expected[:12]


def test_batch_takes_verl_keyword_arguments_and_numpy_arrays(databases):
    db = str(databases[0])
    gold = "SELECT count(*) FROM orders"
    results = compute_score_batch(
        data_sources=np.array(["synsql_2.5m", "text2sql"], dtype=object),
        solution_strs=np.array([fenced("SELECT count(id) FROM orders"), "no sql here"], dtype=object),
        ground_truths=np.array([gold, gold], dtype=object),
        extra_infos=np.array([{"db_path": db}, {"db_path": db}], dtype=object),
    )
    assert results[0] == {"score": 1.0, "format_ok": True, "executed": True, "error": "", "f1": 1.0, "em": 1.0}
    assert results[1] == {"score": 0.0, "format_ok": False, "executed": False, "error": "no_sql", "f1": 0.0, "em": 0.0}


def test_database_by_db_id_and_db_root(tmp_path):
    make_database((tmp_path / "bank").mkdir() or tmp_path / "bank" / "bank.sqlite", 7)  # Spider's layout
    info = {"db_id": "bank", "db_root": str(tmp_path)}
    assert compute_score("text2sql", fenced("SELECT count(*) FROM customer"), "SELECT 500", info)["score"] == 1.0
    missing = compute_score("text2sql", fenced("SELECT 1"), "SELECT 1", {"db_id": "nope", "db_root": str(tmp_path)})
    assert missing["score"] == 0.0 and missing["error"].startswith("no_database: no database file for 'nope'")


def test_a_wrong_database_is_said_even_when_the_completion_holds_no_sql(tmp_path):
    """Early in training a model writes no SQL: a wrong db_path must still read as the set-up's fault."""
    result = compute_score("text2sql", "I do not know", "SELECT 1", {"db_path": str(tmp_path / "missing.sqlite")})
    assert result["score"] == 0.0 and result["format_ok"] is False
    assert result["error"].startswith("no_database: ") and "missing.sqlite" in result["error"]


def test_an_unknown_data_source_warns_once_and_names_the_known_ones():
    with pytest.warns(UserWarning, match="unknown_data_source: chess-v2 .*known prefixes: text2sql") as caught:
        first = compute_score("chess-v2", "e4", "e4")
        compute_score("chess-v2", "e5", "e5")
    assert len(caught) == 1
    assert first["score"] == 0.0 and verl.error_kind(first["error"]) == "unknown_data_source"


HOSTILE = [
    "DELETE FROM customer WHERE region = 'north' RETURNING id, name",
    "UPDATE customer SET name = name WHERE region = 'north' RETURNING id, name",
    "INSERT INTO customer SELECT id + 100000, name, region, score FROM customer WHERE region = 'north' "
    "RETURNING id - 100000, name",
    "PRAGMA user_version = 7",
    "PRAGMA journal_mode = WAL",
    "PRAGMA query_only = 0",
    "PRAGMA cache_size = 10",
    "CREATE INDEX idx_region ON customer(region)",
    "CREATE TEMP TABLE t AS SELECT id, name FROM customer WHERE region = 'north'",
    "DROP TABLE orders",
    "ALTER TABLE customer ADD COLUMN x INTEGER",
    "VACUUM",
    "ANALYZE",
    "REINDEX",
    "BEGIN",
    "ATTACH DATABASE 'elsewhere.sqlite' AS other",
    "CREATE VIEW v AS SELECT 1",
    "UPDATE sqlite_master SET sql = sql RETURNING name",
    "SELECT 1; DELETE FROM orders",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_writes_score_zero_and_change_nothing(tmp_path, sql):
    db = make_database(tmp_path / "shop.sqlite", 3)
    before = folder_fingerprint(tmp_path)
    gold = "SELECT id, name FROM customer WHERE region = 'north'"
    if sql.startswith(("DELETE", "UPDATE customer", "INSERT")):  # the usual BEGIN-then-rollback scorer gives 1
        assert oracle(db, gold, sql) == 1.0
    result = compute_score("bird", fenced(sql), gold, {"db_path": str(db)})
    expected = "multiple_statements" if ";" in sql else "write"
    assert result["score"] == 0.0 and result["error"] == expected, result
    assert folder_fingerprint(tmp_path) == before


def test_reading_pragmas_still_run(tmp_path):
    db = make_database(tmp_path / "shop.sqlite", 4)
    gold = "SELECT name FROM pragma_table_info('customer')"
    result = compute_score("bird", fenced("PRAGMA table_info(customer)"), gold, {"db_path": str(db)})
    assert result["executed"] and result["score"] == 0.0  # six columns of rows vs one: executed, not equal
    same = compute_score(
        "bird", fenced("SELECT name FROM pragma_table_info('customer') ORDER BY cid DESC"), gold, {"db_path": str(db)}
    )
    assert same["score"] == 1.0


def test_timeouts_score_zero_and_leave_nothing_running(databases):
    db = str(databases[0])
    results = compute_score_batch(
        ["bird"] * 4,
        [fenced(RUNAWAY)] * 3 + [fenced("SELECT 1")],
        ["SELECT 1"] * 4,
        [{"db_path": db, "timeout_s": 0.5}] * 4,
    )
    assert [r["error"] for r in results] == ["timeout"] * 3 + [""]
    assert [r["score"] for r in results] == [0.0, 0.0, 0.0, 1.0]
    assert busy_descendants(1.0) < 0.2  # idle workers sleep; nothing burns CPU after the call returned


def test_gold_results_are_cached_per_database_and_sql(databases):
    verl.close_pool()
    db0, db1 = (str(d) for d in databases)
    golds = ["SELECT count(*) FROM orders", "SELECT max(qty) FROM orders"]
    items = [(g, db) for g in golds for db in (db0, db1)] * 5
    compute_score_batch(
        ["bird"] * len(items),
        [fenced("SELECT 1")] * len(items),
        [g for g, _ in items],
        [{"db_path": db} for _, db in items],
    )
    assert verl.runner().gold_cache_size() == 4


def test_a_broken_sample_does_not_stop_the_batch(databases):
    db = str(databases[0])
    results = compute_score_batch(
        ["bird", "bird"],
        [fenced("SELECT 1")] * 2,
        ["SELECT 1"] * 2,
        [{"db_path": db, "timeout_s": "soon"}, {"db_path": db}],
    )
    assert results[0]["score"] == 0.0 and results[0]["error"].startswith("internal: ValueError")
    assert results[1]["score"] == 1.0


def test_a_failing_gold_is_named(databases):
    result = compute_score("bird", fenced("SELECT 1"), "SELECT nope FROM nowhere", {"db_path": str(databases[0])})
    assert result["score"] == 0.0 and result["error"] == "gold_exec_error"


def test_qa_and_math_sources_use_the_answer_rewards(monkeypatch):
    import evaluators.rewards.verl

    # warned once per process: another test of this worker may have scored a "chess" sample already
    monkeypatch.setattr(evaluators.rewards.verl, "_warned_sources", set())
    assert compute_score("gsm8k", r"so the total is \boxed{72}", "72")["score"] == 1.0
    assert compute_score("math", r"\boxed{1/2}", "0.5")["score"] == 1.0
    assert compute_score("math", r"\boxed{3}", "0.5")["score"] == 0.0
    qa = compute_score("hotpotqa", "the big cat", "the big red cat")
    assert qa["score"] == pytest.approx(0.8) and qa["em"] == 0.0
    tool = [{"role": "tool", "content": "42"}]
    assert compute_score("math", r"\boxed{41}", "42", {"trajectory": tool})["score"] == pytest.approx(0.1)
    assert compute_score("qa", "Paris", "Paris", {"trajectory": [{"role": "user", "content": "q"}]})["score"] == 0.0
    with pytest.warns(UserWarning, match="unknown_data_source: chess"):
        unknown = compute_score("chess", "e4", "e4")
    assert unknown["score"] == 0.0 and unknown["error"].startswith("unknown_data_source: chess")


def test_verl_loads_the_entry_file_by_path(databases):
    import importlib.util
    from pathlib import Path

    import evaluators.rewards

    path = Path(evaluators.rewards.__file__).with_name("verl_entry.py")
    spec = importlib.util.spec_from_file_location("custom_module", path)  # as verl's custom_reward_function does
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.compute_score(
        "bird", fenced("SELECT count(*) FROM orders"), "SELECT 2000", {"db_path": str(databases[0])}
    )
    assert result["score"] == 1.0


def test_trl_grpo_reward_function(databases):
    from evaluators.rewards.trl import sql_execution_reward

    db = str(databases[0])
    completions = [
        [{"role": "assistant", "content": fenced("SELECT count(*) FROM orders")}],
        [{"role": "assistant", "content": fenced("SELECT count(*) FROM customer")}],
        [],
    ]
    scores = sql_execution_reward(completions, ground_truth=["SELECT 2000"] * 3, db_path=[db] * 3, prompts=["q"] * 3)
    assert scores == [1.0, 0.0, 0.0]


def test_a_duckdb_database_works_the_same(tmp_path):
    import duckdb

    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT range AS a FROM range(10)")
    con.close()
    before = folder_fingerprint(tmp_path)
    info = {"db_path": str(path), "backend": "duckdb"}
    gold = "SELECT a FROM t WHERE a < 3"
    assert compute_score("bird", fenced("SELECT a FROM t WHERE a <= 2 ORDER BY a DESC"), gold, info)["score"] == 1.0
    assert compute_score("bird", fenced("DELETE FROM t WHERE a < 3 RETURNING a"), gold, info)["error"] == "write"
    outside = compute_score("bird", fenced("SELECT * FROM read_csv('/etc/passwd')"), gold, info)
    assert outside["score"] == 0.0 and not outside["executed"]
    assert folder_fingerprint(tmp_path) == before


def test_every_source_gives_the_same_keys_with_the_same_types(databases):
    """verl 0.9's reward loop takes the first sample's keys for the batch (a qa sample first raised KeyError 'f1'
    on the SQL ones; last, its f1/em were dropped); the batch manager stacks each key over the batch."""
    db = {"db_path": str(databases[0])}
    samples = [
        ("qa", "the big cat", "the big red cat", None),
        ("bird", fenced("SELECT count(*) FROM orders"), "SELECT 2000", db),
        ("bird", "no sql", "SELECT 1", db),
        ("math", r"\boxed{3}", "3", None),
        ("chess", "e4", "e4", None),
        ("bird", fenced("SELECT 1"), "SELECT 1", {"db_path": 5}),  # a broken sample
    ]
    results = compute_score_batch(*map(list, zip(*samples, strict=True)))
    singles = [compute_score(*sample) for sample in samples]
    for result in [*results, *singles]:
        assert set(result) == {"score", "format_ok", "executed", "error", "f1", "em"}
        assert [type(result[k]) for k in ("score", "f1", "em", "format_ok", "error")] == [
            float,
            float,
            float,
            bool,
            str,
        ]
    assert [r["em"] for r in results] == [0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    assert results[0]["f1"] == pytest.approx(0.8)
    assert singles == results


def test_extra_keyword_arguments_are_accepted(databases, tmp_path):
    folder = databases[0].parent
    answer = fenced("SELECT count(*) FROM orders")
    # what verl's reward loop adds, and reward_kwargs: db_root/timeout_s/backend are per-batch defaults
    loop = compute_score(
        "bird",
        answer,
        "SELECT 2000",
        {"db_path": str(databases[0])},
        reward_router_address=None,
        reward_model_tokenizer=None,
    )
    assert loop["score"] == 1.0
    by_root = compute_score(
        "bird", answer, "SELECT 2000", {"db_id": databases[0].stem}, db_root=str(folder), timeout_s=5
    )
    assert by_root["score"] == 1.0
    with pytest.warns(UserWarning, match="format_weight"):
        shaped = compute_score("bird", answer, "SELECT 2000", {"db_path": str(databases[0])}, format_weight=0.1)
    assert shaped["score"] == 1.0
    batch = compute_score_batch(
        ["bird"], [answer], ["SELECT 2000"], [{"db_id": databases[0].stem}], db_root=str(folder)
    )
    assert batch[0]["score"] == 1.0


def test_compute_score_also_serves_the_batch_manager_and_the_prime_manager(databases):
    db = {"db_path": str(databases[0])}
    answer = fenced("SELECT count(*) FROM orders")
    as_batch = compute_score(
        data_sources=["bird"], solution_strs=[answer], ground_truths=["SELECT 2000"], extra_infos=[db]
    )
    assert [r["score"] for r in as_batch] == [1.0]
    single = compute_score("bird", answer, "SELECT 2000", db)
    assert single[0] == 1.0 and float(single[0]) == single["score"]  # prime reads result[0]
    assert 0 not in single and list(single) == ["score", "format_ok", "executed", "error", "f1", "em"]
    assert compute_score("qa", "Paris", np.array(["Lyon", "Paris"], dtype=object))["score"] == 1.0  # parquet list
