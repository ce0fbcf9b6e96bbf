"""The strict rule's cheaper paths give the answers of the plain definitions they replace.

hash_order is a stable argsort of hashes, lazily made `num` and the np.where identity are the cells'
values, head prints only ever add whole fingerprints, and look-alike columns (the same values in
every column, only whole rows tell them apart) still need the right mapping.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evaluators.matching.kernels.numeric import hash_order, hash_sorted
from evaluators.matching.semantics import STRICT_TOL
from evaluators.matching.strict import rule as strict
from evaluators.matching.strict.cells import FLOAT, HEAD, INT, NULL, TEXT, TokenTable, from_numbers
from evaluators.matching.strict.columns import strict_columns
from evaluators.matching.strict.mapping_search import MappingSearch


def _columns(frame: pd.DataFrame, tokens: TokenTable):
    return strict_columns(frame, tokens, lambda cols: frame.iloc[:, cols].astype(object))


def _verdict(gold: pd.DataFrame, pred: pd.DataFrame):
    tokens = TokenTable()
    return strict.compare(_columns(pred, tokens), _columns(gold, tokens), ignore_order=True, tol=STRICT_TOL)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 100, 5000])
def test_hash_order_is_a_stable_argsort(n):
    rng = np.random.default_rng(n)
    cases = [
        rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2),
        rng.integers(0, 4, n).astype(np.uint64) << np.uint64(62),  # many equal hashes
        rng.integers(0, 40, n).astype(np.uint64),  # only the low bits (the packed row numbers) differ
        (rng.integers(0, 3, n).astype(np.uint64) << np.uint64(40)) | rng.integers(0, 2**20, n).astype(np.uint64),
        _few_ties_past_int64(rng, n),
    ]
    for h in cases:
        assert np.array_equal(hash_order(h), np.argsort(h, kind="stable"))
        _assert_sorted_with_order(h)


def _assert_sorted_with_order(h: np.ndarray) -> None:
    """hash_sorted gives the stable argsort and the hashes in its order (repaired groups and fallback too)."""
    order, ranked = hash_sorted(h)
    assert np.array_equal(order, np.argsort(h, kind="stable"))
    assert np.array_equal(ranked, h[order]) and np.array_equal(ranked, np.sort(h))


def test_hash_order_repairs_thousands_of_groups_in_one_sort():
    rng = np.random.default_rng(7)
    n, pairs = 40_000, 3_000  # row numbers take 16 bits; 3000 pairs share their high bits, in reverse order
    top = rng.permutation(2**20)[:n].astype(np.uint64)
    top[1 : 2 * pairs : 2] = top[0 : 2 * pairs : 2]
    low = np.zeros(n, dtype=np.uint64)
    low[0 : 2 * pairs : 2] = 9  # the earlier row of each pair has the larger hash: misordered when packed
    low[1 : 2 * pairs : 2] = rng.integers(0, 9, pairs).astype(np.uint64)
    low[2 * pairs : 2 * pairs + 50] = 5  # equal hashes among the others too
    h = (top << np.uint64(40)) | low
    h[2 * pairs + 50 : 2 * pairs + 100] = h[2 * pairs : 2 * pairs + 50]
    order = hash_order(h)
    assert np.array_equal(order, np.argsort(h, kind="stable"))
    _assert_sorted_with_order(h)


def _few_ties_past_int64(rng, n: int) -> np.ndarray:
    """Distinct hashes above 2**63 where a few pairs share their high bits: repaired group by group."""
    h = np.uint64(2**63) | (rng.permutation(n).astype(np.uint64) << np.uint64(20))
    rows = rng.integers(0, n, 2 * min(n // 2, 4))
    h[rows[1::2]] = h[rows[::2]] ^ np.uint64(rng.integers(1, max(n, 2)))  # below the packed row numbers
    return h


def test_hash_order_many_misordered_groups_fall_back():
    h = np.arange(5000, dtype=np.uint64)[::-1].copy()  # every neighbour misordered within its high bits
    assert np.array_equal(hash_order(h), np.argsort(h, kind="stable"))
    _assert_sorted_with_order(h)


def test_lazy_num_is_the_integers_as_floats():
    values = np.array([3, -7, 2**53 + 1, 0], dtype=np.int64)
    column = from_numbers("a", values)
    assert column.cells.num is None  # not made until asked
    assert np.array_equal(column.num, values.astype(float))
    with_null = from_numbers("b", values, np.array([False, True, False, False]))
    assert np.isnan(with_null.num[1]) and with_null.num[0] == 3.0
    assert with_null.span == (0.0, float(2**53 + 1), float(2**53 + 1))


def test_identity_per_class():
    frame = pd.DataFrame({"mixed": ["7", None, "x", "-0.0", "2.5", "y", "7"]}, dtype=object)
    (column,) = _columns(frame, TokenTable())
    assert list(column.cls) == [INT, NULL, TEXT, FLOAT, FLOAT, TEXT, INT]
    identity = column.identity
    assert identity[0] == identity[6] == 7 and identity[1] == 0
    assert identity[3] == np.float64(0.0).view(np.int64)  # -0.0 as 0.0
    assert identity[4] == np.float64(2.5).view(np.int64)
    assert identity[2] != identity[5] and identity[2] == column.code[2]


def test_integer_columns_keep_no_code_array():
    column = from_numbers("a", np.arange(10, dtype=np.int64))
    assert column.code.strides == (0,) and (column.code == -1).all()


def test_columns_without_ints_keep_no_int_array():
    """A float column and a text column of categories have no INT cell: their `ival` holds no memory (a
    column-long zeros array was 8 bytes a cell, written by calloc on a reused heap), and reads as zeros."""
    floats = from_numbers("f", np.array([1.5, np.nan, -2.0]))
    frame = pd.DataFrame({"cat": pd.array(["a", "b", "a", None] * 300, dtype="str")})
    (text,) = _columns(frame, TokenTable())
    for column in (floats, text):
        assert column.ival.strides == (0,) and not column.ival.any() and len(column.ival) == column.n


def test_float_identity_at_rows_is_the_general_formula():
    """Every cell FLOAT: the identity at any rows is its float's bits with -0.0 as 0.0, as for mixed columns."""
    values = np.array([1.5, -0.0, 0.0, 2.5, -3.25] * 40)
    column = from_numbers("f", values)
    rows = np.random.default_rng(3).permutation(len(values))
    mixed = _columns(pd.DataFrame({"m": ["x"] + [repr(v) for v in values.tolist()]}, dtype=object), TokenTable())[0]
    assert np.array_equal(column.identity_at(rows), mixed.identity_at(rows + 1))
    assert column.identity_at(np.array([1]))[0] == column.identity_at(np.array([2]))[0] == 0


