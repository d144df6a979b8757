"""Type aliases of the public API (for annotations only: nothing here runs).

scipy.sparse ships no type stubs, so a sparse matrix is `Any` to the type checker; the
facade checks it at run time (fastrank.validation)."""

from __future__ import annotations

import os
from typing import Any, BinaryIO, TypeAlias

import numpy as np
from numpy.typing import NDArray

# a scipy.sparse matrix or array (csr, csc, coo, ...): no stubs, so Any
SparseMatrix: TypeAlias = Any
# a data frame of pandas, pyarrow or polars (none has stubs that all versions ship)
DataFrame: TypeAlias = Any

FloatArray: TypeAlias = NDArray[np.float64]
IntArray: TypeAlias = NDArray[np.int64]
BoolArray: TypeAlias = NDArray[np.bool_]
# an implicit-style model (implicit's ALS, BPR, LMF, or anything with `recommend` or
# user_factors and item_factors): duck-typed, and implicit ships no stubs
Model: TypeAlias = Any
# an array of any dtype (ids of any kind, or where the dtype follows the input)
AnyArray: TypeAlias = NDArray[Any]
# a file name: str or os.PathLike (pathlib.Path)
PathLike: TypeAlias = "str | os.PathLike[str]"
# where a plot is written: a file name whose suffix names the format, a binary file object,
# or None (not written)
PlotPath: TypeAlias = "str | os.PathLike[str] | BinaryIO | None"
