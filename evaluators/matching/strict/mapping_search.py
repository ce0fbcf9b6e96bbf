"""The strict rule's search for a one-to-one column mapping that keeps rows whole.

Gold columns are assigned one at a time (fewest candidates first, columns
with FLOAT cells last); each partial mapping is checked by hashing the
projected rows and comparing the hash multisets, which prunes wrong
branches early; on large tables a candidate is first tried on a sample of
rows (`_Sample`), so look-alike columns cost a sample each, not a pass.
Hashes only prune: a complete mapping is accepted after an exact check of
the rows (sorted by their exact cells, or matched within groups when
tolerance is involved).  The identical search's check pairs rows by their
sorted hashes and compares every cell, reading the prediction's side at random
rows from a narrowed copy (1, 2 or 4 bytes a cell) when its identities span little.
"""

from __future__ import annotations

import numpy as np

from evaluators.limits import BLOCK_CELLS
from evaluators.matching.kernels.numeric import BLOCK, all_close, hash_order, hash_sorted, isclose
from evaluators.matching.strict.cells import BIGINT, FLOAT, INT, NULL, TEXT, StrictColumn

SEARCH_BUDGET = 20_000  # partial mappings tried before giving up on one table pair
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_GROUP_LIMIT = 400  # rows in one group of equal exact cells that are matched pair by pair


def cells_equal(a: StrictColumn, b: StrictColumn, tol: float, ia=None, ib=None) -> np.ndarray:
    """Element-wise strict equality of two aligned columns (optionally re-ordered by ia, ib), via tokens."""
    ca, cb = (a.cls, b.cls) if ia is None else (a.cls[ia], b.cls[ib])

    def pick(arr, idx):
        return arr if idx is None else arr[idx]

    both = ca == cb
    eq = both & (ca == NULL)
    eq |= both & (ca == INT) & (pick(a.ival, ia) == pick(b.ival, ib))
    if ((ca == TEXT) | (ca == BIGINT)).any():
        eq |= both & ((ca == TEXT) | (ca == BIGINT)) & (pick(a.code, ia) == pick(b.code, ib))
    numeric_a = (ca == INT) | (ca == BIGINT) | (ca == FLOAT)
    numeric_b = (cb == INT) | (cb == BIGINT) | (cb == FLOAT)
    with_float = numeric_a & numeric_b & ((ca == FLOAT) | (cb == FLOAT))
    if with_float.any():
        eq |= with_float & isclose(pick(a.num, ia), pick(b.num, ib), tol)
    return eq


def bipartite(candidates: list[list[int]], n_right: int) -> list[int] | None:
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


def _mix(h: np.ndarray, key: np.ndarray, in_place: bool = False) -> np.ndarray:
    """The row hashes h extended by one more column's keys (written over h when `in_place`).
    Long columns go block by block: the shift's temporary stays small (a whole-column one costs its page
    faults again at every call past glibc's 32 MB mmap threshold)."""
    if len(h) > BLOCK:
        out = h if in_place else np.empty_like(h)
        for start in range(0, len(h), BLOCK):
            part = out[start : start + BLOCK]
            np.bitwise_xor(h[start : start + BLOCK], key[start : start + BLOCK], out=part)
            _scramble_in_place(part)
        return out
    with np.errstate(over="ignore"):
        x = np.bitwise_xor(h, key, out=h if in_place else None)
        _scramble_in_place(x)
        return x


def _scramble_in_place(x: np.ndarray) -> None:
    with np.errstate(over="ignore"):
        np.multiply(x, _GOLDEN, out=x)
        x ^= x >> np.uint64(29)


