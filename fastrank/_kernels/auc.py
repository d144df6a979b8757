"""RecTools' partial AUCs of ranked lists: pAUC@k and pAp@k (`fastrank.auc`).

Arrays in, arrays out, nothing raises. Users run in `n_chunks` contiguous ranges under
`prange`, each with its own stamps (never cleared); a user's values depend on its row
only, so they are the same for any thread count. Only rows with counted[i] set are
measured; the others get NaN.

Per user, the list is read whole (every column of topk): padding and repeated ids are
skipped, as they are not items of the ranking; an item is a hit when its truth value is
> 0 and a non-relevant item (a negative) otherwise. With f the negatives above a hit,
slot s (cutoff k = slot_k[s]) sums k - f over the hits with f < k (for pAp, only over
the first k hits) and divides by k·m (pAUC) or k·min(k, m) (pAp); m = 0 gives 0.
short[s, i] is 1 when the list holds fewer than k negatives and misses a relevant item
(RecTools' insufficient recommendations).
"""

import numpy as np
from numba import prange

from . import codes
from .frames import bounds
from .jit import njit

PARTIAL_AUC = codes.PARTIAL_AUC
PAP = codes.PAP

_SKIP = 0
_NEGATIVE = 1
_HIT = 2


@njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def partial_aucs(t_indptr, t_indices, t_data, topk, rows, counted, slot_code, slot_k,
                 n_items, n_chunks, out, short):
    """out[s, i] and short[s, i] of slot s (code slot_code[s], cutoff slot_k[s]), row i."""
    n_rows, width = topk.shape
    n_slots = slot_code.shape[0]
    for chunk in prange(n_chunks):
        lo, hi = bounds(n_rows, chunk, n_chunks)
        relevant = np.zeros(n_items, np.int64)
        seen = np.zeros(n_items, np.int64)
        kind = np.empty(max(width, 1), np.int8)
        for i in range(lo, hi):
            if not counted[i]:
                for s in range(n_slots):
                    out[s, i] = np.nan
                    short[s, i] = 0
                continue
            stamp = np.int64(i) + 1
            r = rows[i]
            m = 0
            for j in range(t_indptr[r], t_indptr[r + 1]):
                if t_data[j] > 0.0:
                    relevant[t_indices[j]] = stamp
                    m += 1
            n_hits = 0
            n_neg = 0
            for p in range(width):
                item = topk[i, p]
                if item < 0 or seen[item] == stamp:
                    kind[p] = _SKIP
                    continue
                seen[item] = stamp
                if relevant[item] == stamp:
                    kind[p] = _HIT
                    n_hits += 1
                else:
                    kind[p] = _NEGATIVE
                    n_neg += 1
            for s in range(n_slots):
                k = slot_k[s]
                pap = slot_code[s] == PAP
                f = 0
                h = 0
                total = 0
                for p in range(width):
                    if kind[p] == _NEGATIVE:
                        f += 1
                        if f >= k:
                            break
                    elif kind[p] == _HIT:
                        h += 1
                        if not pap or h <= k:
                            total += k - f
                den = k * (min(k, m) if pap else m)
                out[s, i] = total / den if den > 0 else 0.0
                short[s, i] = 1 if (n_neg < k and n_hits < m) else 0
