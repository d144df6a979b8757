"""fastrank for implicit users: a drop-in `ranking_metrics_at_k` and a training callback.

    from fastrank.implicit import ranking_metrics_at_k   # instead of implicit.evaluation's
    ranking_metrics_at_k(model, train, test, K=10)        # same dict and values, faster

    cb = EvalCallback(test, ["ndcg@10", "auc"], train=train, patience=3)
    cb.fit(model, train)            # or model.fit(train, callback=cb) without early stopping
    cb.history                      # one dict per evaluation

`implicit` itself is only needed for the models; nothing here imports it at load time.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._types import Model, SparseMatrix

from .factors import parse_factor_metrics
from .model import evaluate_model, mf_factors, train_rows
from .validation import (LARGEST_INT, check_bool, check_int, check_number, check_pattern,
                         check_truth)
from .warm import WarmUp, warm_up

if TYPE_CHECKING:
    from types import FrameType

__all__ = ["ranking_metrics_at_k", "precision_at_k", "mean_average_precision_at_k", "ndcg_at_k",
           "AUC_at_k", "EvalCallback", "StopTraining"]


class NothingToEvaluate(ZeroDivisionError, ValueError):
    """No test entry at all: implicit divides by zero here; a ValueError too."""


def _liked(test: SparseMatrix) -> SparseMatrix:
    """implicit's relevance: every distinct stored test entry, whatever its value (checked
    and made canonical on a copy: the caller's matrix is never modified)."""
    if not sp.issparse(test):
        raise TypeError(f"test_user_items must be a scipy.sparse matrix (users x items); got "
                        f"{type(test).__name__}")
    indptr, indices = check_pattern(test, "test_user_items", test.shape)
    return sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=test.shape)


def _threads(num_threads: int | np.integer[Any]) -> int | None:
    import numba

    num_threads = check_int(num_threads, "num_threads", 0, " (0: all cores)")
    if num_threads == 0:
        return None
    return min(int(num_threads), numba.config.NUMBA_NUM_THREADS)  # type: ignore[no-any-return]


def ranking_metrics_at_k(model: Model, train_user_items: SparseMatrix,
                         test_user_items: SparseMatrix, K: int = 10, show_progress: bool = True,
                         num_threads: int = 1) -> dict[str, float]:
    """implicit.evaluation.ranking_metrics_at_k, computed by fastrank.

    Returns {"precision", "map", "ndcg", "auc"}: the same values as implicit 0.7 wherever
    implicit counts correctly. It does not where implicit miscounts filler: a slot with
    -1, an id past the catalogue, a training item or a repeat of a listed id is scored
    by implicit as an item; here that slot is empty where it stands (the items after it
    keep their ranks). int64 sparse indices, which implicit rejects, are fine.

    Threads: implicit ranks with the model's `num_threads` (0 = all cores) and runs its
    metric loop on `num_threads`; fastrank does both in one pass, on the larger of the
    two (0 in either means all cores).
    """
    K = check_int(K, "K")
    test = _liked(test_user_items)
    n_users, n_items = test.shape
    train = train_rows(train_user_items, n_users, n_items, name="train_user_items")
    # K's bound is 2**62, a cutoff's 2**62 - 1: no list is that long, so they rank alike
    cut = min(K, LARGEST_INT - 1)
    labels = [f"precision@{cut}", f"map@{cut}", f"ndcg@{cut}", f"auc@{cut}"]
    model_threads = getattr(model, "num_threads", 0)
    if not isinstance(model_threads, (int, np.integer)) or isinstance(model_threads, bool):
        model_threads = 0
    _threads(num_threads)  # type and range check
    wanted = 0 if 0 in (num_threads, model_threads) else max(num_threads, model_threads)
    res = evaluate_model(model, test, labels, train=train, convention="implicit",
                         ties="implicit", show_progress=bool(show_progress),
                         n_threads=_threads(wanted))
    if res.n_users == 0:
        raise NothingToEvaluate("test_user_items has no stored entries: nothing to evaluate "
                                "(implicit raises ZeroDivisionError here too)")
    return {name: res[label] for name, label in zip(("precision", "map", "ndcg", "auc"), labels)}


def precision_at_k(model: Model, train_user_items: SparseMatrix,
                   test_user_items: SparseMatrix, K: int = 10, show_progress: bool = True,
                   num_threads: int = 1) -> float:
    """implicit's precision_at_k (pooled: hits / sum of min(K, m)), by fastrank."""
    return ranking_metrics_at_k(model, train_user_items, test_user_items, K, show_progress,
                                num_threads)["precision"]


def mean_average_precision_at_k(model: Model, train_user_items: SparseMatrix,
                                test_user_items: SparseMatrix, K: int = 10,
                                show_progress: bool = True, num_threads: int = 1) -> float:
    """implicit's mean_average_precision_at_k, by fastrank."""
    return ranking_metrics_at_k(model, train_user_items, test_user_items, K, show_progress,
                                num_threads)["map"]


