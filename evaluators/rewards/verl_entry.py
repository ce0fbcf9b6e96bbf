"""The file to name in verl's `custom_reward_function.path`.

verl loads that file by its path, outside any package, so it must import with absolute names;
this one re-exports the package's functions (evaluators/rewards/verl.py).
"""

from evaluators.rewards.verl import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
