"""Query-text similarity and LLMetric-Q, with hand-checked values."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.metrics.similarity import bleu, jaro_winkler, rouge_l
from evaluators.rewards import jaccard, llmetric_q, query_similarity, sql_tokens

REPO = Path(__file__).resolve().parents[1]

for _lib in ("sacrebleu", "rouge_score", "rapidfuzz"):
    pytest.importorskip(_lib)


@pytest.mark.parametrize(
    "sql, tokens",
    [
        (
            "SELECT a.b, COUNT(*) FROM t WHERE x >= 1.5",
            ["select", "a", ".", "b", ",", "count", "(", "*", ")", "from", "t", "where", "x", ">=", "1.5"],
        ),
        ("name = 'O''Brien'", ["name", "=", "'O''Brien'"]),  # literal keeps case
        ('SELECT "MyCol" FROM `Tbl`', ["select", '"MyCol"', "from", "`Tbl`"]),
        ("j->>'k' <> x::INT", ["j", "->>", "'k'", "<>", "x", "::", "int"]),
        ("arr[1]", ["arr", "[", "1", "]"]),
        ("a -- note\n/* block */ b", ["a", "b"]),  # comments dropped
        ("1E3 + .5", ["1e3", "+", ".", "5"]),  # sqlglot reads .5 as a dot and 5
        ("Straße", ["straße"]),
        ("", []),
    ],
)
def test_sql_tokens(sql, tokens):
    assert sql_tokens(sql) == tokens


BLEU_TABLE = [
    ("SELECT a FROM t", "SELECT a FROM t", 1.0),
    ("SELECT 1", "SELECT 1", 1.0),  # unsmoothed NLTK BLEU gives ~1e-154 here
    ("select   A from T", "SELECT a FROM t", 1.0),  # layout and case ignored
    ("x y", "a b", 0.0),  # disjoint
    ("b a", "a b", math.sqrt(0.5)),  # unigrams 1, bigrams exp-smoothed to 1/2
    ("select a from t", "select a from t where x", math.exp(-0.5)),  # brevity
    ("", "", 1.0),
    ("", "select 1", 0.0),
]


@pytest.mark.parametrize("pred, gold, expected", BLEU_TABLE)
def test_bleu(pred, gold, expected):
    assert bleu(pred, gold) == pytest.approx(expected)


ROUGE_TABLE = [
    ("SELECT a FROM t", "select a from t", 1.0),
    ("x y", "a b", 0.0),
    ("SELECT a, b FROM t", "SELECT b, a FROM t", 4 / 6),  # LCS 4 of 6 tokens
    ("count x", "count(x)", 2 / 3),  # brackets are tokens: P 2/2, R 2/4
    ("", "", 1.0),
    ("select 1", "", 0.0),
]


@pytest.mark.parametrize("pred, gold, expected", ROUGE_TABLE)
def test_rouge_l(pred, gold, expected):
    assert rouge_l(pred, gold) == pytest.approx(expected)


class _GivenTokens:
    """rouge-score's tokenizer slot, handing back token lists already made."""

    def __init__(self, tokens: dict[str, list[str]]):
        self.tokens = tokens

    def tokenize(self, text: str) -> list[str]:
        return self.tokens[text]


def _rouge_score_library(pred: list[str], gold: list[str]) -> float:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_GivenTokens({"gold": gold, "pred": pred}))
    return scorer.score("gold", "pred")["rougeL"].fmeasure


@settings(max_examples=300)
@given(
    st.lists(st.sampled_from("abcde"), max_size=14),
    st.lists(st.sampled_from("abcde"), max_size=14),
)
def test_our_rouge_l_is_rouge_scores_to_the_last_bit(pred, gold):
    """ROUGE-L is computed here, not by rouge-score (whose import costs 2 s): the library is the reference."""
    from evaluators.metrics.similarity import _rouge_l

    expected = _rouge_score_library(pred, gold) if pred or gold else 1.0  # two empty queries: 1.0, documented
    assert _rouge_l(pred, gold) == expected


WORDS = st.lists(st.sampled_from(["a", "b", "c", "d", "'a b'", "a"]), max_size=16)


@settings(max_examples=400)
@given(WORDS, WORDS)
def test_our_bleu_is_sacrebleus_to_the_last_bit(pred, gold):
    """BLEU is computed here, not by sacrebleu (a third of a second to import): the library is the reference,
    fed as it was before (tokens joined by spaces, no re-tokenizing); "'a b'" is one token and two words."""
    import sacrebleu

    from evaluators.metrics.similarity import _bleu, _clamp

    library = sacrebleu.sentence_bleu(
        " ".join(pred), [" ".join(gold)], smooth_method="exp", tokenize="none", use_effective_order=True
    )
    expected = _clamp(library.score / 100.0) if pred and gold else float(pred == gold)
    assert _bleu(pred, gold) == expected


