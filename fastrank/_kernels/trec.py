"""trec_eval 10's per-query measures, computed as trec_eval computes them.

Arrays in, arrays out, nothing raises. Truth values are trec_eval's integer levels: a
level >= `level` (never negative) is relevant, 0 <= level < `level` is judged
non-relevant, and a negative level is pooled but unjudged. Row i of `topk` is truth row
i; its documents are looked up in the row by binary search (both hold document codes
in trec_eval's docno order), so no scratch of the catalogue's size is needed, and its
padding (-1) comes only at the end.

Each measure follows trec_eval's source: the same running sums in the same order (hits,
Σ P@rank, gains divided by log2(rank + 1)), the same integer counts, and cutoffs past
the ranking filled as trec_eval fills them, so every value is trec_eval's to the bit.
"""

import math

import numpy as np

from . import codes
from .compare import greater, lesser
from .frames import bounds, integer, matrix, real, vector
from .jit import njit
from .sorting import SMALL, sort_top

# measure codes of slot_code; slot_cut holds the cutoff of P .. SUCCESS, slot_point
# the recall point of IPREC
NUM_RET = codes.TREC_NUM_RET
NUM_REL = codes.TREC_NUM_REL
NUM_REL_RET = codes.TREC_NUM_REL_RET
MAP = codes.TREC_MAP
RPREC = codes.TREC_RPREC
BPREF = codes.TREC_BPREF
RECIP_RANK = codes.TREC_RECIP_RANK
NDCG = codes.TREC_NDCG
IPREC = codes.TREC_IPREC
P = codes.TREC_P
RECALL = codes.TREC_RECALL
NDCG_CUT = codes.TREC_NDCG_CUT
MAP_CUT = codes.TREC_MAP_CUT
SUCCESS = codes.TREC_SUCCESS
INFAP = codes.TREC_INFAP
RPREC_MULT = codes.TREC_RPREC_MULT
UTILITY = codes.TREC_UTILITY
PT11_AVG = codes.TREC_11PT_AVG
BING = codes.TREC_BING
G = codes.TREC_G
DCG = codes.TREC_DCG
IDEAL_DCG = codes.TREC_IDEAL_DCG
NDCG_REL = codes.TREC_NDCG_REL
RNDCG = codes.TREC_RNDCG
RELATIVE_P = codes.TREC_RELATIVE_P
SET_P = codes.TREC_SET_P
SET_RELATIVE_P = codes.TREC_SET_RELATIVE_P
SET_RECALL = codes.TREC_SET_RECALL
SET_MAP = codes.TREC_SET_MAP
SET_F = codes.TREC_SET_F
NUM_NONREL_JUDGED_RET = codes.TREC_NUM_NONREL_JUDGED_RET
YAAP = codes.TREC_YAAP
RBP = codes.TREC_RBP
RBP_RESID = codes.TREC_RBP_RESID
UNJ = codes.TREC_UNJ

# The measures of graded gains: ndcg_cut (the ideal of the row's levels, `sort_top`) and
# the gain family (`_gain_table`, `_dcg_family`, `_rbp`). A walk of none of them (trec_eval's
# default measures are) compiles none of their code: `trec_rows`' `graded`.
GAIN_CODES = frozenset({NDCG_CUT, NDCG, DCG, IDEAL_DCG, NDCG_REL, RNDCG, G, RBP})

