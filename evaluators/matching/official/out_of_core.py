"""The public Spider2 table rule (`rule.py`) in SQL, for tables read into DuckDB (`tables/spill.py`).

Cells arrive as text; each column is first typed the way pandas' reader would type it (int64 when
every cell is an integer, float64 when every non-NULL cell is a number, else strings), then
compared as `rule.py` decides, with `ignore_order`:

- two columns of one type holding the same multiset (NULLs as one value) line up identically under
  the scorers' sort, so they match: a hash aggregation, no sort;
- strings against numbers never match (a string never equals a number or NaN);
- numbers that differ as multisets are sorted in the scorers' order, `str(x)`: integers by their
  text, plain-notation floats by their sign-and-integer head then by magnitude (which is `str`'s
  order), NaN (`"nan"`) last; then compared position by position under `math.isclose`.

Whatever pandas might type differently (booleans, infinities, 19-digit integers, padded numbers,
a column mixing numbers and text, floats printed in exponent form) and row order kept
(`ignore_order` false) are not guessed: the verdict is `undecided` with the reason.  The connection
is handed in, so this module never opens an engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.matching.official.rule import _positions
from evaluators.matching.verdicts import Verdict

_INT = r"[+-]?[0-9]{1,18}"
_NUMBER = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
_SPECIAL = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "true", "false")
_EXACT_INT = 2**53  # beyond it math.isclose's float conversion loses what DuckDB's DOUBLE keeps differently


class Undecided(Exception):
    """Something the out-of-core rule does not reproduce; the words go into the verdict."""


@dataclass(frozen=True)
class Col:
    table: str
    name: str  # quoted
    kind: str  # "int", "float" or "text"
    n: int
    nulls: int


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _na(name: str) -> str:
    return f"({name} IS NULL)"  # pandas' NA words were made NULL when the table was read (`tables/spill.py`)


def columns(con, table: str, low_memory: bool = True) -> list[Col]:
    """Every column of `table`, typed as pandas would; raises Undecided when pandas' type is not sure."""
    names = [_quote(row[0]) for row in con.execute(f"DESCRIBE {table}").fetchall()]
    if not names:
        return []
    special = ", ".join(f"'{s}'" for s in _SPECIAL)
    parts = []
    for c in names:
        na, trimmed = _na(c), f"trim({c})"
        parts += [
            f"count_if({na})",
            f"count_if(NOT {na} AND regexp_full_match({c}, '{_INT}'))",
            f"count_if(NOT {na} AND regexp_full_match({c}, '{_NUMBER}'))",
            f"count_if(NOT {na} AND (lower({trimmed}) IN ({special}) OR "
            f"({c} <> {trimmed} AND regexp_full_match({trimmed}, '{_NUMBER}')) OR "
            f"regexp_full_match({c}, '[+-]?[0-9]{{19,}}')))",
        ]
    row = con.execute(f"SELECT count(*), {', '.join(parts)} FROM {table}").fetchone()
    n, out = row[0], []
    for k, c in enumerate(names):
        nulls, ints, numbers, odd = row[1 + 4 * k : 5 + 4 * k]
        if odd:
            raise Undecided(f"column {c} holds booleans, infinities, padded or 19-digit numbers")
        filled = n - nulls
        if filled == ints and not nulls and n:
            kind = "int"
        elif filled == numbers:
            kind = "float"  # an all-NULL column too: pandas reads it as float NaN
        elif numbers and low_memory:
            raise Undecided(f"column {c} mixes numbers and text, which pandas' low_memory chunks may type apart")
        else:
            kind = "text"
        out.append(Col(table, c, kind, n, nulls))
    _check_numbers(con, table, [c for c in out if c.kind != "text"])
    return out


