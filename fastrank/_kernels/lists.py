"""Ordering ranked records: group them by row, then sort each row's records.

Arrays in, arrays out, nothing raises; `fastrank.io.lists` has checked that rows lie in
[0, n_rows) and that the keys are finite. A row's records are sorted by one thread, so
the order does not depend on the thread count.
"""

import numpy as np
from numba import prange

from .jit import njit

# Rows with at most this many records are insertion-sorted in place; longer rows use two
# stable merge sorts.
_SHORT = 32


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def group_rows(rows, n_rows):
    """(order, starts): a stable counting sort of the records by row; the records of row r
    are order[starts[r]:starts[r + 1]]."""
    starts = np.zeros(n_rows + 1, np.int64)
    for j in range(rows.shape[0]):
        starts[rows[j] + 1] += 1
    for r in range(n_rows):
        starts[r + 1] += starts[r]
    fill = starts[:-1].copy()
    order = np.empty(rows.shape[0], np.int64)
    for j in range(rows.shape[0]):
        r = rows[j]
        order[fill[r]] = j
        fill[r] += 1
    return order, starts


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def sort_rows(order, starts, first, second):
    """Sort each row's records in `order` by `first` descending, ties by `second` descending,
    remaining ties in their given order."""
    for r in prange(starts.shape[0] - 1):
        a = starts[r]
        b = starts[r + 1]
        if b - a <= _SHORT:
            for j in range(a + 1, b):
                x = order[j]
                f = first[x]
                s = second[x]
                p = j
                while p > a and (first[order[p - 1]] < f or (
                        first[order[p - 1]] == f and second[order[p - 1]] < s)):
                    order[p] = order[p - 1]
                    p -= 1
                order[p] = x
        else:
            segment = order[a:b].copy()
            segment = segment[np.argsort(-second[segment], kind="mergesort")]
            order[a:b] = segment[np.argsort(-first[segment], kind="mergesort")]