_NONPOOL = -1.0   # trec_eval's RELVALUE_NONPOOL: retrieved, not in the qrels
_UNJUDGED = -2.0  # RELVALUE_UNJUDGED: in the qrels with a negative level
_INFAP_EPSILON = 0.00001
_NEG_NAN = -np.nan  # what 0.0 / 0.0 gives in C on x86: a NaN with its sign bit set


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _lround(x):
    """C's lround for finite x: the nearest integer, halves away from zero."""
    if x >= 0.0:
        whole = np.floor(x)
        return np.int64(whole) + (1 if x - whole >= 0.5 else 0)
    whole = np.ceil(x)
    return np.int64(whole) - (1 if whole - x >= 0.5 else 0)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gain_below(a, b):
    """trec_eval's comparison of two gains (comp_rel_gain): their difference cast to a
    C int, so gains less than 1 apart compare equal. True when a sorts after b."""
    d = a - b
    return d >= 1.0


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _msort(order, gain, tmp, n):
    """Sort order[:n] by gain as glibc's merge sort does (top-down, stable, the left run
    first on ties) under trec_eval's comparison of gains: the recursion unrolled onto a
    stack (numba cannot cache recursive functions)."""
    depth = np.int64(256)  # sized as int64: a literal 256 compiles an np.empty of its own
    stack_lo = np.empty(depth, np.int64)
    stack_n = np.empty(depth, np.int64)
    stack_merge = np.empty(depth, np.int64)  # 0 or 1: a bool array compiles another
    top = 0
    stack_lo[0] = 0
    stack_n[0] = n
    stack_merge[0] = 0
    top = 1
    while top > 0:
        top -= 1
        lo = stack_lo[top]
        size = stack_n[top]
        if size <= 1:
            continue
        n1 = size // 2
        if not stack_merge[top]:
            # merge after both halves, the left half sorted first
            stack_lo[top] = lo
            stack_n[top] = size
            stack_merge[top] = 1
            stack_lo[top + 1] = lo + n1
            stack_n[top + 1] = size - n1
            stack_merge[top + 1] = 0
            stack_lo[top + 2] = lo
            stack_n[top + 2] = n1
            stack_merge[top + 2] = 0
            top += 3
            continue
        a = lo
        b = lo + n1
        end_a = lo + n1
        end_b = lo + size
        t = 0
        while a < end_a and b < end_b:
            if not _gain_below(gain[order[a]], gain[order[b]]):
                tmp[t] = order[a]
                a += 1
            else:
                tmp[t] = order[b]
                b += 1
            t += 1
        while a < end_a:
            tmp[t] = order[a]
            a += 1
            t += 1
        for j in range(t):
            order[lo + j] = tmp[j]
    return 0


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gain_table(counts, max_rel, pair_level, pair_gain, lo, hi, t_level, t_gain, t_count,
                order, tmp, gain_at):
    """trec_eval's gain table of a query (setup_gains): the `level=gain` pairs first,
    then every level 0..max_rel not among them with gain = level, each with the number
    of judged documents at its level; sorted by gain. Fills gain_at[level + 2] (levels
    -2..max_rel) with the gain a ranked document of that level earns. Returns the size."""
    nt = np.int64(0)
    for j in range(lo, hi):
        t_level[nt] = pair_level[j]
        t_gain[nt] = pair_gain[j]
        t_count[nt] = 0
        nt += 1
    n_pairs = nt
    for lv in range(max_rel + 1):
        found = -1
        for j in range(n_pairs):
            if t_level[j] == lv:
                found = j
                break
        if found >= 0:
            t_count[found] = counts[lv]
        else:
            t_level[nt] = lv
            t_gain[nt] = lv
            t_count[nt] = counts[lv]
            nt += 1
    for j in range(nt):
        order[j] = j
    if n_pairs > 0:
        _msort(order, t_gain, tmp, nt)
    for lv in range(max_rel + 3):
        gain_at[lv] = 0.0
        for j in range(nt):
            if t_level[order[j]] == lv - 2:
                gain_at[lv] = t_gain[order[j]]
                break
    return nt


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _gain_of(r, gain_at, max_rel):
    lv = np.int64(r)
    if lv < -2 or lv > max_rel:
        return 0.0
    return gain_at[lv + 2]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _next_ideal(cur, num_at, order, t_gain, t_count):
    """Step trec_eval's ideal ranking by one document: (level index, number at it,
    its gain) after moving past exhausted levels."""
    num_at += 1
    while cur >= 0 and num_at > t_count[order[cur]]:
        num_at = 1
        cur -= 1
    gain = t_gain[order[cur]] if cur >= 0 else 0.0
    return cur, num_at, gain


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _dcg_family(code, rel, n, nt, order, t_gain, t_count, gain_at, max_rel, log2s):
    """ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg and G of a query with a gain table, each
    walked as trec_eval walks it (m_ndcg.c, m_ndcg_rel.c, m_Rndcg.c, m_G.c)."""
    cur = nt - 1
    ideal_gain = t_gain[order[cur]] if cur >= 0 else 0.0
    old_ideal = ideal_gain
    num_at = np.int64(0)
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0  # ndcg_rel's and Rndcg's sum, G's results_g
    n_rel_ideal = 0
    n_rel_ret = 0
    n_changed = 0
    sum_results = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    i = 0
    while i < n and ideal_gain > 0.0:
        g = _gain_of(rel[i], gain_at, max_rel)
        if code == RNDCG:
            cur, num_at, ideal_gain = _next_ideal(cur, num_at, order, t_gain, t_count)
            if old_ideal != ideal_gain:
                if ideal_dcg > 0.0:
                    total += results_dcg / ideal_dcg
                    n_changed += 1
                old_ideal = ideal_gain
            if g != 0.0:
                results_dcg += g / log2s[i]
            if ideal_gain > 0.0:
                ideal_dcg += ideal_gain / log2s[i]
        elif code == G:
            sum_results += g
            cur, num_at, ideal_gain = _next_ideal(cur, num_at, order, t_gain, t_count)
            if ideal_gain > 0.0:
                sum_ideal += ideal_gain
            sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
            if g != 0.0:
                total += g / math.log2(2.0 + sum_cost - sum_results)
        else:
            if g != 0.0:
                results_dcg += g / log2s[i]
            cur, num_at, ideal_gain = _next_ideal(cur, num_at, order, t_gain, t_count)
            if ideal_gain > 0.0:
                n_rel_ideal += 1
                ideal_dcg += ideal_gain / log2s[i]
            if code == NDCG_REL and g > 0.0:
                total += results_dcg / ideal_dcg
                n_rel_ret += 1
        i += 1
    if i < n:
        while i < n:
            g = _gain_of(rel[i], gain_at, max_rel)
            if code == G:
                sum_results += g
                sum_cost += 1.0
                if g != 0.0:
                    total += g / math.log2(2.0 + sum_cost - sum_results)
            else:
                if g != 0.0:
                    results_dcg += g / log2s[i]
                if code == NDCG_REL and g > 0.0:
                    total += results_dcg / ideal_dcg
                    n_rel_ret += 1
            i += 1
        if code == RNDCG and ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            n_changed += 1
    while ideal_gain > 0.0:
        cur, num_at, ideal_gain = _next_ideal(cur, num_at, order, t_gain, t_count)
        if code == RNDCG and old_ideal != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                n_changed += 1
            old_ideal = ideal_gain
        if ideal_gain > 0.0:
            n_rel_ideal += 1
            sum_ideal += ideal_gain
            ideal_dcg += ideal_gain / log2s[i]
        i += 1
    if code == NDCG:
        return results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0
    if code == DCG:
        return results_dcg
    if code == IDEAL_DCG:
        return ideal_dcg
    if code == NDCG_REL:
        total += (n_rel_ideal - n_rel_ret) * results_dcg / ideal_dcg
        return total / n_rel_ideal if total > 0.0 else 0.0
    if code == RNDCG:
        return total / n_changed
    # G
    return total / sum_ideal if sum_ideal > 0.0 else 0.0


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rbp(rel, n, p, nt, order, t_gain, t_level, gain_at, max_rel):
    """Rank-biased precision (m_rbp.c): gains scaled into [0, 1] when any lies outside,
    (1 - p)·Σ gain·p^(rank - 1), the powers multiplied up as trec_eval does."""
    low = 0.0
    high = 0.0
    for j in range(nt):
        low = lesser(low, t_gain[j])
        high = greater(high, t_gain[j])
    scale = low < 0.0 or high > 1.0
    total = 0.0
    cur_p = 1.0
    for i in range(n):
        g = _gain_of(rel[i], gain_at, max_rel)
        if scale:
            # the level's gain in the scaled table (a level outside it earns 0)
            lv = np.int64(rel[i])
            if -2 <= lv <= max_rel and _has_level(lv, nt, t_level):
                g = (g - low) / (high - low)
        if g != 0.0:
            total += g * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _has_level(lv, nt, t_level):
    for j in range(nt):
        if t_level[j] == lv:
            return True
    return False


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _infap(rel, n, level, n_rel):
    """Inferred AP (Yilmaz & Aslam 2006, m_infap.c)."""
    nonrel = 0
    found = 0
    unjudged = 0
    total = 0.0
    for j in range(n):
        r = rel[j]
        if r == _NONPOOL:
            continue
        if r == _UNJUDGED:
            unjudged += 1
            continue
        if r >= 0.0 and r < level:
            nonrel += 1
        else:
            found += 1
            if j == 0:
                total += 1.0
            else:
                fj = np.float64(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (found - 1 + nonrel + unjudged) / fj) * (
                    (found - 1 + _INFAP_EPSILON) / (found - 1 + nonrel + 2 * _INFAP_EPSILON))
    if n_rel:
        total /= n_rel
    return total


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _best_after(hits, n, smax):
    """smax[j] = the best precision at any rank from j to n (j = 1..n)."""
    best = 0.0
    for j in range(n, 0, -1):
        best = greater(best, hits[j] / j)
        smax[j] = best


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _iprec_fast(found, n, n_rel, first, at, smax, point):
    """_iprec from the ranks of the relevant documents and the best precision below each
    rank, in O(1): the same value (trec_eval's walk, read off precomputed arrays)."""
    cut = _lround(point * n_rel)
    if cut > found:
        return 0.0
    if n == 0:
        return _NEG_NAN
    if found == 0:
        return found / n
    if cut <= 0:
        return smax[first]
    return smax[at[cut]]


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _pt11(rel, n, level, found, n_rel, points, lo, hi):
    """11pt_avg (m_11pt_avg.c): interpolated precision summed over the points as
    trec_eval walks them: from the last point given down while the walk meets its
    number of relevant documents, so points not in ascending order score as there."""
    cut = hi - 1
    while cut >= lo and _lround(points[cut] * n_rel) > found:
        cut -= 1
    best = found / n if n > 0 else _NEG_NAN
    count = found
    total = 0.0
    for rank in range(n, 0, -1):
        if count <= 0:
            break
        best = greater(best, count / rank)
        if rel[rank - 1] >= level:
            while cut >= lo and count == _lround(points[cut] * n_rel):
                total += best
                cut -= 1
            count -= 1
    while cut >= lo:
        total += best
        cut -= 1
    return total / (hi - lo)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rprec_mult(rel, n, level, hits, n_rel, first, fraction):
    """Precision at fraction·R documents (m_Rprec_mult.c: the cutoff is
    (long)(fraction·R + 0.9); 0 before the first relevant document)."""
    cut = np.int64(fraction * n_rel + 0.9)
    if cut > n:
        return hits[n] / np.float64(cut)
    if first > 0 and first <= cut:
        return hits[cut] / np.float64(cut)
    return 0.0


