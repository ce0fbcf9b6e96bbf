"""Grading spread over Ray actors (`grade --ray ADDRESS`), for corpora too large for one machine.

Each actor (`execution/ray_actors.Shard`, shared with the batch reward) grades chunks of instances with the
function it is handed (by its "module:attr" name, imported in the actor), exactly as a local worker process
does, with its own SQL worker pool.  The submission, gold and database folders must be readable at the same
absolute paths on every node (a shared file system): before any work is sent, every actor fingerprints the two
folders and the run stops with a usage error when one sees something else.  An actor that dies (its node lost,
its process killed) has its chunks graded again on the actors that remain, at most `MAX_RETRIES` times; what
still cannot be graded gets `internal_error` naming the lost node.  Ray is an extra (`pip install '.[ray]'`),
imported only by a run that asks for it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators import signals
from evaluators.errors import UsageError
from evaluators.execution.ray_actors import Shard, connect, start

MAX_ACTORS = 32
MAX_RETRIES = 2  # a chunk whose actor died is sent again at most this many times


def folder_fingerprint(folder: str) -> str:
    """What a node sees of a folder: its top-level names and sizes, and the content of its jsonl files."""
    digest = hashlib.sha256()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    for entry in entries:
        size = entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else -1
        digest.update(f"{entry.name}\0{size}\n".encode("utf-8", "surrogateescape"))
        if entry.name.endswith(".jsonl") and size >= 0:
            with open(entry.path, "rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


class GradeShard(Shard):
    """One actor; it knows nothing of the grading but the function it is handed, and sees the folders."""

    def fingerprints(self, folders: list[str]) -> list[str]:
        return [folder_fingerprint(folder) for folder in folders]


@dataclass
class _Slot:
    actor: Any  # a Ray actor handle
    node: str
    alive: bool = True


def run_chunks(function: str, chunks: list, folders: dict[str, Path], address: str | None, lost) -> Iterator:
    """(index, results) of each chunk as it is done, each chunk run by `function` on some actor.  `folders`
    ({name: path}) must look the same on every node; `lost(chunk, words)` gives the results of a chunk that
    could not be graded."""
    ray = connect(address)
    count = max(1, min(MAX_ACTORS, len(chunks), int(ray.cluster_resources().get("CPU", 1))))
    actors = start(GradeShard, count, num_cpus=1)
    try:
        slots = _live_slots(ray, actors)
        _check_same_folders(ray, slots, folders)
        yield from _dispatch(ray, function, chunks, slots, lost)
    finally:
        for actor in actors:
            ray.kill(actor)


def _live_slots(ray, actors: list) -> list[_Slot]:
    """The actors that answer, with the node each runs on; one whose node is already gone is left out."""
    slots = []
    for actor, ref in [(actor, actor.node.remote()) for actor in actors]:
        try:
            slots.append(_Slot(actor, ray.get(ref)))
        except ray.exceptions.RayActorError:
            continue
    if not slots:
        raise UsageError("no Ray actor of the run could start", hint="check the cluster, or grade with --ray local")
    return slots


def _check_same_folders(ray, slots: list[_Slot], folders: dict[str, Path]) -> None:
    names, paths = list(folders), [str(folders[name]) for name in folders]
    here = [folder_fingerprint(path) for path in paths]
    for slot, ref in [(slot, slot.actor.fingerprints.remote(paths)) for slot in slots]:
        try:
            seen = ray.get(ref)
        except ray.exceptions.RayActorError:
            slot.alive = False  # gone already: it will get no work
            continue
        for name, path, mine, other in zip(names, paths, here, seen, strict=True):
            if mine != other:
                raise UsageError(
                    f"the Ray worker on {slot.node} does not see the {name} folder {path} as this machine does "
                    f"({'it cannot read it' if other.startswith('unreadable') else 'other files'})",
                    hint="put the folders on a file system every node shares, at the same path, or grade "
                    "with --ray local",
                )


def _dispatch(ray, function: str, chunks: list, slots: list[_Slot], lost) -> Iterator:
    tries = [0] * len(chunks)
    todo = list(range(len(chunks)))
    running: dict = {}  # ref -> (chunk index, slot)

    def send(index: int) -> None:
        live = [slot for slot in slots if slot.alive]
        slot = min(live, key=lambda s: sum(1 for _, busy in running.values() if busy is s))
        running[slot.actor.run.remote(function, chunks[index])] = (index, slot)

    while todo or running:
        while todo and any(slot.alive for slot in slots) and len(running) < 2 * len(slots):
            send(todo.pop(0))
        if not running:  # every actor is gone: what is left cannot be graded
            for index in todo:
                yield index, lost(chunks[index], "every Ray actor of the run was lost")
            return
        ready, _ = ray.wait(list(running), num_returns=1, timeout=0.25)
        if not ready:
            signals.check()
            continue
        ref = ready[0]
        index, slot = running.pop(ref)
        try:
            yield index, ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            slot.alive = False
            tries[index] += 1
            if tries[index] > MAX_RETRIES:
                yield index, lost(chunks[index], f"the Ray node {slot.node} was lost ({type(exc).__name__})")
            else:
                todo.append(index)
