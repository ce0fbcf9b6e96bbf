"""The Ray actor that grading (`grading/ray_run.py`) and the batch reward (`rewards/rayshards.py`) share.

An actor knows nothing of its caller: it is handed the function it runs as a "module:attr" name, imported
in the actor's process (as `matching/registry.py` names its graders), so no module here imports the code
that uses it.  Ray is an extra (`pip install '.[ray]'`), imported only when an actor is started or asked.
"""

from __future__ import annotations

import importlib
import socket
from typing import Any

from evaluators.errors import MissingExtra, UsageError

_hosted: list = []  # the Shard this process hosts, if it is an actor's process


def function_named(name: str):
    """The function a "module:attr" name stands for, imported now."""
    module, attr = name.split(":")
    return getattr(importlib.import_module(module), attr)


def inside_shard() -> bool:
    """Whether this process hosts a Shard: what it runs stays here, never spread over actors again."""
    return bool(_hosted)


class Shard:
    """One actor; it knows nothing but the function it is handed."""

    def __init__(self) -> None:
        _hosted.append(self)

    def node(self) -> str:
        import ray

        return f"{socket.gethostname()} ({ray.get_runtime_context().get_node_id()[:12]})"

    def run(self, function: str, *args):
        return function_named(function)(*args)


def start(shard: type, count: int, num_cpus: float) -> list:
    """`count` actors of class `shard` (Shard or a subclass), spread over the cluster's nodes; a dead one is
    not restarted (its caller decides what becomes of its work)."""
    import ray

    remote: Any = ray.remote(num_cpus=num_cpus, scheduling_strategy="SPREAD", max_restarts=0)(shard)
    return [remote.remote() for _ in range(count)]


def connect(address: str | None):
    """Ray, connected to `address` ("auto", "ray://host:10001", "local" for a new local instance) unless
    this process already runs one."""
    try:
        import ray
    except ImportError:
        raise MissingExtra("ray", "ray") from None
    if not ray.is_initialized():
        try:
            ray.init(address=None if address in (None, "local") else address, log_to_driver=False)
        except ConnectionError as error:  # "auto" or an address with no cluster behind it
            raise UsageError(
                f"--ray {address}: no Ray cluster answers there ({str(error).splitlines()[0]})",
                hint="start one (`ray start --head`), pass its address, or use --ray local for a new local instance",
            ) from None
    return ray
