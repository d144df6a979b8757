"""Input checks and conversions, done once in the facade so that kernels never see bad data.

Every function raises ValueError or TypeError naming the argument, what is wrong and how
to fix it. None of them modifies its input: where a fix is needed (non-canonical CSR,
unusual dtypes) they work on a copy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, IntArray, SparseMatrix

_T = TypeVar("_T")

from .threads import parallel_turn


@dataclass(frozen=True)
class Truth:
    """A checked, canonical CSR truth matrix as plain arrays, in the caller's dtypes
    where the kernels take them (no copy of a large, possibly memory-mapped, input)."""

    indptr: AnyArray     # int32 or int64, length n_users + 1
    indices: AnyArray    # int32 or int64
    data: AnyArray       # float32 or float64
    n_users: int
    n_items: int
    # False: only the checks that read no entry were made (`check_truth(scan=False)`);
    # the ranking walk checks the entries as it reads them, or `scan_truth` does
    scanned: bool = True

    @property
    def max_row_nnz(self) -> int:
        """The longest row."""
        return self.steps[1]

    @cached_property
    def steps(self) -> tuple[int, int]:
        """(shortest, longest) row, numpy's differences of indptr in blocks of 2^20 rows
        (8 MiB at a time, no kernel to compile); a negative shortest row is an indptr
        that decreases (a Truth not yet scanned)."""
        shortest, longest = 0, 0
        for lo in range(0, self.n_users, _ROW_BLOCK):
            steps = np.diff(self.indptr[lo:lo + _ROW_BLOCK + 1])
            if steps.size:
                shortest = min(shortest, int(steps.min()))
                longest = max(longest, int(steps.max()))
        return shortest, longest


_ROW_BLOCK = 1 << 20


def _all_finite(values: AnyArray) -> bool:
    """No NaN or infinity in a 1-D float array: numpy in blocks of 2^22 values (a 4 MiB
    temporary; as fast as a parallel kernel here, and nothing to compile)."""
    for lo in range(0, values.shape[0], _VALUE_BLOCK):
        if not np.isfinite(values[lo:lo + _VALUE_BLOCK]).all():
            return False
    return True


_VALUE_BLOCK = 1 << 22


def _n_chunks(n: int, work: int) -> int:
    """Ranges of a parallel check over n rows (`work` entries and rows to read): a few per
    thread, at least one, and one where the work is small (one range runs on the calling
    thread, see frames.run_ranges)."""
    import numba

    if work < _SMALL_SCAN:
        return 1
    return max(1, min(int(n), 4 * int(numba.get_num_threads())))


# Fewer rows and entries than this are scanned on the calling thread: some 20 microseconds
# of work, against about 60 to wake the others.
_SMALL_SCAN = 1 << 15


def _index_array(arr: AnyArray) -> AnyArray:
    """int32/int64 arrays pass unchanged; other integer types (and non-native byte order:
    both rare) are cast to int64, unsigned values past int64 clipped to its largest."""
    if arr.dtype in (np.int32, np.int64) and arr.dtype.isnative:
        return arr
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size:
        arr = np.minimum(arr, np.uint64(np.iinfo(np.int64).max))
    return arr.astype(np.int64)


def _past_int64(values: AnyArray) -> int | None:
    """The largest of unsigned 64-bit values if it is past int64's range (which
    _index_array clips), for an error to name as given; else None."""
    if values.dtype.kind == "u" and values.dtype.itemsize == 8 and values.size:
        largest = int(values.max())
        if largest > np.iinfo(np.int64).max:
            return largest
    return None


def _value_array(data: ArrayLike) -> AnyArray:
    """float32/float64 relevance passes unchanged; other types (integers, bools, float16,
    non-native byte order: rare) are cast to float64."""
    data = np.asarray(data)
    if data.dtype in (np.float32, np.float64) and data.dtype.isnative:
        return data
    return data.astype(np.float64)


def _int_range(values: AnyArray) -> tuple[int, int]:
    """(smallest, largest) of a non-empty int32/int64 array. numpy's reductions read the
    array in place without a temporary, and their SIMD loop on one thread measured 3x
    faster than a parallel Numba scan (0.05 s against 0.18 s for 10^8 int32 ids)."""
    return int(values.min()), int(values.max())


def check_truth(truth: SparseMatrix, name: str = "truth", scan: bool = True) -> Truth:
    """Convert a scipy.sparse truth matrix to a checked canonical CSR (copying only if needed:
    float32/float64 values and int32/int64 indices of a canonical CSR are used in place).

    With scan=False a CSR matrix gets only the checks that read no entry (its type, shape,
    dtypes, and an indptr that starts at 0 and ends at the entries): the Truth says
    `scanned=False`, and `scan_truth` or a walk that checks what it reads (the ranking
    walk) must follow. Other formats are always scanned (scipy's converters trust their
    input)."""
    indptr, indices, data, (n_users, n_items), canonical = _csr_parts(
        truth, name, "relevance", scan=scan)
    data = _value_array(data)
    if canonical is None:
        return Truth(indptr=_index_array(indptr), indices=_index_array(indices), data=data,
                     n_users=n_users, n_items=n_items, scanned=False)
    return _finished(indptr, indices, data, n_users, n_items, canonical, name)


def scan_truth(data: Truth, name: str = "truth") -> Truth:
    """The checked canonical Truth of a `check_truth(scan=False)` one (itself if scanned):
    the scans of check_truth, which raise its errors."""
    if data.scanned:
        return data
    canonical = _scan_compressed(data.indptr, data.indices, name, data.n_users, data.n_items,
                                 "CSR")
    return _finished(data.indptr, data.indices, data.data, data.n_users, data.n_items,
                     canonical, name)


def _finished(indptr: AnyArray, indices: AnyArray, data: AnyArray, n_users: int, n_items: int,
              canonical: bool, name: str) -> Truth:
    """The Truth of a scanned CSR: its values checked finite, its rows made canonical."""
    if data.dtype.kind == "f":
        if not _all_finite(data):
            raise ValueError(
                f"{name} contains NaN or infinite relevance values; replace them (e.g. with "
                f"0 for non-relevant) before evaluating")
    if not canonical:
        indptr, indices, data = summed_copy(indptr, indices, data, (n_users, n_items))
        if data.dtype.kind == "f" and not _all_finite(data):
            raise ValueError(
                f"{name} has duplicate (user, item) entries whose relevance values sum "
                f"past the range of {data.dtype} (to an infinity); sum them yourself in "
                f"float64, or scale the values down, before evaluating")
    return Truth(indptr=_index_array(indptr), indices=_index_array(indices),
                 data=data, n_users=n_users, n_items=n_items)


def check_pattern(matrix: SparseMatrix, name: str,
                  shape: Sequence[int]) -> tuple[IntArray, AnyArray]:
    """The stored (user, item) pattern of a sparse matrix, values ignored: canonical CSR
    (indptr and sorted duplicate-free indices, int32 or int64 as given) of the given
    shape."""
    indptr, indices, _, got, canonical = _csr_parts(matrix, name, "any values: only the "
                                                                  "stored pattern counts")
    if got != tuple(shape):
        raise ValueError(
            f"{name} has shape {got} but must have shape {tuple(shape)} (users x items, as "
            f"the matrix or factors it goes with); build it with shape={tuple(shape)}")
    if not canonical:
        indptr, indices, _ = summed_copy(indptr, indices, np.ones(indices.shape[0], np.int8),
                                         got)
    return _index_array(indptr), _index_array(indices)


def summed_copy(indptr: AnyArray, indices: AnyArray, data: AnyArray,
                shape: tuple[int, int]) -> tuple[AnyArray, AnyArray, AnyArray]:
    """(indptr, indices, data) of a CSR with each row's indices sorted and repeated
    (row, column) entries summed, made on a copy: the caller's arrays are untouched."""
    canon = sp.csr_array((data.copy(), indices.copy(), indptr.copy()), shape=shape)
    canon.sum_duplicates()  # also sorts
    return canon.indptr, canon.indices, canon.data


