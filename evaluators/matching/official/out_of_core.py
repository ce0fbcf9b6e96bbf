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

Cost (issue 27: grading within 3x the load): each table is scanned once for its types and once for
its column signatures, whatever the presets (the scans are cached on the spill tables); plain
notation is told by DuckDB's cast and two GLOBs (a regular expression per cell cost more than the load
itself); a column pair's multiset is proved by one hash aggregation, and its sorted comparison, run
once, is kept as the smallest tolerance that passes, for every preset.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.limits import EXACT_FLOAT_INT
from evaluators.matching.official.rule import _positions
from evaluators.matching.verdicts import Verdict

_SPECIAL = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "true", "false")
_WHITESPACE = "' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)"  # what pandas' number parser skips
_EXACT_INT = EXACT_FLOAT_INT  # beyond it math.isclose's float conversion loses what DuckDB's DOUBLE keeps differently
# A cell's class in the typing pass: NA, integer of at most 18 digits, other plain number, text, or a
# cell pandas may type its own way (booleans, infinities, padded numbers, 19 digits and more).
_NA, _INT, _FLOAT, _TEXT, _ODD = range(5)


class Undecided(Exception):
    """Something the out-of-core rule does not reproduce; the words go into the verdict."""


@dataclass(frozen=True)
class Col:
    table: str
    name: str  # quoted
    kind: str  # "int", "float" or "text"
    n: int
    nulls: int


@dataclass(frozen=True)
class _Counts:
    """One column's cells by class, from the typing pass, before low_memory's rule is applied."""

    name: str
    nulls: int
    ints: int
    numbers: int
    odd: int
    big_ints: int  # integers at or beyond 2**53
    exponent_floats: int  # numbers str() prints in exponent form


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _na(name: str) -> str:
    return f"({name} IS NULL)"  # pandas' NA words were made NULL when the table was read (`tables/spill.py`)


def plain_number(x: str) -> str:
    r"""SQL: is the text `x` a number in plain notation, `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`?
    DuckDB's cast is the parser; its extras (spaces, underscores, inf and nan words) are shut out by the
    characters allowed, and a doubled sign by the first two, with GLOB and no regular expression (a regex
    per cell was most of the typing pass's cost; GLOB keeps DuckDB's dictionary vectors, where a chain of
    string functions did not).  tests/test_out_of_core.py checks it against the pattern exhaustively."""
    return f"(TRY_CAST({x} AS DOUBLE) IS NOT NULL AND NOT {x} GLOB '*[!0-9eE.+-]*' AND NOT {x} GLOB '[+-][+-]*')"


def cell_class(c: str) -> str:
    """SQL: the class of the cell `c` (see _NA.._ODD).  Whatever DuckDB reads as a number but is not in
    plain notation is odd, as are booleans and numbers padded with whitespace (pandas reads those)."""
    trimmed = f"trim({c}, {_WHITESPACE})"
    special = ", ".join(f"'{s}'" for s in _SPECIAL)
    return (
        f"CASE WHEN {_na(c)} THEN {_NA} "
        f"WHEN {plain_number(c)} THEN "
        f"CASE WHEN {c} GLOB '*[.eE]*' THEN {_FLOAT} "
        f"WHEN strlen({c}) - ({_first_is_sign(c)})::INTEGER <= 18 THEN {_INT} ELSE {_ODD} END "
        f"WHEN TRY_CAST({c} AS DOUBLE) IS NOT NULL OR lower({trimmed}) IN ({special}) "
        f"OR ({trimmed} <> {c} AND {plain_number(trimmed)}) THEN {_ODD} "
        f"ELSE {_TEXT} END"
    )


def _first_is_sign(c: str) -> str:
    return f"ascii({c}) IN (43, 45)"


