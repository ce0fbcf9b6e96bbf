"""Query-text similarity between a predicted and a gold SQL query.

These are supporting metrics for reports and reward shaping, never the
score. All token-based metrics share one SQL-aware tokenizer; see
docs/rewards.md for the conventions (case folding, empty inputs).  They live in
metrics/ so that grading (LLMetric-Q, the report's similarity) and rewards/ both
import them from below; `evaluators.rewards` re-exports them.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter
from collections.abc import Iterable
from types import ModuleType

from evaluators.errors import MissingExtra

# LLMetric-Q weights in tenths: summing integers and dividing once keeps a
# perfect query at exactly 1.0 (0.3 + 0.4 + 0.2 + 0.1 is not 1.0 in floats).
LLMETRIC_TENTHS = {"pass1": 3, "valid": 4, "output_jaccard": 2, "text": 1}

# The prediction is untrusted and these run in the grader's own process: it is scored on at most
# PRED_TOKEN_RATIO times the gold's tokens (at least MIN_PRED_TOKENS), and only its first
# CHARS_PER_TOKEN characters per allowed token are tokenized.  ROUGE-L's table is then at most
# PRED_TOKEN_RATIO x gold² cells, whatever was submitted (a 700 KB answer against a 150-token gold: 34 s
# before, 0.3 s now).  Past the cap the prefix's scores are given (docs/rewards.md); ROUGE-L F1 is at
# most 2 / (1 + PRED_TOKEN_RATIO) there either way.
PRED_TOKEN_RATIO = 8
MIN_PRED_TOKENS = 1024
CHARS_PER_TOKEN = 16


def import_optional(module: str) -> ModuleType:
    """Import an optional library of the `rewards` extra, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(module, "rewards") from None


