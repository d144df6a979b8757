"""Beyond-accuracy measures of ranked lists: novelty, popularity, diversity, serendipity,
and the item exposure behind coverage and Gini. One walk of each list fills every
requested measure at every cutoff.

Arrays in, arrays out, nothing raises. Users run in `n_chunks` contiguous ranges under
`prange`; each range has its own markers (stamps, never cleared) and its own exposure
counts, which the facade sums (integers: the same for any thread count). Only rows with
counted[i] set are measured; the others get NaN and expose nothing.
"""

import numpy as np

from .frames import bounds, cube, matrix, number, vector
from .jit import njit

NOVELTY = 0      # mean of -log2(share of training users) over the list's items
ARP = 1          # mean number of training users of the list's items
ILD = 2          # mean pairwise distance of the list's items
SERENDIPITY = 3  # relevant items absent from the baseline list, over k

ILD_JACCARD = 0  # 1 - |A ∩ B| / |A ∪ B| of aspect sets
ILD_COSINE = 1   # 1 - cosine of (unit) item vectors


@njit(cache=True, inline="always")
def _distance(a, b, mode, a_indptr, a_indices, vectors):
    """Distance of items a and b; an empty aspect set or a zero vector is like nothing."""
    if mode == ILD_COSINE:
        dot = 0.0
        for f in range(vectors.shape[1]):
            dot += vectors[a, f] * vectors[b, f]
        # |cos| can round past 1: a distance stays within [0, 2]
        return min(max(1.0 - dot, 0.0), 2.0)
    p, p_end = a_indptr[a], a_indptr[a + 1]
    q, q_end = a_indptr[b], a_indptr[b + 1]
    union = (p_end - p) + (q_end - q)
    if union == 0:
        return 1.0
    common = 0
    while p < p_end and q < q_end:  # both sorted
        x, y = a_indices[p], a_indices[q]
        if x == y:
            common += 1
            p += 1
            q += 1
        elif x < y:
            p += 1
        else:
            q += 1
    return 1.0 - common / (union - common)


@njit(cache=True, inline="always")
def _outside(places, n_hits, k):
    """How many of the first n_hits places are k or more: hits not in the first k items
    of a ranked baseline."""
    n = 0
    for h in range(n_hits):
        if places[h] >= k:
            n += 1
    return n


@njit(cache=True, inline="always")
def _write_slots(out, i, c, k, slot_code, slot_cut, n_shown, nov, pop, pairs, lucky):
    """Write every slot of cutoff index c (cutoff k) for row i."""
    for s in range(slot_code.shape[0]):
        if slot_cut[s] != c:
            continue
        code = slot_code[s]
        if code == NOVELTY:
            val = nov / n_shown if n_shown > 0 else 0.0
        elif code == ARP:
            val = pop / n_shown if n_shown > 0 else 0.0
        elif code == ILD:
            val = 2.0 * pairs / (n_shown * (n_shown - 1.0)) if n_shown > 1 else 0.0
        else:  # SERENDIPITY
            val = lucky / k
        out[s, i] = val


