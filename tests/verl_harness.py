"""Score a batch through verl's own code, as its trainer does (run in the side venv, tests/sidevenv.py).

    python verl_harness.py request.json answer.json

The request names the documented override lines of each run, the samples and a folder for the tokenizer.
Each run composes verl's Hydra config (verl/trainer/config/ppo_trainer.yaml) with its lines, then:

* `trainer` on verl 0.6: `load_reward_manager(config, tokenizer, num_examine=0, **reward_model.reward_kwargs)`
  and `compute_reward(batch, reward_fn)`, as 0.6's main_ppo and ray_trainer do;
* `reward_loop` on verl 0.7+: `RewardLoopManager(config).compute_rm_score(batch)` on a local Ray instance,
  as 0.9's ray_trainer does (reward workers as Ray actors, each resolving the function and the manager);
* `legacy_class` on verl 0.7+: the reward-manager classes verl still ships in `verl.workers.reward_manager`
  (naive, batch, dapo, prime), built with the function `get_custom_reward_fn(config)` resolves.

The answer holds, per run, the reward of each sample (the sum of its token rewards), the extra-info arrays
verl would log, and the function path the composed config points at.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import torch

PROMPT = "q: "


def compose(overrides: list[str]):
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def batch(samples: list[dict], tokenizer):
    from verl import DataProto

    prompts = [tokenizer.encode(PROMPT) for _ in samples]
    responses = [tokenizer.encode(s["response"]) + [tokenizer.eos_token_id] for s in samples]
    width = max(len(r) for r in responses)
    prompt_ids = torch.tensor(prompts)
    response_ids = torch.full((len(samples), width), tokenizer.pad_token_id)
    mask = torch.zeros((len(samples), prompt_ids.shape[1] + width), dtype=torch.long)
    mask[:, : prompt_ids.shape[1]] = 1
    for i, ids in enumerate(responses):
        response_ids[i, : len(ids)] = torch.tensor(ids)
        mask[i, prompt_ids.shape[1] : prompt_ids.shape[1] + len(ids)] = 1
    tensors = {
        "prompts": prompt_ids,
        "responses": response_ids,
        "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
        "attention_mask": mask,
    }
    non_tensors = {
        "data_source": np.array([s["data_source"] for s in samples], dtype=object),
        "reward_model": np.array([{"ground_truth": s["ground_truth"]} for s in samples], dtype=object),
        "extra_info": np.array([dict(s.get("extra_info") or {}) for s in samples], dtype=object),
    }
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


def _plain(values) -> list:
    return [v.item() if hasattr(v, "item") else v for v in values]


def run_trainer(config, data, tokenizer) -> dict:
    from verl.trainer.ppo.reward import compute_reward, load_reward_manager

    reward_fn = load_reward_manager(config, tokenizer, num_examine=0, **config.reward_model.get("reward_kwargs", {}))
    tensor, extra = compute_reward(data, reward_fn)
    return {"manager": type(reward_fn).__name__, "scores": tensor.sum(-1).tolist(), "extra": extra}


def run_legacy_class(config, data, tokenizer, name: str) -> dict:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    manager = get_reward_manager_cls(name)(
        tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config), reward_fn_key="data_source"
    )
    result = manager(data, return_dict=True)
    return {
        "manager": type(manager).__name__,
        "scores": result["reward_tensor"].sum(-1).tolist(),
        "extra": result.get("reward_extra_info", {}),
    }


def run_reward_loop(config, data, inline: bool) -> dict:
    """0.9's RewardLoopManager.compute_rm_score: with its reward workers as Ray actors, or (`inline`) with one
    RewardLoopWorker in this process behind the same `.remote()` call, which saves an actor start-up per run
    (the worker, the manager class and the batch assembly are verl's in both)."""
    import ray
    from verl.experimental.reward_loop import RewardLoopManager, RewardLoopWorker
    from verl.trainer.ppo.reward import resolve_reward_manager_cls

    if inline:
        manager = object.__new__(RewardLoopManager)
        manager.config, manager.reward_model_manager = config, None
        manager.reward_manager_cls = resolve_reward_manager_cls(config)
        manager.reward_loop_workers = [_InlineWorker(RewardLoopWorker(config), ray)]
    else:
        manager = RewardLoopManager(config)
    out = manager.compute_rm_score(data)
    extra = {key: out.non_tensor_batch[key] for key in out.meta_info["reward_extra_keys"]}
    scores = out.batch["rm_scores"].sum(-1).tolist()
    return {"manager": manager.reward_manager_cls.__name__, "scores": scores, "extra": extra}


class _InlineWorker:
    """`worker.compute_score_batch.remote(chunk)` answered in this process, as an object in Ray's store."""

    def __init__(self, worker, ray):
        self.compute_score_batch = self
        self._worker, self._ray = worker, ray

    def remote(self, chunk):
        return self._ray.put(self._worker.loop.run_until_complete(self._worker.compute_score_batch(chunk)))


def one_run(run: dict, samples: list[dict], tokenizer, tokenizer_dir: str) -> dict:
    overrides = list(run["overrides"])
    if run["kind"] == "reward_loop":
        overrides += [f"actor_rollout_ref.model.path={tokenizer_dir}"]
        overrides += [] if any(o.startswith("reward.num_workers=") for o in overrides) else ["reward.num_workers=2"]
    config = compose(overrides)
    section = config.reward if "reward" in config and "custom_reward_function" in config.reward else config
    answer = {"path": section.custom_reward_function.get("path")}
    if run["kind"] == "config":
        return answer
    data = batch(samples, tokenizer)
    if run["kind"] == "trainer":
        answer.update(run_trainer(config, data, tokenizer))
    elif run["kind"] == "legacy_class":
        answer.update(run_legacy_class(config, data, tokenizer, run["manager"]))
    else:
        answer.update(run_reward_loop(config, data, inline=run.get("inline", False)))
    answer["extra"] = {key: _plain(values) for key, values in answer["extra"].items()}
    return answer


def _start_ray() -> None:
    """Ray for the reward loop, started when the first reward-loop run comes (so that the runs before it, the
    batch manager among them, score in this process as they would without Ray)."""
    import os

    import ray

    if not ray.is_initialized():
        ray.init(  # a new local instance, never a cluster that happens to run on this machine
            address="local",
            num_cpus=2,
            include_dashboard=False,
            runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}},
        )


def main(request_path: str, answer_path: str) -> None:
    import verl
    from tinylm import build_tokenizer

    request = json.loads(Path(request_path).read_text())
    tokenizer = build_tokenizer(Path(request["tokenizer_dir"]))
    answers: dict = {"verl": verl.__version__}
    for run in request["runs"]:
        if run["kind"] == "reward_loop":
            _start_ray()
        # each run as in a fresh process: 0.6's prime manager closes the event loop it set as this thread's
        asyncio.set_event_loop(asyncio.new_event_loop())
        started = time.monotonic()
        try:
            answers[run["name"]] = one_run(run, request["samples"], tokenizer, request["tokenizer_dir"])
        except Exception:
            answers[run["name"]] = {"error": traceback.format_exc()[-3000:]}
        answers[run["name"]]["seconds"] = round(time.monotonic() - started, 2)
    Path(answer_path).write_text(json.dumps(answers, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:3])
