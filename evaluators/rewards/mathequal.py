"""Mathematical equivalence of a predicted answer to the gold.

Extraction (last ``\\boxed{}``) and percent handling are ours; parsing and
comparison are delegated to math-verify (which uses sympy), so numbers,
fractions and LaTeX expressions are compared numerically or symbolically
rather than by hand-written parsing. See docs/rewards.md.
"""

from __future__ import annotations

import re
import threading
from decimal import Decimal, InvalidOperation

from evaluators.rewards.inputs import answer_list, import_optional, require_str

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_SCIENTIFIC = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_TIMEOUT_SECONDS = 5


def _balanced_content(text: str, start: int) -> str | None:
    """Text from ``start`` up to the brace closing the one before it.

    Escaped braces (``\\{``, ``\\}``) are skipped so that a boxed set such as
    ``\\boxed{\\{1, 2\\}}`` is read whole. Returns None when unterminated.
    """
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return text[start:i]
        i += 1
    return None


def extract_final_answer(text: str) -> str:
    """The content of the last complete ``\\boxed{...}``, else the whole text.

    An unterminated trailing ``\\boxed{`` (a truncated generation) is skipped
    in favour of the previous complete one.
    """
    for match in reversed(list(_BOXED.finditer(text))):
        content = _balanced_content(text, match.end())
        if content is not None:
            return content.strip()
    return text.strip()


def _timeout() -> int | None:
    # math-verify times out with signal.alarm, which raises outside the main
    # thread; there we run without its timeout rather than fail.
    in_main = threading.current_thread() is threading.main_thread()
    return _TIMEOUT_SECONDS if in_main else None


def _math_source(answer: str) -> list[str]:
    """Strings to hand to math-verify, most faithful reading first.

    A bare expression is wrapped in ``$...$`` because math-verify reads
    undelimited LaTeX poorly (``1/\\sqrt{2}`` parses as 1). Prose is passed
    as-is so that math-verify's own answer extraction can find the number.
    """
    if _SCIENTIFIC.fullmatch(answer):
        try:  # math-verify reads "1e3" as 1, so spell the number out
            answer = format(Decimal(answer), "f")
        except InvalidOperation:
            pass
    if "$" in answer:
        return [answer]
    wrapped = f"${answer}$"
    is_prose = _WORD.search(_LATEX_COMMAND.sub("", answer)) is not None
    return [answer, wrapped] if is_prose else [wrapped, answer]


def _percent_readings(parsed: list, percent_equals_fraction: bool) -> list:
    """Replace math-verify's percent marker by the reading(s) we allow.

    math-verify parses ``50%`` as ``50*UnevaluatedExpr(1/100)`` and then lets
    it equal both 50 and 0.5. We decide instead: the percent sign is dropped
    (50% == 50) and, only with ``percent_equals_fraction``, 50% == 0.5 too.
    """
    sympy = import_optional("sympy")
    marker = sympy.UnevaluatedExpr(sympy.Rational(1, 100))
    readings: list = []
    for item in parsed:
        if not isinstance(item, sympy.Basic) or not item.has(marker):
            readings.append(item)
            continue
        readings.append(item.xreplace({marker: sympy.Integer(1)}))
        if percent_equals_fraction:
            readings.append(item.xreplace({marker: sympy.Rational(1, 100)}).doit())
    return readings


def _parse(answer: str, percent_equals_fraction: bool) -> list:
    """math-verify readings of one answer (empty when nothing parses)."""
    math_verify = import_optional("math_verify")
    for source in _math_source(answer):
        parsed = math_verify.parse(source, parsing_timeout=_timeout())
        if parsed:
            return _percent_readings(parsed, percent_equals_fraction)
    return []


def matching_gold(
    prediction: str,
    answer: str | list[str],
    *,
    percent_equals_fraction: bool = False,
) -> str | None:
    """The first acceptable gold the prediction equals, or None."""
    golds = answer_list(answer)
    predicted = extract_final_answer(require_str(prediction, "final_response"))
    if not predicted:
        return None
    pred_readings = _parse(predicted, percent_equals_fraction)
    math_verify = import_optional("math_verify")
    for gold in golds:
        gold_text = extract_final_answer(gold)
        if " ".join(gold_text.split()) == " ".join(predicted.split()):
            return gold  # identical text needs no parsing (and covers words)
        gold_readings = _parse(gold_text, percent_equals_fraction)
        # math_verify.verify is not symmetric: the gold must come first.
        if (
            gold_readings
            and pred_readings
            and math_verify.verify(gold_readings, pred_readings, timeout_seconds=_timeout())
        ):
            return gold
    return None


def math_equal(
    prediction: str,
    answer: str | list[str],
    *,
    percent_equals_fraction: bool = False,
) -> bool:
    """True when the prediction equals any acceptable gold answer."""
    found = matching_gold(prediction, answer, percent_equals_fraction=percent_equals_fraction)
    return found is not None


def math_equal_reward(
    final_response: str,
    answer: str | list[str],
    trajectory: list | None = None,
    *,
    percent_equals_fraction: bool = False,
) -> float:
    """1.0 when the final response is mathematically equal to the gold, else 0.0.

    ``trajectory`` is accepted (and ignored) for a uniform reward signature.
    """
    del trajectory  # uniform signature; plain equality does not use tool use
    equal = math_equal(final_response, answer, percent_equals_fraction=percent_equals_fraction)
    return 1.0 if equal else 0.0
