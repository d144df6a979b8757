"""`fastrank.evaluate_model`: evaluate any model with implicit's `recommend` interface.

Two paths, same lists:
- implicit's matrix-factorization models (ALS, BPR, LMF; GPU ones through `to_cpu()`),
  whose `recommend` is the top-N of user_factors @ item_factors.T with the training
  items filtered, are ranked by the fused kernel straight from their factors (with
  `ties="implicit"`, in exactly implicit's order among equal scores);
- any other object is asked `model.recommend(userids, user_items, N=K, ...)` for batches
  of users, and the slots of its lists that hold filler (see `_clean_lists`) are
  emptied where they stand before the lists are scored.
Users without a relevant test item are never asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, IntArray, Model, SparseMatrix
from .factors import (_check_ties, _Scorer, evaluate_scorer,
                      parse_factor_metrics, positive_counts)
from .progress import progress_bar
from .means import counted_rows
from .streaming import Evaluator
from .threads import numba_threads
from .validation import (_csr_parts, check_bool, check_int, check_memory, check_pattern,
                         check_truth)

if TYPE_CHECKING:
    from .grammar import Request
    from .result import Result
    from .validation import Truth


def mf_factors(model: Model) -> tuple[Any, Any] | None:
    """(user_factors, item_factors) if model's recommend is implicit's plain MF top-N."""
    try:
        from implicit.cpu.matrix_factorization_base import MatrixFactorizationBase as CPU
    except ImportError:
        return None
    if isinstance(model, CPU) and type(model).recommend is CPU.recommend:
        return model.user_factors, model.item_factors
    try:
        from implicit.gpu.matrix_factorization_base import MatrixFactorizationBase as GPU
    except ImportError:  # pragma: no cover - implicit built without CUDA support
        return None
    if isinstance(model, GPU) and type(model).recommend is GPU.recommend:  # pragma: no cover
        cpu = model.to_cpu()
        return cpu.user_factors, cpu.item_factors
    return None


def evaluate_model(model: Model, test: SparseMatrix, metrics: str | Iterable[str], *,
                   train: SparseMatrix | None = None, batch_size: int = 1000,
                   convention: str = "recsys", dialect: str | None = None, ties: str = "low",
                   show_progress: bool = True, n_threads: int | None = None) -> Result:
    """Evaluate a trained model on held-out interactions.

    Parameters
    ----------
    model : object
        Anything with implicit's `recommend(userids, user_items, N, filter_already_liked_items)`.
    test : scipy.sparse matrix, shape (n_users, n_items)
        Held-out graded relevance (value > 0 is relevant).
    metrics : str or list of str
        Names with a cutoff ("ndcg@10"); `auc` (full-ranking) and `gauc` (RecBole's GAUC,
        the per-user full-ranking AUC weighted by m) need a matrix-factorization model,
        whose every item score is known.
    train : scipy.sparse matrix, optional
        The training interactions: filtered from the recommendations (every stored entry).
    batch_size : int
        Users per `recommend` call on the generic path.
    convention : {"recsys", "trec", "implicit"}
    dialect : str, optional
        As for `fr.evaluate`: read the labels as this tool writes them.
    ties : {"low", "implicit"}
        Order among exactly equal scores on the matrix-factorization path: the lower item
        id first (default; metric@k then never depends on the longest cutoff asked for),
        or implicit's heap order, which reproduces `model.recommend(N=K)` (up to float32
        scores a few ulps apart, which the two products may round differently) but is
        not prefix-consistent (the top 10 of a top-20 list can differ from the top 10).
        Other models order their lists themselves.
    show_progress : bool
        A tqdm progress bar over the users, with users/s (default True: a model's
        evaluation ranks every item for every user, and takes a while).
    n_threads : int, optional
        Threads for the scoring and the metrics (default: numba's thread count).

    Returns
    -------
    Result
        Over every row of test (NaN for the users not counted).
    """
    specs = parse_factor_metrics(metrics, convention, dialect)
    batch_size = check_int(batch_size, "batch_size")
    show_progress = check_bool(show_progress, "show_progress")
    desc_ties = _check_ties(ties)
    data = check_truth(test, name="test")
    if train is not None:
        train = train_rows(train, data.n_users, data.n_items)
    rows = np.arange(data.n_users, dtype=np.int64)
    factors = mf_factors(model)
    if factors is None and not callable(getattr(model, "recommend", None)):
        raise TypeError(
            f"model must have a recommend(userids, user_items, N, filter_already_liked_items) "
            f"method, as implicit's models do; got {type(model).__name__}")
    with numba_threads(n_threads) as threads:
        if factors is not None:
            user_factors, item_factors = factors
            if user_factors is None or item_factors is None:
                raise ValueError(
                    f"model: this {type(model).__name__} has no factors yet (user_factors or "
                    f"item_factors is None); fit it first (model.fit(user_items))")
            user_factors = _cover_test_rows(user_factors, data)
            # test's columns against the model's items before train's shape is checked
            # against the factors: a mismatch is the test's (or the model's), not train's
            scorer = _Scorer(user_factors[:data.n_users], item_factors, train,
                             desc_ties=desc_ties, truth_shape=(data.n_users, data.n_items))
            return evaluate_scorer(scorer, data, specs, rows, convention, threads,
                                   show_progress, dialect)
        if specs[1]:
            raise ValueError(
                f"metrics: {', '.join(repr(label) for label in specs[1])} (full ranking) "
                f"needs the score of every item, which only matrix-factorization models "
                f"expose; use auc@k, or fr.evaluate_factors")
        return _evaluate_recommend(model, data, specs[0], train, batch_size, convention,
                                   show_progress, dialect)


def _cover_test_rows(user_factors: Any, data: Truth) -> Any:
    """The model's user factors, with a row for every test row: rows past the model's
    users that hold no test entry are never ranked (implicit never asks for them either),
    and zero factors stand in for them; a test entry in such a row is an error."""
    n_model_users = np.shape(user_factors)[0]
    if n_model_users >= data.n_users:
        return user_factors
    if int(data.indptr[n_model_users]) != int(data.indptr[data.n_users]):
        row = n_model_users + int(np.flatnonzero(np.diff(data.indptr[n_model_users:]))[0])
        raise ValueError(
            f"test has {data.n_users} rows but the model knows {n_model_users} users, and "
            f"row {row} has test entries; pass the model trained on these users, or only "
            f"the test rows of its users (test[:{n_model_users}])")
    user_factors = np.asarray(user_factors)
    extra = np.zeros((data.n_users - n_model_users,) + user_factors.shape[1:],
                     dtype=user_factors.dtype)
    return np.concatenate([user_factors, extra])


def train_rows(train: SparseMatrix, n_users: int, n_items: int,
               name: str = "train") -> SparseMatrix:
    """The first n_users rows of a checked training matrix (implicit lets train have more
    rows than test), as a new CSR matrix: the caller's is never modified."""
    indptr, indices, values, (rows, cols), _ = _csr_parts(train, name, "interactions")
    if cols != n_items or rows < n_users:
        raise ValueError(
            f"{name} has shape {(rows, cols)} but test has {(n_users, n_items)}; {name} needs "
            f"the same items and a row for every test user")
    end = int(indptr[n_users])
    return sp.csr_matrix((values[:end], indices[:end], indptr[:n_users + 1]),
                         shape=(n_users, n_items))


def _evaluate_recommend(model: Model, data: Truth, specs: tuple[Request, ...],
                        train: SparseMatrix | None, batch_size: int, convention: str,
                        show_progress: bool, dialect: str | None = None) -> Result:
    """Ask the model for batches of lists and evaluate them through an Evaluator, which
    runs on the thread count the caller set."""
    n_users, n_items = data.n_users, data.n_items
    liked = None
    if train is not None:
        # the model gets the training values (they may matter, e.g. item-kNN scores); the
        # cleaning uses the stored pattern
        indptr, indices = check_pattern(train, "train", (n_users, n_items))
        liked = sp.csr_matrix((np.ones(indices.shape[0], np.int8), indices, indptr),
                              shape=(n_users, n_items))
    k = max(s.k for s in specs)
    check_memory(min(batch_size, n_users) * k * 8,
                 f"asking model.recommend for lists of {k:,} items (the largest cutoff) for "
                 f"{min(batch_size, n_users):,} users at a time",
                 f"use cutoffs up to the catalogue's {n_items:,} items")
    evaluator = Evaluator(data, [s.label for s in specs], convention=convention,
                          dialect=dialect, k=k)
    n_relevant = positive_counts(data, np.arange(n_users, dtype=np.int64))
    # the counted users (under the trec convention, also those judged only non-relevant)
    ask = np.flatnonzero(counted_rows(data.indptr, np.arange(n_users), n_relevant,
                                      evaluator.counts_judged))
    empty = sp.csr_matrix((min(batch_size, max(ask.size, 1)), n_items), dtype=np.float32)
    done = 0  # truth rows before `done` are evaluated; users never asked get empty lists
    with progress_bar(ask.size, show_progress, "users") as bar:
        for lo in range(0, ask.size, batch_size):
            batch = ask[lo:lo + batch_size].astype(np.int32)
            if train is not None:
                answer = model.recommend(batch, train[batch], N=k,
                                         filter_already_liked_items=True)
            else:
                answer = model.recommend(batch, empty[:batch.size], N=k,
                                         filter_already_liked_items=False)
            if not isinstance(answer, (tuple, list)) or len(answer) != 2:
                raise TypeError(
                    f"model.recommend must return (ids, scores), as implicit's models do; "
                    f"got {type(answer).__name__}")
            end = int(batch[-1]) + 1
            cleaned = _clean_lists(answer[0], batch, k, n_items, liked)
            lists = np.full((end - done, cleaned.shape[1]), -1, dtype=np.int64)
            lists[batch - done] = cleaned
            evaluator.update(np.arange(done, end), lists)
            done = end
            bar.update(batch.size)
    if done < n_users or n_users == 0:
        evaluator.update(np.arange(done, n_users), np.full((n_users - done, 1), -1))
    return evaluator.result()


def _clean_lists(ids: ArrayLike, batch: AnyArray, k: int, n_items: int,
                 liked: SparseMatrix | None) -> IntArray:
    """A model's lists as (len(batch), min(k, their width)) int64 ids, every slot that is
    not a recommendation set to -1 where it stands (the items after it keep their ranks).

    A slot is not a recommendation when its id is not an item (negative, or past the
    catalogue) or is an item the user trained on (`liked`: the train pattern, when the
    model was asked to filter it). implicit fills what it cannot rank with such ids: the
    filtered training items come back at the end with score -FLT_MAX, and slots past the
    catalogue repeat an item already listed (a repeat counts once, see SPEC §2). Lists
    longer than k are cut.
    """
    ids = _model_ids(ids, batch.size)
    width = max(min(k, ids.shape[1]), 1)
    lists = np.full((batch.size, width), -1, dtype=np.int64)
    if ids.shape[1]:
        chunk = ids[:, :width]
        if chunk.dtype.kind == "u":  # ids past int64 cannot be items: cap before the cast
            chunk = np.minimum(chunk, np.uint64(n_items))
        lists[:] = chunk
    lists[(lists < 0) | (lists >= n_items)] = -1
    listed = np.flatnonzero(lists.ravel() >= 0)
    if liked is not None and listed.size:
        owner = batch[listed // width]
        trained = liked[owner, lists.ravel()[listed]]
        lists.ravel()[listed[np.asarray(trained).ravel() != 0]] = -1
    return lists


def _model_ids(ids: ArrayLike, n_users: int) -> AnyArray:
    """The ids `model.recommend` returned for n_users users, as a 2-D integer array."""
    try:
        ids = np.asarray(ids)
    except ValueError:  # ragged nested lists
        raise ValueError(
            "model.recommend returned ragged ids; it must return one row of K item ids "
            "per user, as a 2-D integer array") from None
    if ids.dtype.kind not in "iu":  # not bool, float, object, timedelta, ...
        raise TypeError(
            f"model.recommend returned item ids of dtype {ids.dtype}; ids must be integers "
            f"(implicit's models return int32). Return ids.astype(np.int64) if they are "
            f"whole numbers")
    if ids.ndim == 1 and n_users == 1:
        ids = ids.reshape(1, -1)
    if ids.ndim != 2 or ids.shape[0] != n_users:
        raise ValueError(
            f"model.recommend returned ids of shape {ids.shape} for {n_users} users; it "
            f"must return one row of item ids per user, shape ({n_users}, K)")
    return ids
