"""Intent-aware measures (Agrawal et al. 2009): P-IA, MAP-IA, ERR-IA, nERR-IA and α-DCG;
and, in the walk made with `novelty`, S-recall, NRBP and nNRBP (TREC's ndeval).

Arrays in, arrays out, nothing raises; the facade (`fastrank.aspects.intent_values`)
has checked every index. Users are split into `n_chunks` contiguous ranges run under
`prange`; each range allocates its scratch once (item marker, per-aspect state) and
resets only the aspects a user touched.

Per user u (a slot i of `rows`): the relevant items are the truth entries > 0; the
user's intents are the aspects of those items (an aspect no relevant item covers is
not an intent: every measure below is 0 on it). P(a|u) is uniform over the intents,
or the user's row of `weights` over its total when `has_weights`. An item is relevant
to intent a when it is relevant and covers a. Walking the list (padding and repeated ids
are misses that keep their rank), for each relevant item d at rank r, for each aspect a
of d, in ascending aspect order:

* P-IA: hits[a] += 1; P-IA@k = Σ_a P(a)·hits[a]/k.
* MAP-IA: ap[a] += hits[a]/r; MAP-IA@k = Σ_a P(a)·ap[a]/den[a], den = min(k, m_a), or
  m_a when `map_full` (m_a: the relevant items covering a).
* ERR-IA: gain += P(a)·R_d·s[a], s[a] *= 1 - R_d (s starts at 1); ERR-IA@k = Σ_r gain/r.
  R_d = 1/2 when `binary`, else 2^(g - g_max) - 2^(-g_max), g the item's value.
* α-DCG: gain += (1-α)^c[a] (by repeated multiplication), c[a] += 1; Σ_r gain·d(r).
* nERR-IA = ERR-IA / the ERR-IA of a greedy ideal over the relevant items: each step
  takes the item of largest P(a)-weighted gain Σ_a P(a)·R_d·s[a] (ties, to within
  rounding: the lower item id), as ndeval's ideal (α-nDCG's greedy) does when R = α.

The walk made with `novelty` (a constant of the closure: the others never compile it)
also writes, with the intents uniform (ndeval's; `weights` are not read by these):

* S-recall: the intents covered by a relevant item in the first k / the intents.
* NRBP (Clarke et al. 2009): (1 - (1-α)·β)/S · Σ_r β^(r-1)·Σ_a (1-α)^c[a], the inner sum
  over the aspects of the relevant item at rank r (α-DCG's gain), β^(r-1) by repeated
  multiplication at every rank; as ndeval, NRBP is not cut: read it at the list's end.
* nNRBP = NRBP / the NRBP of α-nDCG's greedy ideal over every relevant item (not cut at
  the list's length, as ndeval; ties, to within rounding: the lower item id), when
  `want_full` (0 where that is 0).
"""

import numpy as np

from . import codes
from .frames import bounds, cube, matrix, number, vector
from .jit import njit

# fields of `out`
P_IA = codes.IA_P
MAP_IA = codes.IA_MAP
ALPHA_DCG = codes.IA_ALPHA_DCG
ERR_IA = codes.IA_ERR
NERR_IA = codes.IA_NERR
N_CORE = codes.IA_CORE  # the fields of the walk made without `novelty` (its `out` has these only)
ST_RECALL = codes.IA_ST_RECALL
NRBP = codes.IA_NRBP
NNRBP = codes.IA_NNRBP
N_FIELDS = codes.IA_FIELDS

_TIE_REL = 2.0 ** -40  # gains this close (relative) are ties (as fastrank._kernels.aspects)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _grade(value, binary, g_max):
    """R of a relevant item: 1/2 (binary), else (2^g - 1)/2^g_max without overflow."""
    if binary:
        return 0.5
    return np.exp2(value - g_max) - np.exp2(-g_max)


