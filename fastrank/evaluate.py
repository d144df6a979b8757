"""`fastrank.evaluate`: validate once, run the one-pass kernel, average per user."""

import threading
from contextlib import contextmanager

import numpy as np

from .metrics import _check_convention, metric_labels, parse_metrics, slot_table, with_curves
from .progress import progress_bar
from .result import Result
from .validation import (check_int, check_memory, check_n_threads, check_scratch,
                         check_topk, check_truth, check_users, memory_guard)

# Ranges of users per thread: a few per thread evens out the load; each range allocates
# and clears its own O(n_items) scratch once.
_CHUNKS_PER_THREAD = 4
# Bytes of the ranking kernel's scratch per item and range: an int64 stamp, a float64 value.
_RANK_BYTES = 16


def n_ranges(n_rows, threads, work, n_items):
    """How many user ranges to run: a few per thread, but never so many that clearing
    each range's n_items scratch costs more than the work itself (few users, huge
    catalogue), and at least one per thread while there are rows."""
    by_work = max(threads, work // max(n_items, 1))
    return min(n_rows, _CHUNKS_PER_THREAD * threads, by_work)


@contextmanager
def numba_threads(n_threads):
    """Run the block with numba's thread count set to n_threads (None: leave it); the
    count is per Python thread. Where numba's threading layer is its own workqueue (no
    OpenMP or TBB on the machine), which aborts the process when two Python threads run
    parallel kernels at once, the blocks of concurrent callers take turns."""
    import numba

    n_threads = check_n_threads(n_threads, numba.config.NUMBA_NUM_THREADS)
    with _turns(numba):
        if n_threads is None:
            yield numba.get_num_threads()
            return
        previous = numba.get_num_threads()
        numba.set_num_threads(n_threads)
        try:
            yield n_threads
        finally:
            numba.set_num_threads(previous)


_TURNS = threading.RLock()


@contextmanager
def _turns(numba):
    """Hold the turn lock while the threading layer is the workqueue, or not yet chosen
    (the first parallel call chooses it)."""
    try:
        serial = numba.threading_layer() == "workqueue"
    except ValueError:  # not initialised yet
        serial = True
    if not serial:
        yield
        return
    with _TURNS:
        yield


def discounts(length):
    """d(i) = 1 / log2(i + 1) for ranks i = 1..length, as an array indexed from 0."""
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))