def _check_numbers(con, table: str, cols: list[Col]) -> None:
    """Floats outside plain notation (str() in exponent form) and integers beyond 2**53 are not decided here."""
    if not cols:
        return
    checks = []
    for c in cols:
        if c.kind == "int":
            checks.append(f"count_if(abs(CAST({c.name} AS HUGEINT)) >= {_EXACT_INT})")
        else:
            x = f"TRY_CAST({c.name} AS DOUBLE)"
            checks.append(f"count_if(NOT {_na(c.name)} AND {x} <> 0 AND (abs({x}) < 1e-4 OR abs({x}) >= 1e15))")
    counts = con.execute(f"SELECT {', '.join(checks)} FROM {table}").fetchone()
    for c, bad in zip(cols, counts, strict=True):
        if bad:
            raise Undecided(f"column {c.name} holds numbers that str() prints in exponent form or beyond 2**53")


def _value(c: Col, null_as_zero: bool) -> str:
    """The cell as the scorers hold it: a number (DOUBLE), a string, or NULL for NaN."""
    if c.kind == "text":
        return f"CASE WHEN {_na(c.name)} THEN NULL ELSE {c.name} END"
    x = f"CASE WHEN {_na(c.name)} THEN NULL ELSE CAST({c.name} AS DOUBLE) END"
    return f"coalesce({x}, 0.0)" if null_as_zero else x


def _flag(c: Col, null_as_zero: bool) -> str:
    # -0.0 equals 0.0 but str() sorts it apart, so the sign is part of a number's value.
    return _na(c.name) if c.kind == "text" else f"coalesce(signbit({_value(c, null_as_zero)}), false)"


def signatures(con, table: str, cols: list[Col], null_as_zero: bool) -> list[tuple]:
    """Per column, in one pass: (multiset hash, NULL count, sum, sum of magnitudes); equal multisets have
    equal hashes, and columns that match under a tolerance have close sums (`_sums_close`)."""
    if not cols:
        return []
    parts = []
    for c in cols:
        v = _value(c, null_as_zero)
        parts.append(f"sum(hash({_flag(c, null_as_zero)}, {v})::HUGEINT)")
        parts.append(f"count_if(({v}) IS NULL)")
        numeric = c.kind != "text"
        parts += [f"sum({v})" if numeric else "0", f"sum(abs({v}))" if numeric else "0"]
    row = con.execute(f"SELECT {', '.join(parts)} FROM {table}").fetchone()
    return [tuple(row[4 * k : 4 * k + 4]) for k in range(len(cols))]


def _sums_close(g: tuple, p: tuple, n: int, tol: float) -> bool:
    """Necessary for a match: each pair differs by at most tol + 1e-9 (|a| + |b|), so the sums do too
    (with room for the sums' own rounding)."""
    if g[1] != p[1]:
        return False
    size = float(g[3] or 0) + float(p[3] or 0)
    return abs(float(g[2] or 0) - float(p[2] or 0)) <= n * tol + 1e-9 * size + 1e-6 * size + 1e-9


def _same_multiset(con, g: Col, p: Col, null_as_zero: bool) -> bool:
    """Are the two columns, as the scorers hold them, equal multisets?  (Text NULL read as 0 stays apart
    from the string '0': the flag keeps them so.)"""

    def counted(c: Col) -> str:
        return f"SELECT {_flag(c, null_as_zero)} AS z, {_value(c, null_as_zero)} AS v, count(*) AS k FROM {c.table} GROUP BY ALL"

    sql = (
        f"SELECT count(*) FROM ({counted(g)}) a FULL OUTER JOIN ({counted(p)}) b "
        "ON a.z = b.z AND a.v IS NOT DISTINCT FROM b.v WHERE a.k IS DISTINCT FROM b.k"
    )
    return con.execute(sql).fetchone()[0] == 0


def _sort_key(c: Col, null_as_zero: bool) -> str:
    """`str(x)`'s order: integers by text; plain floats by sign-and-integer head, then magnitude; NaN last."""
    if c.kind == "int":
        return f"CAST(CAST({c.name} AS BIGINT) AS VARCHAR), 0.0"
    x = _value(c, null_as_zero)
    head = f"CASE WHEN signbit({x}) THEN '-' ELSE '' END || CAST(CAST(trunc(abs({x})) AS BIGINT) AS VARCHAR) || '.'"
    return f"({x}) IS NULL, {head}, abs({x})"


