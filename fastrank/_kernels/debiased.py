"""The debiased kernel: inverse-propensity-weighted recall, DCG and AP (Yang et al. 2018).

Arrays in, arrays out, nothing raises; the facade (`fastrank.debiased`) has checked every
index and turned the propensities into weights w = 1/p. For top-K row i (truth row
rows[i]), over the relevant items of the row (value > 0) and the hits (relevant items
of the first k slots, first occurrence only; padding takes a slot and is never a hit):

    num_recall = Σ_hits w,  num_dcg = Σ_hits w·d(rank),  num_ap = Σ_hits w·hits@rank/rank

and a slot divides its sum by m·w_mean (IPS; w_mean: the facade's mean weight over every
relevant truth entry) or by W = Σ_relevant w (SNIPS). A counted row with
m = 0 (the trec convention) gets 0; a row not counted gets NaN.

Users run in `n_chunks` contiguous ranges under `prange`; each range has its own item
markers (stamps, never cleared). Each row writes its own column of `out` and every sum
runs in a fixed order, so the values are bit-identical for any thread count.
"""

import numpy as np

from . import codes
from .frames import bounds, matrix, number, vector
from .jit import njit


@njit(cache=True, inline="always")
def _write_slots(out, i, c, slot_code, slot_cut, m_scaled, total, rec, dcg, ap):
    """Write every slot of cutoff index c for row i."""
    for s in range(slot_code.shape[0]):
        if slot_cut[s] != c:
            continue
        code = slot_code[s]
        if code == codes.RECALL_IPS or code == codes.RECALL_SNIPS:
            num = rec
        elif code == codes.DCG_IPS or code == codes.DCG_SNIPS:
            num = dcg
        else:
            num = ap
        if code == codes.RECALL_IPS or code == codes.DCG_IPS or code == codes.AP_IPS:
            den = m_scaled
        else:
            den = total
        out[s, i] = num / den if den > 0.0 else 0.0


def debiased_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: out[s, i]: slot s (code
    slot_code[s] at cutoff cutoffs[slot_cut[s]]) of row i.

    weights: per item, 1/propensity; w_mean: the IPS slots divide by m * w_mean. disc:
    d(rank) for ranks 1..(at least) the positions walked. A cutoff past topk's columns
    sees empty slots after them.

    The frame holds, in order: t_indptr, t_indices, t_data, topk, rows, counted,
    weights, w_mean, cutoffs, slot_code, slot_cut, disc, n_items, out (arrays of the
    dtypes `dtypes` gives, as `frames.Frame.dtypes`). Returns 1, or 0 where the walk's
    scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        t_indptr = vector(frame, 0, dtypes[0])
        t_indices = vector(frame, 1, dtypes[1])
        t_data = vector(frame, 2, dtypes[2])
        topk = matrix(frame, 3, dtypes[3])
        rows = vector(frame, 4, dtypes[4])
        counted = vector(frame, 5, dtypes[5])
        weights = vector(frame, 6, dtypes[6])
        w_mean = number(frame, 7, dtypes[7])
        cutoffs = vector(frame, 8, dtypes[8])
        slot_code = vector(frame, 9, dtypes[9])
        slot_cut = vector(frame, 10, dtypes[10])
        disc = vector(frame, 11, dtypes[11])
        n_items = number(frame, 12, dtypes[12])
        out = matrix(frame, 13, dtypes[13])
        n_rows = topk.shape[0]
        n_cut = cutoffs.shape[0]
        k_max = min(cutoffs[n_cut - 1], topk.shape[1])  # the positions walked
        n_slots = slot_code.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        relevant = np.zeros(n_items, np.int64)
        seen = np.zeros(n_items, np.int64)
        for i in range(lo, hi):
            if not counted[i]:
                for s in range(n_slots):
                    out[s, i] = np.nan
                continue
            stamp = np.int64(i) + 1
            r = rows[i]
            m = 0
            total = 0.0
            for j in range(t_indptr[r], t_indptr[r + 1]):
                item = t_indices[j]
                if t_data[j] > 0.0 and relevant[item] != stamp:
                    relevant[item] = stamp
                    m += 1
                    total += weights[item]
            hits = 0
            rec = 0.0
            dcg = 0.0
            ap = 0.0
            c = 0
            for p in range(k_max):
                item = topk[i, p]
                if item >= 0 and seen[item] != stamp:  # not padding, not a repeat
                    seen[item] = stamp
                    if relevant[item] == stamp:
                        hits += 1
                        w = weights[item]
                        rec += w
                        dcg += w * disc[p]
                        ap += w * (hits / (p + 1.0))
                while c < n_cut and cutoffs[c] == p + 1:
                    _write_slots(out, i, c, slot_code, slot_cut, m * w_mean, total, rec, dcg,
                                 ap)
                    c += 1
            while c < n_cut:  # cutoffs past the list's columns: the rest is empty
                _write_slots(out, i, c, slot_code, slot_cut, m * w_mean, total, rec, dcg, ap)
                c += 1
        return np.int64(1)

    return walk
