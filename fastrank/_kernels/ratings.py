"""Rating-prediction errors per user: arrays in, arrays out, nothing raises.

The facade (`fastrank.ratings`) hands over the stored ratings grouped by user (indptr,
columns ascending, no duplicates) and checked predictions. Each user's sums are taken in
entry order by one thread, so the values do not depend on the thread count.
"""

import numpy as np
from numba import prange

from .jit import njit


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def value_errors(indptr, data, predicted, squared, absolute):
    """Per user: the sum of squared and of absolute errors of predicted[j] - data[j]."""
    for u in prange(indptr.shape[0] - 1):
        s2 = 0.0
        s1 = 0.0
        for j in range(indptr[u], indptr[u + 1]):
            e = predicted[j] - data[j]
            s2 += e * e
            s1 += abs(e)
        squared[u] = s2
        absolute[u] = s1


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def factor_errors(indptr, indices, data, user_factors, item_factors, squared, absolute):
    """As value_errors, with predictions user_factors[u] . item_factors[i] (float64 sums)."""
    n_factors = user_factors.shape[1]
    for u in prange(indptr.shape[0] - 1):
        s2 = 0.0
        s1 = 0.0
        for j in range(indptr[u], indptr[u + 1]):
            i = indices[j]
            p = 0.0
            for d in range(n_factors):
                p += np.float64(user_factors[u, d]) * np.float64(item_factors[i, d])
            e = p - data[j]
            s2 += e * e
            s1 += abs(e)
        squared[u] = s2
        absolute[u] = s1


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def pattern_values(t_indptr, t_indices, p_indptr, p_indices, p_data, out, found):
    """out[j] = the prediction stored at truth entry j's (user, item) and found[j] = 1, or
    found[j] = 0 if none is. Both patterns have sorted, duplicate-free columns per row."""
    for u in prange(t_indptr.shape[0] - 1):
        q = p_indptr[u]
        end = p_indptr[u + 1]
        for j in range(t_indptr[u], t_indptr[u + 1]):
            c = t_indices[j]
            while q < end and p_indices[q] < c:
                q += 1
            if q < end and p_indices[q] == c:
                out[j] = p_data[q]
                found[j] = 1
            else:
                out[j] = 0.0
                found[j] = 0
