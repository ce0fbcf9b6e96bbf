"""How many processes a run grades in."""

from __future__ import annotations

import os

AUTO_MAX_JOBS = 8
AUTO_INSTANCES_PER_JOB = 100  # fewer per process and starting the pool costs more than it saves


def resolve_jobs(jobs: int | str, instances: int) -> int:
    """A number of processes; "auto": one per available core, but one per 100 instances at most."""
    if jobs != "auto":
        return int(jobs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, AUTO_MAX_JOBS, instances // AUTO_INSTANCES_PER_JOB))