def test_all_text_column_shares_the_token_codes():
    """Every cell a string of one part or NULL: `code` is the token table's own codes, not a second int64
    copy, and equal strings still get equal codes across columns."""
    tokens = TokenTable()
    gold = pd.DataFrame({"cat": pd.array(["a", "b", "c", "a"] * 300, dtype="str")})
    pred = pd.DataFrame({"cat": pd.array(["c", "a", "b", "a"] * 300, dtype="str")})
    (g,), (p,) = _columns(gold, tokens), _columns(pred, tokens)
    assert np.shares_memory(g.code, g.texts[0].codes)
    assert g.code[0] == p.code[1] and g.code[2] == p.code[0] and g.code[0] != g.code[1]
    with_null = pd.DataFrame({"cat": pd.array(["a", None, "b"] * 400, dtype="str")})
    (n,) = _columns(with_null, tokens)
    assert np.shares_memory(n.code, n.texts[0].codes)  # NULL cells are -1 in both
    assert n.code[1] == -1 and n.code[0] == g.code[0]
    mixed = pd.DataFrame({"m": ["a", "7", None] * 400}, dtype=object)  # a number among the texts: its own code
    (m,) = _columns(mixed, tokens)
    assert m.code[1] == -1 and m.code[2] == -1 and m.code[0] == g.code[0]


def test_same_head_different_tail_are_both_tried():
    """Two predicted columns agree on their first HEAD rows and differ later: only one of them keeps the rows
    whole, so the search must not take them for one content."""
    n = HEAD + 50
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, n)
    b = a.copy()
    b[HEAD:] = rng.permutation(b[HEAD:])  # same values, scrambled only past the head
    key = np.arange(n) % 7
    gold = pd.DataFrame({"k": key, "x": a})
    pred = pd.DataFrame({"p0": b, "p1": a, "p2": key})
    tokens = TokenTable()
    g, p = _columns(gold, tokens), _columns(pred, tokens)
    assert p[0].head_print == p[1].head_print and p[0].fingerprint != p[1].fingerprint
    found = MappingSearch(g, p, [[2], [0, 1]], STRICT_TOL, identical=True).run()
    assert found == (2, 1)
    assert _verdict(gold, pred).passed
    pred_wrong = pd.DataFrame({"p0": b, "p2": key})
    assert not _verdict(gold, pred_wrong).passed


