"""The batch reward spread over Ray actors, each with its own worker pool and gold cache.

Used by `verl.compute_score_batch` when a Ray instance is running in this process
(`ray.is_initialized()`); Ray is imported only here and only then (`pip install '.[ray]'`).
Items that share a (database, gold SQL) go to the same actor, so each gold runs once per batch
on one actor and stays in that actor's cache for the next batches.
"""

from __future__ import annotations

import hashlib
import json
import threading

INSIDE_SHARD = False  # set in an actor's process: its batch runs locally, never spread again
MAX_ACTORS = 8
_actors: list = []
_lock = threading.Lock()


class RewardShard:
    """One actor: a local batch reward with its own RowRunner."""

    def __init__(self) -> None:
        global INSIDE_SHARD
        INSIDE_SHARD = True

    def score(self, data_sources, solution_strs, ground_truths, extra_infos) -> list[dict]:
        from evaluators.rewards.verl import local_batch

        return local_batch(data_sources, solution_strs, ground_truths, extra_infos)


def actors(count: int | None = None) -> list:
    """The actors of this driver, started once (one per CPU of the cluster, at most MAX_ACTORS)."""
    import ray

    with _lock:
        if not _actors:
            wanted = count or max(1, min(MAX_ACTORS, int(ray.cluster_resources().get("CPU", 1))))
            remote = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(RewardShard)
            _actors.extend(remote.remote() for _ in range(wanted))
        return list(_actors)


def shard_of(ground_truth, extra_info, shards: int) -> int:
    key = json.dumps([str(ground_truth), _database_key(extra_info)], default=str)
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big") % shards


def _database_key(extra_info) -> list:
    info = extra_info if isinstance(extra_info, dict) else {}
    return [info.get("db_path"), info.get("db_id"), info.get("db_root")]


def spread_batch(data_sources: list, solution_strs: list, ground_truths: list, extra_infos: list) -> list[dict]:
    import ray

    workers = actors()
    parts: list[list[int]] = [[] for _ in workers]
    for index, (truth, info) in enumerate(zip(ground_truths, extra_infos, strict=True)):
        parts[shard_of(truth, info, len(workers))].append(index)
    pending = [
        (
            indexes,
            workers[n].score.remote(
                [data_sources[i] for i in indexes],
                [solution_strs[i] for i in indexes],
                [ground_truths[i] for i in indexes],
                [extra_infos[i] for i in indexes],
            ),
        )
        for n, indexes in enumerate(parts)
        if indexes
    ]
    results: list = [None] * len(solution_strs)
    for indexes, ref in pending:
        for index, value in zip(indexes, ray.get(ref), strict=True):
            results[index] = value
    return results


def shutdown_actors() -> None:
    import ray

    with _lock:
        for actor in _actors:
            ray.kill(actor)
        _actors.clear()
