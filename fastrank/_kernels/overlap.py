"""The overlap of two systems' lists, row by row: Jaccard@k and RBO_ext@k (`fr.overlap`).

Arrays in, arrays out, nothing raises. Rows run in `n_chunks` contiguous ranges under
`prange`, each with its own stamps (never cleared); a row's values depend on its two
lists only, so they are the same for any thread count.

Each list's first k slots are read with padding (-1) and repeated ids dropped, the rest
keeping its order (ranks close up). With S the shorter of the two (length s), L the longer
(length l) and X_d the overlap of their first d items (for d > s: of S and L's first d),
RBO_ext (Webber, Moffat & Zobel 2010, eq. 32; eq. 30 when s = l) is

    (1 − p)·(Σ_{d=1}^{l} X_d/d·p^(d−1) + Σ_{d=s+1}^{l} X_s·(d − s)/(s·d)·p^(d−1))
    + ((X_l − X_s)/l + X_s/s)·p^l

(the paper's (1 − p)/p·Σ ...·p^d, written so that p = 0 is defined: the agreement at
depth 1). NaN when both lists are empty, 0 when one is.
"""

import numpy as np
from numba import prange

from .frames import bounds
from .jit import njit

JACCARD = 0
RBO = 1


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _compact(row, k, seen, stamp, out):
    """The real items of row's first k slots, first occurrences only, into out; how many."""
    n = 0
    for p in range(min(k, row.shape[0])):
        item = row[p]
        if item >= 0 and seen[item] != stamp:
            seen[item] = stamp
            out[n] = item
            n += 1
    return n


@njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def list_overlap(a, b, slot_code, slot_k, slot_p, n_items, n_chunks, out):
    """out[s, i]: slot s (code slot_code[s], cutoff slot_k[s], persistence slot_p[s]) of
    the lists a[i] and b[i]."""
    n_rows = a.shape[0]
    n_slots = slot_code.shape[0]
    width = max(a.shape[1], b.shape[1], 1)
    for chunk in prange(n_chunks):
        lo, hi = bounds(n_rows, chunk, n_chunks)
        seen = np.zeros(n_items, np.int64)
        in_s = np.zeros(n_items, np.int64)
        in_l = np.zeros(n_items, np.int64)
        one = np.empty(width, np.int64)
        two = np.empty(width, np.int64)
        stamp = np.int64(0)
        for i in range(lo, hi):
            for s in range(n_slots):
                k = slot_k[s]
                stamp += 1
                n_a = _compact(a[i], k, seen, stamp, one)
                stamp += 1
                n_b = _compact(b[i], k, seen, stamp, two)
                if n_a == 0 and n_b == 0:
                    out[s, i] = np.nan
                    continue
                if n_a == 0 or n_b == 0:
                    out[s, i] = 0.0
                    continue
                stamp += 1
                if slot_code[s] == JACCARD:
                    for x in range(n_a):
                        in_s[one[x]] = stamp
                    common = 0
                    for x in range(n_b):
                        common += in_s[two[x]] == stamp
                    out[s, i] = common / (n_a + n_b - common)
                    continue
                short, long_ = (one, two) if n_a <= n_b else (two, one)
                n_s, n_l = min(n_a, n_b), max(n_a, n_b)
                p = slot_p[s]
                x_d = 0
                x_s = 0
                total = 0.0
                power = 1.0  # p^(d - 1)
                for d in range(1, n_l + 1):
                    if d <= n_s:
                        item = short[d - 1]
                        x_d += in_l[item] == stamp
                        in_s[item] = stamp
                    item = long_[d - 1]
                    x_d += in_s[item] == stamp
                    in_l[item] = stamp
                    if d == n_s:
                        x_s = x_d
                    total += x_d / d * power
                    if d > n_s:
                        total += x_s * (d - n_s) / (n_s * d) * power
                    power *= p
                out[s, i] = (1.0 - p) * total + ((x_d - x_s) / n_l + x_s / n_s) * power