class MappingSearch:
    """Depth-first assignment of gold columns, pruned by the projected rows.

    With `identical`, cells count as equal only when identical (FLOAT cells by their bits): every
    column then hashes exactly, partial mappings are pruned by a sum of row hashes (linear, no sort),
    and a complete one is checked once, rows ordered by their hash.  A mapping found so is a match
    (identical cells are equal cells); finding none proves nothing, and the tolerant search follows.
    """

    def __init__(self, gold, pred, candidates, tol, identical: bool = False):
        self.gold, self.pred, self.tol = gold, pred, tol
        self.candidates = candidates
        self.identical = identical
        self.order = sorted(range(len(gold)), key=lambda i: (gold[i].has_float, len(candidates[i])))
        if identical:
            self.order = sorted(range(len(gold)), key=lambda i: len(candidates[i]))
        self.budget = SEARCH_BUDGET

    def run(self) -> tuple | None:
        """The mapping found (gold position -> pred position), else None (see `budget`)."""
        n = self.gold[0].n if self.gold else 0
        start = np.zeros(n, dtype=np.uint64)
        found = self._extend(0, {}, start, start.copy(), True)
        return None if found is None else tuple(found[i] for i in range(len(self.gold)))

    def _extend(self, depth, assigned, hg, hp, own_g):
        """Assign gold column order[depth]; `hg`, `hp` are the partial row hashes, and `own_g` says this call
        may write over `hg` (the caller does not need it again).  `hp` is always this call's to write over."""
        if depth == len(self.order):
            rows_match = self._identical_rows if self.identical else self._rows_match
            return dict(assigned) if rows_match(assigned, hg, hp) else None
        i = self.order[depth]
        options = self._options(i, set(assigned.values()))
        single = len(options) == 1  # a single option never comes back to these hashes: extend them in place
        gold_hashes: dict = {}  # the gold side's extended hashes are the same for every option: made once
        sample = _Sample.of(self.gold[i], hg, hp) if self.identical and depth and len(options) > 1 else None

        def extended_gold(key_of):
            if key_of not in gold_hashes:
                if key_of is _IDENTITY:
                    gold_hashes[key_of] = _mix_identity(hg, self.gold[i], in_place=single and own_g)
                else:
                    gold_hashes[key_of] = _mix(hg, key_of(self.gold[i]), in_place=single and own_g)
            return gold_hashes[key_of]

        for j in options:
            self.budget -= 1
            if self.budget <= 0:
                return None
            assigned[i] = j
            if self.identical:
                # With a choice, cheap tests first; a single option is tested by the hashes below anyway.
                if not single and (
                    self.gold[i].identity_sum != self.pred[j].identity_sum
                    or not (sample is None or sample.agrees(self.pred[j]))
                ):
                    del assigned[i]
                    continue
                ng = extended_gold(_IDENTITY)
                np_ = _mix_identity(hp, self.pred[j], in_place=single)
                agree = _sums_agree(ng, np_)
            else:
                exact = not (self.gold[i].has_float or self.pred[j].has_float)
                ng = extended_gold(_EXACT if exact else _LOOSE)
                np_ = _mix(hp, self.pred[j].key(exact), in_place=single)
                if single:  # nothing to choose here: only the complete mapping's check matters
                    agree = _sums_agree(ng, np_)
                else:
                    agree = _keys_agree(ng, np_) and (exact or self._rows_match(assigned, ng, np_))
            if agree:
                found = self._extend(depth + 1, assigned, ng, np_, single)
                if found is not None:
                    return found
            del assigned[i]
        return None

    def _options(self, i: int, used: set) -> list[int]:
        """Candidates for gold column i not yet used, one per content (an identical column leads to the same rows).
        Columns whose first rows differ differ: only columns with the same first rows are fingerprinted whole."""
        free = [j for j in self.candidates[i] if j not in used]
        if len(free) <= 1:
            return free  # nothing to tell apart: no fingerprint needed
        heads = [self.pred[j].head_print for j in free]
        options, contents = [], set()
        for j, head in zip(free, heads, strict=True):
            content = ("whole", self.pred[j].fingerprint) if heads.count(head) > 1 else ("head", head)
            if content not in contents:
                contents.add(content)
                options.append(j)
        return options

    def _rows_match(self, assigned, hg, hp) -> bool:
        """Rows equal as multisets: exact keys group the rows, FLOAT cells are matched within groups."""
        floats = [(i, j) for i, j in assigned.items() if self.gold[i].has_float or self.pred[j].has_float]
        if not floats:
            return self._exact_rows_match(assigned)
        if self._rounded_rows_match(assigned, hg, hp, floats):
            return True
        og = np.lexsort([self.gold[i].num for i, _ in reversed(floats)] + [hg])
        op = np.lexsort([self.pred[j].num for _, j in reversed(floats)] + [hp])
        ok = np.ones(len(og), dtype=bool)
        for i, j in assigned.items():
            ok &= cells_equal(self.gold[i], self.pred[j], self.tol, og, op)
        if ok.all():
            return True
        return _match_groups(self, assigned, hg, hp, og, ok)

    def _rounded_rows_match(self, assigned, hg, hp, floats) -> bool:
        """A quick proof: rows ordered by a hash of their cells with numbers rounded to the tolerance's grid,
        then every cell compared by the rule.  Near-equal numbers on two sides of a grid line order apart
        and fail here (a false 'no': the full check follows), never a false 'yes'."""
        og, op = (
            hash_order(self._rounded_hash(h, [c for c in cols]))  # np.argsort(kind="stable"), faster
            for h, cols in (
                (hg, [self.gold[i] for i, _ in floats]),
                (hp, [self.pred[j] for _, j in floats]),
            )
        )
        partner = np.empty(len(og), dtype=np.int64)
        partner[og] = op  # gold row r lines up with predicted row partner[r]: one gather per column, not two
        return all(self._paired_equal(self.gold[i], self.pred[j], og, op, partner) for i, j in assigned.items())

    def _paired_equal(self, g: StrictColumn, p: StrictColumn, og, op, partner) -> bool:
        """Every gold cell equal to the predicted cell `partner` gives it (gold row og[k] with predicted row op[k]).
        Two FLOAT-only columns (no NULL) are compared block by block, the gold in place and the prediction
        gathered: the large temporaries of a whole-column gather and isclose cost more than the rows at 10**7."""
        if not (g.uniform == p.uniform == FLOAT):
            return bool(cells_equal(g, p, self.tol, og, op).all())
        for start in range(0, len(partner), BLOCK):
            if not all_close(g.num[start : start + BLOCK], p.num[partner[start : start + BLOCK]], self.tol):
                return False
        return True

    def _rounded_hash(self, h: np.ndarray, columns: list) -> np.ndarray:
        grid = max(self.tol, 1e-12) * 3.7139  # not a decimal step: decimal data rarely sits on a grid line
        out = h.copy()
        numbers = [c.num for c in columns]
        # Block by block, every column per block: the temporaries stay in cache, and at 10**7 rows no
        # whole-column temporary is allocated (each one costs its page faults again).
        with np.errstate(invalid="ignore", over="ignore"):
            for start in range(0, len(out), BLOCK):
                part = out[start : start + BLOCK]
                for num in numbers:
                    rounded = np.divide(num[start : start + BLOCK], grid)
                    np.round(rounded, out=rounded)
                    if not np.isfinite(rounded).all():  # one check instead of nan_to_num's passes, usually
                        rounded = np.nan_to_num(rounded, nan=0.0, posinf=0.0, neginf=0.0)
                    _mix(part, rounded.astype(np.int64).view(np.uint64), in_place=True)
        return out

    def _exact_rows_match(self, assigned) -> bool:
        """Without FLOAT cells, rows sorted by their exact cells must be equal one by one."""
        keys_g = [k for i in assigned for k in self.gold[i].exact_key()]
        keys_p = [k for i in assigned for k in self.pred[assigned[i]].exact_key()]
        og, op = np.lexsort(keys_g[::-1]), np.lexsort(keys_p[::-1])
        return all(np.array_equal(kg[og], kp[op]) for kg, kp in zip(keys_g, keys_p, strict=False))

    def _identical_rows(self, assigned, hg, hp) -> bool:
        """Rows identical as multisets, shown by ordering both sides by row hash and comparing every cell.
        Rows whose hashes collide may then sit in different orders: a false 'no', never a false 'yes'."""
        if not _sums_agree(hg, hp):
            return False
        og = hash_order(hg)
        op, sorted_p = hash_sorted(hp)  # the prediction's hashes in order come with it: one gather, not two
        if not _gathered_equal(hg, og, sorted_p):  # the row-hash multisets differ
            return False
        del sorted_p
        partner = np.empty_like(op)
        partner[og] = op  # gold row r is paired with pred row partner[r]: one scattered read per column, not two
        del og, op  # two row-long arrays fewer while the columns are compared
        for i, j in assigned.items():
            g, p = self.gold[i], self.pred[j]
            one_class = g.uniform is not None and g.uniform == p.uniform  # then the classes agree everywhere
            if not (one_class or _equal_paired(g.cls, p.cls, partner)):
                return False
            if not _identities_paired(g, p, partner):
                return False
        return True