def _typing_pass(con, table: str) -> tuple[int, list[_Counts]]:
    """Every column's cells counted by class, in one scan of `table`."""
    names = [_quote(row[0]) for row in con.execute(f"DESCRIBE {table}").fetchall()]
    if not names:
        return 0, []
    inner = ", ".join(f"{c} AS v{k}, {cell_class(c)} AS k{k}" for k, c in enumerate(names))
    parts = []
    for k in range(len(names)):
        v, kind, x = f"v{k}", f"k{k}", f"TRY_CAST(v{k} AS DOUBLE)"
        parts += [
            f"count_if({kind} = {_NA})",
            f"count_if({kind} = {_INT})",
            f"count_if({kind} IN ({_INT}, {_FLOAT}))",
            f"count_if({kind} = {_ODD})",
            f"count_if({kind} = {_INT} AND abs(TRY_CAST({v} AS BIGINT)) >= {_EXACT_INT})",
            f"count_if({kind} IN ({_INT}, {_FLOAT}) AND {x} <> 0 AND (abs({x}) < 1e-4 OR abs({x}) >= 1e15))",
        ]
    row = con.execute(f"SELECT count(*), {', '.join(parts)} FROM (SELECT {inner} FROM {table})").fetchone()
    row = [count or 0 for count in row]  # count_if over no rows is NULL
    return row[0], [_Counts(c, *row[1 + 6 * k : 7 + 6 * k]) for k, c in enumerate(names)]


def columns(con, table: str, low_memory: bool = True, cache: dict | None = None) -> list[Col]:
    """Every column of `table`, typed as pandas would; raises Undecided when pandas' type is not sure.
    The scan is shared by both low_memory rules (kept in `cache`)."""
    cache = {} if cache is None else cache
    n, counts = _cached(cache, ("typing", table), lambda: _typing_pass(con, table))
    out = []
    for c in counts:
        if c.odd:
            raise Undecided(f"column {c.name} holds booleans, infinities, padded or 19-digit numbers")
        filled = n - c.nulls
        if filled == c.ints and not c.nulls and n:
            kind = "int"
        elif filled == c.numbers:
            kind = "float"  # an all-NULL column too: pandas reads it as float NaN
        elif c.numbers and low_memory:
            raise Undecided(f"column {c.name} mixes numbers and text, which pandas' low_memory chunks may type apart")
        else:
            kind = "text"
        out.append(Col(table, c.name, kind, n, c.nulls))
    for c, col in zip(counts, out, strict=True):
        if (col.kind == "int" and c.big_ints) or (col.kind == "float" and c.exponent_floats):
            raise Undecided(f"column {c.name} holds numbers that str() prints in exponent form or beyond 2**53")
    return out


def _value(c: Col, null_as_zero: bool) -> str:
    """The cell as the scorers hold it: a number (DOUBLE), a string, or NULL for NaN (NA cells are NULL
    already, and stay so through the cast: no CASE, which would cost DuckDB its dictionary vectors)."""
    if c.kind == "text":
        return c.name
    x = f"CAST({c.name} AS DOUBLE)"
    return f"coalesce({x}, 0.0)" if null_as_zero else x


def _flag(c: Col, null_as_zero: bool) -> str:
    # -0.0 equals 0.0 but str() sorts it apart, so the sign is part of a number's value.
    return _na(c.name) if c.kind == "text" else f"coalesce(signbit({_value(c, null_as_zero)}), false)"


def signatures(con, table: str, cols: list[Col], null_as_zero: bool, cache: dict | None = None) -> list[tuple]:
    """Per column: (multiset hash, NULL count, sum, sum of magnitudes); equal multisets have equal hashes,
    and columns that match under a tolerance have close sums (`_sums_close`).  One scan of the table
    serves both NULL rules: a NULL counts as NULL or as 0.0, so its share of the hash is a constant."""
    cache = {} if cache is None else cache
    if not cols:
        return []
    every = _cached(cache, ("scan-signs", table, tuple(cols)), lambda: _signature_scan(con, table, cols))
    as_null, as_zero = _cached(
        cache,
        ("null-hashes",),
        lambda: con.execute("SELECT hash(false, NULL::DOUBLE), hash(false, 0.0::DOUBLE)").fetchone(),
    )
    out = []
    for c, (hashed, nulls, total, size) in zip(cols, every, strict=True):
        if c.kind == "text":
            out.append((hashed, nulls, 0, 0))
        elif null_as_zero:
            out.append((hashed + nulls * as_zero, 0, total, size))
        else:
            out.append((hashed + nulls * as_null, nulls, total, size))
    return out