def test_computing_a_similarity_imports_neither_rouge_score_nor_nltk_nor_sacrebleu():
    code = "import sys; from evaluators.metrics.similarity import query_similarity as q; q('select a', 'select b'); "
    code += "print(sorted(m for m in ('rouge_score', 'nltk', 'sacrebleu') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "pred, gold, expected",
    [
        ("SELECT 1", "select   1", 1.0),
        ("martha", "marhta", 0.961111),  # the textbook Jaro-Winkler pair
        ("", "", 1.0),  # rapidfuzz scores two empty strings 1.0
        ("", "select 1", 0.0),
    ],
)
def test_jaro_winkler(pred, gold, expected):
    assert jaro_winkler(pred, gold) == pytest.approx(expected, abs=1e-6)


def test_jaro_winkler_keeps_literal_case():
    assert jaro_winkler("select 'A'", "select 'a'") < 1.0


@pytest.mark.parametrize(
    "left, right, expected",
    [([], [], 1.0), ([1], [], 0.0), ([1, 2], [2, 3], 1 / 3), ([1, 1], [1], 1.0)],
)
def test_jaccard(left, right, expected):
    assert jaccard(left, right) == pytest.approx(expected)


def test_query_similarity():
    result = query_similarity("select a from t", "SELECT b FROM t")
    assert set(result) == {"bleu", "rouge_l", "jaro_winkler", "jaccard"}
    assert result["jaccard"] == pytest.approx(3 / 5)  # {select, from, t} of 5
    assert result["rouge_l"] == pytest.approx(3 / 4)
    assert all(0.0 <= value <= 1.0 for value in result.values())


LLMETRIC_TABLE = [
    (True, True, [(1, "x")], [[1, "x"]], "select 1", "SELECT 1", 1.0),
    (True, True, [], [], "select a", "select a", 1.0),  # empty results agree
    (False, False, [], [(1,)], "", "select 1", 0.0),
    # 0.4 + 0.2 * |{2}| / |{1,2,3}| + 0.1 * (1 + 1) / 2
    (False, True, [(1,), (2,)], [(2,), (3,)], "select 1", "select 1", 0.4 + 0.2 / 3 + 0.1),
    # rows are a set: the duplicate does not count twice
    (1, 0, [(1,), (1,)], [(1,)], "x", "a", 0.3 + 0.2),
]


@pytest.mark.parametrize("pass1, valid, pred_rows, gold_rows, pred, gold, expected", LLMETRIC_TABLE)
def test_llmetric_q(pass1, valid, pred_rows, gold_rows, pred, gold, expected):
    assert llmetric_q(pass1, valid, pred_rows, gold_rows, pred, gold) == pytest.approx(expected)


def test_llmetric_q_uses_text_similarity():
    # Only the text part differs: 0.1 * (JW + ROUGE-L) / 2.
    score = llmetric_q(False, False, [], [(1,)], "select a from t", "select b from t")
    expected = 0.1 * (jaro_winkler("select a from t", "select b from t") + 0.75) / 2
    assert score == pytest.approx(expected) and score > 0.0


@pytest.mark.parametrize(
    "args, needle",
    [
        ((2, True, [], [], "", ""), "pass1"),
        ((True, "yes", [], [], "", ""), "valid"),
        ((True, True, [1], [], "", ""), r"pred_rows\[0\]"),
        ((True, True, [], [([1],)], "", ""), r"gold_rows\[0\]"),
        ((True, True, [], [], None, ""), "sql"),
    ],
)
def test_llmetric_q_rejects_bad_input(args, needle):
    with pytest.raises(ValueError, match=needle):
        llmetric_q(*args)


@pytest.mark.parametrize(
    "module, func",
    [
        ("rapidfuzz.distance", jaro_winkler),
    ],
)
def test_missing_library_gives_install_hint(monkeypatch, module, func):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"pip install '\.\[rewards\]'"):
        func("select 1", "select 2")


def test_grading_computes_similarity_in_a_worker_with_the_same_figures():
    """A graded SQL answer's similarity runs in a worker (under the run's limits), to the same figures, and
    LLMetric-Q from them is LLMetric-Q."""
    from evaluators.execution.executor import scratch_config
    from evaluators.execution.similarity_worker import query_similarity as in_worker
    from evaluators.metrics.similarity import llmetric_q_of

    pred, gold = "SELECT a, b FROM t WHERE x > 1", "SELECT a FROM t ORDER BY a"
    figures = in_worker(scratch_config().settings(), pred, gold)
    assert figures == query_similarity(pred, gold)
    rows = ([(1,), (2,)], [(1,)])
    assert llmetric_q_of(True, True, *rows, figures) == llmetric_q(True, True, *rows, pred, gold)
