"""The batch reward spread over Ray actors, each with its own worker pool and gold cache.

Used by `verl.compute_score_batch` when a Ray instance is running in this process
(`ray.is_initialized()`), which hands it the batch function the actors run by its "module:attr" name
(the actor is `execution/ray_actors.Shard`, shared with grading); Ray is imported only then
(`pip install '.[ray]'`).
Items that share a (database, gold SQL) go to the same actor, so each gold runs once per batch
on one actor and stays in that actor's cache for the next batches.
"""

from __future__ import annotations

import hashlib
import json
import threading

from evaluators.execution.ray_actors import Shard, start

MAX_ACTORS = 8
_actors: list = []
_lock = threading.Lock()


def actors(count: int | None = None) -> list:
    """The actors of this driver, started once (one per CPU of the cluster, at most MAX_ACTORS)."""
    import ray

    with _lock:
        if not _actors:
            wanted = count or max(1, min(MAX_ACTORS, int(ray.cluster_resources().get("CPU", 1))))
            _actors.extend(start(Shard, wanted, num_cpus=0))
        return list(_actors)


def shard_of(ground_truth, extra_info, shards: int) -> int:
    key = json.dumps([str(ground_truth), _database_key(extra_info)], default=str)
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big") % shards


def _database_key(extra_info) -> list:
    info = extra_info if isinstance(extra_info, dict) else {}
    return [info.get("db_path"), info.get("db_id"), info.get("db_root")]


def spread_batch(
    function: str, data_sources: list, solution_strs: list, ground_truths: list, extra_infos: list
) -> list[dict]:
    """Each item scored by `function` ("module:attr", the local batch reward, with its own RowRunner in each
    actor) on the actor of its (gold, database); an actor that died is replaced and its part scored again
    on the new one (once: a part that kills two actors is an error, not a loop)."""
    import ray

    columns = (data_sources, solution_strs, ground_truths, extra_infos)
    workers = actors()
    parts: dict[int, list[int]] = {}
    for index, (truth, info) in enumerate(zip(ground_truths, extra_infos, strict=True)):
        parts.setdefault(shard_of(truth, info, len(workers)), []).append(index)
    pending = {n: workers[n].run.remote(function, *_part(columns, indexes)) for n, indexes in parts.items()}
    results: list = [None] * len(solution_strs)
    for n, indexes in parts.items():
        try:
            values = ray.get(pending[n])
        except ray.exceptions.RayActorError:
            values = ray.get(_replace(n).run.remote(function, *_part(columns, indexes)))
        for index, value in zip(indexes, values, strict=True):
            results[index] = value
    return results


def _part(columns: tuple, indexes: list[int]) -> list[list]:
    return [[column[i] for i in indexes] for column in columns]


def _replace(n: int):
    """A new actor in slot `n` (the old one died with its node or its process)."""
    import ray

    with _lock:
        try:
            ray.kill(_actors[n])
        except Exception:
            pass  # already gone
        _actors[n] = start(Shard, 1, num_cpus=0)[0]
        return _actors[n]


def shutdown_actors() -> None:
    import ray

    with _lock:
        for actor in _actors:
            ray.kill(actor)
        _actors.clear()
