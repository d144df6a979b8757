"""`fastrank.evaluate`: validate once, run the one-pass kernel, average per user."""

from contextlib import contextmanager

import numpy as np

from .metrics import _check_convention, metric_labels, parse_metrics, slot_table
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


def evaluate(truth, topk, metrics, *, convention="recsys", users=None, n_threads=None,
             train=None, item_aspects=None, item_vectors=None, baseline=None):
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
    train : scipy.sparse matrix, (any users) x items, optional
        Training interactions, for `novelty`, `arp` and `baseline="popular"`: an item's
        popularity is the number of training users with a positive entry for it.
    item_aspects : scipy.sparse matrix, items x aspects, 0/1, optional
        For `ild` (Jaccard distance of aspect sets).
    item_vectors : array (items x dims), optional
        For `ild` (cosine distance), instead of item_aspects.
    baseline : "popular", or int array (K_b,) or (n_rows, K_b), optional
        For `serendipity`: the lists a relevant item must be absent from.

    Returns
    -------
    Result
        A read-only mapping metric -> mean, with `.per_user(name)` arrays.
        `coverage` and `gini` are catalogue-level: they have a value, not per-user ones.
    """
    from .beyond import beyond_values, parse_beyond

    data = check_truth(truth)
    topk = check_topk(topk, data.n_items)
    rows = check_users(users, topk.shape[0], data.n_users)
    labels = metric_labels(metrics)
    beyond = {}
    for label in labels:
        spec = parse_beyond(label, topk.shape[1])
        if spec is not None:
            beyond.setdefault(spec.label, spec)
    ranking = [label for label in labels if label not in beyond]
    specs = parse_metrics(ranking, topk.shape[1], convention) if ranking else ()
    _check_convention(convention)
    table = slot_table(specs)

    n_rows = topk.shape[0]
    out = np.empty((len(specs), n_rows), dtype=np.float64)
    n_relevant = np.empty(n_rows, dtype=np.int64)
    counted = np.empty(n_rows, dtype=np.uint8)
    with numba_threads(n_threads) as threads:
        rank_into(data, topk, rows, table, convention, threads, out, n_relevant, counted)
        counted = counted.view(np.bool_)
        if not beyond:
            return summarize(specs, out, convention, rows, counted, n_relevant)
        values, means = beyond_values(list(beyond.values()), data, topk, rows, counted,
                                      threads, train=train, item_aspects=item_aspects,
                                      item_vectors=item_vectors, baseline=baseline)
    result = summarize(specs, out, convention, rows, counted, n_relevant)
    per_user = {label: result.per_user(label) for label in result.metrics}
    per_user.update(values)
    means.update(result.to_dict())
    order = list(dict.fromkeys(labels))  # as asked, repeats kept once
    catalogue = [label for label in order if label not in per_user]
    return Result(order, [per_user.get(label) for label in order], means,
                  convention=convention, users=rows, counted=counted, n_relevant=n_relevant,
                  catalogue=catalogue)


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


def counted_mean(values, counted):
    """Plain float64 mean of values over the counted rows; NaN when no row counts."""
    return float(values[counted].mean()) if counted.any() else float("nan")


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
