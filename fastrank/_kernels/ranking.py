"""The one-pass ranking kernel: every metric at every cutoff from one walk of each list.

Arrays in, arrays out, nothing raises. The facade (`fastrank.evaluate`) has already
checked every index, so the kernel runs without bounds checks.

Layout of the work: users (top-K rows) are split into `n_chunks` contiguous ranges and
the ranges run under `prange`. Each range allocates its scratch once: an item marker
(`stamp`) and an item value array, both of length `n_items`, and a buffer for sorting a
row's relevance values. Nothing is allocated per user.

Membership by stamps: for top-K row `i` the kernel writes `base = 2 * (i + 1)` into
`stamp[item]` for every relevant item of the row, and `base + 1` for every item the walk
has already seen. Stamps of earlier rows never equal either value, so the marker array
needs no clearing between users. Seen items make duplicates in a list count once.

Each user writes only its own column of `out`; means are taken by the facade, so the
values are bit-identical for any thread count.
"""

import numpy as np
from numba import njit, prange

from . import codes


@njit(cache=True, inline="always")
def _ratio(num, den):
    if den > 0:
        return num / den
    return 0.0


@njit(cache=True)
def _fill_ideal(buf, m, all_equal, disc, cutoffs, full, ideal_lin, ideal_exp, ideal_bin):
    """Ideal DCG sums of one user at every cutoff, from the relevant values in buf[:m].

    Writes ideal_*[c] for each cutoff c (the ideal list cut at min(cutoffs[c], m)) and,
    when `full` is set, returns the linear-gain ideal over all m items (else 0.0).
    """
    n_cut = cutoffs.shape[0]
    if not all_equal:
        buf[:m].sort()
    length = min(m, cutoffs[n_cut - 1])
    if full:
        length = m
    acc_lin = 0.0
    acc_exp = 0.0
    acc_bin = 0.0
    c = 0
    for j in range(length):
        v = buf[m - 1 - j]
        d = disc[j]
        acc_lin += v * d
        acc_exp += (2.0 ** v - 1.0) * d
        acc_bin += d
        while c < n_cut and cutoffs[c] == j + 1:
            ideal_lin[c] = acc_lin
            ideal_exp[c] = acc_exp
            ideal_bin[c] = acc_bin
            c += 1
    while c < n_cut:  # cutoffs beyond m (or beyond the walked length) see the whole ideal
        ideal_lin[c] = acc_lin
        ideal_exp[c] = acc_exp
        ideal_bin[c] = acc_bin
        c += 1
    if full:
        return acc_lin
    return 0.0


