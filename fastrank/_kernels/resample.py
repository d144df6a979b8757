"""Resampling kernels: bootstrap means and sign-flip (paired randomization) statistics.

Arrays in, arrays out, nothing raises. Randomness comes from a counter-based generator:
resample (or permutation) r draws from its own stream, seeded by splitmix64 of the user's
seed and r, and is computed whole by one thread. So every statistic depends on the seed
only, never on the thread count or on how the work is split.
"""

import numpy as np
from numba import prange, uint64

from .jit import njit

_GOLDEN = uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _mix(z):
    """splitmix64's output function."""
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@njit(cache=True, inline="always")
def _below(r, n):
    """An integer in [0, n) from 64 random bits (Lemire's multiply-shift on the top 32
    bits: bias below n / 2**32, and correct for n < 2**32, which the facade checks)."""
    return np.int64(((r >> uint64(32)) * uint64(n)) >> uint64(32))


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def bootstrap_means(num, den, ratio, centre, seed, out):
    """out[r] = the mean of resample r: n draws with replacement from the n users, the
    mean being sum(num[j]) / n, or sum(num[j]) / sum(den[j]) when ratio (pooled means).
    Sums are taken of the deviations from `centre` (the full sample's mean), so that long
    sums of nearly equal values do not drift."""
    n = num.shape[0]
    for r in prange(out.shape[0]):
        state = _mix(uint64(seed) + _GOLDEN * uint64(r + 1))
        top = 0.0
        bottom = 0.0
        for _ in range(n):
            state += _GOLDEN
            j = _below(_mix(state), n)
            if ratio:
                top += num[j] - centre * den[j]
                bottom += den[j]
            else:
                top += num[j] - centre
        if ratio:
            out[r] = centre + top / bottom if bottom > 0 else np.nan
        else:
            out[r] = centre + top / n


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def signflip_sums(diff, seed, out):
    """out[p] = sum(s_i * diff[i]) for permutation p, with independent random signs s_i
    (the paired randomization test's null distribution of the summed difference)."""
    n = diff.shape[0]
    for p in prange(out.shape[0]):
        state = _mix(uint64(seed) + _GOLDEN * uint64(p + 1))
        total = 0.0
        for lo in range(0, n, 64):
            state += _GOLDEN
            bits = _mix(state)
            hi = min(lo + 64, n)
            for i in range(lo, hi):
                sign = 1.0 - 2.0 * np.float64((bits >> uint64(i - lo)) & uint64(1))
                total += sign * diff[i]
        out[p] = total