def _csr_parts(matrix: SparseMatrix, name: str, values: str, axes: tuple[str, str] = (
        "user", "item"), scan: bool = True) -> tuple[AnyArray, AnyArray, AnyArray,
                                                     tuple[int, int], Any]:
    """Structure checks shared by truth and pattern inputs: (indptr, indices, data, shape,
    canonical), canonical meaning that every row's indices strictly increase (None for a
    CSR matrix with scan=False: its entries are not read, see check_truth).

    CSR arrays are checked where they are; CSC, COO and BSR matrices are checked before
    scipy converts them (its converters trust their input: a bad index corrupts memory),
    then converted once. The caller's matrix is never modified. `axes` names the rows and
    columns in messages."""
    rows, cols = axes
    if not sp.issparse(matrix):
        raise TypeError(
            f"{name} must be a scipy.sparse matrix or array ({rows}s x {cols}s, {values}); "
            f"got {type(matrix).__name__}. Build one with scipy.sparse.csr_array((values, "
            f"({rows}s, {cols}s)), shape=(n_{rows}s, n_{cols}s))")
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be 2-D ({rows}s x {cols}s); got {matrix.ndim} "
                         f"dimensions")
    numeric = np.issubdtype(matrix.dtype, np.integer) or np.issubdtype(matrix.dtype, np.floating)
    if matrix.dtype != np.bool_ and not numeric:
        raise TypeError(
            f"{name} values must be numeric {values}; got dtype {matrix.dtype}. "
            f"Cast with {name}.astype(np.float64)")
    n_users, n_items = matrix.shape
    fmt = matrix.format
    if fmt == "csr":
        indptr, indices, data, canonical = _compressed(matrix, name, n_users, n_items, "CSR",
                                                       scan)
        return indptr, indices, data, (n_users, n_items), canonical
    if fmt == "csc":
        _compressed(matrix, name, n_items, n_users, "CSC")
    elif fmt == "coo":
        _coordinates(matrix, name, n_users, n_items)
    elif fmt == "bsr":
        _blocks(matrix, name)
    converted = sp.csr_array(matrix)  # a new matrix: the caller's is untouched
    if fmt == "bsr":
        # a block stores its zeros, which no one judged: BSR (as DIA, whose conversion
        # drops them) has no stored zeros
        converted.eliminate_zeros()
    indptr, indices, data, canonical = _compressed(converted, name, n_users, n_items, "CSR")
    return indptr, indices, data, (n_users, n_items), canonical