def _signature_scan(con, table: str, cols: list[Col]) -> list[tuple]:
    """(hash sum, NULL count, sum, sum of magnitudes) per column; numbers' hash sums leave NULLs out."""
    parts = []
    for c in cols:
        if c.kind == "text":
            parts += [
                f"sum(hash({_flag(c, False)}, {_value(c, False)})::HUGEINT)",
                f"count_if({_na(c.name)})",
                "0",
                "0",
            ]
        else:
            x = _value(c, False)
            parts += [
                f"coalesce(sum(hash(signbit({x}), {x})::HUGEINT) FILTER (WHERE NOT {_na(c.name)}), 0)",
                f"count_if({_na(c.name)})",
                f"sum({x})",
                f"sum(abs({x}))",
            ]
    row = [0 if x is None else x for x in con.execute(f"SELECT {', '.join(parts)} FROM {table}").fetchone()]
    return [tuple(row[4 * k : 4 * k + 4]) for k in range(len(cols))]  # (NULL: no rows to count or sum)


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

    def side(c: Col, weight: int) -> str:
        return f"SELECT {_flag(c, null_as_zero)} AS z, {_value(c, null_as_zero)} AS v, {weight} AS side FROM {c.table}"

    # One hash aggregation over both columns (GROUP BY holds NULLs as one value): cheaper than two and a join.
    sql = (
        f"SELECT count(*) FROM (SELECT sum(side) AS d FROM ({side(g, 1)} UNION ALL {side(p, -1)}) GROUP BY z, v) "
        "WHERE d <> 0"
    )
    return con.execute(sql).fetchone()[0] == 0


def _same_key(g: Col, p: Col, null_as_zero: bool) -> tuple:
    """A multiset proof's cache key: reading NULL as 0.0 changes nothing for text or without NULLs."""
    counts_nulls = null_as_zero and g.kind != "text" and bool(g.nulls or p.nulls)
    return ("same", g, p, counts_nulls)


def _sort_key(c: Col, null_as_zero: bool) -> str:
    """`str(x)`'s order: integers by text; plain floats by sign-and-integer head, then magnitude; NaN last."""
    if c.kind == "int":
        return f"CAST(CAST({c.name} AS BIGINT) AS VARCHAR), 0.0"
    x = _value(c, null_as_zero)
    head = f"CASE WHEN signbit({x}) THEN '-' ELSE '' END || CAST(CAST(trunc(abs({x})) AS BIGINT) AS VARCHAR) || '.'"
    return f"({x}) IS NULL, {head}, abs({x})"


def _sorted_gap(con, g: Col, p: Col, null_as_zero: bool) -> float:
    """The smallest tolerance under which the two sorted columns match position by position
    (`math.isclose` with rel_tol 1e-9 and abs_tol the tolerance): one sort serves every preset's
    tolerance.  A NULL against a number, or infinities that differ, need an infinite tolerance."""

    def ranked(c: Col) -> str:
        return (
            f"SELECT row_number() OVER (ORDER BY {_sort_key(c, null_as_zero)}) AS r, "
            f"{_value(c, null_as_zero)} AS v FROM {c.table}"
        )

    d = "abs(a.v - b.v)"
    needed = (
        "CASE WHEN a.v IS NULL AND b.v IS NULL THEN 0.0 WHEN a.v IS NULL OR b.v IS NULL THEN 'inf'::DOUBLE "
        "WHEN a.v = b.v THEN 0.0 WHEN NOT (isfinite(a.v) AND isfinite(b.v)) THEN 'inf'::DOUBLE "
        f"WHEN {d} <= abs(1e-9 * b.v) OR {d} <= abs(1e-9 * a.v) THEN 0.0 ELSE {d} END"
    )
    sql = f"SELECT coalesce(max({needed}), 0.0) FROM ({ranked(g)}) a JOIN ({ranked(p)}) b USING (r)"
    return float(con.execute(sql).fetchone()[0])


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
        and _cached(cache, _same_key(g, p, null_as_zero), lambda: _same_multiset(con, g, p, null_as_zero))
    ):
        return True
    if g.kind == "text" or (not null_as_zero and g.nulls != p.nulls) or not _sums_close(g_sign, p_sign, g.n, tol):
        return False  # strings match only as equal multisets; numbers only with close sums
    key = ("gap",) + _same_key(g, p, null_as_zero)[1:]
    return _cached(cache, key, lambda: _sorted_gap(con, g, p, null_as_zero)) <= float(tol)


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
        gold_cols = _cached(cache, ("cols", gold, low_memory), lambda: columns(con, gold, low_memory, cache))
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
        pred_cols = _cached(cache, ("cols", pred, low_memory), lambda: columns(con, pred, low_memory, cache))
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
    """Columns of the same type and multiset hash first, then the closest sums: the likely partners (the
    order only saves sorted comparisons; any partner that matches gives the same verdict)."""

    def gap(p: Col) -> float:
        return abs(float(pred_signs[p][2] or 0) - float(g_sign[2] or 0))

    return sorted(pred_cols, key=lambda p: (p.kind != g.kind, pred_signs[p][0] != g_sign[0], gap(p)))


