"""Sorting a row's values in place, largest first, in a few lines of machine code: numpy's
sort brings numba's whole quicksort to compile (over a second on a first call), and an
insertion sort mispredicts at every step. Shared by the ranking and trec_eval kernels.
"""

import numpy as np

from .compare import lesser
from .jit import njit


@njit(cache=True, error_model="numpy", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _sift_down(buf, root, end):
    """Restore the min-heap order of buf[:end] below `root`."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and buf[child + 1] < buf[child]:
            child += 1
        if buf[root] <= buf[child]:
            return
        tmp = buf[root]
        buf[root] = buf[child]
        buf[child] = tmp
        root = child


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
    # largest first by taking its smallest to the end, L times: a few lines of machine
    # code where numpy's sort brings numba's whole quicksort to compile
    for root in range(length // 2 - 1, -1, -1):
        _sift_down(buf, root, length)
    for j in range(length, m):
        if buf[j] > buf[0]:
            buf[0] = buf[j]
            _sift_down(buf, np.int64(0), length)
    for end in range(length - 1, 0, -1):
        tmp = buf[0]
        buf[0] = buf[end]
        buf[end] = tmp
        _sift_down(buf, np.int64(0), end)
    return length