class _Sample:
    """A cheap test of one more column on a few rows before the whole column is hashed.

    The rows are those whose partial row hash is at most a threshold, the same on both sides: which rows
    are taken then depends only on the cells of the columns already assigned, so if the rows are equal
    as multisets under a mapping, so are the rows sampled, each extended by its partner column's cells.
    A failing sample therefore rules a candidate out, and a passing one is checked on every row as before.
    """

    MIN_ROWS = 65_536  # below this a whole column costs little more than a sample
    SHARE = 64  # about one row in SHARE is sampled (more when the threshold value repeats)
    STRIDE = 16  # the threshold is read off every STRIDE-th row: any threshold keeps the sample sound

    def __init__(self, gold_sum: int, same_size: bool, pred_rows: np.ndarray, hp_rows: np.ndarray):
        self.gold_sum, self.same_size, self.pred_rows, self.hp_rows = gold_sum, same_size, pred_rows, hp_rows

    @classmethod
    def of(cls, gold: StrictColumn, hg: np.ndarray, hp: np.ndarray):
        n = len(hg)
        if n < cls.MIN_ROWS:
            return None
        probe = hg[:: cls.STRIDE]  # a partition of every row would copy and scan the whole column
        threshold = np.partition(probe, len(probe) // cls.SHARE)[len(probe) // cls.SHARE]
        gold_rows = np.flatnonzero(hg <= threshold)
        if len(gold_rows) > n // 4:
            return None  # a repeated hash covers too many rows: the sample would cost as much as the column
        pred_rows = np.flatnonzero(hp <= threshold)
        gold_sum = _sum(_mix(hg[gold_rows], gold.identity_key_at(gold_rows), in_place=True))
        return cls(gold_sum, len(gold_rows) == len(pred_rows), pred_rows, hp[pred_rows])

    def agrees(self, pred: StrictColumn) -> bool:
        if not self.same_size:
            return False
        return _sum(_mix(self.hp_rows, pred.identity_key_at(self.pred_rows))) == self.gold_sum


_BLOCK = BLOCK_CELLS  # rows per step of the column-long passes below: small temporaries, not fresh mappings


def _mix_identity(h: np.ndarray, column: StrictColumn, in_place: bool) -> np.ndarray:
    """`_mix(h, column.identity_key, in_place)`, block by block: the keys are never a column-long array."""
    out = h if in_place else h.copy()
    for start in range(0, len(out), _BLOCK):
        rows = slice(start, start + _BLOCK)
        _mix(out[rows], column.identity_key_at(rows), in_place=True)
    return out


def _equal_paired(a: np.ndarray, b: np.ndarray, partner: np.ndarray) -> bool:
    """`np.array_equal(a, b[partner])`, block by block (and stopping at the first difference)."""
    return all(
        np.array_equal(a[start : start + _BLOCK], b[partner[start : start + _BLOCK]])
        for start in range(0, len(partner), _BLOCK)
    )


def _gathered_equal(a: np.ndarray, a_rows: np.ndarray, b: np.ndarray) -> bool:
    """`np.array_equal(a[a_rows], b)`, block by block: no row-long gathered copy."""
    if len(a_rows) != len(b):
        return False
    return all(
        np.array_equal(a[a_rows[start : start + _BLOCK]], b[start : start + _BLOCK])
        for start in range(0, len(a_rows), _BLOCK)
    )


def _identities_paired(g: StrictColumn, p: StrictColumn, partner: np.ndarray) -> bool:
    """`_equal_paired(g.identity, p.identity, partner)` with the identities made block by block: no column-long
    identity (and none of its column-long temporaries) is ever held.  The prediction's side is read at
    random rows: from its narrowed identities when they span little (`narrowed_identity`)."""
    narrowed = narrowed_identity(p) if len(partner) >= NARROW_MIN_ROWS else None
    for start in range(0, len(partner), _BLOCK):
        rows = slice(start, start + _BLOCK)
        if narrowed is None:
            theirs = p.identity_at(partner[rows])
        else:
            offsets, low = narrowed
            theirs = offsets[partner[rows]].astype(np.int64)
            theirs += low  # back to the identities themselves: the comparison below is the same as without
        if not np.array_equal(g.identity_at(rows), theirs):
            return False
    return True


NARROW_MIN_ROWS = 1 << 18  # below this an int64 column sits in cache anyway: narrowing would only add passes
_NARROW = (np.uint8, np.uint16, np.uint32)


def narrowed_identity(c: StrictColumn) -> tuple[np.ndarray, int] | None:
    """(identity - low as the narrowest unsigned type holding the span, low), or None when no FLOAT-free
    column's identities fit 32 bits.  Reading a column at random rows costs a cache miss a row when it is
    8 bytes a cell (3.3 * 10**6 rows: 26 MB); text tokens, flags and small integers fit 1 or 2 bytes a cell,
    an array that stays in cache.  FLOAT cells are their bits, which span everything: not tried."""
    if c.has_float or c.n == 0:
        return None
    lows, highs = [], []
    for start in range(0, c.n, _BLOCK):
        part = c.identity_at(slice(start, start + _BLOCK))
        lows.append(int(part.min()))
        highs.append(int(part.max()))
    low, high = min(lows), max(highs)
    dtype = next((t for t in _NARROW if high - low <= np.iinfo(t).max), None)
    if dtype is None:
        return None
    offsets = np.empty(c.n, dtype=dtype)
    for start in range(0, c.n, _BLOCK):
        rows = slice(start, start + _BLOCK)
        offsets[rows] = np.subtract(c.identity_at(rows), low)  # within [0, high - low]: no overflow
    return offsets, low


def _sum(h: np.ndarray) -> int:
    with np.errstate(over="ignore"):
        return int(h.sum(dtype=np.uint64))


def _IDENTITY(c: StrictColumn) -> np.ndarray:
    return c.identity_key


def _EXACT(c: StrictColumn) -> np.ndarray:
    return c.key(True)


def _LOOSE(c: StrictColumn) -> np.ndarray:
    return c.key(False)


def _sums_agree(hg, hp) -> bool:
    """Equal row-hash multisets have equal sums (a cheap, linear necessary condition)."""
    with np.errstate(over="ignore"):
        return bool(hg.sum(dtype=np.uint64) == hp.sum(dtype=np.uint64))


def _keys_agree(hg, hp) -> bool:
    with np.errstate(over="ignore"):
        if hg.sum(dtype=np.uint64) != hp.sum(dtype=np.uint64):
            return False
    return bool(np.array_equal(np.sort(hg), np.sort(hp)))


def _match_groups(search, assigned, hg, hp, og, ok) -> bool:
    """Tolerance can reorder near-equal rows: re-match the rows of each disagreeing group exactly."""
    bad_keys = np.unique(hg[og][~ok])
    for key in bad_keys.tolist():
        rows_g = np.flatnonzero(hg == key)
        rows_p = np.flatnonzero(hp == key)
        if len(rows_g) != len(rows_p) or len(rows_g) > _GROUP_LIMIT:
            return False
        compat = np.ones((len(rows_g), len(rows_p)), dtype=bool)
        for i, j in assigned.items():
            gi = np.repeat(rows_g, len(rows_p))
            pj = np.tile(rows_p, len(rows_g))
            compat &= cells_equal(search.gold[i], search.pred[j], search.tol, gi, pj).reshape(compat.shape)
        if bipartite([list(np.flatnonzero(r)) for r in compat], len(rows_p)) is None:
            return False
    return True