def _sorted_close(con, g: Col, p: Col, tol: float, null_as_zero: bool) -> bool:
    def ranked(c: Col) -> str:
        return (
            f"SELECT row_number() OVER (ORDER BY {_sort_key(c, null_as_zero)}) AS r, "
            f"{_value(c, null_as_zero)} AS v FROM {c.table}"
        )

    d = "abs(a.v - b.v)"
    close = (
        f"(a.v = b.v OR (isfinite(a.v) AND isfinite(b.v) AND "
        f"({d} <= abs(1e-9 * b.v) OR {d} <= abs(1e-9 * a.v) OR {d} <= {float(tol)!r})))"
    )
    sql = (
        f"SELECT count(*) FROM ({ranked(g)}) a JOIN ({ranked(p)}) b USING (r) "
        f"WHERE NOT ((a.v IS NULL AND b.v IS NULL) OR (a.v IS NOT NULL AND b.v IS NOT NULL AND {close}))"
    )
    return con.execute(sql).fetchone()[0] == 0


def _vectors_match(con, g: Col, p: Col, signs: tuple, tol: float, null_as_zero: bool, cache: dict) -> bool:
    if g.n != p.n:
        return False
    if g.n == 0:
        return True
    if (g.kind == "text") != (p.kind == "text"):
        return False
    g_sign, p_sign = signs
    if (
        g.kind == p.kind
        and g_sign[0] == p_sign[0]
        and _cached(cache, ("same", g, p, null_as_zero), lambda: _same_multiset(con, g, p, null_as_zero))
    ):
        return True
    if g.kind == "text" or (not null_as_zero and g.nulls != p.nulls) or not _sums_close(g_sign, p_sign, g.n, tol):
        return False  # strings match only as equal multisets; numbers only with close sums
    return _sorted_close(con, g, p, tol, null_as_zero)


def compare(
    con,
    pred: str,
    gold: str,
    condition_cols,
    *,
    wrap_scalar: bool,
    ignore_order: bool,
    tol: float,
    null_as_zero: bool,
    low_memory: bool = True,
    cache: dict | None = None,
) -> Verdict:
    """`rule.compare` after `rule.select_condition_cols`, on two tables of `con`.  `cache`: column types,
    signatures and multiset checks kept for the next preset on the same tables (they need no tolerance)."""
    cache = {} if cache is None else cache
    if not ignore_order:
        return undecided("row order is kept (ignore_order false), which the out-of-core rule does not compare")
    try:
        gold_cols = _cached(cache, ("cols", gold, low_memory), lambda: columns(con, gold, low_memory))
        if condition_cols not in (None, []):
            if not isinstance(condition_cols, (list, tuple)) and not wrap_scalar:
                if gold_cols and gold_cols[0].n == 0:
                    return Verdict(1.0, "match", "scalar condition_cols on an empty gold: nothing to compare")
                return Verdict(
                    0.0,
                    "invalid_spec",
                    "condition_cols is a single number, not a list: the suite fails every comparison for such a spec",
                )
            chosen = condition_cols if isinstance(condition_cols, (list, tuple)) else [condition_cols]
            gold_cols = [gold_cols[i] for i in _positions(list(chosen), len(gold_cols))]
        pred_cols = _cached(cache, ("cols", pred, low_memory), lambda: columns(con, pred, low_memory))
        gold_signs = _signs(con, cache, gold, gold_cols, null_as_zero)
        pred_signs = _signs(con, cache, pred, pred_cols, null_as_zero)
        for g in gold_cols:
            if not any(
                _vectors_match(con, g, p, (gold_signs[g], pred_signs[p]), tol, null_as_zero, cache)
                for p in _candidates(g, pred_cols, gold_signs[g], pred_signs)
            ):
                reason = (
                    "row_count_mismatch" if pred_cols and all(p.n != g.n for p in pred_cols) else "column_not_found"
                )
                return Verdict(0.0, reason, f"gold column {g.name}: no predicted column matches it (out of core)")
    except Undecided as exc:
        return undecided(str(exc))
    return Verdict(1.0, "match", f"all {len(gold_cols)} gold column(s) found a matching predicted column (out of core)")