def _compressed(matrix: SparseMatrix, name: str, n_outer: int, n_inner: int,
                kind: str, scan: bool = True) -> tuple[AnyArray, AnyArray, AnyArray, Any]:
    """Checked (indptr, indices, data, canonical) of a CSR (outer = rows) or CSC (outer =
    columns), scanned in place by parallel kernels; canonical: every outer slice's
    indices strictly increase. With scan=False only the checks that read no entry are
    made, and canonical is None."""
    indptr = np.asarray(matrix.indptr)
    indices = np.asarray(matrix.indices)
    data = np.asarray(matrix.data)
    rebuild = f"rebuild it with scipy.sparse.{kind.lower()}_array"
    if indptr.ndim != 1 or indptr.shape[0] != n_outer + 1:
        raise ValueError(
            f"{name} is a malformed {kind} matrix: indptr has {indptr.shape[0]} entries, "
            f"expected {n_outer + 1}; {rebuild}")
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise TypeError(f"{name} is a malformed {kind} matrix: indptr and indices must be "
                        f"integers; {rebuild}")
    if indices.ndim != 1 or data.ndim != 1 or indices.shape[0] != data.shape[0]:
        raise ValueError(
            f"{name} is a malformed {kind} matrix: indices ({indices.shape}) and data "
            f"({data.shape}) must be 1-D of one length; {rebuild}")
    # scanned as int32/int64 (another integer type is converted: rare), in place
    indptr, indices = _index_array(np.ascontiguousarray(indptr)), \
        _index_array(np.ascontiguousarray(indices))
    if int(indptr[0]) != 0:
        raise ValueError(_decreasing(name, kind))
    if not scan and int(indptr[-1]) == indices.shape[0]:
        return indptr, indices, data, None
    # (an indptr that ends elsewhere is scanned: a decreasing one is the error to name)
    return indptr, indices, data, _scan_compressed(indptr, indices, name, n_outer, n_inner,
                                                   kind)


def _decreasing(name: str, kind: str) -> str:
    return (f"{name} is a malformed {kind} matrix: indptr must start at 0 and never "
            f"decrease; rebuild it with scipy.sparse.{kind.lower()}_array")


