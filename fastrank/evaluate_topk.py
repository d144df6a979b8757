"""`fastrank.evaluate`: the facade. Check the inputs once, plan the passes (`engine`), run
them, return a `Result`.

The scans of the inputs (every truth entry and list id read once) are left to the
ranking walk where it alone reads them all (`Plan.checks_in_walk`): it checks each entry
before it uses it and stops at the first the scans would refuse, and the scans then run
and raise their error. The same errors, without a pass of their own over the inputs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ._types import AnyArray, IntArray, SparseMatrix
from .engine import SUM_ROWS, Plan, added_exposure
from .grammar import metric_labels
from .ranking_pass import InputFlagged
from .side_inputs import SideInputs
from .progress import progress_bar
from .threads import numba_threads
from .validation import (Truth, check_bool, check_ids, check_int, check_topk, check_truth,
                         check_users, scan_truth)

if TYPE_CHECKING:
    from .result import Result


def evaluate(truth: SparseMatrix | ArrayLike, topk: ArrayLike, metrics: str | Iterable[str], *,
             convention: str = "recsys", dialect: str | None = None,
             users: ArrayLike | None = None, k: int | None = None,
             n_threads: int | None = None, train: SparseMatrix | None = None,
             item_aspects: SparseMatrix | None = None, item_vectors: ArrayLike | None = None,
             baseline: str | ArrayLike | None = None, show_progress: bool = False,
             curves: str | Iterable[str] | bool | None = None,
             propensity: ArrayLike | None = None, per_user: bool = True) -> Result:
    """Evaluate ranked lists against graded truth; every metric at every cutoff in one pass.

    Parameters
    ----------
    truth : scipy.sparse matrix or array, shape (n_users, n_items)
        Graded relevance; a stored value > 0 is relevant. Never modified; float32 or
        float64 values with int32 or int64 indices and indptr (memory-mapped ones too)
        are read in place, other dtypes converted once. Other formats are converted
        once; BSR's blocks store zeros that nobody judged, and they are dropped (as
        scipy's DIA conversion drops stored zeros).
    topk : int array, shape (n_rows, K)
        Item ids, best first; -1 pads lists shorter than K. C-contiguous int32 or int64
        ids (memory-mapped too) are read in place.
    metrics : str or sequence of str
        Labels such as "ndcg@10", "map" (meaning @K), "precision(rel=2)@5" or
        "iprec(recall=0.3)": every metric of `fastrank.METRICS` the lists determine, and
        other tools' names ("ndcg_cut_10", "P(rel=2)@5", "recbole:NDCG@10"); the Result
        answers to each label as written (`Result.describe` says what it computed). One
        string may hold several labels joined by commas ("ndcg@10,map@10"), split as the
        command line's -m splits them.
    convention : {"recsys", "trec", "implicit"}
        Which formulas fastrank's own names stand for and which users count (see
        docs/metrics.md); another tool's name carries that tool's convention.
    dialect : str, optional
        Read every label as this tool writes it: "ir_measures", "ranx", "trec_eval",
        "pytrec_eval", "recbole" or "rectools" (default: fastrank's names, then any
        tool's name whose meaning is unambiguous).
    users : int array, shape (n_rows,), optional
        The truth row of each topk row; by default row i of topk is row i of truth.
    k : int, optional
        The list length K: what a name without @k means. Default: topk's columns.
        Lists narrower than k end early: their slots past the columns are empty
        (precision@k still divides by k); columns past k are not read. A cutoff past
        the lists is computed without k: the ranks past them are empty.
    n_threads : int, optional
        Numba threads for this call; the previous setting is restored afterwards.
        Results are bit-identical for any thread count.
    train : scipy.sparse matrix, (any users) x items, optional
        Training interactions, for `novelty`, `arp`, `baseline="popular"`, the
        debiased metrics without `propensity` (an item's popularity is the number of
        training users with a positive entry for it) and `miscalibration` (each user's
        aspect profile).
    item_aspects : scipy.sparse matrix, items x aspects, 0/1, optional
        For `ild` (Jaccard distance of aspect sets), `alpha_ndcg` and `alpha_dcg`, the
        intent-aware metrics (`p_ia`, `map_ia`, `err_ia`, `nerr_ia`, `st_recall`, `nrbp`,
        `nnrbp`) and `miscalibration`.
    item_vectors : array (items x dims), optional
        For `ild` (cosine distance), instead of item_aspects.
    baseline : "popular", or int array (K_b,) or (n_rows, K_b), optional
        For `serendipity`: the lists a relevant item must be absent from, used whole;
        "popular": at each cutoff k, the k items with the most training users in `train`
        (ties: the lower id), a list as long as the one judged.
    show_progress : bool
        A progress bar (tqdm) with users/s; the users then run in spans (same values).
    curves : str, list of str or True, optional
        Also evaluate these ranking metrics (True: every one named in `metrics`) at every
        cutoff 1..K, in the same pass, for `Result.curve` and `Result.plot`.
    propensity : float array, shape (n_items,), optional
        For the debiased metrics (`recall_ips`, `dcg_snips`, ...): each item's chance of
        being observed when relevant, finite and at least 1e-250. Without it they estimate
        propensities from the popularity of the items in `train` (their `gamma=` parameter).
    per_user : bool
        Keep the per-user values (default). With False the users run in spans whose
        values are summed and dropped: the same means to the bit, memory for one span
        only, and a Result of means (`per_user()`, intervals and segments need the values).

    Returns
    -------
    Result
        A read-only mapping metric -> mean, with `.per_user(name)` arrays.
        `coverage` and `gini` are catalogue-level: they have a value, not per-user ones.
    """
    per_user = check_bool(per_user, "per_user")
    # the checks that read no entry; the scans follow, unless the walk checks what it reads
    data = check_truth(truth, scan=False)
    try:
        ids = check_topk(topk, data.n_items, scan=False)
        n_rows = ids.shape[0]
        # means only, every row in order: each span makes its own row numbers
        rows = None if not per_user and users is None and n_rows == data.n_users else \
            check_users(users, n_rows, data.n_users)
        k = ids.shape[1] if k is None else check_int(k, "k")
        plan = Plan(metric_labels(metrics), k, convention, data.n_items, dialect=dialect,
                    side=SideInputs(train=train, item_aspects=item_aspects,
                                    item_vectors=item_vectors, baseline=baseline,
                                    propensity=propensity), curves=curves)
    except (ValueError, TypeError):
        scan_truth(data)  # the truth's error first, as when it was scanned first
        raise
    walk_checks, ids_too = (plan.checks_in_walk(ids.shape[1])
                            if users is None and n_rows == data.n_users else (False, False))
    cut = k < ids.shape[1]  # lists cut at k, every column checked first
    ids_too = ids_too and not cut
    if not walk_checks:
        data = scan_truth(data)
    if not ids_too:
        try:
            ids = check_ids(ids, data.n_items)
        except ValueError:
            scan_truth(data)  # the truth's error first, as the scans name them
            raise
    if cut:  # no cutoff past k reads the columns past it
        ids = np.ascontiguousarray(ids[:, :k])
    with numba_threads(n_threads) as threads:
        try:
            return _evaluate(plan, data, ids, rows, per_user, show_progress, threads)
        except InputFlagged:
            if not walk_checks:
                raise
            # the walk met what the scans refuse: they name it (or, for rows out of
            # order, make the truth canonical, and the walk runs again)
            data, ids = scan_truth(data), check_ids(ids, data.n_items)
            return _evaluate(plan, data, ids, rows, per_user, show_progress, threads)


def _evaluate(plan: Plan, data: Truth, topk: AnyArray, rows: IntArray | None, per_user: bool,
              show_progress: bool, threads: int) -> Result:
    """evaluate's passes and Result, on inputs checked or checked by the walk."""
    n_rows = topk.shape[0]
    if per_user and not show_progress:
        # rows is None only for means only (per_user=False)
        block = plan.run(data, topk, rows, threads)  # type: ignore[arg-type]
        return plan.result(block, rows)  # type: ignore[arg-type]
    if per_user:
        out = plan.empty(n_rows)
        span = max(1024, _SPAN_IDS // topk.shape[1])
    else:  # whole blocks of the sums' parts: the means of per_user=True to the bit
        sums, shown, n_counted = None, None, 0
        span = SUM_ROWS * max(1, _MEANS_SPAN_IDS // (SUM_ROWS * topk.shape[1]))
    with progress_bar(n_rows, show_progress, "users") as bar:
        for lo in range(0, n_rows, span):
            hi = min(lo + span, n_rows)
            part = plan.run(data, topk[lo:hi],
                            np.arange(lo, hi) if rows is None else rows[lo:hi], threads,
                            baseline=_rows_of(plan.beyond_baseline, lo, hi))
            if per_user:
                out.fill(lo, part)
            else:
                sums = plan.sums(part, sums)
                shown = added_exposure(shown, part.shown)
                n_counted += int(np.count_nonzero(part.counted))
            bar.update(hi - lo)
    if per_user:
        return plan.result(out, rows)  # type: ignore[arg-type]  # as above
    if sums is None:  # no rows
        sums = plan.sums(plan.empty(0))
    return plan.means_result(sums, shown, n_rows, n_counted)


# Users per span when evaluate shows progress: ~2**20 ids per span; means only: ~2**22.
_SPAN_IDS = 1 << 20
_MEANS_SPAN_IDS = 1 << 22

def _rows_of(baseline: Any, lo: int, hi: int) -> Any:
    """The rows lo:hi of a per-row baseline array; None or a shared baseline as is."""
    if baseline is None or isinstance(baseline, str):
        return None
    ids = np.asarray(baseline)
    return ids[lo:hi] if ids.ndim == 2 and ids.shape[0] > 1 else None
