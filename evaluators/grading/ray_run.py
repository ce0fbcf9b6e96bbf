"""Grading spread over Ray actors (`grade --ray ADDRESS`), for corpora too large for one machine.

Each actor grades chunks of instances exactly as a local worker process does (run._grade_chunk),
with its own SQL worker pool; results come back in order.  The submission, gold and database
folders must be readable at the same paths on every node (a shared file system).  Ray is an
extra (`pip install '.[ray]'`), imported only here.
"""

from __future__ import annotations

from collections.abc import Iterator

from evaluators.errors import MissingExtra

MAX_ACTORS = 32


class GradeShard:
    def grade(self, args) -> list:
        from evaluators.grading.run import _grade_chunk

        return _grade_chunk(args)


def connect(address: str | None):
    """Ray, connected to `address` ("auto", "ray://host:10001", "local" for a new local instance) unless
    this process already runs one."""
    try:
        import ray
    except ImportError:
        raise MissingExtra("ray", "ray") from None
    if not ray.is_initialized():
        ray.init(address=None if address in (None, "local") else address, log_to_driver=False)
    return ray


def grade_chunks(chunks: list, address: str | None) -> Iterator[list]:
    """Each chunk's graded results, in the order of the chunks."""
    ray = connect(address)
    count = max(1, min(MAX_ACTORS, len(chunks), int(ray.cluster_resources().get("CPU", 1))))
    shard = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(GradeShard)
    actors = [shard.remote() for _ in range(count)]
    try:
        pending = [actors[i % count].grade.remote(chunk) for i, chunk in enumerate(chunks)]
        for ref in pending:
            yield ray.get(ref)
    finally:
        for actor in actors:
            ray.kill(actor)
