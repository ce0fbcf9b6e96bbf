"""The rewrite EHRSQL's scorer applies to gold and prediction before either runs (`postprocessing.py`).

Spaces and newlines collapse to one space, `> =` style operators close up, the current time becomes the
database's "now" (2100-12-31 23:59:00) and a vital sign's `<name>_lower` / `<name>_upper` placeholders become
its normal range.  Two versions: until 2024-08-23 only `current_time` was replaced; commit b2a05a9 added
MySQL's DATE_SUB/DATE_ADD, `current_date`, `'now'`, NOW(), CURDATE() and CURTIME().  Every replacement is
plain text, case-sensitive and also inside string literals, as the scorer does it.
"""

from __future__ import annotations

import re

CURRENT_DATE = "2100-12-31"
CURRENT_TIME = "23:59:00"
NOW = f"{CURRENT_DATE} {CURRENT_TIME}"
VITAL_RANGES = {
    "temperature": (35.5, 38.1),
    "sao2": (95.0, 100.0),
    "heart rate": (60.0, 100.0),
    "respiration": (12.0, 18.0),
    "systolic bp": (90.0, 120.0),
    "diastolic bp": (60.0, 90.0),
    "mean bp": (60.0, 110.0),
}
MYSQL_DATE_SHIFT = re.compile(r"(DATE_SUB|DATE_ADD)\((\w+\(\)|'[^']+')[, ]+ INTERVAL (\d+) (MONTH|YEAR|DAY)\)")
# (text, replacement) in the scorer's order; the 2024-03 version has only the first
CLOCK_WORDS: tuple[tuple[str, str], ...] = (
    ("current_time", f"'{NOW}'"),
    ("current_date", f"'{CURRENT_DATE}'"),
    ("'now'", f"'{NOW}'"),
    ("NOW()", f"'{NOW}'"),
    ("CURDATE()", f"'{CURRENT_DATE}'"),
    ("CURTIME()", f"'{CURRENT_TIME}'"),
)
VERSIONS = ("2024-03", "2024-08")


def rewrite(query: str, version: str = "2024-08") -> str:
    query = re.sub("[ ]+", " ", query.replace("\n", " ")).strip()
    query = query.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")
    words = CLOCK_WORDS
    if version == "2024-08":
        query = MYSQL_DATE_SHIFT.sub(_sqlite_date_shift, query)
    else:
        words = CLOCK_WORDS[:1]
    for word, replacement in words:
        query = query.replace(word, replacement)
    query = _vital_ranges(query)
    return query.replace("%y", "%Y").replace("%j", "%J")


def _sqlite_date_shift(match: re.Match) -> str:
    function, date, number, unit = match.groups()
    unit = unit.lower()
    unit = unit.rstrip("s") if number == "1" else unit if unit.endswith("s") else unit + "s"
    sign = "-" if function == "DATE_SUB" else "+"
    return f"datetime({date}, '{sign}{number} {unit}')"


def _vital_ranges(query: str) -> str:
    """One vital's placeholders become its range, when the first `_lower` and first `_upper` name the same one."""
    lowers = re.findall("[ \n]+([a-zA-Z0-9_]+_lower)", query)
    uppers = re.findall("[ \n]+([a-zA-Z0-9_]+_upper)", query)
    if not (lowers and uppers):
        return query
    lower, upper = lowers[0], uppers[0]
    names = set(re.findall("([a-zA-Z0-9_]+)_lower", lower) + re.findall("([a-zA-Z0-9_]+)_upper", upper))
    if len(names) != 1:
        return query
    vital = names.pop().replace("_", " ")
    if vital not in VITAL_RANGES:
        return query
    low, high = VITAL_RANGES[vital]
    return query.replace(lower, f"{low}").replace(upper, f"{high}")
