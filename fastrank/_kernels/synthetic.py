"""The two loops of `fastrank.synthetic.power_law` that numpy does slowly: sampling by
binary search in a cumulative distribution, and the first k distinct ids of each row.
Arrays in, arrays out, nothing raises; results equal numpy's (np.searchsorted's 'left'
side; the stable first occurrences) for any thread count.

Both are walks of the one parallel driver (`frames.run_ranges`), which the evaluation
that follows compiles anyway: as kernels with a `prange` of their own, each compiled its
own driver, 1.2-1.8 s of `fastrank demo`'s first run (2026-11-27)."""

import numpy as np

from .frames import bounds, integer, matrix, vector
from .jit import njit


def search_left():
    """The walk (`frames.run_ranges`) of out[j] = the smallest i with cdf[i] >= u[j]
    (np.searchsorted(cdf, u), side 'left'), capped at len(cdf) - 1, for the j of its
    range; cdf sorted ascending, its last value 1, u in [0, 1). guide[b] =
    np.searchsorted(cdf, b / t) for b in 0..t: the answer for u[j] lies between
    guide[b - 1] and guide[b + 2], b = int(u[j] * t) (one bucket of margin each side for
    the rounding), so the binary search takes a few steps, not log2(len(cdf)) reads
    across the whole cdf. Frame: cdf, guide (int64), u (float64), out (int64)."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True)
    def search(chunk, n_chunks, frame):
        cdf = vector(frame, 0, np.float64)
        guide = vector(frame, 1, np.int64)
        u = vector(frame, 2, np.float64)
        out = vector(frame, 3, np.int64)
        n = cdf.shape[0]
        t = guide.shape[0] - 1
        first, last = bounds(u.shape[0], chunk, n_chunks)
        for j in range(first, last):
            x = u[j]
            b = np.int64(x * t)
            lo = guide[max(b - 1, 0)]  # cdf[i] < x below it
            hi = guide[min(b + 2, t)]  # cdf[hi] >= x
            while lo < hi:
                mid = (lo + hi) >> 1
                if cdf[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[j] = min(lo, n - 1)
        return np.int64(1)

    return search


def first_distinct():
    """The walk (`frames.run_ranges`) of out[i] = the first k distinct ids of
    candidates[i], in order, leaving out the slots where drop[i] is set (drop of shape
    (0, 0): none), for the rows i of its range; an id seen in an earlier slot, kept or
    dropped, is a repeat. -1 pads the rest. Frame: candidates (int32), drop (bool), k,
    out (int32)."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True)
    def distinct(chunk, n_chunks, frame):
        candidates = matrix(frame, 0, np.int32)
        drop = matrix(frame, 1, np.bool_)
        k = integer(frame, 2)
        out = matrix(frame, 3, np.int32)
        width = candidates.shape[1]
        use_drop = drop.shape[0] > 0
        lo, hi = bounds(candidates.shape[0], chunk, n_chunks)
        for i in range(lo, hi):
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
        return np.int64(1)

    return distinct
