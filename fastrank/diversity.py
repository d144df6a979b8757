"""Aspect-aware nDCG: `fr.ab_ndcg` / `fr.AlphaBetaNDCG` (Parapar & Radlinski 2021) and
`fr.alpha_ndcg`.

αβ-nDCG needs an ideal ranking per user: a greedy walk over the user's truth items and
the whole catalogue. That ideal does not depend on the list being scored, so
`AlphaBetaNDCG` computes it once and `.score(topk)` re-scores any number of models at the
cost of one walk of each list. `ab_ndcg(...)` is the one-call form.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, FloatArray, IntArray, SparseMatrix

from .aspects import Groups, Grouping, check_aspects
from .discounts import discounts
from .evaluate_topk import evaluate
from .means import counted_mean
from .threads import n_ranges, numba_threads
from .factors import positive_counts
from .result import Result
from . import scratch
from .scratch import borrowed
from .validation import (_csr_parts, check_bool, check_int, check_pattern,
                         check_scratch, check_topk, check_truth, check_unit, check_users,
                         memory_guard, out_of_memory, rows_or_all, summed_copy)


def _check_cutoffs(k: int | Iterable[int] | None, width: int | None,
                   name: str = "k") -> IntArray:
    """k as a sorted int64 array of distinct cutoffs (an int or a sequence of ints);
    without k, the lists' `width`. A cutoff past the lists is computed: the ranks past
    a list are empty."""
    if k is None:
        if width is None:
            raise TypeError(f"{name} is required here: pass the cutoff(s), e.g. {name}=10")
        k = width
    if isinstance(k, np.ndarray) and k.ndim == 0:
        values = [k.item()]  # np.array(10) as 10 (check_int refuses np.array(1.5))
    elif isinstance(k, (str, bytes)) or not isinstance(k, Iterable):
        values = [k]  # a scalar (check_int names what is wrong with it)
    else:
        values = list(k)
    if not values:
        raise ValueError(f"{name} is empty; pass a cutoff such as {name}=10")
    cutoffs = sorted({check_int(v, name) for v in values})
    return np.array(cutoffs, dtype=np.int64)


def _nonnegative_rows(matrix: SparseMatrix | ArrayLike, name: str, shape: Sequence[int],
                      what: str) -> tuple[IntArray, AnyArray, FloatArray]:
    """A sparse or dense users x columns matrix of finite non-negative weights as CSR
    arrays (a dense one keeps its zeros as stored entries: the kernels skip them)."""
    if not sp.issparse(matrix):
        dense = np.asarray(matrix)
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":  # real numbers only
            raise TypeError(
                f"{name} must be a 2-D numeric array or scipy.sparse matrix ({what}); got "
                f"{type(matrix).__name__} of dtype {dense.dtype}")
        if dense.shape != tuple(shape):
            raise ValueError(
                f"{name} has shape {dense.shape} but must have shape {tuple(shape)} ({what})")
        data = np.ascontiguousarray(dense, dtype=np.float64).ravel()
        _check_weights(data, name, what)
        n_rows, n_cols = dense.shape
        indptr = np.arange(n_rows + 1, dtype=np.int64) * n_cols
        return indptr, np.tile(np.arange(n_cols, dtype=np.int64), n_rows), data
    indptr, indices, data, got, canonical = _csr_parts(matrix, name, what)
    if got != tuple(shape):
        raise ValueError(f"{name} has shape {got} but must have shape {tuple(shape)} ({what})")
    data = np.asarray(data, dtype=np.float64)
    _check_weights(data, name, what)
    if canonical:  # the common case: no copy beyond dtype casts
        return indptr.astype(np.int64, copy=False), indices, data
    indptr, indices, data = summed_copy(indptr, indices, data, got)
    return indptr.astype(np.int64), indices, data


# Weights and grades far from 1 lose the ratios γ and r/r_max are made of (sums overflow,
# subnormal numbers keep few digits): refused, since only their ratios matter.
_SMALLEST = 2.0 ** -1000
_LARGEST = 2.0 ** 1000


def _check_weights(data: FloatArray, name: str, what: str) -> None:
    if not np.all(np.isfinite(data)) or (data.size and data.min() < 0):
        raise ValueError(
            f"{name} must hold finite, non-negative {what}; found a negative, NaN or "
            f"infinite value")
    _check_scale(data, name, what)


def _check_scale(data: FloatArray, name: str, what: str) -> None:
    positive = data[data > 0]
    if positive.size:
        _scale_error(positive.min(), positive.max(), name, what)


def _scale_error(low: float, high: float, name: str, what: str) -> None:
    """Refuse positive values from `low` to `high` outside [2**-1000, 2**1000]."""
    # compared as Python floats: numpy would cast 2**1000 to a float32 low or high (inf,
    # with an overflow warning)
    low, high = float(low), float(high)
    if low < _SMALLEST or high > _LARGEST:
        bad = low if low < _SMALLEST else high
        raise ValueError(
            f"{name} holds {bad:g}, outside [2**-1000, 2**1000], where the ratios made of "
            f"its {what} lose their digits; scale it (only ratios matter here)")


def _weights(profile: SparseMatrix | ArrayLike | None,
             user_aspects: SparseMatrix | ArrayLike | None, shape: Sequence[int],
             n_aspects: int) -> tuple[Any, FloatArray | None]:
    """γ's source, checked: (CSR arrays of the profile, users x items, or of sparse
    user-aspect weights; None) or (None, a dense users x aspects float64 array, whose
    values the dense kernels check)."""
    if (profile is None) == (user_aspects is None):
        raise TypeError(
            "pass exactly one of profile= (a users x items training matrix; γ is the share "
            "of the user's interactions on each aspect) and user_aspects= (users x aspects "
            "weights)")
    if profile is not None:
        return _nonnegative_rows(profile, "profile", shape, "interaction weights"), None
    if sp.issparse(user_aspects):
        return _nonnegative_rows(user_aspects, "user_aspects", (shape[0], n_aspects),
                                 "aspect weights"), None
    dense = np.asarray(user_aspects)
    if dense.ndim != 2 or dense.dtype.kind not in "biuf":  # real numbers only
        raise TypeError(
            f"user_aspects must be a 2-D numeric array or scipy.sparse matrix (aspect "
            f"weights); got {type(user_aspects).__name__} of dtype {dense.dtype}")
    if dense.shape != (shape[0], n_aspects):
        raise ValueError(f"user_aspects has shape {dense.shape} but must have shape "
                         f"{(shape[0], n_aspects)} (aspect weights)")
    return None, np.ascontiguousarray(dense, dtype=np.float64)


def _gamma(rows: Any, dense: FloatArray | None, from_profile: bool, aspects: Any,
           users: IntArray, threads: int, grouping: Grouping | None = None) -> tuple[Any, ...]:
    """γ of each scored user (slot i: truth row users[i]) from `_weights`' output, as the
    αβ kernels read it: (ptr, aspects, shares, dense, totals). From sparse weights or a
    profile: CSR arrays (ptr, aspects, shares) and an empty dense; an empty row is a γ
    that is all zero (only a profile may give one: all-zero user-aspect rows are refused).
    From a dense weight array: the array itself and its row totals, read in place (ptr
    counts each row's non-zero weights; aspects and shares are empty). A dense array's
    check may run `grouping` beside it (see _dense_gamma)."""
    from ._kernels import frames
    from ._kernels.aspects import gamma_rows, gamma_sizes

    n = users.shape[0]
    none = (np.zeros((0, 0), np.float64), np.zeros(0, np.float64))
    if dense is not None:
        ptr, totals = _dense_gamma(dense, users, threads, grouping)
        idx, values = np.zeros(0, np.int64), np.zeros(0, np.float64)
        none = (dense, totals)
    else:
        chunks = max(n_ranges(n, threads, n * 64, aspects.n_aspects), 1)
        # a profile's items' aspects are read from their masks (at most 64 aspects)
        masks = aspects.masks if from_profile else np.zeros(0, np.int64)
        args = (users, *rows, from_profile, aspects.indptr, aspects.indices, masks,
                aspects.n_aspects)
        sizes = np.empty(n, np.int64)
        frame = frames.Frame(*args, sizes)
        done = frames.run(frames.walk(gamma_sizes, frame.dtypes), frame, chunks).all()
        ptr = _offsets(sizes)
        idx = np.empty(ptr[-1], np.int64)
        values = np.empty(ptr[-1], np.float64)
        frame = frames.Frame(*args, ptr, idx, values)
        done &= frames.run(frames.walk(gamma_rows, frame.dtypes), frame, chunks).all()
        if not done:  # a walk's C wrapper cannot raise: it returned 0
            raise out_of_memory("the γ kernel")
    if not from_profile:
        zero = users[ptr[1:] == ptr[:-1]]
        if zero.size:
            raise ValueError(
                f"user_aspects row {int(zero[0])} is all zero ({zero.size} such rows among "
                f"the users scored); γ must have a positive weight somewhere: give those "
                f"users weights, or leave them out with users=")
    return ptr, idx, values, *none


# what a lookup of the re-score walk costs against zeroing one item's stamps, roughly:
# measured on 27,000 and 200,000 items, a second range of lent scratch paid off from lists
# of 1/50 and 1/200 of the catalogue's lookups
_LOOKUP_PER_STAMP = 100

# lists that look up fewer items than 1/_ITEMS_PER_PAGE of the catalogue touch fewer
# than a quarter of the pages of its stamps (16 bytes an item, 256 to a page)
_ITEMS_PER_PAGE = 1024


def _rescore_ranges(n: int, threads: int, lookups: int, n_items: int,
                    share: int) -> tuple[int, int]:
    """(ranges, float64s lent) of the re-score walk: `share` float64s of scratch a range.

    Lent scratch (from the pool) is zeroed whole by each range; a range's own is fresh
    zero pages, faulted in only where its lists and truth touch them, at some four times
    the cost of zeroing a page. Lists that touch a quarter of the stamps' pages or more
    are lent their scratch, as many ranges as the pool keeps. Fewer lists take their own,
    and a second range only where lists look up as many items as the catalogue holds:
    ranges faulting pages in side by side took 5 times as long as one (3 million items,
    50,000 lookups)."""
    ranges = max(n_ranges(n, threads, lookups, n_items), 1)
    if lookups * _ITEMS_PER_PAGE >= n_items:
        chunks = ranges if lookups * _LOOKUP_PER_STAMP >= n_items else 1
        while chunks > 1 and not scratch.keeps(8 * chunks * share):
            chunks -= 1
        if scratch.keeps(8 * chunks * share):
            return chunks, chunks * share
    return (ranges if lookups >= n_items else 1), 0


# γ kept as dense rows for score() up to this many aspects (ab_dcg_rows copies a row whole)
_COPY_ASPECTS = 64


def _shares_fit(n_rows: int, n_aspects: int, nbytes: int) -> bool:
    """Whether γ of n_rows users as dense rows of shares is kept for score() in place of
    its form of `nbytes` bytes: few aspects, and no more memory (a user's CSR entry takes
    16 bytes, a share 8: shape R's 17 entries of 20 aspects; not shape A's 5, whose
    re-score the item table alone takes most of the way)."""
    return n_aspects <= _COPY_ASPECTS and n_rows * n_aspects * 8 <= nbytes


def _scored_gamma(gam: tuple[Any, ...], users: IntArray, n_aspects: int,
                  threads: int) -> tuple[Any, ...]:
    """γ as ab_dcg_rows reads it: `_gamma`'s arrays and a users x aspects `shares`, which
    has rows (and the others are emptied but for ptr) where `_shares_fit`. Copying a row
    of 20 shares costs less than writing and clearing γ's entries one by one (shape R:
    17 of 20 aspects a user): the re-score took 30% less."""
    n = users.shape[0]
    # (the aspect count first: a wide γ's bytes are not summed for nothing)
    if n_aspects > _COPY_ASPECTS or not _shares_fit(n, n_aspects, sum(a.nbytes for a in gam)):
        return (*gam, np.zeros((0, 0), np.float64))
    from ._kernels import frames
    from ._kernels.aspects import gamma_shares

    shares = np.empty((n, n_aspects), np.float64)
    frame = frames.Frame(users, *gam, shares)
    frames.run(frames.walk(gamma_shares, frame.dtypes), frame,
               max(n_ranges(n, threads, n * n_aspects, 1), 1))
    no_rows = np.zeros((0, 0), np.float64)
    return gam[0], np.zeros(0, np.int64), np.zeros(0, np.float64), no_rows, \
        np.zeros(0, np.float64), shares


def _offsets(sizes: IntArray) -> IntArray:
    ptr = np.zeros(sizes.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ptr


# What the check of a dense γ and the grouping of items by aspect set cost, in the same
# unit (about nanoseconds on the benchmark machine): only which of the two schedules of
# _dense_gamma runs depends on them, never a value.
_COST_PER_WEIGHT = 1.6  # a weight of a dense γ, checked
_COST_PER_LINK = 20.0   # a stored aspect of an item, grouped


def _dense_gamma(weights: FloatArray, users: IntArray, threads: int,
                 grouping: Grouping | None = None) -> tuple[IntArray, FloatArray]:
    """(ptr, totals) of a dense users x aspects weight array, checked by a parallel kernel
    in place: ptr[i + 1] - ptr[i] is the number of non-zero weights of row users[i], and
    totals[r] the sum of row r, which the αβ kernels divide each weight by. A users x
    aspects γ is not copied (as CSR it took 16 bytes a weight, written on one call's
    clock).

    With a `grouping` to run and a second thread, the grouping runs as one range of the
    same parallel run, beside threads - 1 ranges of the check, where that ends sooner than
    the check on every thread followed by the grouping alone (few users, many aspects:
    both are about a thread's work); the grouping's range then checks the first rows, as
    many as even out the ranges' work by the costs below. Either way the grouping and the
    check write the same arrays."""
    from ._kernels import frames
    from ._kernels.aspects import dense_weight_rows, dense_weight_rows_and_groups

    n_rows = weights.shape[0]
    chunks = max(n_ranges(n_rows, threads, weights.size, 1), 1)
    sizes = np.empty(n_rows, np.int64)
    totals, low, high = (np.empty(n_rows, np.float64) for _ in range(3))
    bad = np.empty(n_rows, np.bool_)
    check = weights.size * _COST_PER_WEIGHT
    group = 0.0 if grouping is None else grouping.n_links * _COST_PER_LINK
    # the grouping that runs beside the check, if any
    beside = grouping if threads > 1 and n_rows > 0 and \
        max(check / (threads - 1), group) < check / threads + group else None
    n_groups = np.zeros(1, np.int64)
    if beside is not None:
        # rows the grouping's range also checks: every range about the same work
        share = max((check + group) / threads - group, 0.0) / max(check, 1.0)
        first = min(int(n_rows * share), n_rows)
        frame = frames.Frame(weights, sizes, totals, low, high, bad, *beside.args, n_groups,
                             first)
        chunks = min(threads - 1, n_rows) + 1
        done = frames.run(frames.walk(dense_weight_rows_and_groups, frame.dtypes), frame,
                          chunks)
    else:
        frame = frames.Frame(weights, sizes, totals, low, high, bad)
        done = frames.run(frames.walk(dense_weight_rows, frame.dtypes), frame, chunks)
    if bad.any():
        raise ValueError("user_aspects must hold finite, non-negative aspect weights; found a "
                         "negative, NaN or infinite value")
    _scale_error(low.min(initial=np.inf), high.max(initial=0.0), "user_aspects",
                 "aspect weights")
    if not done.all():  # after γ's own errors: the grouping's tables could not be allocated
        raise out_of_memory("the grouping of items by aspect set")
    if beside is not None:
        beside.done(int(n_groups[0]))
    return _offsets(sizes[users]), totals


class AlphaBetaNDCG:
    """αβ-nDCG (Parapar & Radlinski 2021) with the ideal computed once per user.

    Build it once for a set of users, then `.score(topk)` any number of ranked lists:
    the greedy ideal (the costly part) is not recomputed.

    Parameters
    ----------
    truth : scipy.sparse matrix, users x items
        Graded relevance r(u, i) (the test set). Stored values <= 0 give p = 0.
    item_aspects : scipy.sparse matrix, items x aspects
        0/1 membership of each item in each aspect.
    k : int or sequence of int
        Cutoff(s); one value per cutoff is returned by `score`.
    alpha : float in [0, 1]
        p(i, φ) for an item outside the user's truth row that has aspect φ.
    beta : float in [0, 1]
        Scale of p(i, φ) = beta · r(u, i) / r_max for an item in the truth row.
    profile : scipy.sparse matrix, users x items, optional
        Training interactions: γ_u[φ] is the user's share of interaction weight on φ.
    user_aspects : array or sparse matrix, users x aspects, optional
        γ given directly (each row is divided by its sum). Exactly one of profile and
        user_aspects is required.
    exclude : scipy.sparse matrix, users x items, optional
        Items the ideal may not use as unrated candidates. Default: the profile's items
        when a profile is given (they are what a recommender filters), else none.
    r_max : float, optional
        The largest relevance value; default the largest value in truth.
    users : int array, optional
        The truth rows to score (row i of every topk passed to `score`); default all.
    n_threads : int, optional
        Numba threads while the ideal is computed.
    """

    def __init__(self, truth: SparseMatrix, item_aspects: SparseMatrix, *,
                 k: int | Iterable[int], alpha: float = 0.01, beta: float = 0.5,
                 profile: SparseMatrix | ArrayLike | None = None,
                 user_aspects: SparseMatrix | ArrayLike | None = None,
                 exclude: SparseMatrix | None = None, r_max: float | None = None,
                 users: ArrayLike | None = None, n_threads: int | None = None) -> None:
        self.truth = check_truth(truth)
        _check_scale(self.truth.data, "truth", "grades (p = beta·r/r_max)")
        n_users, n_items = self.truth.n_users, self.truth.n_items
        self.aspects = check_aspects(item_aspects, n_items)
        self.cutoffs = _check_cutoffs(k, None)
        self.alpha = check_unit(alpha, "alpha")
        self.beta = check_unit(beta, "beta")
        self.r_max = self._check_r_max(r_max)
        self.users = rows_or_all(users, "users", n_users, "the rows of truth")
        weight_rows, dense = _weights(profile, user_aspects, (n_users, n_items),
                                      self.aspects.n_aspects)
        if dense is not None and self._keep_gamma and not _shares_fit(
                self.users.shape[0], self.aspects.n_aspects, dense.nbytes) and \
                np.may_share_memory(dense, np.asarray(user_aspects)):
            dense = dense.copy()  # later scores must not see the caller's later changes
        if exclude is None and profile is not None:
            # the profile's items; a dense profile's nonzero ones
            exclude = profile if sp.issparse(profile) else sp.csr_array(np.asarray(profile) != 0)
        if exclude is None:
            self._ex = (np.zeros(n_users + 1, np.int64), np.zeros(0, np.int64))
        else:
            self._ex = check_pattern(exclude, "exclude", (n_users, n_items))
        with numba_threads(n_threads) as threads, memory_guard("the αβ-nDCG ideal"):
            grouping = Grouping(self.aspects)
            try:
                gam = _gamma(weight_rows, dense, profile is not None, self.aspects,
                             self.users, threads, grouping)
                groups = grouping.groups()
            finally:  # a bad γ fails before the grouping ran: its scratch goes back too
                grouping.release()
            self.idcg, self.status = self._ideal(gam, threads, groups)
            # γ as score() reads it
            self._gam = _scored_gamma(gam, self.users, self.aspects.n_aspects, threads)

    # whether a dense γ the caller owns is copied (unless it becomes shares): it is read
    # at every score()
    _keep_gamma = True

    def _check_r_max(self, r_max: object) -> float:
        top = float(self.truth.data.max()) if self.truth.data.size else 0.0
        if r_max is None:
            return top if top > 0 else 1.0
        if isinstance(r_max, bool) or not isinstance(r_max, (int, float, np.integer,
                                                             np.floating)):
            raise TypeError(f"r_max must be a positive number; got {type(r_max).__name__}")
        r_max = float(r_max)
        if not (np.isfinite(r_max) and r_max > 0):
            raise ValueError(f"r_max must be a positive finite number; got {r_max}")
        if r_max < top:
            raise ValueError(
                f"r_max={r_max} is below the largest relevance in truth ({top}); p = beta·r/"
                f"r_max must stay within [0, beta]: pass r_max >= {top} or leave it out")
        return r_max

    def _ideal(self, gam: tuple[Any, ...], threads: int,
               groups: Groups) -> tuple[FloatArray, Any]:
        from ._kernels import frames
        from ._kernels.aspects import ideal_range, ideal_scratch

        n = self.users.shape[0]
        idcg = np.zeros((self.cutoffs.shape[0], n), np.float64)
        status = np.zeros(n, np.int8)
        t, a = self.truth, self.aspects
        chunks = max(n_ranges(n, threads, n * int(groups.ptr.shape[0]), a.n_items), 1)
        at_i, at_f = ideal_scratch(a.n_items, int(groups.ptr.shape[0]) - 1, a.n_aspects,
                                   t.max_row_nnz)
        range_bytes = 8 * (int(at_i[-1]) + int(at_f[-1]))
        check_scratch(a.n_items, -(-range_bytes // max(a.n_items, 1)), chunks)
        args = (t.indptr, t.indices, t.data, self.users, *gam, self._ex[0], self._ex[1],
                a.indptr, a.indices, a.masks, a.n_aspects, groups.ptr, groups.items,
                groups.aspect_ptr, groups.aspects, groups.masks, groups.item_group,
                groups.by_ptr, groups.pair_ptr, groups.links, groups.width, self.alpha,
                self.beta / self.r_max, self.cutoffs,
                discounts(min(int(self.cutoffs[-1]), a.n_items)),  # at most n_items picks
                t.max_row_nnz, idcg, status)
        with borrowed((chunks * int(at_i[-1]), np.int64),
                      (chunks * int(at_f[-1]), np.float64)) as (ints, floats):
            frame = frames.Frame(*args, at_i, at_f, ints, floats, frames.claim_counters(chunks),
                                 groups.first)
            frames.run(frames.walk(ideal_range, frame.dtypes), frame, chunks)
        for arr in (idcg, status):
            arr.flags.writeable = False
        return idcg, status

    @property
    def labels(self) -> list[str]:
        return [f"ab_ndcg@{int(c)}" for c in self.cutoffs]

    def score(self, topk: ArrayLike, *, clip: bool = False,
              n_threads: int | None = None) -> Result:
        """αβ-nDCG of ranked lists for this scorer's users (row i of topk is users[i]).

        Returns a `Result` with one metric per cutoff (`"ab_ndcg@10"`); users without a
        profile or without truth are NaN, and `result.report` counts them and the values
        above 1 (possible: the greedy ideal is not always optimal). With `clip=True`
        values above 1 are set to 1 (the report still counts them).
        """
        clip = check_bool(clip, "clip")
        return self._score(check_topk(topk, self.truth.n_items), clip, n_threads)

    def _score(self, topk: AnyArray, clip: bool, n_threads: int | None) -> Result:
        """`score` of lists whose ids check_topk has checked."""
        from ._kernels import frames
        from ._kernels.aspects import ab_dcg_rows, dcg_scratch

        t, a = self.truth, self.aspects
        n = self.users.shape[0]
        if topk.shape[0] != n:
            raise ValueError(
                f"topk has {topk.shape[0]} rows but this scorer was built for {n} users; "
                f"pass one list per user, in the order of users=")
        walked = max(min(int(self.cutoffs[-1]), topk.shape[1]), 1)  # past a list: empty
        values = np.empty((self.cutoffs.shape[0], n), np.float64)
        lookups = n * walked
        with numba_threads(n_threads) as threads, memory_guard("the αβ-nDCG walk"):
            at = dcg_scratch(t.n_items, a.n_aspects)
            share = int(at[-1])  # float64s of a range's scratch
            chunks, lent = _rescore_ranges(n, threads, lookups, t.n_items, share)
            check_scratch(t.n_items, -(-8 * share // max(t.n_items, 1)), chunks)
            args = (t.indptr, t.indices, t.data, self.users, topk, *self._gam, a.indptr,
                    a.indices, a.table_for(lookups), a.n_aspects, t.n_items, self.alpha,
                    self.beta, self.r_max, self.cutoffs, discounts(walked),
                    self.idcg, self.status, values)
            with borrowed((lent, np.float64)) as (floats,):
                frame = frames.Frame(*args, at, floats)
                done = frames.run(frames.walk(ab_dcg_rows, frame.dtypes), frame, chunks)
        if not done.all():  # the walk's C wrapper cannot raise: it returned 0
            raise out_of_memory("the αβ-nDCG walk")
        return self._result(values, clip)

    def _result(self, values: FloatArray, clip: bool) -> Result:
        """The Result of the walk's values (NaN for the users not counted)."""
        from ._kernels.aspects import NO_PROFILE, NO_TRUTH, OK

        counted = self.status == OK
        above = {label: int(np.count_nonzero(v > 1.0)) for label, v in zip(self.labels, values)}
        if clip:
            np.minimum(values, 1.0, out=values)  # NaN stays NaN
        means = {label: counted_mean(v, counted) for label, v in zip(self.labels, values)}
        report = {"no_profile": int(np.count_nonzero(self.status == NO_PROFILE)),
                  "no_truth": int(np.count_nonzero(self.status == NO_TRUTH)),
                  "above_one": above, "clipped": bool(clip)}
        return Result(self.labels, values, means, convention="recsys", users=self.users,
                      counted=counted, n_relevant=self._n_relevant, report=report)

    @cached_property
    def _n_relevant(self) -> IntArray:
        """m of each scored user, counted once for every score() (read-only: shared)."""
        m = positive_counts(self.truth, self.users)
        m.flags.writeable = False
        return m


def ab_ndcg(truth: SparseMatrix, topk: ArrayLike, item_aspects: SparseMatrix, *,
            k: int | Iterable[int] | None = None, alpha: float = 0.01, beta: float = 0.5,
            profile: SparseMatrix | ArrayLike | None = None,
            user_aspects: SparseMatrix | ArrayLike | None = None,
            exclude: SparseMatrix | None = None, r_max: float | None = None,
            clip: bool = False, users: ArrayLike | None = None,
            n_threads: int | None = None) -> Result:
    """αβ-nDCG@k of ranked lists: accuracy, diversity and novelty in one number (Parapar &
    Radlinski 2021; the formula is in docs/diversity.md).

    The one-call form of `AlphaBetaNDCG(...).score(topk)`; see that class for the
    parameters. k defaults to the number of columns of topk. To score several models on
    the same users, build an `AlphaBetaNDCG` once: its ideal is reused.
    """
    clip = check_bool(clip, "clip")
    shape = getattr(truth, "shape", None)
    size = (int(shape[0]), int(shape[1])) if isinstance(shape, tuple) and len(shape) == 2 \
        and all(isinstance(n, (int, np.integer)) for n in shape) else None
    # the lists are checked before the ideal is computed: a bad id fails at once, not
    # seconds later (a truth without a shape fails first, in the scorer)
    lists = check_topk(topk, size[1]) if size is not None else np.asarray(topk)
    cutoffs = _check_cutoffs(k, lists.shape[1] if lists.ndim == 2 else None)
    if users is None and lists.ndim == 2 and size is not None:
        check_users(None, lists.shape[0], size[0])  # one list per truth row
    elif users is not None and lists.ndim == 2 and np.ndim(users) == 1 and \
            np.shape(users)[0] != lists.shape[0]:
        raise ValueError(
            f"topk has {lists.shape[0]} rows but users has {np.shape(users)[0]}; pass one "
            f"list per user, in the order of users=")
    scorer = _OneCall(truth, item_aspects, k=cutoffs.tolist(), alpha=alpha, beta=beta,
                      profile=profile, user_aspects=user_aspects, exclude=exclude,
                      r_max=r_max, users=users, n_threads=n_threads)
    if size is not None:
        return scorer._score(lists, clip, n_threads)
    return scorer.score(topk, clip=clip, n_threads=n_threads)


class _OneCall(AlphaBetaNDCG):
    """The scorer of one `ab_ndcg` call: it scores once, at once, so a dense γ is read
    where the caller holds it instead of being copied."""

    _keep_gamma = False


def alpha_ndcg(truth: SparseMatrix, topk: ArrayLike, item_aspects: SparseMatrix, *,
               k: int | Iterable[int] | None = None, alpha: float = 0.5,
               users: ArrayLike | None = None, n_threads: int | None = None) -> Result:
    """Classic α-nDCG@k (Clarke et al. 2008), as TREC's ndeval computes it.

    The user's relevant items (truth > 0) are the documents and their aspects the
    subtopics, with binary judgments. The gain of a relevant item is the sum over its
    aspects of (1 - alpha)^n, n being how many earlier items of the list covered that
    aspect; the discount is 1/log2(rank + 1); the ideal is greedy over the relevant items
    (ties: the lower item id; ndeval breaks them by document name), cut at k. A greedy
    ideal is not always optimal, so a value can exceed 1: `result.report["above_one"]`
    counts them. Users with no relevant item are NaN and not counted; a user whose
    relevant items have no aspect counts 0 (ndeval has no qrels line for such a topic and
    leaves it out, as `fr.evaluate(..., convention="trec")` does).

    Parameters
    ----------
    truth : scipy.sparse matrix, users x items
        The judgments: an item with a value > 0 is relevant.
    topk : int array (n_rows, K), -1 pads
        The ranked lists.
    item_aspects : scipy.sparse matrix, items x aspects, 0/1
        The aspects (subtopics) of each item.
    k : int or sequence of int, optional
        Cutoff(s); default K.
    alpha : float in [0, 1]
        How much a second item on the same aspect is worth less (0: not at all).
    users : int array, optional
        The truth row of each topk row.
    n_threads : int, optional
        Numba threads for this call (default: numba's thread count).
    """
    data = check_truth(truth)
    check_aspects(item_aspects, data.n_items)
    lists = check_topk(topk, data.n_items)
    check_users(users, lists.shape[0], data.n_users)
    cutoffs = _check_cutoffs(k, lists.shape[1]).tolist()
    alpha = check_unit(alpha, "alpha")
    # fr.evaluate's α-nDCG at this α, each label as this function has always named it
    asked = {f"alpha_ndcg(alpha={alpha!r})@{c}": f"alpha_ndcg@{c}" for c in cutoffs}
    res = evaluate(truth, lists, list(asked), item_aspects=item_aspects, users=users,
                   n_threads=n_threads)
    above = {name: int(np.count_nonzero(res.per_user(label) > 1.0))
             for label, name in asked.items()}
    return res.relabeled(asked, report={"above_one": above})
