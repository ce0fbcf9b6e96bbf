"""Train TRL's real GRPOTrainer for two steps on a tiny random model, scoring with sql_execution_reward.

    python trl_harness.py rows.json answer.json work_folder

Runs in the side venv (tests/sidevenv.py). The model is built locally (tests/tinylm.py), so nothing comes
from a hub. A random model writes no SQL, so each row may carry `canned`, a JSON completion in one of the
shapes TRL hands a reward function (plain, parts lists, tool calls ending in a tool message); the reward
function TRL calls swaps it in for the model's completion and passes everything else TRL gave it
(the dataset columns, None where a row lacks one, `log_extra`, `log_metric`, `trainer_state`) unchanged.
The answer holds each graded row's reward, the trainer's logged metrics and its completions-table columns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(rows_path: str, answer_path: str, work: str) -> None:
    from datasets import Dataset
    from tinylm import build_model
    from trl import GRPOConfig, GRPOTrainer

    from evaluators.rewards.trl import sql_execution_reward

    rows = json.loads(Path(rows_path).read_text())
    graded: list[dict] = []

    def spider_sql(completions, row_id, canned, **kwargs):
        shaped = [json.loads(c) if c is not None else real for c, real in zip(canned, completions, strict=True)]
        scores = sql_execution_reward(shaped, **kwargs)
        graded.extend({"row": r, "score": s} for r, s in zip(row_id, scores, strict=True))
        return scores

    model, tokenizer = build_model(Path(work) / "model")
    config = GRPOConfig(
        output_dir=str(Path(work) / "out"),
        per_device_train_batch_size=len(rows),
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        learning_rate=1e-4,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
        log_completions=False,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[spider_sql],
        args=config,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    trainer.train()
    metrics = sorted({key for entry in trainer.state.log_history for key in entry})
    extra = {key: list(values) for key, values in trainer._logs["extra"].items()}
    Path(answer_path).write_text(json.dumps({"graded": graded, "metric_names": metrics, "extra": extra}, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:4])