def trec_rows(pointer_type, index_type, value_type, list_type, graded):
    """The walk (`frames.run_ranges`) of a range of queries, with scratch of its own:
    out[s, i] = the measure of slot s for query i (see the codes above).

    slot_cut holds a cutoff (P .. UNJ), slot_point a real parameter (the recall point of
    IPREC, the fraction of RPREC_MULT, set_F's β, rbp's p), slot_lo:slot_hi a range of
    extra_value (utility's coefficients, 11pt_avg's points) or of (extra_level,
    extra_value) pairs (the level=gain pairs of the gain measures). judged_only drops
    ranked documents without a judgment (trec_eval -J); num_docs is -N. max_level is the
    largest level in the qrels (0 if none). n_docs > 0: every id is below it and each
    range keeps a mark per document (one load per ranked document); 0: documents are
    found in their row by binary search, with no scratch per document. log2s[j] =
    log2(j + 2), the discount divisor of rank j + 1, long enough for the longest ranking
    and the longest truth row.

    The frame, in order: indptr, indices, data (of the closure's pointer_type, index_type
    and value_type), topk (the lists, of list_type), level (a float), slot_code,
    slot_cut, slot_point, slot_lo, slot_hi, extra_level, extra_value, judged_only,
    num_docs, max_level, n_docs, log2s, max_row_nnz, out (float64, C-contiguous). The
    walk of a range returns 1, or 0 where its scratch could not be allocated.

    `graded`, a constant of the closure, says whether the slots hold a measure of
    GAIN_CODES: the walk without them compiles neither the ideal's sort nor the gain
    family's functions (2 of its 5-6 s first compile; trec_eval's default measures have
    none)."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        indptr = vector(frame, 0, pointer_type)
        indices = vector(frame, 1, index_type)
        data = vector(frame, 2, value_type)
        topk = matrix(frame, 3, list_type)
        level = real(frame, 4)
        slot_code = vector(frame, 5, np.int64)
        slot_cut = vector(frame, 6, np.int64)
        slot_point = vector(frame, 7, np.float64)
        slot_lo = vector(frame, 8, np.int64)
        slot_hi = vector(frame, 9, np.int64)
        extra_level = vector(frame, 10, np.int64)
        extra_value = vector(frame, 11, np.float64)
        judged_only = integer(frame, 12)
        num_docs = integer(frame, 13)
        max_level = integer(frame, 14)
        n_docs = integer(frame, 15)
        log2s = vector(frame, 16, np.float64)
        max_row_nnz = integer(frame, 17)
        out = matrix(frame, 18, np.float64)
        n_rows = topk.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        k_max = topk.shape[1]
        n_slots = slot_code.shape[0]
        n_extra = np.int64(0)  # the longest range of extra values a slot has
        for s in range(n_slots):
            n_extra = greater(n_extra, slot_hi[s] - slot_lo[s])
        one = np.int64(1)
        rel = np.empty(greater(k_max, one), np.float64)  # the level of each ranked document
        hits = np.empty(k_max + 1, np.int64)       # relevant in the first j documents
        at = np.empty(k_max + 1, np.int64)         # the rank of the j-th relevant document
        smax = np.empty(k_max + 1, np.float64)     # the best precision at rank j or below
        unj = np.empty(k_max + 1, np.int64)        # unjudged in the first j documents
        sums = np.empty(k_max + 1, np.float64)     # Σ P@rank over them (AP's sum)
        dcg = np.empty(k_max + 1, np.float64)      # DCG of the first j documents
        gains = np.empty(greater(max_row_nnz, one), np.float64)
        spare = np.empty(np.int64(SMALL), np.float64)  # sort_top's placed values
        ideal = np.empty(max_row_nnz + 1, np.float64)  # ideal DCG of the first j
        counts = np.empty(max_level + 1, np.int64)     # judged documents per level
        for lv in range(max_level + 1):
            counts[lv] = 0
        table = n_extra + max_level + 1
        t_level = np.empty(table, np.int64)
        t_gain = np.empty(table, np.float64)
        t_count = np.empty(table, np.int64)
        order = np.empty(table, np.int64)
        tmp = np.empty(table, np.int64)
        gain_at = np.empty(max_level + 3, np.float64)
        mark = np.empty(greater(n_docs, one), np.int64)  # mark[d] = i: d is in row i
        for d in range(mark.shape[0]):
            mark[d] = -1
        level_of = np.empty(greater(n_docs, one), np.float64)  # ... with this level
        for i in range(lo, hi):
            start = indptr[i]
            end = indptr[i + 1]
            n_rel = np.int64(0)
            n_nonrel = np.int64(0)
            n_pos = np.int64(0)
            max_rel = np.int64(-3)
            for j in range(start, end):
                v = data[j]
                max_rel = greater(max_rel, np.int64(v))
                if v >= 0.0:
                    if v >= level:
                        n_rel += 1
                    else:
                        n_nonrel += 1
                    if v > 0.0:
                        gains[n_pos] = v
                        n_pos += 1
            if n_docs > 0:
                for j in range(start, end):
                    mark[indices[j]] = i
                    level_of[indices[j]] = data[j] if data[j] >= 0.0 else _UNJUDGED
            n = np.int64(0)
            hits[0] = 0
            unj[0] = 0
            sums[0] = 0.0
            dcg[0] = 0.0
            first = np.int64(0)
            nonrel_above = np.int64(0)
            bpref = 0.0
            for p in range(k_max):
                doc = topk[i, p]
                if doc < 0:
                    break
                r = _NONPOOL
                if n_docs > 0:  # the row's marks: one load
                    if doc < n_docs and mark[doc] == i:
                        r = level_of[doc]
                else:  # the first entry >= doc by binary search (no scratch per document)
                    a = start
                    b = end
                    while a < b:
                        mid = (a + b) >> 1
                        if indices[mid] < doc:
                            a = mid + 1
                        else:
                            b = mid
                    if a < end and indices[a] == doc:
                        r = data[a] if data[a] >= 0.0 else _UNJUDGED
                if judged_only and r < 0.0:
                    continue
                rel[n] = r
                h = hits[n]
                total = sums[n]
                gain_sum = dcg[n]
                if r >= level:
                    h += 1
                    at[h] = n + 1
                    total += h / (n + 1.0)
                    if first == 0:
                        first = n + 1
                if r > 0.0:
                    gain_sum += r / log2s[n]
                if r >= 0.0:  # bpref: judged documents only
                    if r < level:
                        nonrel_above += 1
                    elif nonrel_above > 0:
                        bpref += 1.0 - lesser(nonrel_above, n_rel) / lesser(n_nonrel, n_rel)
                    else:
                        bpref += 1.0
                unj[n + 1] = unj[n] + (1 if r < 0.0 else 0)
                n += 1
                hits[n] = h
                sums[n] = total
                dcg[n] = gain_sum
            if graded:  # a constant of the closure: ndcg_cut's ideal, levels largest first
                sort_top(gains, n_pos, n_pos, spare)  # largest first, in place
                ideal[0] = 0.0
                for t in range(n_pos):
                    ideal[t + 1] = ideal[t] + gains[t] / log2s[t]
            counted = False  # the judged documents per level, counted once a slot needs them
            interpolated = False  # smax, filled once an iprec slot needs it
            for s in range(n_slots):
                code = slot_code[s]
                c = slot_cut[s]
                m = lesser(c, n)
                val = 0.0
                if code == NUM_RET:
                    val = n
                elif code == NUM_REL:
                    val = n_rel
                elif code == NUM_REL_RET:
                    val = hits[n]
                elif code == MAP:
                    if hits[n] > 0:
                        val = sums[n] / n_rel
                elif code == RPREC:
                    look = lesser(n, n_rel)
                    if look > 0:
                        val = hits[look] / n_rel
                elif code == BPREF:
                    if n_rel > 0:
                        val = bpref / n_rel
                elif code == RECIP_RANK:
                    if first > 0:
                        val = 1.0 / first
                elif code == IPREC:
                    if not interpolated:
                        _best_after(hits, n, smax)
                        interpolated = True
                    val = _iprec_fast(hits[n], n, n_rel, first, at, smax, slot_point[s])
                elif code == P:
                    val = hits[m] / np.float64(c)
                elif code == RECALL:
                    if n_rel > 0:
                        val = hits[m] / n_rel
                elif code == SUCCESS:
                    val = 1.0 if hits[m] > 0 else 0.0
                elif code == MAP_CUT:
                    if n_rel > 0:
                        val = sums[m] / n_rel
                elif graded and code == NDCG_CUT:
                    norm = ideal[lesser(c, n_pos)]
                    val = dcg[m] / norm if norm > 0.0 else dcg[m]
                elif code == INFAP:
                    val = _infap(rel, n, level, n_rel)
                elif code == RPREC_MULT:
                    val = _rprec_mult(rel, n, level, hits, n_rel, first, slot_point[s])
                elif code == UTILITY:
                    e = slot_lo[s]
                    rest = num_docs + hits[n] - n - n_rel  # as C's longs, wrapping
                    val = (extra_value[e] * hits[n] + extra_value[e + 1] * (n - hits[n])
                           + extra_value[e + 2] * (n_rel - hits[n])
                           + extra_value[e + 3] * np.float64(rest))
                elif code == PT11_AVG:
                    val = _pt11(rel, n, level, hits[n], n_rel, extra_value,
                                slot_lo[s], slot_hi[s])
                elif code == BING:
                    found = 0
                    total = 0.0
                    for j in range(n):
                        if rel[j] >= level:
                            found += 1
                            total += 1.0 / log2s[j - found + 1]
                    if found:
                        val = total / n_rel
                elif code == RELATIVE_P:
                    if n_rel > 0:
                        val = hits[m] / np.float64(lesser(c, n_rel))
                elif code == SET_P:
                    if n > 0:
                        val = hits[n] / np.float64(n)
                elif code == SET_RELATIVE_P:
                    if n > 0 and n_rel > 0:
                        val = hits[n] / np.float64(lesser(n, n_rel))
                elif code == SET_RECALL:
                    if n_rel > 0:
                        val = hits[n] / np.float64(n_rel)
                elif code == SET_MAP:
                    if n > 0 and n_rel > 0:
                        val = (np.float64(hits[n]) * np.float64(hits[n])) / (
                            np.float64(n) * np.float64(n_rel))
                elif code == SET_F:
                    if hits[n] > 0:
                        prec = hits[n] / np.float64(n)
                        rec = hits[n] / np.float64(n_rel)
                        x = slot_point[s]
                        val = (x + 1.0) * prec * rec / (x * prec + rec)
                elif code == NUM_NONREL_JUDGED_RET:
                    val = n - unj[n] - hits[n]
                elif code == YAAP:
                    val = math.log((1.0 + sums[n]) / (1.0 + n_rel - sums[n]))
                elif code == RBP_RESID:
                    p = slot_point[s]
                    total = 0.0
                    cur_p = 1.0
                    for j in range(n):
                        if rel[j] < 0.0:
                            total += cur_p
                        cur_p = cur_p * p
                    if unj[n] > 0:
                        val = cur_p + (1.0 - p) * total
                elif code == UNJ:
                    val = unj[m] / np.float64(c)
                elif graded:  # the gain measures: ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg, G, rbp
                    if not counted:
                        for lv in range(greater(max_rel, np.int64(-1)) + 1):
                            counts[lv] = 0
                        for j in range(start, end):
                            if data[j] >= 0.0:
                                counts[np.int64(data[j])] += 1
                        counted = True
                    nt = _gain_table(counts, max_rel, extra_level, extra_value, slot_lo[s],
                                     slot_hi[s], t_level, t_gain, t_count, order, tmp,
                                     gain_at)
                    if code == RBP:
                        val = _rbp(rel, n, slot_point[s], nt, order, t_gain, t_level,
                                   gain_at, max_rel)
                    elif code == RNDCG and n_rel == 0:
                        val = 0.0
                    else:
                        val = _dcg_family(code, rel, n, nt, order, t_gain, t_count,
                                          gain_at, max_rel, log2s)
                out[s, i] = val
        return np.int64(1)

    return walk