def _candidates(g: Col, pred_cols: list[Col], g_sign: tuple, pred_signs: dict):
    """Columns of the same type and multiset hash first: the likely partners."""
    return sorted(pred_cols, key=lambda p: (p.kind != g.kind, pred_signs[p][0] != g_sign[0]))


def _cached(cache: dict, key, make):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def undecided(why: str) -> Verdict:
    return Verdict(0.0, "undecided", f"too big for memory and not decided out of core: {why}")


def strict_identical(con, pred: str, gold: str, condition_cols, *, cache: dict | None = None) -> Verdict:
    """The strict rule's match, shown out of core only when it is plain: every gold column has exactly
    one predicted partner of the same type and multiset (a 1:1 mapping from signatures), and the rows,
    as typed cells under that mapping, are the same multiset (EXCEPT ALL).  Anything else (look-alike
    columns, values inside the tolerance, extra columns, a miss) is `undecided`: the strict rule's
    search and tolerance are not reproduced here."""
    cache = {} if cache is None else cache
    try:
        gold_cols = _cached(cache, ("cols", gold, False), lambda: columns(con, gold, False))
        pred_cols = _cached(cache, ("cols", pred, False), lambda: columns(con, pred, False))
    except Undecided as exc:
        return undecided(str(exc))
    if isinstance(condition_cols, (list, tuple)) and condition_cols:
        gold_cols = [gold_cols[i] for i in _positions(list(condition_cols), len(gold_cols))]
    if len(gold_cols) != len(pred_cols) or not gold_cols:
        return undecided("the strict rule with other column counts, or none, is not decided out of core")
    if gold_cols[0].n != pred_cols[0].n:
        return undecided("row counts differ; the strict rule's words for it are not reproduced out of core")
    gold_signs = _cached(
        cache, ("signs", gold, tuple(gold_cols), False), lambda: signatures(con, gold, gold_cols, False)
    )
    pred_signs = _cached(
        cache, ("signs", pred, tuple(pred_cols), False), lambda: signatures(con, pred, pred_cols, False)
    )
    mapping = []
    for g, gs in zip(gold_cols, gold_signs, strict=True):
        partners = [p for p, ps in zip(pred_cols, pred_signs, strict=True) if p.kind == g.kind and ps[0] == gs[0]]
        if len(partners) != 1:
            return undecided(
                f"gold column {g.name} has {len(partners)} look-alike predicted columns; no search out of core"
            )
        mapping.append(partners[0])
    if len(set(mapping)) != len(mapping):
        return undecided("two gold columns look like the same predicted column; no search out of core")
    same = (
        _cached(cache, ("same", g, p, False), lambda g=g, p=p: _same_multiset(con, g, p, False))
        for g, p in zip(gold_cols, mapping, strict=True)
    )
    if not all(same):
        return undecided("a column differs from its partner; the strict rule's tolerance is not reproduced out of core")
    gold_rows = ", ".join(_value(g, False) for g in gold_cols)
    pred_rows = ", ".join(_value(p, False) for p in mapping)
    missing = con.execute(
        f"SELECT count(*) FROM (SELECT {gold_rows} FROM {gold} EXCEPT ALL SELECT {pred_rows} FROM {pred})"
    ).fetchone()[0]
    if missing:
        return undecided(f"{missing} gold row(s) have no identical predicted row; no tolerant search out of core")
    words = ", ".join(f"{g.name}->{p.name}" for g, p in zip(gold_cols, mapping, strict=True))
    return Verdict(1.0, "match", f"identical rows under the mapping {words} (out of core)")


def _signs(con, cache: dict, table: str, cols: list, null_as_zero: bool) -> dict:
    """Each column's signature (computed once per table, columns and NULL rule, then cached)."""
    key = ("signs", table, tuple(cols), null_as_zero)
    return dict(zip(cols, _cached(cache, key, lambda: signatures(con, table, cols, null_as_zero)), strict=True))
