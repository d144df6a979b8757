"""Miscalibration of ranked lists (Steck 2018), for `fastrank.calibration`.

Arrays in, arrays out, nothing raises. Users run in `n_chunks` contiguous ranges under
`prange`, each with its own scratch (aspect accumulators reset after each user, item
stamps never cleared); a user's value depends on its rows only, so it is the same for
any thread count. Rows with counted[i] unset get NaN.

Per user and slot s: p(g) = Σ_{train items i, value > 0} w_i·[g ∈ i]/|aspects(i)| /
Σ w_i over the train items with at least one aspect (w_i = 1, or the stored value when
slot_weighted[s]); q the same over the first k items of the list (padding and repeats
skipped; w = 1, or 1/log2(rank + 1) when slot_discount[s]); q̃ = (1 - α)·q + α·p and
out = Σ_{p(g) > 0} p(g)·ln(p(g)/q̃(g)). NaN when p is undefined (no train item with an
aspect); q = 0 when no listed item has one.
"""

import numpy as np

from .frames import bounds, matrix, number, vector
from .jit import njit


def miscalibration_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: out[s, i]: KL(p‖q̃) of slot s
    for row i.

    The frame holds, in order: topk, rows, counted, slot_k, slot_alpha, slot_weighted,
    slot_discount, tr_indptr, tr_indices, tr_data, a_indptr, a_indices, n_items,
    n_aspects, out (arrays of the dtypes `dtypes` gives, as `frames.Frame.dtypes`).
    Returns 1, or 0 where the walk's scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        topk = matrix(frame, 0, dtypes[0])
        rows = vector(frame, 1, dtypes[1])
        counted = vector(frame, 2, dtypes[2])
        slot_k = vector(frame, 3, dtypes[3])
        slot_alpha = vector(frame, 4, dtypes[4])
        slot_weighted = vector(frame, 5, dtypes[5])
        slot_discount = vector(frame, 6, dtypes[6])
        tr_indptr = vector(frame, 7, dtypes[7])
        tr_indices = vector(frame, 8, dtypes[8])
        tr_data = vector(frame, 9, dtypes[9])
        a_indptr = vector(frame, 10, dtypes[10])
        a_indices = vector(frame, 11, dtypes[11])
        n_items = number(frame, 12, dtypes[12])
        n_aspects = number(frame, 13, dtypes[13])
        out = matrix(frame, 14, dtypes[14])
        n_rows, width = topk.shape
        n_slots = slot_k.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        p = np.zeros(max(n_aspects, 1))
        q = np.zeros(max(n_aspects, 1))
        touched = np.empty(max(n_aspects, 1), np.int64)  # p's aspects, first-touch order
        marked = np.zeros(max(n_aspects, 1), np.int64)
        seen = np.zeros(n_items, np.int64)
        stamp = np.int64(0)
        for i in range(lo, hi):
            if not counted[i]:
                for s in range(n_slots):
                    out[s, i] = np.nan
                continue
            r = rows[i]
            for s in range(n_slots):
                # p: the user's train items
                stamp += 1
                n_touched = 0
                p_total = 0.0
                for j in range(tr_indptr[r], tr_indptr[r + 1]):
                    if not tr_data[j] > 0.0:
                        continue
                    item = tr_indices[j]
                    n_a = a_indptr[item + 1] - a_indptr[item]
                    if n_a == 0:
                        continue
                    w = tr_data[j] if slot_weighted[s] else 1.0
                    p_total += w
                    for e in range(a_indptr[item], a_indptr[item + 1]):
                        g = a_indices[e]
                        if marked[g] != stamp:
                            marked[g] = stamp
                            touched[n_touched] = g
                            n_touched += 1
                        p[g] += w / n_a
                # q: the first k items of the list
                q_total = 0.0
                k = min(slot_k[s], width)
                for pos in range(k):
                    item = topk[i, pos]
                    if item < 0 or seen[item] == stamp:
                        continue
                    seen[item] = stamp
                    n_a = a_indptr[item + 1] - a_indptr[item]
                    if n_a == 0:
                        continue
                    w = 1.0 / np.log2(pos + 2.0) if slot_discount[s] else 1.0
                    q_total += w
                    for e in range(a_indptr[item], a_indptr[item + 1]):
                        q[a_indices[e]] += w / n_a
                alpha = slot_alpha[s]
                if p_total > 0.0:
                    kl = 0.0
                    for t in range(n_touched):
                        g = touched[t]
                        pg = p[g] / p_total
                        if not pg > 0.0:
                            continue
                        qg = q[g] / q_total if q_total > 0.0 else 0.0
                        mixed = (1.0 - alpha) * qg + alpha * pg
                        if mixed > 0.0:
                            ratio = pg / mixed
                            # past float64 only where mixed is subnormal (an alpha
                            # below 1e-308): the difference of the logs is finite
                            kl += pg * (np.log(ratio) if ratio < np.inf else
                                        np.log(pg) - np.log(mixed))
                        else:
                            kl += np.inf
                    out[s, i] = kl
                else:
                    out[s, i] = np.nan
                # reset the scratch this slot used
                for t in range(n_touched):
                    p[touched[t]] = 0.0
                for pos in range(k):
                    item = topk[i, pos]
                    if item >= 0:
                        for e in range(a_indptr[item], a_indptr[item + 1]):
                            q[a_indices[e]] = 0.0
        return np.int64(1)

    return walk
