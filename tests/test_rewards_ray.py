"""The batch reward spread over Ray actors gives the local results (a local `ray.init(num_cpus=2)`)."""

from __future__ import annotations

import os
import sys

import pytest
from rlcases import make_database, query_pairs


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray", reason="pip install '.[ray]'")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(sys.path)}},
    )
    yield ray
    from evaluators.rewards import rayshards

    rayshards.shutdown_actors()
    ray.shutdown()


def test_ray_batch_equals_the_local_batch(ray_instance, tmp_path):
    from evaluators.rewards import rayshards, verl

    databases = [make_database(tmp_path / f"shop{seed}.sqlite", seed) for seed in (5, 6)]
    items = [(db, gold, pred) for seed, db in enumerate(databases) for gold, pred in query_pairs(seed)][:60]
    sources = ["bird"] * len(items) + ["math", "qa"]
    completions = [f"```sql\n{pred}\n```" for _, _, pred in items] + [r"\boxed{2}", "Paris"]
    truths = [gold for _, gold, _ in items] + ["2", "paris"]
    infos = [{"db_path": str(db)} for db, _, _ in items] + [None, None]

    local = verl.local_batch(sources, completions, truths, infos)
    assert ray_instance.is_initialized()
    spread = verl.compute_score_batch(sources, completions, truths, infos)
    assert spread == local
    assert 0 < sum(r["score"] for r in local) < len(local)
    assert len(rayshards._actors) == 2  # the batch went to the actors: one per CPU of the local instance
    workers = rayshards.actors()
    used = {rayshards.shard_of(t, i, len(workers)) for t, i in zip(truths, infos, strict=True)}
    assert used == {0, 1}  # both actors got work


def test_grading_on_ray_equals_local_grading(ray_instance, tmp_path):
    from evaluators import grade
    from evaluators.grading.instance import Options
    from evaluators.grading.run import grade as run_grade

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sub, gold = os.path.join(root, "example_submission_folder"), os.path.join(root, "gold")
    local = grade(sub, gold)
    spread = run_grade(sub, gold, options=Options(), ray_address="auto")
    assert len(spread.instances) == len(local.instances) > 1
    assert [(i.instance_id, i.score, i.strict_score, i.reason) for i in spread.instances] == [
        (i.instance_id, i.score, i.strict_score, i.reason) for i in local.instances
    ]


def test_a_reward_actor_that_died_is_replaced_and_its_batch_scored(ray_instance, tmp_path):
    from evaluators.rewards import rayshards, verl

    db = make_database(tmp_path / "shop.sqlite", 7)
    items = query_pairs(7)[:30]
    sources, truths = ["bird"] * len(items), [gold for gold, _ in items]
    completions = [f"```sql\n{pred}\n```" for _, pred in items]
    infos = [{"db_path": str(db)} for _ in items]
    local = verl.local_batch(sources, completions, truths, infos)
    workers = rayshards.actors()
    ray_instance.kill(workers[0])  # as a lost node or an OOM kill would
    assert verl.compute_score_batch(sources, completions, truths, infos) == local
    assert rayshards.actors()[0] is not workers[0], "a new actor stands in its slot"
    assert verl.compute_score_batch(sources, completions, truths, infos) == local, "and serves the next batch"


def test_an_actor_knows_it_is_one_and_the_driver_does_not(ray_instance):
    """The actor's state, not a global of the reward module: work handed to an actor never spreads again."""
    from evaluators.execution.ray_actors import inside_shard
    from evaluators.rewards import rayshards

    actor = rayshards.actors()[0]
    assert ray_instance.get(actor.run.remote("evaluators.execution.ray_actors:inside_shard")) is True
    assert inside_shard() is False