def intent_rows(dtypes, novelty=False):
    """The walk (`frames.run_ranges`) of a range of rows: out[field, c, i] for every
    field and cutoff c of top-K row i (0 for a user without an intent), n_intents[i] the
    user's intents. A repeated id counts once. The fields ST_RECALL, NRBP and NNRBP are
    those of the walk made with `novelty` only: the other's `out` has N_CORE fields.

    The frame holds, in order: t_indptr, t_indices, t_data, rows, topk, a_indptr,
    a_indices, n_aspects, n_items, w_indptr, w_indices, w_data, has_weights, alpha,
    binary, g_max, map_full, want_ideal, cutoffs, disc, max_row_nnz, out, n_intents,
    beta, want_full (arrays of the dtypes `dtypes` gives, as `frames.Frame.dtypes`).
    Returns 1, or 0 where the walk's scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        t_indptr = vector(frame, 0, dtypes[0])
        t_indices = vector(frame, 1, dtypes[1])
        t_data = vector(frame, 2, dtypes[2])
        rows = vector(frame, 3, dtypes[3])
        topk = matrix(frame, 4, dtypes[4])
        a_indptr = vector(frame, 5, dtypes[5])
        a_indices = vector(frame, 6, dtypes[6])
        n_aspects = number(frame, 7, dtypes[7])
        n_items = number(frame, 8, dtypes[8])
        w_indptr = vector(frame, 9, dtypes[9])
        w_indices = vector(frame, 10, dtypes[10])
        w_data = vector(frame, 11, dtypes[11])
        has_weights = number(frame, 12, dtypes[12])
        alpha = number(frame, 13, dtypes[13])
        binary = number(frame, 14, dtypes[14])
        g_max = number(frame, 15, dtypes[15])
        map_full = number(frame, 16, dtypes[16])
        want_ideal = number(frame, 17, dtypes[17])
        cutoffs = vector(frame, 18, dtypes[18])
        disc = vector(frame, 19, dtypes[19])
        max_row_nnz = number(frame, 20, dtypes[20])
        out = cube(frame, 21, dtypes[21])
        n_intents = vector(frame, 22, dtypes[22])
        beta = number(frame, 23, dtypes[23])
        want_full = number(frame, 24, dtypes[24])
        n_rows = rows.shape[0]
        n_cut = cutoffs.shape[0]
        k_max = cutoffs[n_cut - 1]
        steps = min(k_max, topk.shape[1])
        decay = 1.0 - alpha
        lo, hi = bounds(n_rows, chunk, n_chunks)
        mark = np.zeros(n_items, np.int64)
        value = np.empty(n_items, np.float64)
        m_a = np.zeros(n_aspects, np.int64)
        pa = np.zeros(n_aspects, np.float64)
        s = np.ones(n_aspects, np.float64)
        w = np.ones(n_aspects, np.float64)
        hits = np.zeros(n_aspects, np.int64)
        ap = np.zeros(n_aspects, np.float64)
        touched = np.empty(n_aspects, np.int64)
        used = np.empty(max(max_row_nnz, 1), np.uint8)
        gains = np.empty(max(max_row_nnz, 1), np.float64)  # the greedy ideals' candidates
        ideal = np.zeros(n_cut, np.float64)
        for i in range(lo, hi):
            for f in range(N_FIELDS if novelty else N_CORE):
                for c in range(n_cut):
                    out[f, c, i] = 0.0
            r = rows[i]
            t_start = t_indptr[r]
            t_end = t_indptr[r + 1]
            base = 2 * (np.int64(i) + 1)
            n_int = 0
            for j in range(t_start, t_end):
                used[j - t_start] = 0
                if t_data[j] > 0.0:
                    item = t_indices[j]
                    mark[item] = base
                    value[item] = t_data[j]
                    for q in range(a_indptr[item], a_indptr[item + 1]):
                        a = a_indices[q]
                        if m_a[a] == 0:
                            touched[n_int] = a
                            n_int += 1
                        m_a[a] += 1
            n_intents[i] = n_int
            if n_int == 0:
                continue
            # P(a|u): uniform over the intents, or the user's weights over their total
            total = 0.0
            if has_weights:
                for q in range(w_indptr[r], w_indptr[r + 1]):
                    total += w_data[q]
                for q in range(w_indptr[r], w_indptr[r + 1]):
                    if m_a[w_indices[q]] > 0 and total > 0.0:
                        pa[w_indices[q]] = w_data[q] / total
            else:
                for t in range(n_int):
                    pa[touched[t]] = 1.0 / n_int
            full = 0.0
            if novelty and want_full:
                full = _full_alpha_ideal(t_start, t_end, t_indices, t_data, used, gains,
                                         a_indptr, a_indices, w, decay, beta)
                for t in range(n_int):
                    w[touched[t]] = 1.0
            if want_ideal:
                _greedy_ideal(t_start, t_end, t_indices, t_data, used, gains, a_indptr,
                              a_indices, pa, s, binary, g_max, k_max, cutoffs, ideal)
                for t in range(n_int):
                    s[touched[t]] = 1.0
            n_hits = 0.0  # Σ_a P(a)·hits[a]
            err = 0.0
            dcg = 0.0
            covered = 0  # intents covered so far (S-recall)
            nrbp = 0.0
            patience = 1.0  # β^(r-1)
            c = 0
            step = 0
            while c < n_cut:  # the ranks past the list's columns are empty
                if step < steps:
                    item = topk[i, step]
                else:
                    item = -1
                    step = cutoffs[n_cut - 1] - 1  # straight to the last cutoff
                if item >= 0 and mark[item] == base:  # relevant, first time
                    mark[item] = base + 1
                    grade = _grade(value[item], binary, g_max)
                    rank = step + 1.0
                    gain = 0.0
                    alpha_gain = 0.0
                    for q in range(a_indptr[item], a_indptr[item + 1]):
                        a = a_indices[q]
                        gain += pa[a] * grade * s[a]
                        s[a] *= 1.0 - grade
                        alpha_gain += w[a]
                        w[a] *= decay
                        if novelty and hits[a] == 0:
                            covered += 1
                        hits[a] += 1
                        ap[a] += hits[a] / rank
                        n_hits += pa[a]
                    err += gain / rank
                    dcg += alpha_gain * disc[step]
                    if novelty:
                        nrbp += alpha_gain * patience
                if novelty:
                    patience *= beta
                step += 1
                while c < n_cut and cutoffs[c] <= step:
                    k = cutoffs[c]
                    out[P_IA, c, i] = n_hits / k
                    mean_ap = 0.0
                    for t in range(n_int):
                        a = touched[t]
                        den = m_a[a] if map_full else min(k, m_a[a])
                        mean_ap += pa[a] * ap[a] / den
                    out[MAP_IA, c, i] = mean_ap
                    out[ALPHA_DCG, c, i] = dcg
                    out[ERR_IA, c, i] = err
                    if want_ideal and ideal[c] > 0.0:
                        out[NERR_IA, c, i] = err / ideal[c]
                    if novelty:
                        scale = (1.0 - decay * beta) / n_int
                        out[ST_RECALL, c, i] = covered / n_int
                        out[NRBP, c, i] = nrbp * scale
                        if full > 0.0:  # as ndeval: the ratio of the scaled sums
                            if scale > 0.0:
                                out[NNRBP, c, i] = (nrbp * scale) / (full * scale)
                            else:  # α = 0 and β = 1: no scale, the ratio of the sums
                                out[NNRBP, c, i] = nrbp / full
                    c += 1
            for t in range(n_int):
                a = touched[t]
                m_a[a] = 0
                pa[a] = 0.0
                s[a] = 1.0
                w[a] = 1.0
                hits[a] = 0
                ap[a] = 0.0
        return np.int64(1)

    return walk
@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _greedy_ideal(t_start, t_end, t_indices, t_data, used, gains, a_indptr, a_indices, pa, s,
                  binary, g_max, k_max, cutoffs, ideal):
    """ideal[c]: the ERR-IA of the greedy ideal at each cutoff. Consumes s."""
    n_cut = cutoffs.shape[0]
    acc = 0.0
    c = 0
    for step in range(k_max):
        for j in range(t_start, t_end):
            gain = 0.0
            if t_data[j] > 0.0 and not used[j - t_start]:
                gain = _gain(t_indices[j], t_data[j], a_indptr, a_indices, pa, s, binary,
                             g_max)
            gains[j - t_start] = gain
        best = _first_best(gains, t_end - t_start)
        if best < 0:
            break  # nothing left that gains
        used[best] = 1
        best += t_start
        item = t_indices[best]
        grade = _grade(t_data[best], binary, g_max)
        gain = 0.0
        for q in range(a_indptr[item], a_indptr[item + 1]):
            a = a_indices[q]
            gain += pa[a] * grade * s[a]
            s[a] *= 1.0 - grade
        acc += gain / (step + 1.0)
        while c < n_cut and cutoffs[c] == step + 1:
            ideal[c] = acc
            c += 1
    while c < n_cut:
        ideal[c] = acc
        c += 1


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _full_alpha_ideal(t_start, t_end, t_indices, t_data, used, gains, a_indptr, a_indices, w,
                      decay, beta):
    """Σ_r β^(r-1)·G(r) of α-nDCG's greedy ideal over every relevant item (NRBP's sum,
    unscaled): each step takes the item of largest G = Σ_{a of it} w[a] (ties, to within
    rounding: the lowest id), then w[a] *= decay = 1 - α on its aspects. Stops where
    nothing gains or β^(r-1) is 0: what is left adds 0. Consumes w and `used`."""
    for j in range(t_start, t_end):
        used[j - t_start] = 0
    acc = 0.0
    patience = 1.0
    while patience > 0.0:
        for j in range(t_start, t_end):
            gain = 0.0
            if t_data[j] > 0.0 and not used[j - t_start]:
                gain = _alpha_gain(t_indices[j], a_indptr, a_indices, w)
            gains[j - t_start] = gain
        best = _first_best(gains, t_end - t_start)
        if best < 0:
            break  # nothing left that gains
        used[best] = 1
        best += t_start
        item = t_indices[best]
        gain = 0.0
        for q in range(a_indptr[item], a_indptr[item + 1]):
            a = a_indices[q]
            gain += w[a]
            w[a] *= decay
        acc += gain * patience
        patience *= beta
    for j in range(t_start, t_end):
        used[j - t_start] = 0
    return acc


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _first_best(gains, n):
    """The greedy ideals' pick: the first of gains[:n] (ascending ids: the lowest id)
    within _TIE_REL (relative) of their largest, or -1 where none is above 0 (a candidate
    used or not relevant has gain 0: it never wins). Each gain is computed once a step."""
    top = 0.0
    for j in range(n):
        top = max(top, gains[j])
    if top <= 0.0:
        return -1
    floor = top - top * _TIE_REL
    for j in range(n):
        if gains[j] >= floor:
            return j
    return -1


@njit(cache=True, inline="always")
def _alpha_gain(item, a_indptr, a_indices, w):
    gain = 0.0
    for q in range(a_indptr[item], a_indptr[item + 1]):
        gain += w[a_indices[q]]
    return gain


@njit(cache=True, inline="always")
def _gain(item, grade_value, a_indptr, a_indices, pa, s, binary, g_max):
    grade = _grade(grade_value, binary, g_max)
    gain = 0.0
    for q in range(a_indptr[item], a_indptr[item + 1]):
        a = a_indices[q]
        gain += pa[a] * grade * s[a]
    return gain
