"""SQuAD/HotpotQA-style answer F1 and exact match.

Conventions (see docs/rewards.md): the SQuAD v1.1 normaliser, token-bag F1,
the HotpotQA rule that a yes/no/noanswer mismatch scores 0, and the best
score over several acceptable gold answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter

from evaluators.rewards.inputs import answer_list, require_str

_PUNCTUATION = frozenset(string.punctuation)  # ASCII only, as in SQuAD
_ARTICLES = re.compile(r"\b(a|an|the)\b")
# HotpotQA: these answers are categorical, so partial token overlap with a
# different answer ("yes" vs "yes it is") must not earn partial credit.
_CATEGORICAL = frozenset({"yes", "no", "noanswer"})


def normalize_answer(text: str) -> str:
    """Lower-case, delete punctuation, drop a/an/the, collapse whitespace.

    The order matters and follows SQuAD: punctuation is deleted (not replaced
    by a space) before articles are dropped, so "U.S." becomes "us" and
    "3.14" becomes "314".
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _score_one(prediction: str, gold: str) -> dict[str, float]:
    """F1, precision, recall and EM of one prediction against one gold."""
    pred_norm, gold_norm = normalize_answer(prediction), normalize_answer(gold)
    em = float(pred_norm == gold_norm)
    if pred_norm != gold_norm and (pred_norm in _CATEGORICAL or gold_norm in _CATEGORICAL):
        return {"f1": 0.0, "em": 0.0, "precision": 0.0, "recall": 0.0}
    pred_tokens, gold_tokens = pred_norm.split(), gold_norm.split()
    if not pred_tokens or not gold_tokens:
        # Both empty is an exact match; F1 must not fall below EM.
        return {"f1": em, "em": em, "precision": em, "recall": em}
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return {"f1": 0.0, "em": em, "precision": 0.0, "recall": 0.0}
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    f1 = 2 * precision * recall / (precision + recall)
    return {"f1": f1, "em": em, "precision": precision, "recall": recall}


def qa_f1(prediction: str, answer: str | list[str]) -> dict:
    """Best F1 over the acceptable answers, with the gold that achieved it.

    Returns ``{"f1", "em", "precision", "recall", "gold"}``. Ties on F1 are
    broken by EM, then by the order the golds were listed in.
    """
    require_str(prediction, "final_response")
    best: dict | None = None
    for gold in answer_list(answer):
        scores = _score_one(prediction, gold)
        if best is None or (scores["f1"], scores["em"]) > (best["f1"], best["em"]):
            best = {**scores, "gold": gold}
    assert best is not None  # answer_list never returns an empty list
    return best


def qa_f1_reward(
    final_response: str,
    answer: str | list[str],
    trajectory: list | None = None,
) -> float:
    """The reward: the best token F1 over the acceptable answers (a float in 0..1, as every reward here).

    ``qa_f1`` gives the F1's parts (em, precision, recall, the gold). ``trajectory`` is accepted (and
    ignored) so that every reward in this package can be called with the same keyword arguments.
    """
    del trajectory  # uniform signature; plain F1 does not look at tool use
    return float(qa_f1(final_response, answer)["f1"])
