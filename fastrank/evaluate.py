"""`fastrank.evaluate`: validate once, run the one-pass kernel, average per user."""

from contextlib import contextmanager

import numpy as np

from .metrics import parse_metrics, slot_table
from .result import Result
from .validation import check_n_threads, check_topk, check_truth, check_users

# Ranges of users per thread: a few per thread evens out the load; each range allocates
# and clears its own O(n_items) scratch once.
_CHUNKS_PER_THREAD = 4


def n_ranges(n_rows, threads, work, n_items):
    """How many user ranges to run: a few per thread, but never so many that clearing
    each range's n_items scratch costs more than the work itself (few users, huge
    catalogue), and at least one per thread while there are rows."""
    by_work = max(threads, work // max(n_items, 1))
    return min(n_rows, _CHUNKS_PER_THREAD * threads, by_work)


@contextmanager
def numba_threads(n_threads):
    """Run the block with numba's thread count set to n_threads (None: leave it)."""
    import numba

    n_threads = check_n_threads(n_threads, numba.config.NUMBA_NUM_THREADS)
    if n_threads is None:
        yield numba.get_num_threads()
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        yield n_threads
    finally:
        numba.set_num_threads(previous)


def discounts(length):
    """d(i) = 1 / log2(i + 1) for ranks i = 1..length, as an array indexed from 0."""
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))


def evaluate(truth, topk, metrics, *, convention="recsys", users=None, n_threads=None):
    """Evaluate ranked lists against graded truth; every metric at every cutoff in one pass.

    Parameters
    ----------
    truth : scipy.sparse matrix or array, shape (n_users, n_items)
        Graded relevance; a stored value > 0 is relevant. Never modified.
    topk : int array, shape (n_rows, K)
        Item ids, best first; -1 pads lists shorter than K.
    metrics : str or sequence of str
        Names such as "ndcg@10" or "map" (meaning @K); see `fastrank.METRIC_NAMES`.
    convention : {"recsys", "trec", "implicit"}
        Which formulas the names stand for and which users count (see the README).
    users : int array, shape (n_rows,), optional
        The truth row of each topk row; by default row i of topk is row i of truth.
    n_threads : int, optional
        Numba threads for this call; the previous setting is restored afterwards.
        Results are bit-identical for any thread count.

    Returns
    -------
    Result
        A read-only mapping metric -> mean, with `.per_user(name)` arrays.
    """
    data = check_truth(truth)
    topk = check_topk(topk, data.n_items)
    rows = check_users(users, topk.shape[0], data.n_users)
    specs = parse_metrics(metrics, topk.shape[1], convention)
    table = slot_table(specs)

    n_rows = topk.shape[0]
    out = np.empty((len(specs), n_rows), dtype=np.float64)
    n_relevant = np.empty(n_rows, dtype=np.int64)
    counted = np.empty(n_rows, dtype=np.uint8)
    with numba_threads(n_threads) as threads:
        rank_into(data, topk, rows, table, convention, threads, out, n_relevant, counted)
    return summarize(specs, out, convention, rows, counted.view(np.bool_), n_relevant)


def rank_into(data, topk, rows, table, convention, threads, out, n_relevant, counted):
    """Run the ranking kernel on checked inputs, filling out, n_relevant and counted."""
    from ._kernels.ranking import rank_metrics  # numba loads on first use, not at import

    n_rows, k_max = topk.shape
    max_row_nnz = data.max_row_nnz
    disc = discounts(max(k_max, max_row_nnz) if table.needs_uncut_ideal else k_max)
    n_chunks = n_ranges(n_rows, threads, n_rows * k_max + data.indices.shape[0], data.n_items)
    rank_metrics(data.indptr, data.indices, data.data, topk, rows, data.n_items,
                 table.cutoffs, table.slot_code, table.slot_cut, convention == "trec",
                 disc, max_row_nnz, n_chunks, out, n_relevant, counted)


def rank_part(data, lists, rows, table, convention, threads):
    """Per-user values (n_slots x n_rows) of lists whose rows' m and counting the caller
    already knows: the kernel's own n_relevant / counted outputs are discarded."""
    n = rows.shape[0]
    part = np.empty((table.slot_code.shape[0], n), dtype=np.float64)
    rank_into(data, lists, rows, table, convention, threads, part, np.empty(n, np.int64),
              np.empty(n, np.uint8))
    return part


def summarize(specs, out, convention, rows, counted, n_relevant):
    """The Result of per-user values out[s] for specs[s]: means over the counted rows."""
    all_counted = rows.shape[0] > 0 and bool(counted.all())
    means = {spec.label: _mean(spec, values, counted, n_relevant, all_counted)
             for spec, values in zip(specs, out)}
    return Result([s.label for s in specs], out, means, convention=convention, users=rows,
                  counted=counted, n_relevant=n_relevant)


def _mean(spec, values, counted, n_relevant, all_counted):
    """Plain float64 mean over the counted users; implicit's precision is pooled."""
    if not all_counted:
        if not counted.any():
            return float("nan")
        values = values[counted]
        n_relevant = n_relevant[counted]
    if spec.pooled:
        # per-user value is hits / min(k, m); the pooled mean is sum(hits) / sum(min(k, m))
        denom = np.minimum(n_relevant, spec.k)
        hits = np.rint(values * denom)
        return float(hits.sum() / denom.sum())
    return float(values.mean())
