"""docs/rl.md's verl lines, through verl's own config and reward managers (0.6.1 and 0.9.1).

verl runs in the side venv (tests/sidevenv.py: Python 3.11, CPU torch, verl installed --no-deps); each run
composes verl's Hydra config with the documented lines and scores the same 24 responses the way verl's trainer
does (tests/verl_harness.py). The expected scores are the project's own, computed here.
"""

from __future__ import annotations

import json

import pytest
from rlcases import make_database, query_pairs
from sidevenv import ROOT, run_side

from evaluators.rewards.verl import compute_score_batch

ENTRY = ROOT / "evaluators" / "rewards" / "verl_entry.py"
KEYS = {"score", "format_ok", "executed", "error", "f1", "em"}


def fenced(sql: str) -> str:
    return f"<think>look at orders</think>\n```sql\n{sql}\n```"


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("verl-dbs")
    db = make_database(folder / "shop1.sqlite", 1)
    info = {"db_path": str(db)}
    sql = [
        {"data_source": "bird", "response": fenced(pred), "ground_truth": gold, "extra_info": info}
        for gold, pred in query_pairs(1)[:12]
    ]
    odd = [
        ("text2sql", "I do not know", "SELECT 1", info),  # no_sql
        ("bird", fenced("DELETE FROM orders RETURNING id"), "SELECT id FROM orders", info),  # write
        ("bird", fenced("SELECT 1; SELECT 2"), "SELECT 1", info),  # multiple statements
        ("spider", fenced("SELECT 1"), "SELECT 1", {"db_id": "nope", "db_root": str(folder)}),  # no database
        ("bird", fenced("SELECT 1"), "SELECT nope FROM nowhere", info),  # the gold fails
        ("math", r"so \boxed{1/2}", "0.5", {}),
        ("gsm8k", r"\boxed{7}", "8", {}),
        ("squad", "Paris", ["Lyon", "Paris"], {}),  # a list ground truth (a numpy array once verl read it)
        ("chess", "e4", "e4", {}),
        ("synsql", fenced("SELECT count(*) FROM orders"), "SELECT count(id) FROM orders", info),
        ("hotpotqa", "the red cat", "the big red cat", {}),
    ]
    rows = [{"data_source": s, "response": r, "ground_truth": g, "extra_info": i} for s, r, g, i in odd]
    first = {"data_source": "qa", "response": "the big cat", "ground_truth": "the big red cat", "extra_info": {}}
    batch = [first, *sql, *rows]  # a qa sample first: verl 0.9 takes the first sample's keys for the batch
    assert len(batch) == 24
    return batch


@pytest.fixture(scope="module")
def expected(samples):
    results = compute_score_batch(
        [s["data_source"] for s in samples],
        [s["response"] for s in samples],
        [s["ground_truth"] for s in samples],
        [s["extra_info"] for s in samples],
    )
    scores = [r["score"] for r in results]
    assert 0 < scores.count(1.0) < 20 and scores[0] == pytest.approx(0.8)  # right, wrong and partial answers
    return results