@pytest.mark.parametrize("rows", [300, 3000])
def test_lookalike_columns(rows):
    rng = np.random.default_rng(rows)
    values = rng.integers(0, 10, rows)
    gold = pd.DataFrame({f"k{c}": rng.permutation(values) for c in range(6)})
    order = rng.permutation(rows)
    pred = gold.iloc[order, [3, 0, 5, 1, 4, 2]].reset_index(drop=True)
    pred.columns = [f"c{i}" for i in range(6)]
    verdict = _verdict(gold, pred)
    assert verdict.passed and verdict.mapping == (1, 3, 5, 0, 4, 2), verdict
    swapped = pred.copy()
    swapped.iloc[:2, 0] = swapped.iloc[:2, 0].to_numpy()[::-1]  # two cells of one column trade places
    if swapped.iloc[0, 0] != swapped.iloc[1, 0]:
        assert not _verdict(gold, swapped).passed


def test_nulls_with_floats_and_text():
    rng = np.random.default_rng(9)
    n = 4000
    missing = rng.random((n, 3)) < 0.6
    gold = pd.DataFrame(
        {
            "t": np.where(missing[:, 0], None, rng.choice(["a", "b", "c"], n)),
            "i": np.where(missing[:, 1], np.nan, rng.integers(0, 9, n).astype(float)),
            "f": np.where(missing[:, 2], np.nan, np.round(rng.normal(0, 1, n), 2)),
        }
    )
    pred = gold.iloc[rng.permutation(n), [2, 0, 1]].reset_index(drop=True)
    assert _verdict(gold, pred).passed
    moved = pred.copy()
    first = int(np.flatnonzero(moved.iloc[:, 1].isna())[0])
    moved.iloc[first, 1] = "a"  # a NULL becomes a value: NULL equals only NULL
    assert not _verdict(gold, moved).passed


def test_typing_through_the_dictionary_is_the_row_by_row_typing():
    from evaluators.matching.strict import text_cells

    texts = ["7", " -3 ", "2.50", "1e3", "inf", "nan", "NaN text", "abc", "", "99999999999999999999", "+4", "0x1"]
    rng = np.random.default_rng(4)
    values = [texts[k] if k < len(texts) else None for k in rng.integers(0, len(texts) + 2, 5000)]
    array = pa.array(values, type=pa.string())
    null = array.is_null().to_numpy(zero_copy_only=False)
    assert text_cells._few_distinct(array)
    tokens_a, tokens_b = TokenTable(), TokenTable()
    encoded = text_cells._type_encoded(array, tokens_a)
    scanned = text_cells._type_scanned(array, null, tokens_b)
    assert np.array_equal(encoded.cls, scanned.cls) and np.array_equal(encoded.ival, scanned.ival)
    assert np.array_equal(np.nan_to_num(encoded.num, nan=-1.5), np.nan_to_num(scanned.num, nan=-1.5))
    assert encoded.bigints == scanned.bigints and encoded.bigints
    text = encoded.cls == TEXT
    codes_a, codes_b = tokens_a.ensure(encoded.texts[0]), tokens_b.ensure(scanned.texts[0])
    # The same texts get the same codes (each table numbers them its own way): one-to-one on TEXT cells.
    pairs = set(zip(codes_a[text].tolist(), codes_b[text].tolist(), strict=True))
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def test_text_column_with_few_distinct_values_may_fail():
    rng = np.random.default_rng(2)
    n = 6000
    gold = pd.DataFrame({"cat": rng.choice(["a", "b", "7", "2.5"], n), "v": rng.integers(0, 3, n)})
    pred = gold.iloc[rng.permutation(n)].reset_index(drop=True)
    assert _verdict(gold, pred).passed
    changed = pred.copy()
    changed.iloc[0, 0] = {"a": "b", "b": "a", "7": "2.5", "2.5": "7"}[changed.iloc[0, 0]]
    assert not _verdict(gold, changed).passed


