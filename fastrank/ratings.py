"""Rating prediction: RMSE and MAE of predicted values against the stored truth values.

    fr.rmse(test, predictions)                      # sparse, predictions at test's entries
    fr.rmse(test, values)                           # 1-D, aligned with test.data
    fr.mae(test, user_factors=U, item_factors=V)    # predicted rating U[u] . V[i]

Each returns a `Result`. `result["rmse"]` is pooled over every stored truth entry, the
square root of the mean squared error over all ratings, as everyone reports it;
`result.per_user("rmse")` is each user's value over its own ratings (NaN for a user with
none) and `result.report["user_mean"]` the mean of those per-user values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from ._types import AnyArray, FloatArray, IntArray, SparseMatrix

from .factors import check_factors
from .means import counted_mean
from .threads import numba_threads
from .result import Result
from .validation import _csr_parts

KIND = "ratings"  # the kind of evaluation of its Results


@dataclass(frozen=True)
class Rated:
    """The stored ratings grouped by user with columns ascending, and where each came from."""

    indptr: IntArray     # int64, n_users + 1
    indices: AnyArray    # column of each rating
    data: FloatArray     # float64 rating
    order: IntArray | None  # position in the caller's truth.data of each rating; None: identity
    n_users: int
    n_items: int
    # the caller's format, where 1-D predictions align with truth.data only for CSR, CSC
    # and COO (BSR, LIL, DOK and DIA have no such order, or none the caller sees)
    format: str = "csr"

    @property
    def rows(self) -> IntArray:
        return np.repeat(np.arange(self.n_users, dtype=np.int64), np.diff(self.indptr))


def rmse(truth: SparseMatrix, predictions: SparseMatrix | ArrayLike | None = None, *,
         user_factors: ArrayLike | None = None, item_factors: ArrayLike | None = None,
         n_threads: int | None = None) -> Result:
    """Root mean squared error of predictions at the stored entries of `truth`.

    Parameters
    ----------
    truth : scipy.sparse matrix or array, users x items
        The observed ratings, one stored entry per rated (user, item); a stored 0 is a
        rating of 0. A pair stored twice is an error. Never modified.
    predictions : optional
        - a sparse matrix of truth's shape storing a prediction at every rated pair
          (further stored entries are ignored);
        - a 1-D array aligned with `truth.data` (CSR, CSC or COO truth);
        - a dense 2-D array of truth's shape.
    user_factors, item_factors : 2-D arrays, optional
        Instead of `predictions`: the prediction for (u, i) is user_factors[u] . item_factors[i].
    n_threads : int, optional
        Numba threads for this call; the values do not depend on it.

    Returns
    -------
    Result
        `result["rmse"]` pooled over all ratings, `per_user("rmse")` per user (NaN for users
        without ratings, who are not counted), `report["entries"]` and `report["user_mean"]`.
    """
    return _errors("rmse", truth, predictions, user_factors, item_factors, n_threads)


def mae(truth: SparseMatrix, predictions: SparseMatrix | ArrayLike | None = None, *,
        user_factors: ArrayLike | None = None, item_factors: ArrayLike | None = None,
        n_threads: int | None = None) -> Result:
    """Mean absolute error of predictions at the stored entries of `truth`: the same inputs
    and Result as `rmse`, with "mae" pooled over all ratings and per user."""
    return _errors("mae", truth, predictions, user_factors, item_factors, n_threads)


def _errors(name: str, truth: SparseMatrix, predictions: Any, user_factors: Any,
            item_factors: Any, n_threads: int | None) -> Result:
    from ._kernels.ratings import factor_errors, value_errors

    rated = rated_entries(truth)
    _finite(rated.data, "truth", rated)
    factors = user_factors is not None or item_factors is not None
    if factors and predictions is not None:
        raise TypeError(f"{name}: pass either predictions or factors, not both")
    if not factors and predictions is None:
        raise TypeError(f"{name}: pass predictions, or user_factors and item_factors")
    if factors and (user_factors is None or item_factors is None):
        raise TypeError(f"{name}: pass both user_factors and item_factors")
    squared = np.empty(rated.n_users)
    absolute = np.empty(rated.n_users)
    if factors:
        users, items = _factors(user_factors, item_factors, rated)
        with numba_threads(n_threads):
            factor_errors(rated.indptr, rated.indices, rated.data, users, items, squared,
                          absolute)
    else:
        predicted = predicted_values(predictions, rated, n_threads)
        with numba_threads(n_threads):
            value_errors(rated.indptr, rated.data, predicted, squared, absolute)
    count = np.diff(rated.indptr)
    counted = count > 0
    total = squared if name == "rmse" else absolute
    entries = int(rated.indptr[-1])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        per_user = np.where(counted, total / count, np.nan)
        pooled = total.sum() / entries if entries else np.nan
    if name == "rmse":
        per_user, pooled = np.sqrt(per_user), np.sqrt(pooled)
    if _out_of_range(squared, absolute, pooled):
        # errors near the ends of float64 (e**2 overflowing or underflowing): the same
        # values from errors scaled by each user's largest
        with np.errstate(over="ignore"):  # an error past float64 is inf, as it should be
            errors = (_factor_predictions(users, items, rated) if factors else predicted) \
                - rated.data
        per_user, pooled = _scaled(name, errors, rated.indptr)
    report = {"entries": entries, "user_mean": counted_mean(per_user, counted)}
    return Result([name], [per_user], {name: pooled}, convention=None, kind=KIND,
                  users=np.arange(rated.n_users, dtype=np.int64), counted=counted,
                  n_relevant=count, report=report,
                  pooled={name: ("entries", 2 if name == "rmse" else 1)})


def rated_entries(matrix: SparseMatrix, name: str = "truth") -> Rated:
    """The stored entries of a CSR, CSC or COO matrix as `Rated` (other sparse formats are
    converted first), values as float64 and not yet checked for NaN; a (user, item) stored
    twice and non-numeric (also boolean) values are errors."""
    if not sp.issparse(matrix):
        _csr_parts(matrix, name, "ratings")  # raises the TypeError that says what to pass
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be 2-D (users x items); got {matrix.ndim} dimensions")
    if matrix.dtype == np.bool_ or matrix.dtype.kind not in "iuf":
        raise TypeError(f"{name} values must be numeric ratings; got dtype {matrix.dtype}. "
                        f"Cast with {name}.astype(np.float64)")
    if matrix.format == "csc":
        indptr, rows, data, (n_items, n_users), _ = _csr_parts(matrix.T, name, "ratings")
        cols = np.repeat(np.arange(n_items, dtype=np.int64), np.diff(indptr))
    elif matrix.format == "coo":
        n_users, n_items = matrix.shape
        rows, cols, data = matrix.row, matrix.col, matrix.data
        for axis, values, n in (("row", rows, n_users), ("col", cols, n_items)):
            if values.size and (int(values.min()) < 0 or int(values.max()) >= n):
                raise ValueError(f"{name} is a malformed COO matrix: {axis} indices must lie "
                                 f"in [0, {n}); rebuild it with scipy.sparse.coo_array")
    else:
        indptr, cols, data, (n_users, n_items), canonical = _csr_parts(matrix, name,
                                                                       "ratings")
        if canonical:
            return Rated(indptr.astype(np.int64, copy=False), cols,
                         np.asarray(data, dtype=np.float64), None, n_users, n_items,
                         matrix.format)
        rows = np.repeat(np.arange(n_users, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    _unique_pairs(rows, cols, name)
    indptr = np.zeros(n_users + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_users), out=indptr[1:])
    return Rated(indptr, cols, np.asarray(data, dtype=np.float64)[order], order, n_users,
                 n_items, matrix.format)


def predicted_values(predictions: Any, rated: Rated, n_threads: int | None = None) -> FloatArray:
    """The prediction at each rating of `rated`, float64, in its order."""
    from ._kernels.ratings import pattern_values

    shape = (rated.n_users, rated.n_items)
    if sp.issparse(predictions):
        if predictions.shape != shape:
            raise ValueError(
                f"predictions has shape {predictions.shape} but truth has {shape}; both are "
                f"users x items")
        stored = rated_entries(predictions, "predictions")
        out = np.empty(rated.data.shape[0])
        found = np.empty(rated.data.shape[0], np.uint8)
        with numba_threads(n_threads):
            pattern_values(rated.indptr, rated.indices, stored.indptr, stored.indices,
                           stored.data, out, found)
        missing = np.flatnonzero(found == 0)
        if missing.size:
            j = missing[0]
            raise ValueError(
                f"predictions stores no value for {missing.size} rated pairs, the first "
                f"(user {rated.rows[j]}, item {rated.indices[j]}); predict every stored entry "
                f"of truth")
        return _finite(out, "predictions", rated)
    values = np.asarray(predictions)
    if values.dtype == np.bool_ or values.dtype.kind not in "iuf":
        raise TypeError(f"predictions must be numeric; got dtype {values.dtype}")
    if values.ndim == 1:
        if rated.format not in ("csr", "csc", "coo"):
            raise TypeError(
                f"predictions is 1-D, aligned with truth.data, but truth is a "
                f"{rated.format.upper()} matrix, whose stored values have no such order; "
                f"pass predictions as a dense users x items array or a sparse matrix, or "
                f"truth as CSR (truth.tocsr()) with predictions in its order")
        n = rated.data.shape[0]
        if values.shape[0] != n:
            raise ValueError(
                f"predictions has {values.shape[0]} values but truth stores {n} ratings; a "
                f"1-D predictions array is aligned with truth.data")
        out = values if rated.order is None else values[rated.order]
    elif values.ndim == 2:
        if values.shape != shape:
            raise ValueError(
                f"predictions has shape {values.shape} but truth has {shape}; a dense "
                f"predictions array is users x items")
        out = values[rated.rows, rated.indices]
    else:
        raise ValueError(
            f"predictions must be sparse, 1-D (aligned with truth.data) or 2-D (users x "
            f"items); got {values.ndim} dimensions")
    return _finite(out, "predictions", rated)


def _out_of_range(squared: FloatArray, absolute: FloatArray, pooled: Any) -> bool:
    """Did the plain sums overflow, or underflow (squares of tiny errors to 0)?"""
    return (not (np.isfinite(squared).all() and np.isfinite(absolute).all()
                 and np.isfinite(pooled) | np.isnan(pooled))
            or bool(((absolute > 0) & (squared < 2.0 ** -1000)).any()))


def _factor_predictions(users: NDArray[Any], items: NDArray[Any], rated: Rated) -> FloatArray:
    """user_factors[u] . item_factors[i] at every rating, float64."""
    return np.einsum("ij,ij->i", users[rated.rows].astype(np.float64),  # type: ignore[no-any-return]
                     items[rated.indices].astype(np.float64))


def _scaled(name: str, errors: FloatArray, indptr: IntArray) -> tuple[FloatArray, Any]:
    """(per-user values, pooled value) of rmse or mae from errors grouped by indptr, each
    user's errors divided by their largest |e| (and the pooled sum by the largest of
    those), so that no square overflows or underflows."""
    count = np.diff(indptr)
    rated = np.flatnonzero(count > 0)
    size = np.abs(errors)
    largest = np.zeros(count.shape[0])
    if rated.size:
        largest[rated] = np.maximum.reduceat(size, indptr[rated])
    scale = np.repeat(largest, count)
    with np.errstate(invalid="ignore", divide="ignore"):
        part = np.where((scale > 0) & np.isfinite(scale), size / scale, 0.0)
        sums = np.zeros(count.shape[0])
        if rated.size:
            sums[rated] = np.add.reduceat(part * part if name == "rmse" else part,
                                          indptr[rated])
        top = largest.max() if largest.size else 0.0
        weight = np.where((top > 0) & np.isfinite(top), largest / top, 0.0)
        n = int(count.sum())
        if name == "rmse":
            per_user = np.where(count > 0, largest * np.sqrt(sums / count), np.nan)
            pooled = top * np.sqrt((weight * weight * sums).sum() / n) if n else np.nan
        else:
            per_user = np.where(count > 0, largest * (sums / count), np.nan)
            pooled = top * ((weight * sums).sum() / n) if n else np.nan
    per_user[np.isinf(largest)] = np.inf  # an error beyond float64
    return per_user, (np.inf if np.isinf(top) else pooled)


def _factors(user_factors: ArrayLike, item_factors: ArrayLike,
             rated: Rated) -> tuple[NDArray[Any], NDArray[Any]]:
    users, items = check_factors(user_factors, item_factors)
    for name, factors, n, what in (("user_factors", users, rated.n_users, "rows (users)"),
                                   ("item_factors", items, rated.n_items, "columns (items)")):
        if factors.shape[0] != n:
            raise ValueError(
                f"{name} has {factors.shape[0]} rows but truth has {n} {what}; row r of "
                f"{name} is row r of the matrix")
    return users, items


def _finite(values: ArrayLike, name: str, rated: Rated) -> FloatArray:
    """values (one per rating of `rated`) as float64; NaN or infinity is an error naming the
    first (user, item)."""
    values = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        j = bad[0]
        raise ValueError(
            f"{name} has {bad.size} NaN or infinite values at rated pairs, the first at "
            f"(user {rated.rows[j]}, item {rated.indices[j]}); replace or drop them")
    return values


def _unique_pairs(rows: AnyArray, cols: AnyArray, name: str) -> None:
    """rows and cols sorted together: a pair stored twice is an error."""
    same = np.flatnonzero((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1]))
    if same.size:
        j = same[0]
        raise ValueError(
            f"{name} stores (user {rows[j]}, item {cols[j]}) more than once ({same.size} "
            f"repeated entries); a rating is one stored entry: drop the repeats, or call "
            f"sum_duplicates() if the values should add up")