def ndcg_at_k(model: Model, train_user_items: SparseMatrix, test_user_items: SparseMatrix,
              K: int = 10, show_progress: bool = True, num_threads: int = 1) -> float:
    """implicit's ndcg_at_k (binary gains), by fastrank."""
    return ranking_metrics_at_k(model, train_user_items, test_user_items, K, show_progress,
                                num_threads)["ndcg"]


def AUC_at_k(model: Model, train_user_items: SparseMatrix,  # noqa: N802
             test_user_items: SparseMatrix, K: int = 10, show_progress: bool = True,
             num_threads: int = 1) -> float:
    """implicit's AUC_at_k (the top-K approximation), by fastrank."""
    return ranking_metrics_at_k(model, train_user_items, test_user_items, K, show_progress,
                                num_threads)["auc"]


class StopTraining(Exception):
    """Raised by EvalCallback to end model.fit early; `EvalCallback.fit` catches it."""


class EvalCallback:
    """Evaluate a model during `fit`, keep the history, optionally stop early.

    Parameters
    ----------
    test : scipy.sparse matrix (users x items)
        Held-out relevance.
    metrics : str or list of str
        As for `fr.evaluate_factors`: "ndcg@10", "map@20", "auc" (full ranking), ...
    train : scipy.sparse matrix, optional
        Training interactions, excluded from the rankings (pass it: otherwise the model
        is credited with recommending what the user already has).
    every : int
        Evaluate after every `every`-th iteration (and never in between).
    model : implicit model, optional
        The model being trained. Without it, the callback takes the model whose `fit`
        calls it, which works where that `fit` is Python code (ALS); pass `model=` for a
        direct `model.fit(train, callback=cb)` of BPR or LMF, whose `fit` is compiled (or
        use `cb.fit(model, train)`, which sets it).
    convention : {"recsys", "trec", "implicit"}
    monitor : str, optional
        The metric early stopping watches (default: the first of `metrics`); higher is better.
    patience : int, optional
        Stop once `monitor` has not improved by more than `min_delta` for this many
        evaluations in a row. None (default) never stops.
    min_delta : float
        An evaluation improves on the best only by exceeding it by more than this
        (default 0.0).
    restore_best : bool
        When stopping, put the factors of the best evaluation back into the model.
    verbose : bool
        Print one line per evaluation.
    warm : bool, optional
        Compile the evaluation's kernels in a background process from construction on
        (`fr.warm_up`), beside the first iterations of training, so that on a fresh
        install the first evaluation does not spend seconds compiling them. None (the
        default): on machines of more than 2 cores. On 2, training's threads and the
        compile share them: `bench/warm_factors.py --als` measured the first iteration
        2-3 s slower and the first evaluation no faster.

    Attributes
    ----------
    history : list of dict
        Per evaluation: iteration (1-based), train_seconds (this iteration), eval_seconds,
        loss (ALS's, if it computes one; else None), correct and skipped (BPR's counts of
        its training samples, for BPR only) and one entry per metric.
    best_iteration, best_value : int, float
        The best evaluation of `monitor` so far.
    stopped_iteration : int or None
        The iteration at which training was stopped, or None.
    """

    def __init__(self, test: SparseMatrix, metrics: str | Iterable[str], *,
                 train: SparseMatrix | None = None, every: int = 1, model: Model | None = None,
                 convention: str = "recsys", monitor: str | None = None,
                 patience: int | None = None, min_delta: float = 0.0,
                 restore_best: bool = True, verbose: bool = False,
                 warm: bool | None = None) -> None:
        specs, _ = parse_factor_metrics(metrics, convention)
        self.metrics = [s.label for s in specs]
        every = check_int(every, "every")
        if patience is not None:
            patience = check_int(patience, "patience", hint=" or None")
        if monitor is None:
            monitor = self.metrics[0]
        if monitor not in self.metrics:
            raise ValueError(f"monitor {monitor!r} is not among metrics {self.metrics}")
        data = check_truth(test, name="test")  # checked once here, not at the first fit
        self.test = test
        self.train = None if train is None else train_rows(train, data.n_users, data.n_items)
        self.every = int(every)
        self.model = model
        self.convention = convention
        self.monitor = monitor
        self.patience = patience
        self.min_delta = check_number(min_delta, "min_delta")
        self.restore_best = check_bool(restore_best, "restore_best")
        self.verbose = check_bool(verbose, "verbose")
        self.history: list[dict[str, Any]] = []
        self.best_iteration: int | None = None
        self.best_value: float | None = None
        self.stopped_iteration: int | None = None
        self._best_factors: tuple[NDArray[Any], ...] | None = None
        self._wait = 0
        self._warming: WarmUp | None = None
        start = (os.cpu_count() or 1) > 2 if warm is None else check_bool(warm, "warm")
        if start:
            self._warming = warm_up(
                self.metrics, convention=convention, n_users=data.n_users,
                values=data.data.dtype, indices=data.indices.dtype,
                factors=_factor_dtype(model),
                exclude=False if self.train is None else self.train.indices.dtype)

    def fit(self, model: Model, user_items: SparseMatrix, **fit_kwargs: Any) -> EvalCallback:
        """model.fit(user_items, callback=self), ending quietly when early stopping fires."""
        self.model = model
        try:
            model.fit(user_items, callback=self, **fit_kwargs)
        except StopTraining:
            pass
        return self

    def __call__(self, iteration: int, elapsed: float, *progress: Any) -> None:
        """implicit's call after each iteration: ALS passes (iteration, seconds, loss), BPR
        (epoch, seconds, correct, skipped), LMF (epoch, seconds)."""
        if (iteration + 1) % self.every:
            return
        model = self.model if self.model is not None else self._calling_model()
        factors = mf_factors(model)
        if factors is None:
            raise TypeError(
                f"EvalCallback needs an implicit matrix-factorization model (ALS, BPR, LMF); "
                f"got {type(model).__name__}")
        start = time.perf_counter()
        if self._warming is not None:  # the rest of its compile, rather than all of ours
            self._warming.wait()
            self._warming = None
        res = evaluate_model(model, self.test, self.metrics, train=self.train,
                             convention=self.convention, show_progress=False)
        entry = {"iteration": iteration + 1, "train_seconds": float(elapsed),
                 "eval_seconds": time.perf_counter() - start,
                 "loss": progress[0] if len(progress) == 1 else None}
        if len(progress) == 2:  # BPR's samples ordered correctly, and skipped
            entry["correct"], entry["skipped"] = int(progress[0]), int(progress[1])
        entry.update(res.to_dict())
        self.history.append(entry)
        if self.verbose:
            shown = "  ".join(f"{m} {entry[m]:.5f}" for m in self.metrics)
            print(f"iteration {entry['iteration']}: {shown}", file=sys.stderr)
        self._early_stopping(model, entry, factors)

    def _early_stopping(self, model: Model, entry: dict[str, Any],
                        factors: tuple[Any, ...]) -> None:
        value = entry[self.monitor]
        if self.best_value is None or value > self.best_value + self.min_delta:
            self.best_value, self.best_iteration = value, entry["iteration"]
            self._wait = 0
            if self.patience is not None and self.restore_best:
                self._best_factors = tuple(_host_copy(f) for f in factors)
            return
        self._wait += 1
        if self.patience is not None and self._wait >= self.patience:
            self.stopped_iteration = entry["iteration"]
            if self.restore_best and self._best_factors is not None:
                _restore(model, *self._best_factors)
            raise StopTraining(
                f"{self.monitor} has not improved for {self._wait} evaluations; best "
                f"{self.best_value:.6f} at iteration {self.best_iteration}")

    def _calling_model(self) -> Model:
        """The model whose fit() is calling us: implicit does not pass it to callbacks."""
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if candidate is not None and hasattr(candidate, "item_factors"):
                return candidate
            frame = frame.f_back
        raise TypeError(
            "EvalCallback could not find the model being fitted (BPR's and LMF's fit are "
            "compiled code, which Python cannot look into): pass model= to EvalCallback, "
            "or train with cb.fit(model, train)")


def _factor_dtype(model: Model | None) -> Any:
    """The dtype of the factors a model will have: its `dtype` (implicit's CPU models
    take one), float32 (implicit's default) where it has none."""
    dtype = getattr(model, "dtype", None)
    try:
        dtype = np.dtype(dtype) if dtype is not None else None
    except TypeError:
        dtype = None
    return dtype if dtype in (np.float32, np.float64) else np.float32


def _host_copy(factors: Any) -> Any:
    if hasattr(factors, "to_numpy") and not isinstance(factors, np.ndarray):
        return factors.to_numpy()  # pragma: no cover - GPU models
    return np.array(factors, copy=True)


def _restore(model: Model, user_factors: NDArray[Any], item_factors: NDArray[Any]) -> None:
    """Put saved factors back, in place, and drop the model's caches derived from them."""
    for name, saved in (("user_factors", user_factors), ("item_factors", item_factors)):
        current = getattr(model, name)
        if isinstance(current, np.ndarray):
            current[...] = saved
        else:  # pragma: no cover - implicit.gpu.Matrix
            setattr(model, name, type(current)(saved))
    for cache in ("_user_norms", "_item_norms", "_YtY", "_XtX"):
        if hasattr(model, cache):
            setattr(model, cache, None)