def _scan_compressed(indptr: AnyArray, indices: AnyArray, name: str, n_outer: int,
                     n_inner: int, kind: str) -> bool:
    """The parallel scan of a compressed matrix whose indptr starts at 0 (int32 or int64,
    as indices): whether it is canonical (every outer slice's indices strictly
    increase), or the error of a decreasing indptr, an indptr that ends elsewhere than at
    the entries, or an index outside [0, n_inner)."""
    from ._kernels import frames
    from ._kernels.checks import scan_rows

    rebuild = f"rebuild it with scipy.sparse.{kind.lower()}_array"
    nnz = int(indptr[-1])
    scan = np.empty((_n_chunks(n_outer, n_outer + indices.shape[0]), 4), np.int64)
    with parallel_turn():
        frames.run(frames.walk(scan_rows, indptr.dtype.type, indices.dtype.type),
                   frames.Frame(indptr, indices, scan), scan.shape[0])
    if scan[:, 3].any():
        raise ValueError(_decreasing(name, kind))
    if nnz != indices.shape[0]:
        raise ValueError(
            f"{name} is a malformed {kind} matrix: indptr ends at {nnz} but there are "
            f"{indices.shape[0]} stored entries; {rebuild} (or call {name}.prune())")
    if nnz:
        lo, hi = int(scan[:, 0].min()), int(scan[:, 1].max())
        if lo < 0 or hi >= n_inner:
            axis = "column" if kind == "CSR" else "row"
            raise ValueError(
                f"{name} is a malformed {kind} matrix: {axis} indices must lie in "
                f"[0, {n_inner}); found {lo if lo < 0 else hi}; {rebuild}")
    return not scan[:, 2].any()


def _coordinates(matrix: SparseMatrix, name: str, n_users: int, n_items: int) -> None:
    """Check a COO matrix's row and column arrays before scipy converts it."""
    data = np.asarray(matrix.data)
    coords = getattr(matrix, "coords", None) or (matrix.row, matrix.col)
    for axis, values, n in zip(("row", "col"), coords, (n_users, n_items)):
        values = np.asarray(values)
        if values.dtype.kind not in "iu":
            raise TypeError(f"{name} is a malformed COO matrix: {axis} indices must be "
                            f"integers; rebuild it with scipy.sparse.coo_array")
        if values.shape != data.shape:
            raise ValueError(
                f"{name} is a malformed COO matrix: {axis} has {values.shape[0]} entries "
                f"but data has {data.shape[0]}; rebuild it with scipy.sparse.coo_array")
        if values.size:
            lo, hi = int(values.min()), int(values.max())
            if lo < 0 or hi >= n:
                raise ValueError(
                    f"{name} is a malformed COO matrix: {axis} indices must lie in [0, {n}); "
                    f"found {lo if lo < 0 else hi}; rebuild it with scipy.sparse.coo_array")


def _blocks(matrix: SparseMatrix, name: str) -> None:
    """Check a BSR matrix's structure (on a copy: scipy's check prunes in place)."""
    try:
        sp.bsr_array(matrix, copy=True).check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as err:
        raise ValueError(f"{name} is a malformed BSR matrix ({err}); rebuild it with "
                         f"scipy.sparse.bsr_array") from None


def check_topk(topk: ArrayLike, n_items: int, scan: bool = True) -> AnyArray:
    """Check the (n_rows, K) id array: integer, 2-D, K >= 1, ids in [-1, n_items). A
    C-contiguous int32/int64 array (memory-mapped or read-only too) is used as it is.
    With scan=False the ids are not read: `check_ids`, or a walk that checks every id it
    reads (the ranking walk), must follow."""
    topk = _int_array(topk, "topk", "item ids (n_users x K)")
    if topk.ndim != 2:
        raise ValueError(
            f"topk must be 2-D (one row of K item ids per user); got {topk.ndim} dimensions. "
            f"Reshape a single list with topk.reshape(1, -1)")
    if topk.shape[1] < 1:
        raise ValueError("topk has no columns; each row needs at least one item id (K >= 1)")
    # the kernels read C-contiguous int32/int64 ids: a strided view or another integer
    # type (rare) is copied
    huge = _past_int64(topk)
    if huge is not None:
        raise ValueError(_id_outside(huge, n_items))
    topk = _index_array(np.ascontiguousarray(topk))
    return check_ids(topk, n_items) if scan else topk


def check_ids(topk: AnyArray, n_items: int) -> AnyArray:
    """topk (int32 or int64, as check_topk returns it) once its ids are checked to lie in
    [-1, n_items)."""
    if topk.size:
        lo, hi = _int_range(topk)
        if lo < -1 or hi >= n_items:
            raise ValueError(_id_outside(lo if lo < -1 else hi, n_items))
    return topk


def _id_outside(bad: int, n_items: int) -> str:
    return (f"topk contains item id {bad}, outside [-1, {n_items}) for truth with "
            f"{n_items} items; use -1 only to pad short lists")