def beyond_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: out[s, i]: slot s (code
    slot_code[s] at cutoff cutoffs[slot_cut[s]]) of row i.

    novelty / popularity: per item. baseline: (n_rows or 1, Kb) ids, -1 pads (a single
    row is everyone's), used whole; or, where base_rank is not empty, each item's place in
    one list everyone shares (baseline="popular"), of which serendipity@k reads the
    first k: an item is in it at cutoff k if its place is below k. exposure: (n_chunks,
    n_cut, n_items) int32 or empty; exposure[chunk, c, item] counts the rows of the
    chunk whose list first shows the item within the cutoff c (and not within c - 1):
    the facade takes cumulative sums.
    A cutoff past topk's columns sees empty slots after them.

    The frame holds, in order: topk, rows, counted, cutoffs, slot_code, slot_cut,
    novelty, popularity, t_indptr, t_indices, t_data, baseline, ild_mode, a_indptr,
    a_indices, vectors, n_items, out, exposure, base_rank (arrays of the dtypes `dtypes`
    gives, as `frames.Frame.dtypes`). Returns 1, or 0 where the walk's scratch could not be
    allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        topk = matrix(frame, 0, dtypes[0])
        rows = vector(frame, 1, dtypes[1])
        counted = vector(frame, 2, dtypes[2])
        cutoffs = vector(frame, 3, dtypes[3])
        slot_code = vector(frame, 4, dtypes[4])
        slot_cut = vector(frame, 5, dtypes[5])
        novelty = vector(frame, 6, dtypes[6])
        popularity = vector(frame, 7, dtypes[7])
        t_indptr = vector(frame, 8, dtypes[8])
        t_indices = vector(frame, 9, dtypes[9])
        t_data = vector(frame, 10, dtypes[10])
        baseline = matrix(frame, 11, dtypes[11])
        ild_mode = number(frame, 12, dtypes[12])
        a_indptr = vector(frame, 13, dtypes[13])
        a_indices = vector(frame, 14, dtypes[14])
        vectors = matrix(frame, 15, dtypes[15])
        n_items = number(frame, 16, dtypes[16])
        out = matrix(frame, 17, dtypes[17])
        exposure = cube(frame, 18, dtypes[18])
        base_rank = vector(frame, 19, dtypes[19])
        ranked_base = base_rank.shape[0] > 0
        n_rows = topk.shape[0]
        n_cut = cutoffs.shape[0]
        k_max = min(cutoffs[n_cut - 1], topk.shape[1])  # the positions walked
        n_slots = slot_code.shape[0]
        count_exposure = exposure.shape[0] > 0
        shared_baseline = baseline.shape[0] == 1
        lo, hi = bounds(n_rows, chunk, n_chunks)
        relevant = np.zeros(n_items, np.int64)
        in_base = np.zeros(n_items, np.int64)
        seen = np.zeros(n_items, np.int64)
        shown = np.empty(max(k_max, 1), np.int64)
        places = np.empty(max(k_max, 1), np.int64)  # the ranked baseline's place of each hit
        for i in range(lo, hi):
            if not counted[i]:
                for s in range(n_slots):
                    out[s, i] = np.nan
                continue
            stamp = np.int64(i) + 1
            r = rows[i]
            for j in range(t_indptr[r], t_indptr[r + 1]):
                if t_data[j] > 0.0:
                    relevant[t_indices[j]] = stamp
            b_row = 0 if shared_baseline else i
            for j in range(baseline.shape[1]):
                item = baseline[b_row, j]
                if item >= 0:
                    in_base[item] = stamp
            n_shown = 0
            nov = 0.0
            pop = 0.0
            pairs = 0.0
            lucky = 0
            n_hits = 0
            c = 0
            for p in range(k_max):
                item = topk[i, p]
                if item >= 0 and seen[item] != stamp:  # not padding, not a repeat
                    seen[item] = stamp
                    nov += novelty[item]
                    pop += popularity[item]
                    if relevant[item] == stamp:
                        if ranked_base:
                            places[n_hits] = base_rank[item]
                            n_hits += 1
                        elif in_base[item] != stamp:
                            lucky += 1
                    if n_slots > 0 and ild_mode >= 0:
                        for e in range(n_shown):
                            pairs += _distance(item, shown[e], ild_mode, a_indptr, a_indices,
                                               vectors)
                    shown[n_shown] = item
                    n_shown += 1
                    if count_exposure:
                        exposure[chunk, c, item] += 1  # c: the first cutoff >= p + 1
                while c < n_cut and cutoffs[c] == p + 1:
                    if ranked_base:
                        lucky = _outside(places, n_hits, p + 1)
                    _write_slots(out, i, c, p + 1, slot_code, slot_cut, n_shown, nov, pop,
                                 pairs, lucky)
                    c += 1
            while c < n_cut:  # cutoffs past the list's columns: the rest is empty
                if ranked_base:
                    lucky = _outside(places, n_hits, cutoffs[c])
                _write_slots(out, i, c, cutoffs[c], slot_code, slot_cut, n_shown, nov, pop,
                             pairs, lucky)
                c += 1
        return np.int64(1)

    return walk
