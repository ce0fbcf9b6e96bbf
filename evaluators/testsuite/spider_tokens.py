"""Spider 1's SQL tokenisation, as `process_sql.tokenize` of the official scorers does it, without nltk.

The scorer quotes every `'` as `"`, keeps each quoted span as one token, and hands the rest to nltk's
`word_tokenize`, which needs nltk's punkt data (not installable from a package registry on its own, and
never downloaded at run time here).  What `word_tokenize` does to text with no quote left in it is a fixed
list of regular-expression rewrites (the Treebank rules, written out below from what they do), applied to
each sentence punkt finds.  SQL text is taken as one sentence: punkt only cuts after `.`, `?` or `!`
followed by a space, which in SQL is a syntax error the parser rejects either way (docs/test-suite.md).
Tokens are lower-cased; `!`, `>`, `<` before `=` are joined into one operator.
"""

from __future__ import annotations

import re


class Unparsable(Exception):
    """The scorer's parser cannot read this query (its assertion, index or key errors)."""


_QUOTE_CLASS = "\"'»”’"
_STARTING = [
    (re.compile("([«“‘„]|[`]+)"), r" \1 "),
    (re.compile(r'^"'), "``"),
    (re.compile("(``)"), r" \1 "),
    (re.compile(r"([ \(\[{<])(\"|'{2})"), r"\1 `` "),
    (re.compile(r"(?i)(?<!\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)"), r"\1 "),
]
_PUNCTUATION = [
    (re.compile(r"([^\.])(\.)([\]\)}>" + _QUOTE_CLASS + r" ]*+)\s*$"), r"\1 \2 \3 "),
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}"), r" \g<0> "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile("[\u2012-\u2015]"), r" \g<0> "),
    (re.compile(r"([^\.])(\.)([\]\)}>\"']*)\s*$"), r"\1 \2\3 "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"[*]"), r" \g<0> "),
    (re.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> "),  # brackets of every kind stand alone
    (re.compile(r"--"), r" -- "),
]
_ENDING = [
    (re.compile("([»”’])"), r" \1 "),
    (re.compile("''"), " '' "),
    (re.compile('"'), " '' "),
    (re.compile(r"\s+"), " "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]
_SPLIT_WORDS = [  # English contractions the tokenizer splits in two, even inside SQL ("cannot" is two tokens)
    re.compile(r"(?i)\b(can)(not)\b"),
    re.compile(r"(?i)\b(d)('ye)\b"),
    re.compile(r"(?i)\b(gim)(me)\b"),
    re.compile(r"(?i)\b(gon)(na)\b"),
    re.compile(r"(?i)\b(got)(ta)\b"),
    re.compile(r"(?i)\b(lem)(me)\b"),
    re.compile(r"(?i)\b(more)('n)\b"),
    re.compile(r"(?i)\b(wan)(na)(?=\s)"),
    re.compile(r"(?i) ('t)(is)\b"),
    re.compile(r"(?i) ('t)(was)\b"),
]


def words(text: str) -> list[str]:
    """nltk's word tokens of one sentence."""
    for rules in (_STARTING, _PUNCTUATION):
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
    text = " " + text + " "
    for pattern, replacement in _ENDING:
        text = pattern.sub(replacement, text)
    for pattern in _SPLIT_WORDS:
        text = pattern.sub(r" \1 \2 ", text)
    return text.split()


def tokenize(query: str) -> list[str]:
    """The scorer's tokens: quoted spans whole (as `"..."`), the rest lower-cased words, `!=` `>=` `<=` joined."""
    text = str(query).replace("'", '"')
    quotes = [i for i, char in enumerate(text) if char == '"']
    if len(quotes) % 2:
        raise Unparsable("Unexpected quote")
    spans: dict[str, str] = {}
    for k in range(len(quotes) - 1, -1, -2):  # from the right, so earlier offsets stay valid
        start, end = quotes[k - 1], quotes[k]
        key = f"__val_{start}_{end}__"
        spans[key] = text[start : end + 1]
        text = text[:start] + key + text[end + 1 :]
    tokens = [word.lower() for word in words(text)]
    tokens = [spans.get(token, token) for token in tokens]
    for at in reversed([i for i, token in enumerate(tokens) if token == "="]):
        before = tokens[at - 1]  # at 0 this is the last token, as in the scorer
        if before in ("!", ">", "<"):
            tokens = tokens[: at - 1] + [before + "="] + tokens[at + 1 :]
    return tokens