def evaluate(truth, topk, metrics, *, convention="recsys", users=None, k=None, n_threads=None,
             train=None, item_aspects=None, item_vectors=None, baseline=None,
             show_progress=False, curves=None):
    """Evaluate ranked lists against graded truth; every metric at every cutoff in one pass.

    Parameters
    ----------
    truth : scipy.sparse matrix or array, shape (n_users, n_items)
        Graded relevance; a stored value > 0 is relevant. Never modified; memory-mapped
        int64/float64 arrays are read in place.
    topk : int array, shape (n_rows, K)
        Item ids, best first; -1 pads lists shorter than K. May be memory-mapped.
    metrics : str or sequence of str
        Names such as "ndcg@10" or "map" (meaning @K); see `fastrank.METRIC_NAMES`.
    convention : {"recsys", "trec", "implicit"}
        Which formulas the names stand for and which users count (see the README).
    users : int array, shape (n_rows,), optional
        The truth row of each topk row; by default row i of topk is row i of truth.
    k : int, optional
        The list length K (what a name without @k means, and the largest cutoff).
        Default: topk's columns. Lists narrower than k end early: their slots past the
        columns are empty (precision@k still divides by k); columns past k are not read.
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
    show_progress : bool
        A progress bar (tqdm) with users/s; the users then run in spans (same values).
    curves : str, list of str or True, optional
        Also evaluate these ranking metrics (True: every one named in `metrics`) at every
        cutoff 1..K, in the same pass, for `Result.curve` and `Result.plot`.

    Returns
    -------
    Result
        A read-only mapping metric -> mean, with `.per_user(name)` arrays.
        `coverage` and `gini` are catalogue-level: they have a value, not per-user ones.
    """
    data = check_truth(truth)
    topk = check_topk(topk, data.n_items)
    rows = check_users(users, topk.shape[0], data.n_users)
    k = topk.shape[1] if k is None else check_int(k, "k")
    metrics = with_curves(metric_labels(metrics), curves, k)
    plan = Plan(metrics, k, convention, data.n_items, train=train,
                item_aspects=item_aspects, item_vectors=item_vectors, baseline=baseline)
    n_rows = topk.shape[0]
    with numba_threads(n_threads) as threads:
        if not show_progress:
            block = plan.run(data, topk, rows, threads)
            return plan.result(block, rows)
        out = plan.empty(n_rows)
        span = max(1024, _SPAN_IDS // topk.shape[1])
        with progress_bar(n_rows, True, "users") as bar:
            for lo in range(0, n_rows, span):
                hi = min(lo + span, n_rows)
                part_baseline = _rows_of(plan.beyond_baseline, lo, hi)
                out.fill(lo, plan.run(data, topk[lo:hi], rows[lo:hi], threads,
                                      baseline=part_baseline))
                bar.update(hi - lo)
    return plan.result(out, rows)


# Users per span when evaluate shows progress: ~2**20 ids per span.
_SPAN_IDS = 1 << 20


def _rows_of(baseline, lo, hi):
    """The rows lo:hi of a per-row baseline array; None or a shared baseline as is."""
    if baseline is None or isinstance(baseline, str):
        return None
    ids = np.asarray(baseline)
    return ids[lo:hi] if ids.ndim == 2 and ids.shape[0] > 1 else None


class Block:
    """Per-user outputs of some top-K rows: one row of `values` per per-user metric,
    n_relevant, counted, and the item exposure of catalogue metrics (or None)."""

    def __init__(self, values, n_relevant, counted, shown):
        self.values, self.n_relevant, self.counted, self.shown = \
            values, n_relevant, counted, shown

    def fill(self, lo, part):
        """Copy a Block of rows lo.. into this one and add its exposure."""
        hi = lo + part.n_relevant.shape[0]
        self.values[:, lo:hi] = part.values
        self.n_relevant[lo:hi] = part.n_relevant
        self.counted[lo:hi] = part.counted
        if part.shown is not None:
            self.shown = part.shown if self.shown is None else self.shown + part.shown


def split_metrics(labels, k, convention):
    """(ranking MetricSpecs, {label: BeyondSpec}) of metric labels for lists of length k;
    unknown names and bad cutoffs fail here."""
    from .beyond import parse_beyond

    _check_convention(convention)
    beyond = {}
    for label in labels:
        spec = parse_beyond(label, k)
        if spec is not None:
            beyond.setdefault(spec.label, spec)
    ranking = [label for label in labels if label not in beyond]
    return (parse_metrics(ranking, k, convention) if ranking else ()), beyond


def check_metrics(labels, convention, **side):
    """Check metric names and the side inputs they need before any list is seen (for
    lists of any length): what Plan would refuse later, refused now."""
    from .beyond import check_side_inputs

    _, beyond = split_metrics(labels, 2 ** 62, convention)
    check_side_inputs(list(beyond.values()), **side, baseline_later=True)


class Plan:
    """Metric names parsed for lists of length k: the ranking kernel's slots, the
    beyond-accuracy plan, and how per-user values become means."""

    def __init__(self, metrics, k, convention, n_items, *, train=None, item_aspects=None,
                 item_vectors=None, baseline=None, baseline_later=False):
        from .beyond import BeyondPlan

        labels = metric_labels(metrics)
        self.specs, beyond = split_metrics(labels, k, convention)
        self.convention, self.k = convention, k
        self.table = slot_table(self.specs)
        self.beyond = (BeyondPlan(list(beyond.values()), n_items, k, train=train,
                                  item_aspects=item_aspects, item_vectors=item_vectors,
                                  baseline=baseline, baseline_later=baseline_later)
                       if beyond else None)
        self.beyond_baseline = baseline
        self.labels = list(dict.fromkeys(labels))  # as asked, repeats kept once
        per_user = [s.label for s in self.specs]
        if self.beyond:
            per_user += [s.label for s in self.beyond.per_user]
        self.per_user = per_user
        self.catalogue = [label for label in self.labels if label not in per_user]
        self._pooled = {s.label: s for s in self.specs if s.pooled}

    def empty(self, n_rows):
        """An unfilled Block for n_rows rows (its memory checked first)."""
        check_memory(n_rows * (8 * len(self.per_user) + 9),
                     f"the per-user values of {len(self.per_user)} metrics for {n_rows:,} "
                     f"users", "ask for fewer metrics (or curves), or evaluate fewer users "
                     "at a time")
        return Block(np.empty((len(self.per_user), n_rows)), np.empty(n_rows, np.int64),
                     np.empty(n_rows, np.bool_), None)

    def run(self, data, topk, rows, threads, baseline=None, into=None, at=0):
        """The Block of checked top-K rows; written into columns at.. of the Block `into`
        (its exposure added) when given, with no intermediate copy of the ranking values."""
        n_rows = topk.shape[0]
        n_slots = len(self.specs)
        block = self.empty(n_rows) if into is None else Block(
            into.values[:, at:at + n_rows], into.n_relevant[at:at + n_rows],
            into.counted[at:at + n_rows], None)
        # first rows of a C array (a fresh block) or a column range of the store (strided)
        rank_into(data, topk, rows, self.table, self.convention, threads,
                  block.values[:n_slots], block.n_relevant, block.counted.view(np.uint8))
        if self.beyond:
            values, block.shown = self.beyond.run(data, topk, rows, block.counted, threads,
                                                  baseline=baseline)
            block.values[n_slots:] = values
        if into is not None and block.shown is not None:
            into.shown = block.shown if into.shown is None else into.shown + block.shown
        return block

    def sums(self, block):
        """{label: (numerator, denominator)} of every per-user mean over a Block: sums
        over the counted rows (implicit's pooled precision: hits and min(k, m))."""
        counted = block.counted
        n = float(np.count_nonzero(counted))
        all_counted = counted.all()
        out = {}
        for label, values in zip(self.per_user, block.values):
            picked = values if all_counted else values[counted]
            spec = self._pooled.get(label)
            if spec is not None:
                m = block.n_relevant if all_counted else block.n_relevant[counted]
                hits, denom = pooled_parts(picked, m, spec.k)
                out[label] = (float(hits.sum()), float(denom.sum()))
            else:
                out[label] = (float(picked.sum()), n)
        return out

    def means(self, sums, shown):
        """{label: mean} from accumulated `sums` and catalogue exposure."""
        means = {label: (num / den if den else float("nan"))
                 for label, (num, den) in sums.items()}
        if self.beyond:
            means.update(self.beyond.catalogue_means(shown))
        return means

    def result(self, block, rows, means=None):
        """The Result of a Block (means from it unless given)."""
        if means is None:
            means = self.means(self.sums(block), block.shown)
        values = dict(zip(self.per_user, block.values))
        return Result(self.labels, [values.get(label) for label in self.labels], means,
                      convention=self.convention, users=rows, counted=block.counted,
                      n_relevant=block.n_relevant, catalogue=self.catalogue,
                      pooled={label: spec.k for label, spec in self._pooled.items()},
                      k=self.k)


def rank_into(data, topk, rows, table, convention, threads, out, n_relevant, counted):
    """Run the ranking kernel on checked inputs, filling out, n_relevant and counted."""
    from ._kernels.ranking import rank_metrics  # numba loads on first use, not at import

    n_rows, width = topk.shape
    max_row_nnz = data.max_row_nnz
    largest = int(table.cutoffs[-1]) if table.cutoffs.size else 1
    # discounts for the positions walked and for the ideal (cut at the largest cutoff)
    ideal = max_row_nnz if table.needs_uncut_ideal else min(largest, max_row_nnz)
    disc = discounts(max(min(width, largest), ideal, 1))
    n_chunks = n_ranges(n_rows, threads, n_rows * width + data.indices.shape[0], data.n_items)
    check_scratch(data.n_items, _RANK_BYTES, n_chunks)
    with memory_guard("the ranking kernel"):
        rank_metrics(data.indptr, data.indices, data.data, topk, rows, data.n_items,
                     table.cutoffs, table.slot_code, table.slot_cut, convention == "trec",
                     disc, max_row_nnz, n_chunks, out, n_relevant, counted)


def pooled_parts(values, n_relevant, k):
    """implicit's pooled precision per user: (hits, min(k, m)), from the per-user values
    hits / min(k, m); its mean is sum(hits) / sum(min(k, m))."""
    denom = np.minimum(n_relevant, k)
    return np.rint(values * denom), denom


def counted_mean(values, counted):
    """Plain float64 mean of values over the counted rows; NaN when no row counts."""
    return float(values[counted].mean()) if counted.any() else float("nan")
