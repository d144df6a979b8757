"""Synthetic recommender data with power-law item popularity and user activity.

Used by `fastrank demo`, the benchmarks and the tests: fast to build for millions of
users (vectorised numpy, and two small parallel kernels where numpy is slow: the
sampling's binary search and the first distinct ids of each list) and deterministic for
a seed (the kernels give numpy's results for any thread count).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._types import SparseMatrix
from .threads import n_ranges


def power_law(n_users: int = 1_000_000, n_items: int = 50_000, k: int = 10, *,
              seed: int | None = 0, item_exponent: float = 0.9, activity_shape: float = 1.5,
              max_relevant: int = 200,
              hit_rate: float = 0.1) -> tuple[SparseMatrix, NDArray[np.int32]]:
    """Build a graded truth matrix and a top-K array that a plausible model would produce.

    Item popularity follows a Zipf law (weight of the item of rank r ~ r^-item_exponent);
    user activity (relevant items per user) a Pareto law with shape `activity_shape`,
    capped at `max_relevant`. Grades are 1..5. Each slot of the top-K lists holds one of
    the user's own truth items with probability `hit_rate` (more often near the top),
    else a popularity-sampled item; ids within a list are distinct, and a list is padded
    with -1 only in the rare case that too few distinct ids were drawn.

    Returns
    -------
    truth : scipy.sparse.csr_array, float64, shape (n_users, n_items)
    topk : ndarray, int32, shape (n_users, k)
    """
    if n_users < 1 or n_items < 1 or k < 1:
        raise ValueError(
            f"power_law needs n_users, n_items and k of at least 1; got {n_users}, {n_items}, {k}")
    rng = np.random.default_rng(seed)
    popular = _popularity(rng, n_items, item_exponent)
    n_relevant = np.minimum(1 + (rng.pareto(activity_shape, n_users) * 2).astype(np.int64),
                            min(max_relevant, n_items))
    rows = np.repeat(np.arange(n_users, dtype=np.int32), n_relevant)
    cols = popular(rows.shape[0])
    grades = rng.integers(1, 6, rows.shape[0]).astype(np.float64)
    coo = sp.coo_array((grades, (rows, cols)), shape=(n_users, n_items))
    truth = coo.tocsr()
    truth.data = np.minimum(truth.data, 5.0)  # an item drawn twice keeps a grade in 1..5

    # Candidates: 2k slots, each one of the user's truth items with probability hit_rate
    # (more often near the top), else a popular item; the list is the first k distinct.
    width = 2 * k
    candidates = popular((n_users, width))
    slot_boost = np.linspace(1.5, 0.5, width)[None, :]
    use_truth = rng.random((n_users, width)) < hit_rate * slot_boost
    counts = np.diff(truth.indptr)[:, None]
    pick = truth.indptr[:-1, None] + (rng.random((n_users, width)) * counts).astype(np.int64)
    candidates[use_truth] = truth.indices[pick[use_truth]]
    return truth, _first_distinct(candidates, k)


def _popularity(rng: np.random.Generator, n_items: int,
                item_exponent: float = 0.9) -> Callable[[int | tuple[int, int]], NDArray[np.int32]]:
    """A sampler of item ids, `popular(size)`, with Zipf popularity (the item of rank r
    has weight r^-item_exponent) and ranks assigned to ids at random; np.searchsorted's
    draws, by a parallel walk that starts each search in its bucket of a guide table."""
    from ._kernels.synthetic import search_left  # numba loads on first use, not at import

    cdf = np.cumsum(1.0 / np.arange(1, n_items + 1) ** item_exponent)
    cdf /= cdf[-1]
    # where the draws of each of n_items buckets of [0, 1) start their search
    guide = np.searchsorted(cdf, np.arange(n_items + 1) / n_items).astype(np.int64)
    item_of_rank = rng.permutation(n_items).astype(np.int32)  # popularity unrelated to id

    def popular(size: int | tuple[int, int]) -> NDArray[np.int32]:
        u = rng.random(size)
        ranks = np.empty(u.shape, np.int64)
        _run(search_left, u.size, cdf, guide, u.reshape(-1), ranks.reshape(-1))
        return item_of_rank[ranks]

    return popular


def _first_distinct(candidates: NDArray[Any], k: int,
                    drop: NDArray[np.bool_] | None = None) -> NDArray[np.int32]:
    """The first k distinct ids of each row, in order, skipping the slots where `drop`
    (a boolean array of the same shape) is set; a dropped slot's id still counts as seen.
    -1 pads a row with fewer."""
    from ._kernels.synthetic import first_distinct  # numba loads on first use

    out = np.empty((candidates.shape[0], k), np.int32)
    skip = np.zeros((0, 0), np.bool_) if drop is None else np.ascontiguousarray(drop)
    _run(first_distinct, out.shape[0], np.ascontiguousarray(candidates, np.int32), skip, k,
         out)
    return out


def _run(factory: Any, n: int, *args: Any) -> None:
    """Run the walk `factory()` (`_kernels.synthetic`) over n rows in the ranges every walk
    gets (`threads.n_ranges`), on the driver that every walk shares (`frames.run_ranges`)."""
    import numba

    from ._kernels import frames

    n_chunks = max(n_ranges(n, numba.get_num_threads(), n, 1), 1)
    frames.run(frames.walk(factory), frames.Frame(*args), n_chunks)
