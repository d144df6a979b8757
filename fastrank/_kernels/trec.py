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

import numpy as np
from numba import njit, prange

from . import codes

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

_NONPOOL = -1.0   # trec_eval's RELVALUE_NONPOOL: retrieved, not in the qrels
_UNJUDGED = -2.0  # RELVALUE_UNJUDGED: in the qrels with a negative level


@njit(cache=True)
def _lround(x):
    """C's lround for finite x: the nearest integer, halves away from zero."""
    if x >= 0.0:
        whole = np.floor(x)
        return np.int64(whole) + (1 if x - whole >= 0.5 else 0)
    whole = np.ceil(x)
    return np.int64(whole) - (1 if whole - x >= 0.5 else 0)


@njit(cache=True)
def _iprec(rel, n, level, hits, n_rel, point):
    """Interpolated precision at recall `point` of a ranking rel[:n] (trec_eval 10: the
    cutoff is lround(point * R) relevant documents; the best precision at or below the
    rank where that many are found)."""
    cut = _lround(point * n_rel)
    found = hits[n]
    if cut > found:
        return 0.0
    best = found / n if n > 0 else 0.0
    count = found
    for rank in range(n, 0, -1):
        if count <= 0:
            break
        best = max(best, count / rank)
        if rel[rank - 1] >= level:
            if count == cut:
                return best
            count -= 1
    return best


@njit(cache=True, parallel=True)
def trec_measures(indptr, indices, data, topk, level, slot_code, slot_cut, slot_point,
                  log2s, max_row_nnz, n_chunks, out):
    """out[s, i] = the measure of slot s for query i (see the codes above).

    log2s[j] = log2(j + 2), the discount divisor of rank j + 1, long enough for the
    longest ranking and the largest number of positive levels in a row."""
    n_rows = topk.shape[0]
    k_max = topk.shape[1]
    n_slots = slot_code.shape[0]
    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
        rel = np.empty(max(k_max, 1), np.float64)  # the level of each ranked document
        hits = np.empty(k_max + 1, np.int64)       # relevant in the first j documents
        sums = np.empty(k_max + 1, np.float64)     # Σ P@rank over them (AP's sum)
        dcg = np.empty(k_max + 1, np.float64)      # DCG of the first j documents
        gains = np.empty(max(max_row_nnz, 1), np.float64)
        ideal = np.empty(max_row_nnz + 1, np.float64)  # ideal DCG of the first j
        for i in range(lo, hi):
            start = indptr[i]
            end = indptr[i + 1]
            n_rel = 0
            n_nonrel = 0
            n_pos = 0
            for j in range(start, end):
                v = data[j]
                if v >= 0.0:
                    if v >= level:
                        n_rel += 1
                    else:
                        n_nonrel += 1
                    if v > 0.0:
                        gains[n_pos] = v
                        n_pos += 1
            n = 0
            hits[0] = 0
            sums[0] = 0.0
            dcg[0] = 0.0
            first = 0
            nonrel_above = 0
            bpref = 0.0
            for p in range(k_max):
                doc = topk[i, p]
                if doc < 0:
                    break
                a = start
                b = end
                while a < b:
                    mid = (a + b) >> 1
                    if indices[mid] < doc:
                        a = mid + 1
                    else:
                        b = mid
                r = _NONPOOL
                if a < end and indices[a] == doc:
                    r = data[a] if data[a] >= 0.0 else _UNJUDGED
                rel[n] = r
                h = hits[n]
                total = sums[n]
                gain_sum = dcg[n]
                if r >= level:
                    h += 1
                    total += h / (n + 1.0)
                    if first == 0:
                        first = n + 1
                if r > 0.0:
                    gain_sum += r / log2s[n]
                if r >= 0.0:  # bpref: judged documents only
                    if r < level:
                        nonrel_above += 1
                    elif nonrel_above > 0:
                        bpref += 1.0 - min(nonrel_above, n_rel) / min(n_nonrel, n_rel)
                    else:
                        bpref += 1.0
                n += 1
                hits[n] = h
                sums[n] = total
                dcg[n] = gain_sum
            # the ideal: positive levels, largest first
            ordered = np.sort(gains[:n_pos])
            ideal[0] = 0.0
            for t in range(n_pos):
                ideal[t + 1] = ideal[t] + ordered[n_pos - 1 - t] / log2s[t]
            for s in range(n_slots):
                code = slot_code[s]
                c = slot_cut[s]
                m = min(c, n)
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
                    look = min(n, n_rel)
                    if look > 0:
                        val = hits[look] / n_rel
                elif code == BPREF:
                    if n_rel > 0:
                        val = bpref / n_rel
                elif code == RECIP_RANK:
                    if first > 0:
                        val = 1.0 / first
                elif code == NDCG:
                    if ideal[n_pos] > 0.0:
                        val = dcg[n] / ideal[n_pos]
                elif code == IPREC:
                    val = _iprec(rel, n, level, hits, n_rel, slot_point[s])
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
                elif code == NDCG_CUT:
                    norm = ideal[min(c, n_pos)]
                    val = dcg[m] / norm if norm > 0.0 else dcg[m]
                out[s, i] = val