def _cached(cache: dict, key, make):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def undecided(why: str) -> Verdict:
    return Verdict(0.0, "undecided", f"too big for memory and not decided out of core: {why}")


def strict_identical(con, pred: str, gold: str, condition_cols, *, cache: dict | None = None) -> Verdict:
    """The strict rule's match, shown out of core only when it is plain: every gold column has exactly
    one predicted partner of the same type and multiset (a 1:1 mapping from signatures), and the rows,
    as typed cells under that mapping, are the same multiset.  Anything else (look-alike
    columns, values inside the tolerance, extra columns, a miss) is `undecided`: the strict rule's
    search and tolerance are not reproduced here."""
    cache = {} if cache is None else cache
    try:
        gold_cols = _cached(cache, ("cols", gold, False), lambda: columns(con, gold, False, cache))
        pred_cols = _cached(cache, ("cols", pred, False), lambda: columns(con, pred, False, cache))
    except Undecided as exc:
        return undecided(str(exc))
    if isinstance(condition_cols, (list, tuple)) and condition_cols:
        gold_cols = [gold_cols[i] for i in _positions(list(condition_cols), len(gold_cols))]
    if len(gold_cols) != len(pred_cols) or not gold_cols:
        return undecided("the strict rule with other column counts, or none, is not decided out of core")
    if gold_cols[0].n != pred_cols[0].n:
        return undecided("row counts differ; the strict rule's words for it are not reproduced out of core")
    gold_signs = _signs(con, cache, gold, gold_cols, False)
    pred_signs = _signs(con, cache, pred, pred_cols, False)
    mapping = []
    for g in gold_cols:
        partners = [p for p in pred_cols if p.kind == g.kind and pred_signs[p][0] == gold_signs[g][0]]
        if len(partners) != 1:
            return undecided(
                f"gold column {g.name} has {len(partners)} look-alike predicted columns; no search out of core"
            )
        mapping.append(partners[0])
    if len(set(mapping)) != len(mapping):
        return undecided("two gold columns look like the same predicted column; no search out of core")
    same = (
        _cached(cache, _same_key(g, p, False), lambda g=g, p=p: _same_multiset(con, g, p, False))
        for g, p in zip(gold_cols, mapping, strict=True)
    )
    if not all(same):
        return undecided("a column differs from its partner; the strict rule's tolerance is not reproduced out of core")
    missing = _rows_missing(con, gold, pred, gold_cols, mapping)
    if missing:
        return undecided(f"{missing} gold row(s) have no identical predicted row; no tolerant search out of core")
    words = ", ".join(f"{g.name}->{p.name}" for g, p in zip(gold_cols, mapping, strict=True))
    return Verdict(1.0, "match", f"identical rows under the mapping {words} (out of core)")


def _rows_missing(con, gold: str, pred: str, gold_cols: list[Col], mapping: list[Col]) -> int:
    """How many gold rows, as typed cells, have no identical predicted row under `mapping` (the row
    counts are equal): one hash aggregation over both tables, which costs less than EXCEPT ALL."""
    gold_rows = ", ".join(f"{_value(g, False)} AS c{k}" for k, g in enumerate(gold_cols))
    pred_rows = ", ".join(f"{_value(p, False)} AS c{k}" for k, p in enumerate(mapping))
    both = f"SELECT {gold_rows}, 1 AS side FROM {gold} UNION ALL SELECT {pred_rows}, -1 AS side FROM {pred}"
    keys = ", ".join(f"c{k}" for k in range(len(gold_cols)))
    sql = f"SELECT coalesce(sum(greatest(d, 0)), 0) FROM (SELECT sum(side) AS d FROM ({both}) GROUP BY {keys})"
    return int(con.execute(sql).fetchone()[0])


def _signs(con, cache: dict, table: str, cols: list, null_as_zero: bool) -> dict:
    """Each column's signature (computed once per table, columns and NULL rule, then cached)."""
    key = ("signs", table, tuple(cols), null_as_zero)
    made = _cached(cache, key, lambda: signatures(con, table, cols, null_as_zero, cache))
    return dict(zip(cols, made, strict=True))
