"""The strict table rule.

A prediction matches when the row counts are equal and some one-to-one
mapping of the gold's condition columns onto predicted columns makes the
projected rows equal: as a multiset with `ignore_order`, as a sequence
without.  Rows stay whole.

First a single pairing of rows is tried (`row_pairing.py`: the identity, or the
one given by a key column with distinct values): if under it every gold
column has distinct partners whose cells are all equal (`cell_proofs.py`:
identical texts, or typed cells), the rows are equal, which proves the match.  Without `ignore_order` that pairing is the only one
allowed, so it also decides failures.  Otherwise the mapping is searched
(`mapping_search.py`): candidate pairs are filtered column by column, then columns are
assigned one at a time and any partial mapping whose projected rows already
disagree is dropped, so equal-looking columns never lead to trying all
permutations.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from evaluators.matching.kernels import row_pairing
from evaluators.matching.kernels.numeric import all_close, first_false
from evaluators.matching.strict.cell_proofs import cheap_checks, cheap_partners, equal_under, signatures_agree
from evaluators.matching.strict.cells import FLOAT, INT, NULL, StrictColumn
from evaluators.matching.strict.mapping_search import SEARCH_BUDGET, MappingSearch, bipartite, cells_equal
from evaluators.matching.verdicts import Verdict, cells_differ


def column_compatible(g: StrictColumn, p: StrictColumn, ignore_order: bool, tol: float) -> bool:
    """Necessary for g to map onto p (and sufficient without ignore_order)."""
    if g.n != p.n:
        return False
    if not ignore_order:
        return equal_under(g, p, None, tol)
    if not signatures_agree(g, p, tol):
        return False
    gn, gk, gt, gv = g.profile
    pn, pk, pt, pv = p.profile
    if gn != pn or gk != pk or not np.array_equal(gt, pt):
        return False
    return all_close(gv, pv, tol)  # sorted order is the best alignment under a tolerance; block by block


def compare(pred: list[StrictColumn], gold: list[StrictColumn], *, ignore_order: bool, tol: float) -> Verdict:
    n_gold = gold[0].n if gold else 0
    n_pred = pred[0].n if pred else 0
    if gold and n_gold != n_pred:
        return Verdict(0.0, "row_count_mismatch", f"gold has {n_gold} row(s), prediction has {n_pred}")
    if len(pred) < len(gold):
        return Verdict(
            0.0, "column_not_found", f"gold needs {len(gold)} distinct column(s), prediction has {len(pred)}"
        )
    rows = _pairing(gold, pred, tol) if ignore_order else None
    mapping = _greedy(gold, pred, rows, tol)
    paired = None
    if mapping is None and not ignore_order:  # in order, the identity is the only pairing: it decides
        paired = [[j for j, p in enumerate(pred) if equal_under(g, p, rows, tol)] for g in gold]
        mapping = bipartite(paired, len(pred)) if all(paired) else None
    if mapping is not None:
        return Verdict(1.0, "match", _mapping_words(gold, pred, mapping), tuple(mapping))
    if not ignore_order:
        return _aligned_failure(gold, pred, paired, tol)
    found = MappingSearch(gold, pred, _identical_candidates(gold, pred), tol, identical=True).run()
    if found is not None:
        return Verdict(1.0, "match", _mapping_words(gold, pred, found), found)
    candidates: list = [None] * len(gold)
    for i in sorted(range(len(gold)), key=lambda i: gold[i].raw is not None):  # text columns last: they need codes
        candidates[i] = [j for j, p in enumerate(pred) if column_compatible(gold[i], p, True, tol)]
        if not candidates[i]:
            return Verdict(0.0, "column_not_found", _describe_lonely(gold[i], pred, True, tol))
    search = MappingSearch(gold, pred, candidates, tol)
    found = search.run()
    if found is not None:
        return Verdict(1.0, "match", _mapping_words(gold, pred, found), found)
    if search.budget <= 0:
        return Verdict(0.0, "mapping_search_exhausted", f"gave up after {SEARCH_BUDGET} partial column mappings")
    return Verdict(
        0.0,
        "value_mismatch",
        "every column has a partner with the same values, but no mapping "
        "keeps the rows whole: values are right column by column but scrambled across rows",
    )


def _identical_candidates(gold: list[StrictColumn], pred: list[StrictColumn]) -> list[list[int]]:
    """For each gold column, the predicted columns whose cells may be identical as a multiset: the only
    partners a mapping of identical cells can use, found without comparing every pair.  Identical multisets
    share their length, class counts and numeric span (signatures already made); only when several columns
    share those are the multiset's sums asked for: first the plain sum of its identities, then, among
    columns that share it too, its hash sum (each a pass over the column, the second a costlier one)."""
    by_look: dict = {}
    for j, p in enumerate(pred):
        by_look.setdefault((p.n, p.counts, p.span), []).append(j)
    candidates = []
    for g in gold:
        alike = by_look.get((g.n, g.counts, g.span), [])
        if len(alike) > 1:
            alike = [j for j in alike if pred[j].plain_sum == g.plain_sum]
        if len(alike) > 1:
            alike = [j for j in alike if pred[j].identity_sum == g.identity_sum]
        candidates.append(alike)
    return candidates


def _pairing(gold: list[StrictColumn], pred: list[StrictColumn], tol: float) -> np.ndarray | None:
    """The row pairing to try first (from a key column with distinct values), or None."""
    keys = [[c.key_values for c in cols if c.typed and c.key_values is not None] for cols in (gold, pred)]
    judges = gold[: row_pairing.JUDGES]
    return row_pairing.best_pairing(
        row_pairing.row_pairings(*keys),
        lambda: [[check for p in pred if p.n == g.n for check in cheap_checks(g, p, tol)] for g in judges],
    )


def _greedy(gold, pred, rows, tol) -> list[int] | None:
    """Each gold column takes the first free predicted column equal to it under `rows`: first by
    cheap proofs only (identical texts, cells already typed), then typing what it must."""
    free = list(range(len(pred)))
    mapping: list = [None] * len(gold)
    partners = cheap_partners(gold, pred, tol)  # the first round's only possible pairs, found without a pass each
    for cheap in (True, False):
        for i, g in enumerate(gold):
            if mapping[i] is None:
                # The second round only adds what the first skipped: pairs with a column not yet typed.
                mapping[i] = next(
                    (
                        j
                        for j in free
                        if (j in partners[i] if cheap else not (g.typed and pred[j].typed))
                        and equal_under(g, pred[j], rows, tol, cheap)
                    ),
                    None,
                )
                if mapping[i] is not None:
                    free.remove(mapping[i])
    return None if None in mapping else mapping  # None: maybe another assignment works


def _aligned_failure(gold, pred, paired, tol) -> Verdict:
    lonely = [i for i, c in enumerate(paired) if not c]
    if lonely:
        return Verdict(0.0, "column_not_found", _describe_lonely(gold[lonely[0]], pred, False, tol))
    return Verdict(
        0.0,
        "column_not_found",
        "no one-to-one mapping: several gold columns can only map onto the same predicted column",
    )


def _mapping_words(gold, pred, mapping) -> str:
    return mapping_words([g.name for g in gold], [pred[j].name for j in mapping])


def mapping_words(gold_names: list[str], partner_names: list[str]) -> str:
    """Words for a match: which predicted column each gold column maps onto."""
    pairs = ", ".join(f"{g}->{p}" for g, p in zip(gold_names, partner_names, strict=False))
    return f"rows equal under the column mapping {pairs}" if pairs else "no columns to compare"


def _describe_lonely(g: StrictColumn, pred: list[StrictColumn], ignore_order: bool, tol: float) -> str:
    head = f"gold column {g.name!r} has no partner among the predicted columns"
    best, best_share, best_index = None, -1.0, None
    for p in pred:
        if p.n != g.n or not _may_share(g, p):
            continue
        ig, ip = (_words_order(g), _words_order(p)) if ignore_order else (None, None)
        eq = cells_equal(g, p, tol, ig, ip)
        share = float(eq.mean()) if len(eq) else 1.0
        if share > best_share:
            best, best_share = p, share
            index = first_false(eq)
            best_index = (
                None
                if index is None
                else (index, _cell(g, index if ig is None else ig[index]), _cell(p, index if ip is None else ip[index]))
            )
    if best is None:
        return head
    text = f"{head}; closest is {best.name!r} ({best_share:.0%} of cells agree"
    text += ", sorted)" if ignore_order else ")"
    if best_index:
        text += f"; first difference at {'sorted ' if ignore_order else ''}row {best_index[0]}: " + cells_differ(
            best_index[1], best_index[2]
        )
    return text


def _may_share(g: StrictColumn, p: StrictColumn) -> bool:
    """Can any non-NULL cell of g equal a cell of p (numbers with numbers, TEXT with TEXT)?"""
    (_, g_num, g_text), (_, p_num, p_text) = g.counts, p.counts
    return (g_num and p_num) or (g_text and p_text) or not (g_num or g_text)


def _words_order(c: StrictColumn) -> np.ndarray:
    """Rows grouped by kind of cell, numbers in order (for all-number columns: just by value)."""
    if c.uniform in (INT, FLOAT):
        return np.argsort(c.num, kind="stable")  # what the lexsort below gives when every key is equal
    return np.lexsort([c.num, c.key(False)])


def _cell(c: StrictColumn, i: int):
    """The cell's value, for `cell_pair`'s words (None for NULL)."""
    if int(c.cls[i]) == NULL:
        return None
    if c.source is not None:
        value = c.source[i]
        return value.as_py() if isinstance(value, pa.Scalar) else value
    return int(c.ival[i]) if int(c.cls[i]) == INT else float(c.num[i])