def _int_array(values: ArrayLike, name: str, what: str) -> AnyArray:
    """values as a numpy integer array (not bool, not timedelta), or an error naming it."""
    if sp.issparse(values):
        raise TypeError(f"{name} must be a dense integer array of {what}; got a scipy.sparse "
                        f"{getattr(values, 'format', '').upper()} matrix")
    if not isinstance(values, np.ndarray):
        try:
            values = np.asarray(values)
        except ValueError:
            raise ValueError(f"{name} is ragged: it must be a rectangular array of {what}") \
                from None
        if values.size == 0 and values.dtype == np.float64:
            values = values.astype(np.int64)  # `[]`: numpy's float64, not the caller's choice
    if values.dtype.kind in "USO":  # ids as strings (or objects): they need numbering
        raise TypeError(
            f"{name} must be an integer array of {what}; got dtype {values.dtype}. Ids that "
            f"are not numbers need numbering first: fastrank.io.from_tables numbers the ids "
            f"of tables of (user, item) rows")
    if values.dtype == np.bool_ or values.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must be an integer array of {what}; got dtype {values.dtype}. Cast with "
            f"{name}.astype(np.int64) after checking that the values are whole numbers")
    if not values.dtype.isnative:
        values = values.astype(values.dtype.newbyteorder("="))
    return values


def check_users(users: ArrayLike | None, n_rows: int, n_truth_rows: int) -> AnyArray:
    """The truth row of each top-K row: int32/int64 as given, int64 0..n_rows-1 when None."""
    if users is None:
        if n_rows != n_truth_rows:
            raise ValueError(
                f"topk has {n_rows} rows but truth has {n_truth_rows}; pass users= to map "
                f"each topk row to its truth row")
        return np.arange(n_rows, dtype=np.int64)
    users = check_rows(users, "users", n_truth_rows, "the rows of truth")
    if users.shape[0] != n_rows:
        raise ValueError(
            f"users must be 1-D with one truth row per topk row ({n_rows}); got shape "
            f"{users.shape}")
    return users


def check_rows(values: ArrayLike, name: str, n: int, what: str) -> AnyArray:
    """A 1-D integer array of row numbers in [0, n): int32/int64 as given (contiguous),
    other integer types as int64; errors name the argument and the first offending row."""
    values = _int_array(values, name, f"row numbers ({what})")
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D row numbers ({what}); got shape {values.shape}")
    bad = _past_int64(values)
    values = _index_array(np.ascontiguousarray(values))
    if bad is None and values.size:
        lo, hi = _int_range(values)
        bad = lo if lo < 0 else hi if hi >= n else None
    if bad is not None:
        raise ValueError(f"{name} contains {bad}, outside [0, {n}), {what}")
    return values


def rows_or_all(values: ArrayLike | None, name: str, n: int, what: str) -> IntArray:
    """check_rows, with None meaning every row 0..n-1 in order."""
    if values is None:
        return np.arange(n, dtype=np.int64)
    return check_rows(values, name, n, what)


def check_bool(value: object, name: str) -> bool:
    """value as a bool; anything but True, False or a numpy bool is a TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_number(value: object, name: str) -> float:
    """value as a finite float; a bool, a non-number, NaN or inf is an error naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number; got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    return value


def check_unit(value: object, name: str) -> float:
    """value as a float in [0, 1] (a weight or a probability such as alpha)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1]; got {type(value).__name__}")
    value = float(value)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"{name} must lie in [0, 1]; got {value}")
    return value


def check_level(level: object) -> float:
    """A confidence level strictly between 0 and 1, as a float."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) \
            or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number strictly between 0 and 1, such as 0.95; "
                         f"got {level!r}")
    return float(level)


def check_choice(value: _T, name: str, choices: Sequence[object]) -> _T:
    """value if it is one of `choices` (strings, and None where allowed)."""
    listing = ", ".join(map(repr, choices))
    if value is None and None in choices:
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {listing}; got {value!r} of type "
                        f"{type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {listing}; got {value!r}")
    return value


