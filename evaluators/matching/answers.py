"""`string_match` and `number_match` on free-text answers.

Official: the Spider2 rules as published (lower-case substring containment;
numbers found by a pattern that knows no sign or exponent).  Strict: the same
rules over a better reading of the text (Unicode NFKC, case folding and
collapsed whitespace for strings; signs, exponents and `.5` for numbers).
"""

from __future__ import annotations

import re
import unicodedata

from evaluators.matching.verdicts import Verdict

OFFICIAL_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})*\b(?:\.\d+)?%?|\b\d+\b(?:\.\d+)?%?")
STRICT_NUMBER = re.compile(r"(?<![\w.])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?%?")


def _as_list(gold) -> list:
    return gold if isinstance(gold, list) else [gold]


def _contains(pred: str, gold: list[str], exclude: list[str], conj: str) -> tuple[bool, str]:
    hit = next((e for e in exclude if e in pred), None)
    if hit is not None:
        return False, f"the answer contains the excluded text {hit!r}"
    found = [g for g in gold if g in pred]
    ok = bool(found) if conj == "or" else len(found) == len(gold)
    if ok:
        return True, f"found {found[0]!r}" if conj == "or" else f"found all {len(gold)} expected texts"
    missing = [g for g in gold if g not in pred]
    return False, f"{'none of' if conj == 'or' else 'missing'} {listed([repr(g) for g in missing], 3)}"


def string_official(answer: str, gold, exclude=(), conj="or") -> Verdict:
    ok, words = _contains(answer.lower(), [g.lower() for g in _as_list(gold)], [e.lower() for e in exclude], conj)
    return Verdict(float(ok), "match" if ok else "value_mismatch", words)


def normalize_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def string_strict(answer: str, gold, exclude=(), conj="or") -> Verdict:
    ok, words = _contains(
        normalize_text(answer), [normalize_text(g) for g in _as_list(gold)], [normalize_text(e) for e in exclude], conj
    )
    return Verdict(float(ok), "match" if ok else "value_mismatch", words)


def _official_float(value) -> float:
    text = str(value).replace(",", "")
    if "%" in text:
        return float(text.replace("%", "")) / 100
    return float(text)


def _strict_float(value) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip().replace(",", "")
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def _numbers_verdict(
    found: list[float], golds: list[float], single: bool, percentage: bool, precision: int, conj: str, raw: list[str]
) -> Verdict:
    numbers = listed(raw, 5) or "none"
    if single and len(found) != 1:
        return Verdict(
            0.0,
            "value_mismatch" if found else "no_number",
            f"expected exactly one number in the answer, found {len(found)}" + (f": {numbers}" if found else ""),
        )
    given = golds
    if percentage:
        golds = [y for x in golds for y in (x, x * 100)]
    close = [any(abs(n - g) <= 10 ** (-precision) for n in found) for g in golds]
    ok = any(close) if conj == "or" else all(close)
    if ok:
        return Verdict(1.0, "match", f"answer numbers {numbers} match the gold within 1e-{precision}")
    which = "" if len(given) == 1 else "any of " if conj == "or" else "all of "
    gold = listed([number_text(g) + (f" (or {number_text(g * 100)})" if percentage else "") for g in given], 5)
    return Verdict(
        0.0, "value_mismatch", f"answer numbers {numbers} do not match {which}the gold {gold} within 1e-{precision}"
    )


def number_text(value: float) -> str:
    """A number as a reader writes it: 17.51, 3, 1e-07 (twelve significant digits, no trailing .0)."""
    return format(float(value), ".12g")


def listed(items: list[str], limit: int) -> str:
    """The first `limit` items joined with commas, and how many more: words, not a Python list."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def number_official(answer: str, gold, percentage=False, precision=4, conj="or") -> Verdict:
    raw = OFFICIAL_NUMBER.findall(answer)
    # The suite checks "exactly one number" only for a str/float gold or a one-item list, not for an int.
    single = isinstance(gold, (str, float)) or (isinstance(gold, list) and len(gold) == 1)
    if single and len(raw) != 1:
        return _numbers_verdict(raw, [], True, percentage, precision, conj, raw)
    found = [_official_float(n) for n in raw]
    return _numbers_verdict(
        found, [_official_float(g) for g in _as_list(gold)], False, percentage, precision, conj, raw
    )


def number_strict(answer: str, gold, percentage=False, precision=4, conj="or") -> Verdict:
    raw = [m for m in STRICT_NUMBER.findall(answer) if any(ch.isdigit() for ch in m)]
    single = not isinstance(gold, list) or len(gold) == 1
    found = [_strict_float(n) for n in raw]
    return _numbers_verdict(found, [_strict_float(g) for g in _as_list(gold)], single, percentage, precision, conj, raw)


def string_verdicts(answer: str, params: dict) -> tuple:
    """(official, strict) verdicts of a string_match spec."""
    return string_official(answer, **params), string_strict(answer, **params)


def number_verdicts(answer: str, params: dict) -> tuple:
    """(official, strict) verdicts of a number_match spec."""
    return number_official(answer, **params), number_strict(answer, **params)
