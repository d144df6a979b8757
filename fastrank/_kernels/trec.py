"""trec_eval's measures that the ranking kernel does not compute: num_ret, num_rel_ret,
bpref and interpolated precision at recall points (v10's rounding).

Arrays in, arrays out, nothing raises. Truth values are trec_eval's integer levels: a
value >= `level` is relevant, 0 <= value < level is judged non-relevant (bpref), and a
negative value is pooled but unjudged (skipped). Rows run in `n_chunks` ranges under
`prange`, each with its own stamp marker of length n_items.
"""

import numpy as np
from numba import njit, prange

_RELEVANT = 1
_NONRELEVANT = 2


@njit(cache=True, parallel=True)
def trec_extras(indptr, indices, data, topk, rows, n_items, level, points, n_chunks,
                num_ret, num_rel, num_rel_ret, bpref, iprec):
    """Per row i: num_ret (ids that are not padding), num_rel (R), num_rel_ret, bpref, and
    iprec[p, i] = interpolated precision at recall points[p] (ascending). A list holds
    no repeated id (the facade rejects runs that do, as trec_eval does)."""
    n_rows = topk.shape[0]
    k_max = topk.shape[1]
    n_points = points.shape[0]
    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
        stamp = np.zeros(n_items, np.int64)
        kind = np.zeros(n_items, np.int8)
        cut = np.empty(n_points, np.int64)
        for i in range(lo, hi):
            base = np.int64(i) + 1
            r = rows[i]
            n_rel = 0
            n_nonrel = 0
            for j in range(indptr[r], indptr[r + 1]):
                item = indices[j]
                v = data[j]
                stamp[item] = base
                if v >= level:
                    kind[item] = _RELEVANT
                    n_rel += 1
                elif v >= 0:
                    kind[item] = _NONRELEVANT
                    n_nonrel += 1
                else:
                    kind[item] = 0
            n = 0
            found = 0
            nonrel_above = 0
            total = 0.0
            for p in range(k_max):
                item = topk[i, p]
                if item < 0:
                    continue
                n += 1
                if stamp[item] != base:
                    continue
                if kind[item] == _RELEVANT:
                    found += 1
                    if nonrel_above > 0:
                        total += 1.0 - min(nonrel_above, n_rel) / min(n_nonrel, n_rel)
                    else:
                        total += 1.0
                elif kind[item] == _NONRELEVANT:
                    nonrel_above += 1
            num_ret[i] = n
            num_rel[i] = n_rel
            num_rel_ret[i] = found
            bpref[i] = total / n_rel if n_rel > 0 else 0.0
            # interpolated precision (v10): walking up from the last retrieved document,
            # the best precision so far is given to each recall cutoff lround(point * R)
            # as the count of relevant documents falls to it; cutoffs above the relevant
            # documents found stay 0, a cutoff of 0 gets the best precision of all.
            for q in range(n_points):
                x = points[q] * n_rel
                whole = np.floor(x)
                cut[q] = np.int64(whole) + (1 if x - whole >= 0.5 else 0)  # C's lround
                iprec[q, i] = 0.0
            cur = n_points - 1
            while cur >= 0 and cut[cur] > found:
                cur -= 1
            best = found / n if n > 0 else 0.0
            count = found
            rank = n
            for p in range(k_max - 1, -1, -1):
                if count <= 0:
                    break
                item = topk[i, p]
                if item < 0:
                    continue
                best = max(best, count / rank)
                if stamp[item] == base and kind[item] == _RELEVANT:
                    while cur >= 0 and cut[cur] == count:
                        iprec[cur, i] = best
                        cur -= 1
                    count -= 1
                rank -= 1
            while cur >= 0:
                iprec[cur, i] = best
                cur -= 1
