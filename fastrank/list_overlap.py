"""`fastrank.overlap`: how much two systems' top-k lists agree, user by user.

    res = fr.overlap(topk_a, topk_b, ["jaccard@10", "rbo(p=0.9)@10"])
    res["rbo(p=0.9)@10"], res.per_user("jaccard@10"), res.ci("jaccard@10")

Both metrics read each list's first k slots with padding (-1) and repeated ids dropped
(the rest keeps its order). `jaccard@k` is |A ∩ B| / |A ∪ B|; `rbo(p=)@k` is the
extrapolated rank-biased overlap RBO_ext of Webber, Moffat & Zobel (2010), eq. 32 for
lists of unequal length (eq. 30 for equal ones), persistence p (default 0.9). Both lists
empty: NaN (no value, left out of the mean); one empty: 0. The kernel is
`fastrank._kernels.overlap`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from ._types import AnyArray
from .grammar import metric_labels, parse
from .result import Result
from .threads import n_ranges, numba_threads
from .validation import _int_array, _index_array, check_scratch, memory_guard


def _renumbered(a: AnyArray, b: AnyArray) -> tuple[AnyArray, AnyArray, int]:
    """Both lists' ids (as given: uint64 past int64's range included) numbered 0..n-1 in
    their order (-1 stays the padding), and n: the kernel keeps a marker per id, and only
    equality of ids matters to an overlap. The ids are compared as uint64 (an int64 list's
    only negative id is the padding -1), so int64 and uint64 lists match exactly."""
    pads = [x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, np.bool_) for x in (a, b)]
    keys = np.concatenate([np.where(pad, 0, x).astype(np.uint64).ravel()
                           for x, pad in zip((a, b), pads)])
    ids, inverse = np.unique(keys, return_inverse=True)
    numbered = [np.where(pad, -1, part.reshape(pad.shape)).astype(np.int64) for pad, part in
                zip(pads, (inverse[:a.size], inverse[a.size:]))]
    return numbered[0], numbered[1], int(ids.shape[0])


def _lists(topk: ArrayLike, name: str) -> AnyArray:
    topk = _int_array(topk, name, "item ids (rows x K)")
    if topk.ndim != 2 or topk.shape[1] < 1:
        raise ValueError(f"{name} must be 2-D with at least one column (one row of item ids "
                         f"per user, -1 padding); got shape {topk.shape}. Reshape a single "
                         f"list with {name}.reshape(1, -1)")
    if topk.size and int(topk.min()) < -1:
        raise ValueError(f"{name} contains item id {int(topk.min())}; ids are >= 0, and -1 "
                         f"only pads a short list")
    return topk  # _index_array'd by overlap, after any numbering of uint64 ids


def overlap(topk_a: ArrayLike, topk_b: ArrayLike, metrics: str | Iterable[str] = ("jaccard", "rbo"),
            *, n_threads: int | None = None) -> Result:
    """Per-user agreement of two systems' lists (the same users, row by row).

    Parameters
    ----------
    topk_a, topk_b : int arrays (n_rows, K_a) and (n_rows, K_b)
        Item ids best first, -1 padding; the widths may differ. int32 or int64,
        read-only or memory-mapped; never modified.
    metrics : str or list of str
        "jaccard@k" and "rbo(p=0.9)@k" (k up to the wider list's K; without @k, K).
    n_threads : int, optional
        Numba threads for this call; the values are the same for any count.

    Returns
    -------
    Result
        result[label] is the mean over the rows where the label has a value (NaN where
        both lists are empty within k); per_user, ci and by work as for fr.evaluate.
        Its kind is "overlap" (no convention); `counted` marks the rows where either list has an
        item, and `n_relevant` is 0 (there is no truth).
    """
    a = _lists(topk_a, "topk_a")
    b = _lists(topk_b, "topk_b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"topk_a has {a.shape[0]} rows but topk_b has {b.shape[0]}; both "
                         f"must list the same users in the same order")
    k_max = max(a.shape[1], b.shape[1])
    requests = []
    for label in dict.fromkeys(metric_labels(metrics)):
        request = parse(label, k_max)
        if request.metric.engine != "overlap":
            raise ValueError(
                f"metrics: {label!r} is not an overlap of two lists; fr.overlap computes "
                f"jaccard@k and rbo(p=...)@k (fr.evaluate computes {request.name} of a list "
                f"against the truth)")
        requests.append(request)
    from ._kernels.overlap import JACCARD, RBO, list_overlap

    n_rows = a.shape[0]
    n_items = max(int(a.max()) if a.size else -1, int(b.max()) if b.size else -1) + 1
    if n_items > 4 * (a.size + b.size) + 4096:  # ids far apart (hashes): numbered 0..n-1
        a, b, n_items = _renumbered(a, b)
    a, b = (np.ascontiguousarray(_index_array(x)) for x in (a, b))
    codes = np.array([RBO if r.name == "rbo" else JACCARD for r in requests], np.int64)
    cuts = np.array([r.k for r in requests], np.int64)
    persistence = np.array([float(r.metric.value(r.params, "p")) if r.name == "rbo" else 0.0
                            for r in requests], np.float64)
    out = np.empty((len(requests), n_rows), np.float64)
    with numba_threads(n_threads) as threads:
        n_chunks = max(n_ranges(n_rows, threads, n_rows * k_max, n_items), 1)
        check_scratch(n_items, 24, n_chunks, name="the lists' item ids")
        with memory_guard("the overlap kernel"):
            list_overlap(a, b, codes, cuts, persistence, max(n_items, 1), n_chunks, out)
    counted = ((a >= 0).any(axis=1) | (b >= 0).any(axis=1)) if n_rows else \
        np.zeros(0, np.bool_)
    labels = [r.label for r in requests]
    means: dict[str, float] = {}
    for label, values in zip(labels, out):
        kept = values[counted & ~np.isnan(values)]
        means[label] = float(kept.mean()) if kept.size else float("nan")
    return Result(labels, list(out), means, convention=None, kind="overlap",
                  users=np.arange(n_rows, dtype=np.int64), counted=counted,
                  n_relevant=np.zeros(n_rows, np.int64),
                  aggregates={r.label: r.aggregate for r in requests},
                  requests={r.label: r for r in requests}, k=k_max)
