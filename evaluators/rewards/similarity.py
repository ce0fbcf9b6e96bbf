"""Query-text similarity between a predicted and a gold SQL query.

These are supporting metrics for reports and reward shaping, never the
score. All token-based metrics share one SQL-aware tokenizer; see
docs/rewards.md for the conventions (case folding, empty inputs).
"""

from __future__ import annotations

from collections.abc import Iterable

from evaluators.rewards.inputs import import_optional, require_str

# LLMetric-Q weights in tenths: summing integers and dividing once keeps a
# perfect query at exactly 1.0 (0.3 + 0.4 + 0.2 + 0.1 is not 1.0 in floats).
LLMETRIC_TENTHS = {"pass1": 3, "valid": 4, "output_jaccard": 2, "text": 1}


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


class SqlTokenizer:
    """Tokenizer object for rouge-score, whose default drops ``()[]->:``."""

    def tokenize(self, text: str) -> list[str]:
        return sql_tokens(text)


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
    """Sentence BLEU (sacrebleu, exp smoothing, effective order), 0..1."""
    pred, gold = sql_tokens(pred_sql), sql_tokens(gold_sql)
    if not pred or not gold:
        return float(pred == gold)  # sacrebleu scores two empty queries 0
    sacrebleu = import_optional("sacrebleu")
    # Our tokens are joined by spaces and sacrebleu told not to re-tokenize.
    result = sacrebleu.sentence_bleu(
        " ".join(pred),
        [" ".join(gold)],
        smooth_method="exp",
        tokenize="none",
        use_effective_order=True,
    )
    return _clamp(result.score / 100.0)


def rouge_l(pred_sql: str, gold_sql: str) -> float:
    """ROUGE-L F1 (rouge-score) over SQL tokens."""
    if not sql_tokens(pred_sql) and not sql_tokens(gold_sql):
        return 1.0  # rouge-score scores two empty queries 0
    rouge_scorer = import_optional("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=SqlTokenizer())
    return _clamp(scorer.score(gold_sql, pred_sql)["rougeL"].fmeasure)


def jaro_winkler(pred_sql: str, gold_sql: str) -> float:
    """Jaro-Winkler (rapidfuzz) of the canonical token texts.

    Comparing tokens joined by single spaces makes the score ignore layout
    and keyword case. Two empty queries score 1.0 (rapidfuzz's own value).
    """
    distance = import_optional("rapidfuzz.distance")
    pred, gold = " ".join(sql_tokens(pred_sql)), " ".join(sql_tokens(gold_sql))
    return _clamp(distance.JaroWinkler.similarity(pred, gold))


def query_similarity(pred_sql: str, gold_sql: str) -> dict[str, float]:
    """BLEU, ROUGE-L, Jaro-Winkler and token Jaccard, each in 0..1."""
    return {
        "bleu": bleu(pred_sql, gold_sql),
        "rouge_l": rouge_l(pred_sql, gold_sql),
        "jaro_winkler": jaro_winkler(pred_sql, gold_sql),
        "jaccard": jaccard(sql_tokens(pred_sql), sql_tokens(gold_sql)),
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
    w = LLMETRIC_TENTHS
    output = jaccard(_row_set(pred_rows, "pred_rows"), _row_set(gold_rows, "gold_rows"))
    text = (jaro_winkler(pred_sql, gold_sql) + rouge_l(pred_sql, gold_sql)) / 2
    score = (
        w["pass1"] * _as_flag(pass1, "pass1")
        + w["valid"] * _as_flag(valid, "valid")
        + w["output_jaccard"] * output
        + w["text"] * text
    )
    return _clamp(score / 10)