def through_verl(version: str, runs: list[dict], samples, tmp_path) -> dict:
    request = tmp_path / "request.json"
    answer = tmp_path / "answer.json"
    request.write_text(json.dumps({"runs": runs, "samples": samples, "tokenizer_dir": str(tmp_path / "tok")}))
    done = run_side("verl_harness.py", str(request), str(answer), verl=version, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    answers = json.loads(answer.read_text())
    assert answers["verl"] == version
    return answers


def check(answer: dict, expected: list[dict], logs_keys: bool = True) -> None:
    assert "error" not in answer, answer.get("error")
    assert answer["path"] == str(ENTRY)
    assert answer["scores"] == pytest.approx([r["score"] for r in expected], abs=1e-6)
    if logs_keys:
        assert KEYS <= set(answer["extra"])
        for key in ("f1", "em"):
            assert answer["extra"][key] == pytest.approx([r[key] for r in expected])
        for key in ("format_ok", "executed", "error"):
            assert answer["extra"][key] == [r[key] for r in expected]


# 0.6's DAPO manager needs its overlong-buffer settings (verl's DAPO recipe passes them); long enough for no penalty
DAPO_06 = [
    "+reward_model.reward_kwargs.overlong_buffer_cfg.enable=True",
    "+reward_model.reward_kwargs.overlong_buffer_cfg.len=16",
    "+reward_model.reward_kwargs.overlong_buffer_cfg.penalty_factor=1.0",
    "+reward_model.reward_kwargs.overlong_buffer_cfg.log=False",
    "+reward_model.reward_kwargs.max_resp_len=4096",
]


def v06_lines(manager: str | None, name: str = "compute_score") -> list[str]:
    lines = [f"custom_reward_function.path={ENTRY}", f"custom_reward_function.name={name}"]
    return lines + ([f"reward_model.reward_manager={manager}"] if manager else [])


def v07_lines(manager: str | None, name: str = "compute_score") -> list[str]:
    lines = [f"reward.custom_reward_function.path={ENTRY}", f"reward.custom_reward_function.name={name}"]
    return lines + ([f"reward.reward_manager.name={manager}"] if manager else [])


def test_verl_0_6_trainer_with_every_manager(samples, expected, tmp_path):
    runs = [
        {"name": "naive", "kind": "trainer", "overrides": v06_lines(None)},
        {"name": "batch", "kind": "trainer", "overrides": v06_lines("batch", "compute_score_batch")},
        {"name": "batch_same_name", "kind": "trainer", "overrides": v06_lines("batch")},
        {"name": "dapo", "kind": "trainer", "overrides": v06_lines("dapo") + DAPO_06},
        {"name": "prime", "kind": "trainer", "overrides": v06_lines("prime")},
        {
            "name": "kwargs",
            "kind": "trainer",
            "overrides": [*v06_lines(None), "+custom_reward_function.reward_kwargs.format_weight=0.1"],
        },
    ]
    answers = through_verl("0.6.1", runs, samples, tmp_path)
    managers = {name: answers[name].get("manager") for name in ("naive", "batch", "dapo", "prime")}
    assert managers == {
        "naive": "NaiveRewardManager",
        "batch": "BatchRewardManager",
        "dapo": "DAPORewardManager",
        "prime": "PrimeRewardManager",
    }
    for name in ("naive", "batch", "batch_same_name", "dapo", "kwargs"):
        check(answers[name], expected)
    check(answers["prime"], expected, logs_keys=False)  # prime logs no extra keys: the score is all it reads


def test_verl_0_9_reward_loop_and_the_manager_classes_it_ships(samples, expected, tmp_path):
    runs = [
        *[
            {"name": f"class_{m}", "kind": "legacy_class", "manager": m, "overrides": v07_lines(None)}
            for m in ("naive", "batch", "dapo", "prime")
        ],
        {"name": "old_lines", "kind": "config", "overrides": v06_lines("batch")},
        {"name": "loop_naive", "kind": "reward_loop", "overrides": v07_lines(None)},
        {"name": "loop_dapo", "kind": "reward_loop", "inline": True, "overrides": v07_lines("dapo")},
        {
            "name": "loop_kwargs",
            "kind": "reward_loop",
            "inline": True,
            "overrides": [*v07_lines(None), "+reward.custom_reward_function.reward_kwargs.format_weight=0.1"],
        },
        {"name": "loop_gdpo", "kind": "reward_loop", "inline": True, "overrides": v07_lines("gdpo")},
        # last: its scoring actors hold a CPU each for their lifetime
        {
            "name": "loop_remote",
            "kind": "reward_loop",
            "inline": True,
            "overrides": [*v07_lines("remote"), "reward.num_workers=1"],
        },
    ]
    answers = through_verl("0.9.1", runs, samples, tmp_path)
    assert answers["loop_naive"].get("manager") == "NaiveRewardManager"
    assert answers["loop_dapo"].get("manager") == "DAPORewardManager"
    assert answers["loop_gdpo"].get("manager") == "GDPORewardManager"
    assert answers["loop_remote"].get("manager") == "RemoteRewardManager"
    for name in ("loop_naive", "loop_dapo", "loop_kwargs", "loop_gdpo", "loop_remote", "class_naive", "class_dapo"):
        check(answers[name], expected)
    # the batch class takes compute_score too (it calls it with data_sources=..., the batch shape)
    check(answers["class_batch"], expected)
    check(answers["class_prime"], expected, logs_keys=False)
    # 0.6's lines are accepted by 0.9's config and read by nothing: the trap docs/rl.md warns about
    assert answers["old_lines"]["path"] is None
