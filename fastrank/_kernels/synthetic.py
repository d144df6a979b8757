"""The two loops of `fastrank.synthetic.power_law` that numpy does slowly: sampling by
binary search in a cumulative distribution, and the first k distinct ids of each row.
Arrays in, arrays out, nothing raises; results equal numpy's (np.searchsorted's 'left'
side; the stable first occurrences) for any thread count."""

from numba import njit, prange


@njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def search_left(cdf, u, out):
    """out[j] = the smallest i with cdf[i] >= u[j] (np.searchsorted(cdf, u), side 'left'),
    capped at len(cdf) - 1; cdf sorted ascending."""
    n = cdf.shape[0]
    for j in prange(u.shape[0]):
        x = u[j]
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if cdf[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        out[j] = min(lo, n - 1)


@njit(cache=True, parallel=True, no_cfunc_wrapper=True)
def first_distinct(candidates, drop, k, out):
    """out[i] = the first k distinct ids of candidates[i], in order, leaving out the slots
    where drop[i] is set (drop of shape (0, 0): none); an id seen in an earlier slot, kept
    or dropped, is a repeat. -1 pads the rest."""
    width = candidates.shape[1]
    use_drop = drop.shape[0] > 0
    for i in prange(candidates.shape[0]):
        filled = 0
        for p in range(width):
            if filled == k:
                break
            c = candidates[i, p]
            seen = False
            for q in range(p):
                if candidates[i, q] == c:
                    seen = True
                    break
            if seen or (use_drop and drop[i, p]):
                continue
            out[i, filled] = c
            filled += 1
        for q in range(filled, k):
            out[i, q] = -1
