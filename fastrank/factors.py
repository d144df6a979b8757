"""From latent factors to top-K lists and metrics: `fastrank.topk`, `fastrank.evaluate_factors`.

Scores are user_factors @ item_factors.T, computed by BLAS one (block of users x tile of
items) at a time inside the parallel walk `fastrank._kernels.factors.topk_blocks`, and
turned into top-K lists while the tile is in cache. `evaluate_factors` feeds the lists
of one span of users at a time to the ranking kernel, so memory holds the per-user
results plus one span of ids, never a users x items score matrix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix
from ._blas import single_threaded_blas
from .engine import parse_requests
from .thresholds import at_least
from .means import counted_rows
from .progress import progress_bar
from .streaming import Evaluator
from .threads import numba_threads, parallel_turn
from .validation import (LARGEST_INT, _n_chunks, check_bool, check_int, check_memory,
                         check_pattern, check_truth, memory_guard, out_of_memory, rows_or_all)

if TYPE_CHECKING:
    from .grammar import Request
    from .result import Result
    from .validation import Truth

# Users per BLAS call and bytes of one score tile: the tile (block x items) stays in a
# core's L2 cache while the selection reads it. Measured on the 2-core EPYC with 32
# factors: 128 users x 2,048 float32 items was the fastest of the shapes tried.
_BLOCK = 128
_TILE_BYTES = 1 << 20
# Users per span in evaluate_factors: bounds the ids held at once (~1 MB of them).
_SPAN_IDS = 1 << 18


def check_factors(user_factors: ArrayLike,
                  item_factors: ArrayLike) -> tuple[NDArray[Any], NDArray[Any]]:
    """Both factor matrices as C-contiguous float32 or float64 arrays of one dtype (such
    arrays, memory-mapped ones too, are used in place: checked by a parallel scan)."""
    user_factors, user_norm = _as_matrix(user_factors, "user_factors")
    item_factors, item_norm = _as_matrix(item_factors, "item_factors")
    if user_factors.shape[1] != item_factors.shape[1]:
        raise ValueError(
            f"user_factors has {user_factors.shape[1]} factors per row but item_factors has "
            f"{item_factors.shape[1]}; both must come from the same model")
    dtype = np.result_type(user_factors.dtype, item_factors.dtype)
    # a zero norm bounds every product by 0, whatever the other (inf * 0 is NaN)
    _no_overflow(0.0 if 0.0 in (user_norm, item_norm) else user_norm * item_norm, dtype)
    return (np.ascontiguousarray(user_factors, dtype=dtype),
            np.ascontiguousarray(item_factors, dtype=dtype))


def _no_overflow(bound: float, dtype: np.dtype[Any]) -> None:
    """Refuse factors whose dot products could overflow the score dtype (inf and NaN
    scores would rank and count silently): |u·v| <= |u||v| <= `bound`, the product of
    the largest norms."""
    limit = float(np.finfo(dtype).max)
    if not bound <= limit:
        raise ValueError(
            f"user_factors and item_factors are so large that their dot products can exceed "
            f"{dtype.name}'s largest value ({limit:.3g}; the product of their largest row "
            f"norms is {bound:.3g}): the model probably diverged (lower its learning rate "
            f"or raise its regularization)"
            + (", or pass float64 factors" if dtype != np.float64 else ""))


def _as_matrix(factors: Any, name: str) -> tuple[NDArray[Any], float]:
    """(factors as a C-contiguous float32/float64 matrix, the largest norm of its rows)."""
    from ._kernels import frames
    from ._kernels.checks import largest_square_norm

    if hasattr(factors, "to_numpy") and not isinstance(factors, np.ndarray):
        factors = factors.to_numpy()  # implicit.gpu.Matrix
    factors = np.asarray(factors)
    if factors.dtype.kind not in "iuf":  # not bool, complex, timedelta, object, ...
        raise TypeError(f"{name} must be a numeric 2-D array; got dtype {factors.dtype}")
    if factors.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (one row of factors per {name.split('_')[0]}); got "
            f"{factors.ndim} dimensions")
    # other dtypes, byte orders and strided views (rare) are copied
    if factors.dtype not in (np.float32, np.float64) or not factors.dtype.isnative:
        factors = factors.astype(np.float32 if factors.dtype == np.float16 else np.float64)
    factors = np.ascontiguousarray(factors)
    norms = np.empty(_n_chunks(factors.shape[0], factors.size), np.float64)
    with parallel_turn():
        frames.run(frames.walk(largest_square_norm, factors.dtype.type),
                   frames.Frame(factors, norms), norms.shape[0])
    if np.isnan(norms).any():
        row = int(np.flatnonzero(~np.isfinite(factors).all(axis=1))[0])
        raise ValueError(
            f"{name} contains NaN or infinite values (first in row {row}); the model "
            f"probably diverged: lower its learning rate or raise its regularization")
    largest = float(norms.max()) if norms.size else 0.0
    if largest == np.inf:  # finite float64 entries whose squares pass float64 (1e154)
        return factors, _scaled_norm(factors)
    # (squares lost among the subnormal numbers leave a norm below 1e-145, whose product
    # with any finite norm fits float64: the check stands)
    return factors, float(np.sqrt(largest))


def _scaled_norm(factors: NDArray[Any]) -> float:
    """The largest row norm of finite factors, each row divided by its largest magnitude
    before its squares are summed (no overflow or underflow), a span of rows at a time."""
    largest = 0.0
    for lo in range(0, factors.shape[0], 1 << 14):
        rows = np.abs(factors[lo:lo + (1 << 14)].astype(np.float64))
        top = rows.max(axis=1)
        top[top == 0.0] = 1.0
        norms = top * np.sqrt(((rows / top[:, None]) ** 2).sum(axis=1))
        largest = max(largest, float(norms.max()))
    return largest


def _empty_pattern(n_users: int) -> tuple[IntArray, NDArray[np.int32]]:
    return np.zeros(n_users + 1, np.int64), np.zeros(0, np.int32)


def _pattern(exclude: SparseMatrix | None, shape: tuple[int, int]) -> tuple[IntArray, AnyArray]:
    if exclude is None:
        return _empty_pattern(shape[0])
    return check_pattern(exclude, "exclude", shape)


class _Scorer:
    """Checked factors and exclusions, ready to rank any subset of users."""

    n_users: int
    n_items: int

    def __init__(self, user_factors: ArrayLike, item_factors: ArrayLike,
                 exclude: SparseMatrix | None, desc_ties: bool = False,
                 truth_shape: tuple[int, int] | None = None) -> None:
        self.user_factors, self.item_factors = check_factors(user_factors, item_factors)
        self.n_users, self.n_items = self.user_factors.shape[0], self.item_factors.shape[0]
        if truth_shape is not None and truth_shape != (self.n_users, self.n_items):
            # before exclude's shape: a mismatch there would be blamed on exclude
            raise ValueError(
                f"test has shape {truth_shape} but the factors describe {self.n_users} users "
                f"x {self.n_items} items (the rows of user_factors and item_factors); build "
                f"test with shape=({self.n_users}, {self.n_items}), or pass the factors of "
                f"the model that test was split for")
        self.ex_indptr, self.ex_indices = _pattern(exclude, (self.n_users, self.n_items))
        self.desc_ties = desc_ties
        itemsize = self.item_factors.dtype.itemsize
        self.tile = max(_TILE_BYTES // (_BLOCK * itemsize), 64)
        self.id_dtype = np.int32 if self.n_items < 2**31 else np.int64

    def width(self, k: int) -> int:
        """How many positions of a top-k list can hold an item: min(k, n_items)."""
        return max(min(k, self.n_items), 1)

    def rank(self, rows: IntArray, k: int, threads: int, truth: Truth | None = None
             ) -> tuple[AnyArray, AnyArray, FloatArray, IntArray]:
        """(ids, scores, auc, negatives) of users `rows`: their top min(k, n_items) (later
        positions could only be padding); auc is full-ranking when truth is given, with
        each user's number of negatives (non-excluded non-relevant items)."""
        from ._kernels import frames
        from ._kernels.factors import scratch, topk_blocks

        n = rows.shape[0]
        k = self.width(k)
        ids = np.empty((n, k), dtype=self.id_dtype)
        scores = np.empty((n, k), dtype=self.item_factors.dtype)
        auc = np.empty(n if truth is not None else 0, dtype=np.float64)
        negatives = np.empty(auc.shape[0], dtype=np.int64)
        if n == 0:
            return ids, scores, auc, negatives
        t_indices: AnyArray
        if truth is None:
            t_indptr, t_indices = _empty_pattern(self.n_users)
            t_data = np.zeros(0, np.float64)
        else:
            t_indptr, t_indices, t_data = truth.indptr, truth.indices, truth.data
        # Block size depends on n only, never on the thread count (bit-identical results).
        block = min(_BLOCK, max(8, -(-n // 16)))
        n_blocks = -(-n // block)
        n_chunks = min(n_blocks, 4 * threads)
        walk = frames.walk(topk_blocks, self.item_factors.dtype.type, rows.dtype.type,
                           self.ex_indptr.dtype.type, self.ex_indices.dtype.type,
                           t_indptr.dtype.type, t_indices.dtype.type, t_data.dtype.type,
                           ids.dtype.type, truth is not None)
        with memory_guard("the scoring kernel"):
            floats, ints = scratch(n_chunks, block, self.tile, self.item_factors.shape[1],
                                   self.item_factors.dtype)
        frame = frames.Frame(self.user_factors, self.item_factors, rows, k, self.ex_indptr,
                             self.ex_indices, block, self.tile, self.desc_ties, t_indptr,
                             t_indices, t_data, ids, scores, auc, negatives, floats, ints)
        with single_threaded_blas():
            done = frames.run(walk, frame, n_chunks)
        if not done.all():  # the walk's C wrapper cannot raise: it returned 0
            raise out_of_memory("the scoring kernel")
        return ids, scores, auc, negatives


_TIES = ("low", "implicit")


def _check_ties(ties: str) -> bool:
    if ties not in _TIES:
        raise ValueError(f"ties must be 'low' (lower item id first) or 'implicit' (the "
                         f"order of implicit's topk); got {ties!r}")
    return ties == "implicit"


def topk(user_factors: ArrayLike, item_factors: ArrayLike, k: int, *,
         exclude: SparseMatrix | None = None, users: ArrayLike | None = None, ties: str = "low",
         n_threads: int | None = None) -> tuple[AnyArray, AnyArray]:
    """The k best items of each user by factor dot product, as implicit's `recommend` gives.

    Parameters
    ----------
    user_factors : array, shape (n_users, n_factors)
    item_factors : array, shape (n_items, n_factors)
        float32 or float64 (others are cast); an implicit GPU matrix is copied to the host.
    k : int
        List length. Users with fewer than k admissible items get -1 ids and -inf scores
        at the end of their lists.
    exclude : scipy.sparse matrix, shape (n_users, n_items), optional
        Items never to return for each user (typically the training interactions): every
        stored entry counts, whatever its value.
    users : int array, optional
        Rows of user_factors to rank (default: all), in the order of the output rows.
    ties : {"low", "implicit"}
        Order among equal scores: the lower item id first (default), or implicit's order
        (implicit.cpu.topk's: which of the equal scores at the cut its heap keeps, and
        their order, follow its heap's replacements, not the item ids).
    n_threads : int, optional
        Numba threads for this call; results are bit-identical for any count.

    Returns
    -------
    ids : int32 array (n_rows, k)
        Best first.
    scores : array (n_rows, k) of the factors' dtype
    """
    k = check_int(k, "k")
    scorer = _Scorer(user_factors, item_factors, exclude, desc_ties=_check_ties(ties))
    rows = rows_or_all(users, "users", scorer.n_users, "the rows of user_factors")
    check_memory(rows.shape[0] * k * (np.dtype(scorer.id_dtype).itemsize
                                      + scorer.item_factors.dtype.itemsize),
                 f"the ids and scores of {rows.shape[0]:,} lists of k={k:,} items",
                 f"ask for fewer items (the catalogue has {scorer.n_items:,}) or fewer users")
    with numba_threads(n_threads) as threads:
        ids, scores, _, _ = scorer.rank(rows, k, threads)
    if ids.shape[1] < k:  # past the catalogue: only padding
        ids = np.pad(ids, ((0, 0), (0, k - ids.shape[1])), constant_values=-1)
        scores = np.pad(scores, ((0, 0), (0, k - scores.shape[1])), constant_values=-np.inf)
    return ids, scores


def parse_factor_metrics(metrics: str | Iterable[str], convention: str,
                         dialect: str | None = None) -> FactorSpecs:
    """(Requests, labels of the full-ranking auc) for evaluate_factors: every metric needs
    a cutoff (lists are ranked down to the largest one), except `auc`, which without one
    is the exact AUC over the whole catalogue."""
    requests = parse_requests(metrics, LARGEST_INT, convention, dialect)
    full = [r.label for r in requests if (r.name == "auc" and r.bare
                                          and set(dict(r.params)) <= {"rel"})
            or r.metric.engine == "factors"]
    requests = tuple(dataclasses.replace(r, computed=_FULL_AUC if r.name == "auc"
                                         else r.metric.describe(r.convention))
                     if r.label in full else r for r in requests)
    for r in requests:
        if r.metric.needs:
            raise ValueError(
                f"metrics: {r.label!r} needs {', '.join(r.metric.needs).replace('|', ' or ')}"
                f", which evaluate_factors does not take: rank with fr.topk and call "
                f"fr.evaluate with it")
        if r.bare and r.label not in full:
            name = r.metric.name
            if not r.metric.cutoff:
                raise ValueError(
                    f"metrics: {r.label!r} is not available from factors: {name} has no "
                    f"cutoff of its own, and lists are ranked down to the largest cutoff "
                    f"asked for; rank with fr.topk and use fr.evaluate")
            raise ValueError(
                f"metrics: {r.label!r} needs a cutoff here, as in '{name}@10': lists are "
                f"ranked down to the largest cutoff asked for")
    return requests, full


# (the requests, the labels of the full-ranking auc and gauc): parse_factor_metrics
FactorSpecs = tuple[tuple["Request", ...], list[str]]

_FULL_AUC = ("the exact full-ranking AUC of the user's relevant items against every "
             "non-excluded non-relevant item, ties ½")


def evaluate_factors(user_factors: ArrayLike, item_factors: ArrayLike, test: SparseMatrix,
                     metrics: str | Iterable[str], *, exclude: SparseMatrix | None = None,
                     users: ArrayLike | None = None, convention: str = "recsys",
                     dialect: str | None = None, ties: str = "low",
                     n_threads: int | None = None, show_progress: bool = False) -> Result:
    """Score, rank and evaluate in one fused pass: factors -> top-K -> metrics, per user block.

    Equal to `fr.evaluate(test, fr.topk(user_factors, item_factors, K, exclude=exclude)[0],
    metrics)` with K the largest cutoff, without ever holding more than one tile of scores
    per thread. Users with no relevant test item are not scored at all.

    Parameters
    ----------
    user_factors : array, shape (n_users, n_factors)
    item_factors : array, shape (n_items, n_factors)
        As for `topk`.
    test : scipy.sparse matrix, shape (n_users, n_items)
        Held-out graded relevance; a stored value > 0 is relevant.
    metrics : str or list of str
        Names with a cutoff ("ndcg@10", "map@20", ...) and `auc`: the exact full-ranking
        AUC of each user's relevant items against every non-excluded non-relevant item
        (ties count one half). An excluded test item ranks below every admissible item.
        `gauc` (RecBole's GAUC): the same per-user AUC, NaN for a user without a relevant
        or a non-relevant item, averaged with weights m (Σ m·AUC / Σ m).
    exclude : scipy.sparse matrix, shape (n_users, n_items), optional
        Items never recommended (the training interactions).
    users : int array, optional
        Rows to evaluate (default: every row of test); the result's rows follow it.
    convention : {"recsys", "trec", "implicit"}
    dialect : str, optional
        As for `fr.evaluate`: read the labels as this tool writes them.
    ties : {"low", "implicit"}
        Order among equal scores, as in `topk`; "implicit" gives the lists of implicit's
        `recommend` (float32 scores a few ulps apart may round, and so order, differently
        in the two products).
    n_threads : int, optional
        Numba threads for this call (default: numba's thread count).
    show_progress : bool
        A progress bar (tqdm) over spans of users, with users/s.

    Returns
    -------
    Result
    """
    specs = parse_factor_metrics(metrics, convention, dialect)
    show_progress = check_bool(show_progress, "show_progress")
    data = check_truth(test, name="test")
    scorer = _Scorer(user_factors, item_factors, exclude, desc_ties=_check_ties(ties),
                     truth_shape=(data.n_users, data.n_items))
    rows = None if users is None else \
        rows_or_all(users, "users", data.n_users, "the rows of user_factors")
    with numba_threads(n_threads) as threads:
        return evaluate_scorer(scorer, data, specs, rows, convention, threads, show_progress,
                               dialect)


def evaluate_scorer(scorer: _Scorer, data: Truth, specs: FactorSpecs, rows: IntArray | None,
                    convention: str, threads: int, show_progress: bool,
                    dialect: str | None = None) -> Result:
    """Rank users `rows` (None: every truth row in order) with the scorer, span by span,
    and evaluate them against data through an Evaluator: the ranked metrics by the
    engine, the full-ranking auc from the scorer (given to the Evaluator as the values of
    its labels). Nothing of the users' number is held beside the Evaluator's store."""
    requests, full = specs
    requests_by = {r.label: r for r in requests}
    want_auc = bool(full)
    # the truth at each relevance threshold of the full-ranking labels: one AUC each
    views = {rel: at_least(data, rel) for rel in
             dict.fromkeys(requests_by[label].rel for label in full)}
    ranked = [r for r in requests if r.label not in full]
    k = max((r.k for r in ranked), default=1)
    evaluator = Evaluator(data, [r.label for r in requests], convention=convention,
                          dialect=dialect, k=k, repeats=True,
                          _external={label: requests_by[label].computed for label in full})
    n = data.n_users if rows is None else rows.shape[0]
    width = scorer.width(k)  # cutoffs past the catalogue see empty slots
    span = span_users(width)
    with progress_bar(n, show_progress, "users") as bar:
        for lo in range(0, n, span):
            hi = min(lo + span, n)
            span_rows = np.arange(lo, hi) if rows is None else rows[lo:hi]
            n_relevant = positive_counts(data, span_rows)
            counted = counted_rows(data.indptr, span_rows, n_relevant,
                                   evaluator.counts_judged)
            # every counted user is ranked: under the trec convention that includes users
            # whose judgments are all non-relevant (their lists still count in num_ret,
            # coverage and gini)
            scored = np.flatnonzero(counted)
            ids, _, values, negatives = scorer.rank(span_rows[scored], k, threads,
                                                    truth=next(iter(views.values()), None))
            lists = np.full((hi - lo, width), -1, dtype=scorer.id_dtype)
            lists[scored] = ids
            external: dict[str, FloatArray] | None = None
            if want_auc:
                external = {}
                for j, (rel, view) in enumerate(views.items()):
                    if j > 0:  # another threshold: its AUC, the lists as they are
                        _, _, values, negatives = scorer.rank(span_rows[scored], k, threads,
                                                              truth=view)
                    auc, gauc = _full_aucs(values, negatives, scored, counted,
                                           positive_counts(view, span_rows[scored]))
                    external.update({label: gauc if requests_by[label].name == "gauc" else auc
                                     for label in full if requests_by[label].rel == rel})
            evaluator.update(span_rows, lists, _external=external)
            bar.update(hi - lo)
    return evaluator.result()


def _full_aucs(values: FloatArray, negatives: IntArray, scored: IntArray, counted: BoolArray,
               m: IntArray) -> tuple[FloatArray, FloatArray]:
    """(auc, gauc) of a span's rows from the scorer's AUC of its `scored` rows (m relevant
    items each): auc 0 for a counted user without a relevant item; GAUC leaves out a user
    without a relevant or a non-relevant item (NaN)."""
    auc = np.where(counted, 0.0, np.nan)
    auc[scored] = np.where(m > 0, values, 0.0)
    gauc = np.full(counted.shape[0], np.nan)
    gauc[scored] = np.where((m > 0) & (negatives > 0), values, np.nan)
    return auc, gauc


def span_users(width: int) -> int:
    """Users of a span of evaluate_factors (an Evaluator's update) with lists of `width`."""
    return max(1024, _SPAN_IDS // width)


def positive_counts(data: Truth, rows: IntArray) -> IntArray:
    """m of each truth row in rows: its number of stored values > 0."""
    from ._kernels.factors import positive_counts as count

    return count(data.indptr, data.data, rows,  # type: ignore[no-any-return]  # the kernel's
                 np.empty(rows.shape[0], dtype=np.int64))
