"""The strict table rule.

A prediction matches when the row counts are equal and some one-to-one
mapping of the gold's condition columns onto predicted columns makes the
projected rows equal: as a multiset with `ignore_order`, as a sequence
without.  Rows stay whole.  The mapping is found by matching: candidate
pairs are filtered column by column, then a search assigns columns one at a
time and drops any partial mapping whose projected rows already disagree,
so equal-looking columns never lead to trying all permutations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cells import BIGINT, FLOAT, INT, NULL, TEXT, StrictColumn
from .numeric import first_false, isclose

SEARCH_BUDGET = 20_000  # partial mappings tried before giving up on one table pair
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class StrictVerdict:
    ok: bool
    reason: str
    detail: str
    mapping: tuple = ()


def cells_equal(a: StrictColumn, b: StrictColumn, tol: float, ia=None, ib=None) -> np.ndarray:
    """Element-wise strict equality of two aligned columns (optionally re-ordered by ia, ib)."""
    ca, cb = (a.cls, b.cls) if ia is None else (a.cls[ia], b.cls[ib])
    pick = (lambda arr, idx: arr if idx is None else arr[idx])
    both = ca == cb
    eq = both & (ca == NULL)
    eq |= both & (ca == INT) & (pick(a.ival, ia) == pick(b.ival, ib))
    eq |= both & ((ca == TEXT) | (ca == BIGINT)) & (pick(a.code, ia) == pick(b.code, ib))
    numeric_a = (ca == INT) | (ca == BIGINT) | (ca == FLOAT)
    numeric_b = (cb == INT) | (cb == BIGINT) | (cb == FLOAT)
    with_float = numeric_a & numeric_b & ((ca == FLOAT) | (cb == FLOAT))
    if with_float.any():
        eq |= with_float & isclose(pick(a.num, ia), pick(b.num, ib), tol)
    return eq


def column_compatible(g: StrictColumn, p: StrictColumn, ignore_order: bool, tol: float) -> bool:
    """Necessary for g to map onto p (and sufficient without ignore_order)."""
    if g.n != p.n:
        return False
    if not ignore_order:
        return bool(cells_equal(g, p, tol).all())
    gn, gk, gt, gv = g.profile
    pn, pk, pt, pv = p.profile
    if gn != pn or gk != pk or not np.array_equal(gt, pt):
        return False
    return bool(isclose(gv, pv, tol).all())  # sorted order is the best alignment under a tolerance


def compare(pred: list[StrictColumn], gold: list[StrictColumn], *, ignore_order: bool, tol: float) -> StrictVerdict:
    n_gold = gold[0].n if gold else 0
    n_pred = pred[0].n if pred else 0
    if gold and n_gold != n_pred:
        return StrictVerdict(False, "row_count_mismatch", f"gold has {n_gold} row(s), prediction has {n_pred}")
    if len(pred) < len(gold):
        return StrictVerdict(False, "column_not_found",
                             f"gold needs {len(gold)} distinct column(s), prediction has {len(pred)}")
    candidates = [[j for j, p in enumerate(pred) if column_compatible(g, p, ignore_order, tol)] for g in gold]
    lonely = [i for i, c in enumerate(candidates) if not c]
    if lonely:
        return StrictVerdict(False, "column_not_found", _describe_lonely(gold[lonely[0]], pred, ignore_order, tol))
    if not ignore_order:
        mapping = _bipartite(candidates, len(pred))
        if mapping is None:
            return StrictVerdict(False, "column_not_found", "no one-to-one mapping: several gold columns "
                                 "can only map onto the same predicted column")
        return StrictVerdict(True, "match", _mapping_words(gold, pred, mapping), tuple(mapping))
    return _MappingSearch(gold, pred, candidates, tol).run()


def _mapping_words(gold, pred, mapping) -> str:
    pairs = ", ".join(f"{gold[i].name}->{pred[j].name}" for i, j in enumerate(mapping))
    return f"rows equal under the column mapping {pairs}" if pairs else "no columns to compare"


def _bipartite(candidates: list[list[int]], n_right: int) -> list[int] | None:
    """A one-to-one assignment (augmenting paths), or None."""
    owner = [-1] * n_right

    def place(i, seen):
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if owner[j] == -1 or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(candidates)):
        if not place(i, set()):
            return None
    mapping = [0] * len(candidates)
    for j, i in enumerate(owner):
        if i != -1:
            mapping[i] = j
    return mapping


def _mix(h: np.ndarray, key: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = (h ^ key) * _GOLDEN
        return x ^ (x >> np.uint64(29))


class _MappingSearch:
    """Depth-first assignment of gold columns, pruned by the projected rows."""

    def __init__(self, gold, pred, candidates, tol):
        self.gold, self.pred, self.tol = gold, pred, tol
        self.candidates = candidates
        self.order = sorted(range(len(gold)), key=lambda i: (gold[i].has_float, len(candidates[i])))
        self.budget = SEARCH_BUDGET

    def run(self) -> StrictVerdict:
        n = self.gold[0].n if self.gold else 0
        start = np.zeros(n, dtype=np.uint64)
        found = self._extend(0, {}, start, start.copy())
        if found is not None:
            mapping = tuple(found[i] for i in range(len(self.gold)))
            return StrictVerdict(True, "match", _mapping_words(self.gold, self.pred, mapping), mapping)
        if self.budget <= 0:
            return StrictVerdict(False, "mapping_search_exhausted",
                                 f"gave up after {SEARCH_BUDGET} partial column mappings")
        return StrictVerdict(False, "value_mismatch", self._describe_failure())

    def _extend(self, depth, assigned, hg, hp):
        if depth == len(self.order):
            return dict(assigned) if self._rows_match(assigned, hg, hp) else None
        i = self.order[depth]
        used = set(assigned.values())
        tried_content = set()
        for j in self.candidates[i]:
            if j in used:
                continue
            content = self.pred[j].fingerprint
            if content in tried_content:
                continue  # an identical predicted column leads to the same rows
            tried_content.add(content)
            self.budget -= 1
            if self.budget <= 0:
                return None
            exact = not (self.gold[i].has_float or self.pred[j].has_float)
            ng = _mix(hg, self.gold[i].key(exact))
            np_ = _mix(hp, self.pred[j].key(exact))
            assigned[i] = j
            if self._keys_agree(ng, np_) and (exact or self._rows_match(assigned, ng, np_)):
                found = self._extend(depth + 1, assigned, ng, np_)
                if found is not None:
                    return found
            del assigned[i]
        return None

    @staticmethod
    def _keys_agree(hg, hp) -> bool:
        with np.errstate(over="ignore"):
            if hg.sum(dtype=np.uint64) != hp.sum(dtype=np.uint64):
                return False
        return bool(np.array_equal(np.sort(hg), np.sort(hp)))

    def _rows_match(self, assigned, hg, hp) -> bool:
        """Rows equal as multisets: exact keys group the rows, FLOAT cells are matched within groups."""
        floats = [(i, j) for i, j in assigned.items() if self.gold[i].has_float or self.pred[j].has_float]
        if not floats:
            return True  # the exact keys already agree as multisets
        og = np.lexsort([self.gold[i].num for i, _ in reversed(floats)] + [hg])
        op = np.lexsort([self.pred[j].num for _, j in reversed(floats)] + [hp])
        ok = np.ones(len(og), dtype=bool)
        for i, j in assigned.items():
            ok &= cells_equal(self.gold[i], self.pred[j], self.tol, og, op)
        if ok.all():
            return True
        return _match_groups(self, assigned, hg, hp, og, op, ok)

    def _describe_failure(self) -> str:
        return ("every column has a partner with the same values, but no mapping keeps the rows whole: "
                "values are right column by column but scrambled across rows")


def _match_groups(search, assigned, hg, hp, og, op, ok) -> bool:
    """Tolerance can reorder near-equal rows: re-match the rows of each disagreeing group exactly."""
    bad_keys = np.unique(hg[og][~ok])
    for key in bad_keys.tolist():
        rows_g = np.flatnonzero(hg == key)
        rows_p = np.flatnonzero(hp == key)
        if len(rows_g) != len(rows_p) or len(rows_g) > 400:
            return False
        compat = np.ones((len(rows_g), len(rows_p)), dtype=bool)
        for i, j in assigned.items():
            gi = np.repeat(rows_g, len(rows_p))
            pj = np.tile(rows_p, len(rows_g))
            compat &= cells_equal(search.gold[i], search.pred[j], search.tol, gi, pj).reshape(compat.shape)
        if _bipartite([list(np.flatnonzero(r)) for r in compat], len(rows_p)) is None:
            return False
    return True


def _describe_lonely(g: StrictColumn, pred: list[StrictColumn], ignore_order: bool, tol: float) -> str:
    head = f"gold column {g.name!r} has no partner among the predicted columns"
    best, best_share, best_index = None, -1.0, None
    for p in pred:
        if p.n != g.n:
            continue
        ig, ip = (np.lexsort([g.num, g.key(False)]), np.lexsort([p.num, p.key(False)])) if ignore_order else (None, None)
        eq = cells_equal(g, p, tol, ig, ip)
        share = float(eq.mean()) if len(eq) else 1.0
        if share > best_share:
            best, best_share = p, share
            index = first_false(eq)
            best_index = None if index is None else (index, _cell(g, index if ig is None else ig[index]),
                                                     _cell(p, index if ip is None else ip[index]))
    if best is None:
        return head
    text = f"{head}; closest is {best.name!r} ({best_share:.0%} of cells agree"
    text += ", sorted)" if ignore_order else ")"
    if best_index:
        text += f"; first difference at {'sorted ' if ignore_order else ''}row {best_index[0]}: " \
                f"gold {best_index[1]} vs predicted {best_index[2]}"
    return text


def _cell(c: StrictColumn, i: int) -> str:
    if c.source is not None:
        return repr(c.source[i]) if int(c.cls[i]) != NULL else "NULL"
    return {NULL: "NULL", INT: f"{int(c.ival[i])}"}.get(int(c.cls[i]), repr(float(c.num[i])))
