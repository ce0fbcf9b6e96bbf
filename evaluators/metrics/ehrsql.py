"""EHRSQL 2024's reliability score (glee4810/ehrsql-2024, scoring_program/scoring_utils.py).

Each question scores +1 for a correct answer or a correct abstention, 0 for abstaining on a question that
has an answer, and -1 for a wrong answer or an answer to a question that has none.  RS(c) is the mean after
each -1 becomes -c; the scorer writes RS(0), RS(5), RS(10) and RS(N) (N the number of questions) times 100,
under the keys below.
"""

from __future__ import annotations

ABSTAIN = "null"  # the answer that abstains, after the scorer's rewrite strips the whitespace around it
PENALTIES = {"accuracy0": 0, "accuracy5": 5, "accuracy10": 10}


def reliability(gold_abstains: bool, pred_abstains: bool, correct: bool) -> int:
    """One question's score; `correct` is read only when both sides answer."""
    if gold_abstains:
        return 1 if pred_abstains else -1
    if pred_abstains:
        return 0
    return 1 if correct else -1


def penalized(scores: list[int], penalty: int) -> float | None:
    """The mean with each -1 worth -penalty; None for no question (the scorer's numpy mean gives NaN)."""
    if not scores:
        return None
    return sum(-penalty if s == -1 else s for s in scores) / len(scores)


def reliability_scores(scores: list[int]) -> dict:
    """The scorer's scores.json: RS(0), RS(5), RS(10), RS(N), times 100."""
    penalties = {**PENALTIES, "accuracyN": len(scores)}
    figures = {key: penalized(scores, penalty) for key, penalty in penalties.items()}
    return {key: None if value is None else value * 100 for key, value in figures.items()}
