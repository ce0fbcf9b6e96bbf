"""sql_execution_reward through TRL's real GRPOTrainer (TRL 1.16, a tiny random model built locally).

TRL runs in the side venv (tests/sidevenv.py, Python 3.11 with the CPU torch on disk); the rows are the
shapes that scored 0 before: a column only some rows carry (None on the others), content as a list of
parts, a tool message after the last assistant message, no assistant message at all.
"""

from __future__ import annotations

import json

import pytest
from rlcases import make_database
from sidevenv import run_side

GOLD = "SELECT count(*) FROM orders"
RIGHT = "```sql\nSELECT count(id) FROM orders\n```"
WRONG = "```sql\nSELECT count(*) FROM customer\n```"


def assistant(content) -> dict:
    return {"role": "assistant", "content": content}


def test_grpo_trainer_scores_every_row_shape_and_logs_the_reasons(tmp_path):
    db = make_database(tmp_path / "shop.sqlite", 3)
    prompt = [{"role": "user", "content": "How many orders?"}]
    full = {"db_path": str(db), "timeout_s": 20.0, "data_source": "text2sql", "db_id": None, "db_root": None}
    tool_call = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "run"}}]}
    shapes = {
        "plain": ([assistant(RIGHT)], 1.0, ""),
        "parts": ([assistant([{"type": "text", "text": "Here:\n"}, {"type": "text", "text": RIGHT}])], 1.0, ""),
        "tool_last": (
            [tool_call, {"role": "tool", "content": "2000"}, assistant(RIGHT), {"role": "tool", "content": "ok"}],
            1.0,
            "",
        ),
        "wrong": ([assistant(WRONG)], 0.0, ""),
        "no_assistant": ([{"role": "tool", "content": "2000"}], 0.0, "no_assistant_message"),
        "plain_text": (RIGHT, 1.0, ""),
    }
    rows = [
        {"row_id": "full", "prompt": prompt, "ground_truth": GOLD, "canned": json.dumps([assistant(RIGHT)]), **full}
    ]
    expected = {"full": 1.0}
    for name, (completion, score, _) in shapes.items():
        rows.append(
            {
                "row_id": name,
                "prompt": prompt,
                "ground_truth": GOLD,
                "canned": json.dumps(completion),
                "db_path": str(db),
            }
        )
        expected[name] = score
    # columns present on only some rows: HF datasets gives None on the others, which means the default
    rows.append(
        {
            "row_id": "by_id",
            "prompt": prompt,
            "ground_truth": GOLD,
            "canned": json.dumps([assistant(RIGHT)]),
            "db_id": "shop",
            "db_root": str(tmp_path),
        }
    )
    rows.append(
        {
            "row_id": "qa",
            "prompt": prompt,
            "ground_truth": "Paris",
            "canned": json.dumps([assistant("Paris")]),
            "data_source": "qa",
        }
    )
    rows.append({"row_id": "model", "prompt": prompt, "ground_truth": GOLD, "canned": None, "db_path": str(db)})
    expected.update({"by_id": 1.0, "qa": 1.0, "model": 0.0})  # a random model writes no SQL
    assert len(rows) % 2 == 0
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    done = run_side(
        "trl_harness.py", str(tmp_path / "rows.json"), str(tmp_path / "answer.json"), str(tmp_path / "work")
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads((tmp_path / "answer.json").read_text())
    scores: dict[str, set] = {}
    for item in answer["graded"]:
        scores.setdefault(item["row"], set()).add(item["score"])
    assert scores == {row: {score} for row, score in expected.items()}
    # the reasons reach TRL's logs: the completions table's columns and the logged metrics
    # (the completions table keeps the last batch; the metrics keep every logging step)
    errors = answer["extra"]["error"]
    assert errors and len(errors) == len(answer["extra"]["format_ok"])
    assert set(errors) <= {"", "no_sql", "no_assistant_message"}
    assert {"spider_grade/format_ok", "spider_grade/error/no_assistant_message", "spider_grade/error/none"} <= set(
        answer["metric_names"]
    )
    assert "a completion scored 0 for a reason that is not the model's: no_assistant_message" in done.stderr


@pytest.mark.parametrize(
    "completion, text",
    [
        ("SELECT 1", "SELECT 1"),
        ([assistant([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}])], "ab"),
        ([assistant("first"), {"role": "tool", "content": "x"}], "first"),
        ([assistant("a"), assistant(None)], ""),
        ([{"role": "tool", "content": "x"}], None),
        ([], None),
        (assistant("one message"), "one message"),
    ],
)
def test_completion_text(completion, text):
    from evaluators.rewards.trl import completion_text

    assert completion_text(completion) == text


def test_none_columns_mean_default_and_reasons_go_to_the_loggers(tmp_path):
    from evaluators.rewards.trl import sql_execution_reward

    db = str(make_database(tmp_path / "shop.sqlite", 3))
    extra: dict = {}
    metrics: dict = {}
    scores = sql_execution_reward(
        [[assistant(RIGHT)], [assistant(RIGHT)], [{"role": "tool", "content": "x"}], "no sql"],
        ground_truth=[GOLD] * 4,
        data_source=["text2sql", None, None, None],
        db_path=[db, None, db, db],
        db_id=[None, "shop", None, None],
        db_root=[None, str(tmp_path), None, None],
        timeout_s=[None, 10, None, None],
        backend=[None, None, None, None],
        log_extra=lambda column, values: extra.setdefault(column, []).extend(values),
        log_metric=lambda name, value: metrics.__setitem__(name, value),
        trainer_state=object(),
    )
    assert scores == [1.0, 1.0, 0.0, 0.0]
    assert extra == {"error": ["", "", "no_assistant_message", "no_sql"], "format_ok": [True, True, False, False]}
    seen = {name: value for name, value in metrics.items() if value}
    assert seen == {
        "spider_grade/format_ok": 0.5,
        "spider_grade/error/none": 0.5,
        "spider_grade/error/no_assistant_message": 0.25,
        "spider_grade/error/no_sql": 0.25,
    }


def test_every_metric_is_logged_at_every_step_and_a_wrong_db_path_is_named(tmp_path):
    """A kind logged only at the steps it occurs draws as a line through its few points: every kind is logged at
    every step (0 when absent).  A random model writes no SQL, yet a wrong db_path is reported as such."""
    from evaluators.rewards.trl import METRIC_KINDS, sql_execution_reward

    db = str(make_database(tmp_path / "shop.sqlite", 3))
    steps = []
    for completions, db_path in (([RIGHT, RIGHT], db), (["no sql", "still none"], str(tmp_path / "typo.sqlite"))):
        metrics: dict = {}
        extra: dict = {}
        sql_execution_reward(
            completions,
            ground_truth=[GOLD] * 2,
            db_path=[db_path] * 2,
            log_metric=metrics.__setitem__,
            log_extra=extra.__setitem__,
        )
        steps.append((metrics, extra))
    names = {f"spider_grade/error/{kind}" for kind in METRIC_KINDS} | {"spider_grade/format_ok"}
    assert set(steps[0][0]) == set(steps[1][0]) == names
    assert {"spider_grade/error/gold_timeout", "spider_grade/error/write"} <= names
    assert steps[0][0]["spider_grade/error/none"] == 1.0 and steps[0][0]["spider_grade/error/no_database"] == 0
    assert steps[1][0]["spider_grade/error/no_database"] == 1.0 and steps[1][0]["spider_grade/error/no_sql"] == 0
    assert all(e.startswith("no_database: ") and "typo.sqlite" in e for e in steps[1][1]["error"])