def require_str(value: object, name: str) -> str:
    """Reject non-string inputs early with a message naming them."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    return value


def sql_tokens(sql: str) -> list[str]:
    """Split SQL into identifiers, numbers, quoted strings, operators, punctuation (sqlglot's tokens).

    Keywords, identifiers and numbers are lower-cased (SQL treats unquoted names case-insensitively);
    quoted strings and quoted identifiers keep their quotes and case; comments are dropped; a keyword
    of several words (ORDER BY) counts as its words.  Text sqlglot cannot tokenize (an unterminated
    string) is split at white space.
    """
    from evaluators.sqltext import lenient_tokens

    text = require_str(sql, "sql")
    try:
        tokens = lenient_tokens(text)
    except ValueError:
        return text.lower().split()
    out = []
    for token in tokens:
        written = text[token.start : token.end + 1]
        if written.lower() != token.text.lower():  # quoted: data, or a case-sensitive name
            out.append(written)
        else:
            out.extend(written.lower().split())
    return out


def pred_token_cap(gold_tokens: int) -> int:
    """How many of a prediction's tokens are scored against a gold of `gold_tokens` tokens."""
    return max(MIN_PRED_TOKENS, PRED_TOKEN_RATIO * gold_tokens)


def token_pair(pred_sql: str, gold_sql: str) -> tuple[list[str], list[str]]:
    """(prediction tokens, gold tokens), the prediction's bounded as PRED_TOKEN_RATIO says."""
    gold = sql_tokens(gold_sql)
    cap = pred_token_cap(len(gold))
    text = require_str(pred_sql, "sql")
    return sql_tokens(text[: cap * CHARS_PER_TOKEN])[:cap], gold


def jaccard(left: Iterable, right: Iterable) -> float:
    """|A ∩ B| / |A ∪ B| of two sets; two empty sets are identical, so 1.0."""
    a, b = set(left), set(right)
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _clamp(value: float) -> float:
    # Library scores can overshoot by an ulp (sacrebleu gives 100.00000000000004).
    return min(1.0, max(0.0, float(value)))


def bleu(pred_sql: str, gold_sql: str) -> float:
    """Sentence BLEU as sacrebleu computes it (exp smoothing, effective order), 0..1."""
    return _bleu(*token_pair(pred_sql, gold_sql))


BLEU_ORDER = 4
LOG_OF_ZERO = -9999999999  # sacrebleu's floor for the log of a zero precision


def _bleu(pred: list[str], gold: list[str]) -> float:
    """sacrebleu's sentence BLEU (exp smoothing, effective order, no re-tokenizing), step for step.

    Computed here, not by sacrebleu, whose import costs every SQL worker that computes a similarity a third
    of a second; tests/test_similarity.py holds it to the library on generated token lists. Like sacrebleu,
    it reads our tokens joined by spaces, split at white space (a quoted token with a space is two words).
    """
    if not pred or not gold:
        return float(pred == gold)  # sacrebleu scores two empty queries 0
    hyp, ref = " ".join(pred).split(), " ".join(gold).split()
    reference = _ngram_counts(ref)
    correct, total = [0] * BLEU_ORDER, [0] * BLEU_ORDER
    for ngram, count in _ngram_counts(hyp).items():
        total[len(ngram) - 1] += count
        correct[len(ngram) - 1] += min(count, reference.get(ngram, 0))
    if not any(correct):
        return 0.0
    brevity = 1.0 if len(hyp) >= len(ref) else math.exp(1 - len(ref) / len(hyp))
    return _clamp(brevity * math.exp(_mean_log_precision(correct, total)) / 100.0)


def _ngram_counts(words: list[str]) -> Counter:
    return Counter(tuple(words[i : i + n]) for n in range(1, BLEU_ORDER + 1) for i in range(len(words) - n + 1))


def _mean_log_precision(correct: list[int], total: list[int]) -> float:
    """Precisions in percent; an order with no match gets 100 / (2^k * total), k counting such orders; the
    mean runs over the orders the hypothesis has n-grams of."""
    logs, halvings = [], 1.0
    for matched, seen in zip(correct, total, strict=True):
        if seen == 0:
            break
        if matched == 0:
            halvings *= 2
            precision = 100.0 / (halvings * seen)
        else:
            precision = 100.0 * matched / seen
        logs.append(math.log(precision) if precision != 0.0 else LOG_OF_ZERO)
    return sum(logs) / len(logs)


def rouge_l(pred_sql: str, gold_sql: str) -> float:
    """ROUGE-L F1 over SQL tokens: the F-measure of the longest common subsequence (rouge-score's rougeL)."""
    return _rouge_l(*token_pair(pred_sql, gold_sql))


def _rouge_l(pred: list[str], gold: list[str]) -> float:
    if not pred and not gold:
        return 1.0  # rouge-score scores two empty queries 0
    common = _lcs_length(gold, pred)
    if common == 0:
        return 0.0
    # rouge-score's arithmetic, step for step (tests/test_similarity.py holds it to the library): importing
    # the library costs 2 s (it imports nltk for a stemmer ROUGE-L over SQL tokens never uses), paid by every
    # SQL worker that computes a similarity
    precision, recall = common / len(pred), common / len(gold)
    return _clamp(2 * precision * recall / (precision + recall))


def _lcs_length(left: list[str], right: list[str]) -> int:
    """The length of the longest common subsequence, one row of the table at a time."""
    previous = [0] * (len(right) + 1)
    for token in left:
        current = [0]
        for j, other in enumerate(right):
            current.append(previous[j] + 1 if token == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def jaro_winkler(pred_sql: str, gold_sql: str) -> float:
    """Jaro-Winkler (rapidfuzz) of the canonical token texts.

    Comparing tokens joined by single spaces makes the score ignore layout
    and keyword case. Two empty queries score 1.0 (rapidfuzz's own value).
    """
    return _jaro_winkler(*token_pair(pred_sql, gold_sql))


def _jaro_winkler(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    distance = import_optional("rapidfuzz.distance")
    pred, gold = " ".join(pred_tokens), " ".join(gold_tokens)
    return _clamp(distance.JaroWinkler.similarity(pred, gold))


def query_similarity(pred_sql: str, gold_sql: str) -> dict[str, float]:
    """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard, each in 0..1."""
    pred, gold = token_pair(pred_sql, gold_sql)  # tokenized once, bounded
    return {
        "bleu": _bleu(pred, gold),
        "rouge_l": _rouge_l(pred, gold),
        "jaro_winkler": _jaro_winkler(pred, gold),
        "jaccard": jaccard(pred, gold),
    }


def _row_set(rows: Iterable, name: str) -> set[tuple]:
    """Rows as a set of tuples; rejects scalars and DataFrames early."""
    result = set()
    for i, row in enumerate(rows):
        if not isinstance(row, (tuple, list)):
            raise ValueError(
                f"{name}[{i}] must be a tuple or list, got {type(row).__name__} "
                "(for a DataFrame pass df.itertuples(index=False, name=None))"
            )
        try:
            result.add(tuple(row))
        except TypeError as exc:
            raise ValueError(f"{name}[{i}] has an unhashable value: {exc}") from exc
    return result


def _as_flag(value: object, name: str) -> float:
    if isinstance(value, bool) or value in (0, 1):
        return float(value)
    raise ValueError(f"{name} must be a bool or 0/1, got {value!r}")


def llmetric_q(
    pass1: bool,
    valid: bool,
    pred_rows: Iterable,
    gold_rows: Iterable,
    pred_sql: str,
    gold_sql: str,
) -> float:
    """0.3·Pass@1 + 0.4·Valid + 0.2·Jaccard(rows) + 0.1·(JW + ROUGE-L)/2."""
    output = jaccard(_row_set(pred_rows, "pred_rows"), _row_set(gold_rows, "gold_rows"))
    pred, gold = token_pair(pred_sql, gold_sql)
    return _llmetric(pass1, valid, output, _jaro_winkler(pred, gold), _rouge_l(pred, gold))


def llmetric_q_of(pass1: bool, valid: bool, pred_rows: Iterable, gold_rows: Iterable, similarity: dict) -> float:
    """`llmetric_q` with the text figures already computed: `query_similarity`'s of the same two queries."""
    output = jaccard(_row_set(pred_rows, "pred_rows"), _row_set(gold_rows, "gold_rows"))
    return _llmetric(pass1, valid, output, similarity["jaro_winkler"], similarity["rouge_l"])


def _llmetric(pass1: bool, valid: bool, output: float, jaro_winkler_score: float, rouge_l_score: float) -> float:
    w = LLMETRIC_TENTHS
    text = (jaro_winkler_score + rouge_l_score) / 2
    score = (
        w["pass1"] * _as_flag(pass1, "pass1")
        + w["valid"] * _as_flag(valid, "valid")
        + w["output_jaccard"] * output
        + w["text"] * text
    )
    return _clamp(score / 10)
