"""Sorting a row's values in place, largest first, in a few lines of machine code: numpy's
sort brings numba's whole quicksort to compile (over a second on a first call), and an
insertion sort mispredicts at every step. Shared by the ranking and trec_eval kernels.
"""

import numpy as np
from numba import njit

from .compare import lesser


# Rows with at most this many relevant values are ranked by counting (see sort_top).
SMALL = 32


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def sort_top(buf, m, limit, spare):
    """Move the L = min(m, limit) largest values of buf[:m] to buf[:L], descending; return L.

    A row of at most SMALL values places each value by its rank, counted against every
    other value (m² comparisons without a branch, where an insertion sort mispredicts at
    every step; spare holds the placed values). A longer row keeps its L largest values in
    a heap, then sorts them.
    """
    length = lesser(m, limit)
    if m <= SMALL:
        for j in range(m):
            v = buf[j]
            rank = 0
            for i in range(m):  # ties: the earlier value ranks first
                rank += (buf[i] > v) | ((buf[i] == v) & (i < j))
            if rank < length:
                spare[rank] = v
        for j in range(length):
            buf[j] = spare[j]
        return length
    # a min-heap of the L largest values so far in buf[:L] (a heap select), then sorted
    # largest first by taking its smallest to the end, L - 1 times. One loop of sift-downs
    # for the three phases (a function of its own compiled for a fifth of a second more on
    # a first call): build the heap (roots L/2 - 1 .. 0), let each later value larger than
    # the heap's smallest replace it, take the smallest to the end.
    n_build = length // 2
    n_select = m - length
    for step in range(n_build + n_select + length - 1):
        root = np.int64(0)
        end = length
        if step < n_build:
            root = n_build - 1 - step
        elif step < n_build + n_select:
            j = length + step - n_build
            if not buf[j] > buf[0]:
                continue
            buf[0] = buf[j]
        else:
            end = length - 1 - (step - n_build - n_select)
            tmp = buf[0]
            buf[0] = buf[end]
            buf[end] = tmp
        while True:  # sift buf[root] down the min-heap buf[:end]
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and buf[child + 1] < buf[child]:
                child += 1
            if buf[root] <= buf[child]:
                break
            tmp = buf[root]
            buf[root] = buf[child]
            buf[child] = tmp
            root = child
    return length
