"""Parallel scans behind the facade's input checks: they read the caller's arrays in place
(memory-mapped ones included) and allocate nothing of the input's size.

Arrays in, arrays out, nothing raises. Each scan is a walk of `frames.run_ranges` (the
driver of the ranking walks too), which cuts its input into `n_chunks` ranges run under
`prange`; a range writes only its own row of `out`, and the facade combines the rows.
Every answer is a flag, a count or an extreme (no float sum), so it is the same for any
thread count. Compiled lazily per dtype: int32 or int64 indices, float32 or float64
values, as the caller holds them.
"""

import numpy as np

from .compare import greater, lesser
from .frames import bounds, matrix, vector
from .jit import njit


# a constant, where np.iinfo in a kernel compiles two functions on a first call
_INT64_MAX = np.int64(np.iinfo(np.int64).max)


def scan_rows(pointer_type, index_type):
    """The walk (`frames.run_ranges`) that checks a compressed matrix of `pointer_type`
    indptr and `index_type` indices; frame: (indptr, indices, out). Range c of the rows of
    a matrix whose indptr starts at 0 and ends at len(indices) writes out[c] = (smallest
    index, largest index, 1 if some row's indices do not strictly increase, 1 if indptr
    decreases in the range). A row whose step decreases (flagged) or leaves
    [0, len(indices)] (then indptr ends elsewhere, or decreases somewhere) is not read.
    An empty range writes (the largest int64, -1, 0, 0)."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def scan(chunk, n_chunks, frame):
        indptr = vector(frame, 0, pointer_type)
        indices = vector(frame, 1, index_type)
        out = matrix(frame, 2, np.int64)
        n_indices = indices.shape[0]
        lo, hi = bounds(indptr.shape[0] - 1, chunk, n_chunks)
        smallest = _INT64_MAX
        largest = np.int64(-1)
        unsorted = 0
        bad_step = 0
        for r in range(lo, hi):
            start = np.int64(indptr[r])
            end = np.int64(indptr[r + 1])
            if end < start:
                bad_step = 1
                continue
            if start < 0 or end > n_indices:  # past the entries: not read
                continue
            previous = np.int64(-1)
            for j in range(start, end):
                index = np.int64(indices[j])
                smallest = lesser(smallest, index)
                largest = greater(largest, index)
                if index <= previous:
                    unsorted = 1
                previous = index
        out[chunk, 0] = smallest
        out[chunk, 1] = largest
        out[chunk, 2] = unsorted
        out[chunk, 3] = bad_step
        return np.int64(1)

    return scan


def largest_square_norm(factor_type):
    """The walk (`frames.run_ranges`) that checks a 2-D float array of factor_type; frame:
    (rows, out). Range c of its rows writes out[c] = the largest Σ_j rows[i, j]² (in
    float64; 0.0 for an empty range), or NaN where a row holds a NaN or an infinity."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def scan(chunk, n_chunks, frame):
        rows = matrix(frame, 0, factor_type)
        out = vector(frame, 1, np.float64)
        lo, hi = bounds(rows.shape[0], chunk, n_chunks)
        largest = 0.0
        for i in range(lo, hi):
            total = 0.0
            finite = True
            for j in range(rows.shape[1]):
                x = np.float64(rows[i, j])
                if not np.isfinite(x):
                    finite = False
                total += x * x
            if not finite:
                largest = np.nan
                break
            largest = greater(largest, total)
        out[chunk] = largest
        return np.int64(1)

    return scan
