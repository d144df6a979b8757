"""Input checks and conversions, done once in the facade so that kernels never see bad data.

Every function raises ValueError or TypeError naming the argument, what is wrong and how
to fix it. None of them modifies its input: where a fix is needed (non-canonical CSR,
unusual dtypes) they work on a copy.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Truth:
    """A checked, canonical CSR truth matrix as plain arrays."""

    indptr: np.ndarray   # int64, length n_users + 1
    indices: np.ndarray  # int32 or int64
    data: np.ndarray     # float64
    n_users: int
    n_items: int

    @cached_property
    def max_row_nnz(self):
        if self.n_users == 0:
            return 0
        return int(np.diff(self.indptr).max())


def _index_array(arr):
    """int32/int64 arrays pass unchanged; other integer types are cast to int64."""
    if arr.dtype in (np.int32, np.int64):
        return arr
    return arr.astype(np.int64)


def check_truth(truth, name="truth"):
    """Convert a scipy.sparse truth matrix to a checked canonical CSR (copying only if needed)."""
    indptr, indices, data, (n_users, n_items) = _csr_parts(truth, name, "relevance")
    data = np.asarray(data, dtype=np.float64)
    if not np.all(np.isfinite(data)):
        raise ValueError(
            f"{name} contains NaN or infinite relevance values; replace them (e.g. with 0 "
            f"for non-relevant) before evaluating")
    if not _is_canonical(indptr, indices):
        # Sort rows and sum duplicate (user, item) entries on a private copy.
        canon = sp.csr_array((data.copy(), indices.copy(), indptr.copy()), shape=(n_users, n_items))
        canon.sum_duplicates()
        indptr, indices, data = canon.indptr, canon.indices, canon.data
    return Truth(indptr=indptr.astype(np.int64, copy=False), indices=_index_array(indices),
                 data=data, n_users=n_users, n_items=n_items)


def check_pattern(matrix, name, shape):
    """The stored (user, item) pattern of a sparse matrix, values ignored: canonical CSR
    (indptr int64, sorted duplicate-free indices) of the given shape."""
    indptr, indices, _, got = _csr_parts(matrix, name, "values")
    if got != tuple(shape):
        raise ValueError(
            f"{name} has shape {got} but must have shape {tuple(shape)} (users x items, "
            f"the rows and columns of the factors); build it with shape={tuple(shape)}")
    if not _is_canonical(indptr, indices):
        canon = sp.csr_array((np.ones(indices.shape[0], np.int8), indices.copy(), indptr.copy()),
                             shape=got)
        canon.sum_duplicates()  # also sorts
        indptr, indices = canon.indptr, canon.indices
    return indptr.astype(np.int64, copy=False), _index_array(indices)


def _csr_parts(matrix, name, values):
    """Structure checks shared by truth and pattern inputs: (indptr, indices, data, shape)."""
    if not sp.issparse(matrix):
        raise TypeError(
            f"{name} must be a scipy.sparse matrix or array (users x items, {values} as "
            f"values); got {type(matrix).__name__}. Build one with "
            f"scipy.sparse.csr_array((values, (users, items)), shape=(n_users, n_items))")
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be 2-D (users x items); got {matrix.ndim} dimensions")
    numeric = np.issubdtype(matrix.dtype, np.integer) or np.issubdtype(matrix.dtype, np.floating)
    if matrix.dtype != np.bool_ and not numeric:
        raise TypeError(
            f"{name} values must be numeric {values}; got dtype {matrix.dtype}. "
            f"Cast with {name}.astype(np.float64)")
    if matrix.format != "csr":
        matrix = matrix.tocsr()  # a new matrix: the caller's is untouched
    n_users, n_items = matrix.shape
    indptr = np.asarray(matrix.indptr)
    indices = np.asarray(matrix.indices)
    data = np.asarray(matrix.data)
    if indptr.ndim != 1 or indptr.shape[0] != n_users + 1:
        raise ValueError(
            f"{name} is a malformed CSR matrix: indptr has {indptr.shape[0]} entries, "
            f"expected n_users + 1 = {n_users + 1}; rebuild it with scipy.sparse.csr_array")
    if not np.issubdtype(indptr.dtype, np.integer) or not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"{name} is a malformed CSR matrix: indptr and indices must be integers")
    nnz = int(indptr[-1])
    if int(indptr[0]) != 0 or np.any(np.diff(indptr) < 0):
        raise ValueError(
            f"{name} is a malformed CSR matrix: indptr must start at 0 and never decrease; "
            f"rebuild it with scipy.sparse.csr_array")
    if nnz > indices.shape[0] or nnz > data.shape[0]:
        raise ValueError(
            f"{name} is a malformed CSR matrix: indptr ends at {nnz} but there are only "
            f"{min(indices.shape[0], data.shape[0])} stored entries; rebuild it with "
            f"scipy.sparse.csr_array")
    indices = indices[:nnz]
    data = data[:nnz]
    if nnz and (int(indices.min()) < 0 or int(indices.max()) >= n_items):
        raise ValueError(
            f"{name} is a malformed CSR matrix: column indices must lie in [0, {n_items}); "
            f"rebuild it with scipy.sparse.csr_array")
    return indptr, indices, data, (n_users, n_items)


def _is_canonical(indptr, indices):
    """True if the column indices strictly increase within every row (sorted, no duplicates)."""
    nnz = indices.shape[0]
    if nnz < 2:
        return True
    increasing = indices[1:] > indices[:-1]
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < nnz)]
    increasing[starts - 1] = True  # a row's first entry need not exceed the previous row's last
    return bool(increasing.all())


def check_topk(topk, n_items):
    """Check the (n_rows, K) id array: integer, 2-D, K >= 1, ids in [-1, n_items)."""
    if not isinstance(topk, np.ndarray):
        topk = np.asarray(topk)
    if topk.dtype == np.bool_ or not np.issubdtype(topk.dtype, np.integer):
        raise TypeError(
            f"topk must be an integer array of item ids (n_users x K); got dtype {topk.dtype}. "
            f"Cast with topk.astype(np.int64) after checking that the values are whole ids")
    if topk.ndim != 2:
        raise ValueError(
            f"topk must be 2-D (one row of K item ids per user); got {topk.ndim} dimensions. "
            f"Reshape a single list with topk.reshape(1, -1)")
    if topk.shape[1] < 1:
        raise ValueError("topk has no columns; each row needs at least one item id (K >= 1)")
    if topk.size:
        lo, hi = int(topk.min()), int(topk.max())
        if lo < -1 or hi >= n_items:
            bad = lo if lo < -1 else hi
            raise ValueError(
                f"topk contains item id {bad}, outside [-1, {n_items}) for truth with "
                f"{n_items} items; use -1 only to pad short lists")
    topk = _index_array(topk)
    return np.ascontiguousarray(topk)


def check_users(users, n_rows, n_truth_rows):
    """The truth row of each top-K row, as int64."""
    if users is None:
        if n_rows != n_truth_rows:
            raise ValueError(
                f"topk has {n_rows} rows but truth has {n_truth_rows}; pass users= to map "
                f"each topk row to its truth row")
        return np.arange(n_rows, dtype=np.int64)
    users = np.asarray(users)
    if users.dtype == np.bool_ or not np.issubdtype(users.dtype, np.integer):
        raise TypeError(
            f"users must be an integer array of truth row numbers; got dtype {users.dtype}")
    if users.ndim != 1 or users.shape[0] != n_rows:
        raise ValueError(
            f"users must be 1-D with one truth row per topk row ({n_rows}); got shape "
            f"{users.shape}")
    if n_rows and (int(users.min()) < 0 or int(users.max()) >= n_truth_rows):
        raise ValueError(
            f"users contains row numbers outside [0, {n_truth_rows}), the rows of truth")
    return users.astype(np.int64)


def check_n_threads(n_threads, max_threads):
    if n_threads is None:
        return None
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)):
        raise TypeError(f"n_threads must be an int or None; got {type(n_threads).__name__}")
    if not 1 <= n_threads <= max_threads:
        raise ValueError(
            f"n_threads must be between 1 and {max_threads} (numba's NUMBA_NUM_THREADS); "
            f"got {n_threads}")
    return int(n_threads)


def check_int(value, name, minimum=1, hint=""):
    """value as a Python int >= minimum; TypeError / ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}{hint}; got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}{hint}; got {value}")
    return int(value)