def check_seed(seed: _T) -> _T:
    """seed unchanged if it is None or an int (a numpy integer too) in [0, 2**63): a
    TypeError for another type, a ValueError outside (numpy refuses negative seeds too,
    and a seed past 2**63 would repeat a smaller one's draws)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed must be an int or None, such as 0 (or None for a fresh "
                        f"random seed); got {seed!r} of type {type(seed).__name__}")
    if seed is not None and not 0 <= int(seed) < 2**63:
        raise ValueError(f"seed must be an int in [0, 2**63), such as 0 (or None for a fresh "
                         f"random seed); got {seed}")
    return seed


def check_count(n: object, name: str, minimum: int = 1, typical: object = None) -> int:
    """n as an int of at least `minimum` (a count of resamples, permutations, ...)."""
    typical = f", such as {typical}" if typical is not None else ""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an int of at least {minimum}{typical}; got {n!r} "
                        f"of type {type(n).__name__}")
    if n < minimum:
        raise ValueError(f"{name} must be an int of at least {minimum}{typical}; got {n!r}")
    return int(n)


# The largest count or length any argument may take: kernels index with int64.
LARGEST_INT = 2 ** 62


def check_int(value: object, name: str, minimum: int = 1, hint: str = "") -> int:
    """value as a Python int in [minimum, 2**62]; TypeError / ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}{hint}; got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}{hint}; got {value}")
    if value > LARGEST_INT:
        raise ValueError(f"{name} must be at most 2**62; got {value}")
    return int(value)


def physical_memory() -> int | None:
    """Bytes of memory of this machine, or None where the system does not say."""
    try:
        page, pages = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        return None
    return page * pages if page > 0 and pages > 0 else None  # -1: not known


def address_space_limit() -> int | None:
    """The process's address-space limit in bytes (ulimit -v), or None when unlimited."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError, AttributeError):  # not POSIX
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def check_memory(n_bytes: int, what: str, fix: str) -> None:
    """Refuse an allocation of n_bytes that could not fit in half of this machine's memory
    (or of the process's address-space limit, if lower): a clear error instead of a
    MemoryError (or numba's SystemError) deep inside."""
    total, place = physical_memory(), "this machine's"
    limit = address_space_limit()
    if limit is not None and (total is None or limit < total):
        total, place = limit, "this process's address-space limit of"
    if total is not None and n_bytes > total // 2:
        raise ValueError(f"{what} would need {_size(n_bytes)}, more than half of {place} "
                         f"{_size(total)}; {fix}")


# the most a kernel spends on optional per-item scratch (marks that save a search)
_OPTIONAL_SCRATCH = 1 << 28


def optional_scratch(n_items: int, bytes_per_item: int, copies: int) -> int:
    """n_items when per-item scratch for `copies` ranges fits in 256 MB, else 0 (the
    kernel then searches instead of marking)."""
    need = int(n_items) * bytes_per_item * max(int(copies), 1)
    return int(n_items) if need <= _OPTIONAL_SCRATCH else 0


# how to shrink a catalogue declared far beyond the items used (the kernels' markers)
RENUMBER_ITEMS = ("number the items that occur 0..n-1 (e.g. with np.unique(ids, "
                  "return_inverse=True)) and build the matrices with that many columns")


def check_scratch(n_items: int, bytes_per_item: int, copies: int, name: str = "truth") -> None:
    """The kernels keep a marker per item for each range of users they run: refuse a
    catalogue whose markers cannot fit (a declared shape far beyond the items used)."""
    check_memory(int(n_items) * bytes_per_item * max(int(copies), 1),
                 f"{name} has {int(n_items):,} columns (items): the kernel's per-item "
                 f"markers ({bytes_per_item} bytes per item for each of {max(copies, 1)} "
                 f"ranges of users)", RENUMBER_ITEMS)


@contextmanager
def memory_guard(what: str) -> Iterator[None]:
    """Turn a failed allocation of a kernel or of its scratch (numba raises SystemError,
    caused by MemoryError; numpy a MemoryError) into a ValueError saying what ran out: the
    checks above refuse what cannot fit, this catches what other processes left too
    little room for."""
    try:
        yield
    except MemoryError:  # numpy's allocation of a kernel's scratch
        raise out_of_memory(what) from None
    except SystemError as err:
        if not isinstance(err.__cause__, MemoryError):
            raise
        raise out_of_memory(what) from None


def out_of_memory(what: str) -> ValueError:
    """The error of a kernel whose per-item markers could not be allocated."""
    return ValueError(f"{what} ran out of memory for its per-item markers; free memory, "
                      f"use fewer threads (n_threads=1), or number the items that occur "
                      f"0..n-1")


def _size(n_bytes: float) -> str | None:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n_bytes < 1024 or unit == "PiB":
            return f"{n_bytes:.3g} {unit}" if unit != "bytes" else f"{n_bytes} bytes"
        n_bytes /= 1024
    return None  # pragma: no cover - the loop always returns