def test_sampled_rows_rule_out_lookalike_partners_on_large_tables():
    """Past _Sample.MIN_ROWS, candidates are first tried on sampled rows: the right partner still passes,
    and a table whose rows were scrambled across columns still fails."""
    from evaluators.matching.strict.mapping_search import _Sample

    rows = _Sample.MIN_ROWS + 1000
    rng = np.random.default_rng(11)
    values = rng.integers(0, 10, rows)
    gold = pd.DataFrame({f"k{c}": rng.permutation(values) for c in range(4)})
    pred = gold.iloc[rng.permutation(rows), [2, 0, 3, 1]].reset_index(drop=True)
    pred.columns = ["c0", "c1", "c2", "c3"]
    tokens = TokenTable()
    g, p = _columns(gold, tokens), _columns(pred, tokens)
    everything = [[0, 1, 2, 3] for _ in g]
    assert MappingSearch(g, p, everything, STRICT_TOL, identical=True).run() == (1, 3, 0, 2)
    scrambled = pred.copy()
    scrambled["c3"] = rng.permutation(scrambled["c3"].to_numpy())  # same values, rows no longer whole
    s = _columns(scrambled, tokens)
    assert MappingSearch(g, s, everything, STRICT_TOL, identical=True).run() is None
    assert not _verdict(gold, scrambled).passed


def test_identical_candidates_by_signature_then_hash_sum():
    gold = pd.DataFrame({"a": [1, 2, 3, 3], "b": [1, 1, 2, 3], "t": ["x", "y", None, "x"]})
    pred = pd.DataFrame({"p": [1, 2, 2, 3], "q": [3, 3, 2, 1], "r": ["x", None, "x", "y"], "s": [1, 3, 1, 2]})
    tokens = TokenTable()
    g, p = _columns(gold, tokens), _columns(pred, tokens)
    # a: same counts and span as p, q and s, but only q holds its values; b's values are s's.
    assert strict._identical_candidates(g, p) == [[1], [3], [2]]
    # A lone look-alike (same counts and span, other values) is offered, and the search then rules it out.
    lone = _columns(pd.DataFrame({"p": [1, 2, 2, 3]}), tokens)
    assert strict._identical_candidates(g[:1], lone) == [[0]]
    assert MappingSearch(g[:1], lone, [[0]], STRICT_TOL, identical=True).run() is None


def test_row_pairing_skips_keys_without_a_partner_and_keeps_those_with_one():
    from evaluators.matching.kernels import row_pairing

    row_pairing._RECENT.clear()
    gold = [np.array([5.0, 1.0, 3.0, 2.0])]
    moved = [np.array([1.0, 2.0, 3.0, 5.0000001])]  # same length, another largest value: never a partner
    assert row_pairing.row_pairings(gold, moved) == []
    same = [np.array([2, 5, 1, 3])]  # integers holding the same values pair the rows
    (pairing,) = row_pairing.row_pairings(gold, same)
    assert np.array_equal(gold[0][pairing], same[0])


def test_loose_key_of_a_number_column_is_the_general_formula():
    floats = from_numbers("f", np.array([1.5, -2.0, 1e10]))
    mixed = _columns(pd.DataFrame({"m": ["1.5", "2", None]}, dtype=object), TokenTable())[0]
    assert floats.key(False).strides == (0,)
    assert floats.key(False)[0] == mixed.key(False)[0] == mixed.key(False)[1] != mixed.key(False)[2]


def test_rounded_hash_block_by_block_is_the_whole_column_formula():
    """The tolerant search's rounded row hash, made block by block, is the whole-column formula (with
    non-finite and overflowing values, which count as 0, inside a later block only)."""
    from evaluators.matching.kernels.numeric import BLOCK
    from evaluators.matching.strict.mapping_search import _mix

    rng = np.random.default_rng(3)
    n = BLOCK + 300
    a = np.round(rng.normal(100, 30, n), 3)
    b = rng.normal(0, 1e6, n)
    b[BLOCK + 5 : BLOCK + 9] = [np.inf, -np.inf, 1e300, -1e300]
    columns = [from_numbers("a", a), from_numbers("b", b), from_numbers("i", rng.integers(-50, 50, n))]
    h = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64)
    search = MappingSearch(columns, columns, [[0], [1], [2]], STRICT_TOL)
    want = h.copy()
    grid = max(STRICT_TOL, 1e-12) * 3.7139
    with np.errstate(invalid="ignore", over="ignore"):
        for c in columns:
            rounded = np.nan_to_num(np.round(c.num / grid), nan=0.0, posinf=0.0, neginf=0.0)
            _mix(want, rounded.astype(np.int64).view(np.uint64), in_place=True)
    assert np.array_equal(search._rounded_hash(h, columns), want)