@njit(cache=True, parallel=True)
def rank_metrics(indptr, indices, data, topk, rows, n_items, cutoffs, slot_code, slot_cut,
                 count_judged, disc, max_row_nnz, n_chunks, out, n_relevant, counted):
    """Fill out[s, i] with slot s of top-K row i; n_relevant[i] = m; counted[i] = 1 or 0.

    indptr, indices, data: the canonical CSR truth (no duplicate entries), data float64.
    topk: (n_rows, K) item ids, -1 for padding; rows: the truth row of each top-K row.
    cutoffs: sorted distinct cutoffs, each in [1, K]; slot_code / slot_cut: per output slot,
    a code of `codes` and an index into cutoffs. count_judged: count users with at least
    one stored entry (trec) instead of at least one relevant entry. disc[j] = 1/log2(j+2),
    long enough for K and, if an uncut ideal is requested, for max_row_nnz.
    """
    n_rows = topk.shape[0]
    k_max = topk.shape[1]
    n_slots = slot_code.shape[0]
    n_cut = cutoffs.shape[0]
    need_ideal = False
    need_full = False
    for s in range(n_slots):
        code = slot_code[s]
        if code == codes.NDCG or code == codes.NDCG_EXP or code == codes.NDCG_BINARY:
            need_ideal = True
        if code == codes.NDCG_UNCUT:
            need_ideal = True
            need_full = True

    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
        stamp = np.zeros(n_items, np.int64)
        value = np.empty(n_items, np.float64)
        buf = np.empty(max(max_row_nnz, 1), np.float64)
        ideal_lin = np.zeros(n_cut, np.float64)
        ideal_exp = np.zeros(n_cut, np.float64)
        ideal_bin = np.zeros(n_cut, np.float64)
        for i in range(lo, hi):
            base = 2 * (np.int64(i) + 1)
            r = rows[i]
            start = indptr[r]
            end = indptr[r + 1]
            m = 0
            all_equal = True
            for j in range(start, end):
                v = data[j]
                if v > 0.0:
                    item = indices[j]
                    stamp[item] = base
                    value[item] = v
                    if m > 0 and v != buf[0]:
                        all_equal = False
                    buf[m] = v
                    m += 1
            n_relevant[i] = m
            if count_judged:
                is_counted = end > start
            else:
                is_counted = m > 0
            if not is_counted:
                counted[i] = 0
                for s in range(n_slots):
                    out[s, i] = np.nan
                continue
            counted[i] = 1

            ideal_full = 0.0
            if need_ideal:
                ideal_full = _fill_ideal(buf, m, all_equal, disc, cutoffs, need_full,
                                         ideal_lin, ideal_exp, ideal_bin)

            n_neg = n_items - m
            hits = 0
            misses = 0
            first_hit = 0
            r_hits = 0
            sum_prec = 0.0
            dcg_lin = 0.0
            dcg_exp = 0.0
            dcg_bin = 0.0
            cg = 0.0
            auc_sum = 0.0
            c = 0
            for p in range(k_max):
                item = topk[i, p]
                if item >= 0:
                    st = stamp[item]
                    if st == base:  # relevant, first time in this list
                        stamp[item] = base + 1
                        hits += 1
                        sum_prec += hits / (p + 1.0)
                        if first_hit == 0:
                            first_hit = p + 1
                        v = value[item]
                        d = disc[p]
                        dcg_lin += v * d
                        dcg_exp += (2.0 ** v - 1.0) * d
                        dcg_bin += d
                        cg += v
                    elif st != base + 1:  # not relevant, first time in this list
                        stamp[item] = base + 1
                        misses += 1
                        auc_sum += hits
                    # else: a repeated id; counts for nothing
                rank = p + 1
                if rank == m or (rank == k_max and m > k_max):
                    r_hits = hits
                while c < n_cut and cutoffs[c] == rank:
                    k = rank
                    for s in range(n_slots):
                        if slot_cut[s] != c:
                            continue
                        code = slot_code[s]
                        if code == codes.PRECISION:
                            val = hits / k
                        elif code == codes.PRECISION_CAPPED:
                            val = _ratio(hits, min(k, m))
                        elif code == codes.RECALL:
                            val = _ratio(hits, m)
                        elif code == codes.F1:
                            val = _ratio(2.0 * hits, k + m)
                        elif code == codes.HIT_RATE:
                            val = 1.0 if hits > 0 else 0.0
                        elif code == codes.MRR:
                            val = 1.0 / first_hit if first_hit > 0 else 0.0
                        elif code == codes.AP_CAPPED:
                            val = _ratio(sum_prec, min(k, m))
                        elif code == codes.AP_FULL:
                            val = _ratio(sum_prec, m)
                        elif code == codes.NDCG:
                            val = _ratio(dcg_lin, ideal_lin[c])
                        elif code == codes.NDCG_UNCUT:
                            val = _ratio(dcg_lin, ideal_full)
                        elif code == codes.NDCG_EXP:
                            val = _ratio(dcg_exp, ideal_exp[c])
                        elif code == codes.NDCG_BINARY:
                            val = _ratio(dcg_bin, ideal_bin[c])
                        elif code == codes.DCG:
                            val = dcg_lin
                        elif code == codes.CG:
                            val = cg
                        elif code == codes.R_PRECISION:
                            val = _ratio(r_hits, m)
                        else:  # codes.AUC
                            if m == 0:
                                val = 0.0
                            elif n_neg == 0:
                                val = 1.0
                            else:
                                val = (auc_sum + (hits + m) / 2.0 * (n_neg - misses)) / (
                                    m * np.float64(n_neg))
                        out[s, i] = val
                    c += 1