def test_mix_block_by_block_is_the_formula():
    from evaluators.matching.kernels.numeric import BLOCK
    from evaluators.matching.strict.mapping_search import _GOLDEN, _mix

    rng = np.random.default_rng(4)
    n = 2 * BLOCK + 17
    h = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) * np.uint64(3)
    for key in (rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64), np.broadcast_to(np.uint64(5), (n,))):
        with np.errstate(over="ignore"):
            want = (h ^ key) * _GOLDEN
            want ^= want >> np.uint64(29)
        assert np.array_equal(_mix(h, key), want)
        own = h.copy()
        assert _mix(own, key, in_place=True) is own and np.array_equal(own, want)


def test_block_by_block_identity_passes_are_the_whole_column_ones():
    """identity_sum, the identical search's hash extension and its paired check run block by block past
    a block's rows: the same numbers as the whole-column formulas, and a difference in the last block is seen."""
    from evaluators.matching.strict import mapping_search as ms
    from evaluators.matching.strict.cells import SUM_BLOCK

    rows = max(SUM_BLOCK, ms._BLOCK) * 2 + 17
    rng = np.random.default_rng(5)
    pool = np.array([1, -3, 2.5, "x", "y", None, 7, 0.1], dtype=object)
    frame = pd.DataFrame({"mixed": pool[rng.integers(0, len(pool), rows)], "ints": rng.integers(0, 9, rows)})
    tokens = TokenTable()
    for column in _columns(frame, tokens):
        key = column.identity_key
        with np.errstate(over="ignore"):
            assert column.identity_sum == int(key.sum(dtype=np.uint64))
        h = rng.integers(0, 2**63, rows, dtype=np.int64).view(np.uint64)
        expected = ms._mix(h, key)
        assert np.array_equal(ms._mix_identity(h, column, in_place=False), expected)
        assert np.array_equal(ms._mix_identity(h.copy(), column, in_place=True), expected)
        order = rng.permutation(rows)
        shuffled = column.identity[order]  # row r of the copy is row order[r] of the column
        assert ms._equal_paired(shuffled, column.identity, order)
        assert not ms._equal_paired(shuffled, column.identity, np.roll(order, 1))
        last = shuffled.copy()
        last[-1] += 1  # one cell of the last (short) block differs
        assert not ms._equal_paired(last, column.identity, order)


def test_cheap_partners_hold_every_pair_a_cheap_proof_accepts():
    """The greedy's first round only tries the pairs cheap_partners names: every pair equal_under(cheap=True)
    accepts is among them (texts, integers, near floats, NULLs), and columns whose counts or spans differ are not."""
    from evaluators.matching.strict.cell_proofs import cheap_partners, equal_under

    n = 300
    rng = np.random.default_rng(3)
    base = {
        "t": rng.choice(["a", "bb", None], n),
        "i": rng.integers(0, 50, n),
        "f": np.round(rng.normal(10, 3, n), 2),
        "z": np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 9, n)),
    }
    gold = pd.DataFrame(base)
    pred = pd.DataFrame(
        {
            "f_near": base["f"] * (1 + 1e-12),  # inside the tolerance: a partner
            "i_same": base["i"],
            "t_same": base["t"],
            "z_same": base["z"],
            "i_shifted": base["i"] + 1000,  # same counts, another span: never a partner
            "t_other": rng.choice(["xyz", None], n),  # other raw texts: never a partner
        }
    )
    tokens = TokenTable()
    g, p = _columns(gold, tokens), _columns(pred, tokens)
    partners = cheap_partners(g, p, STRICT_TOL)
    for i, gc in enumerate(g):
        for j, pc in enumerate(p):
            if equal_under(gc, pc, None, STRICT_TOL, cheap=True):
                assert j in partners[i], (gc.name, pc.name)
    names = [{p[j].name for j in found} for found in partners]
    assert "i_same" in names[1] and "i_shifted" not in names[1]
    assert "f_near" in names[2] and "t_other" not in names[0]
    assert all("i_shifted" not in found for found in names)
    assert _verdict(gold, pred.iloc[:, :4]).passed
    wrong = pred.iloc[:, :4].copy()
    wrong["i_same"] = wrong["i_same"] + 1
    assert not _verdict(gold, wrong).passed
