"""A BLAS matrix product for the kernels, without `np.dot`'s checks.

numba's `np.dot(a, b, out)` checks the shapes and builds its error message in compiled
code (`raise_with_shape_context`, `str`): 1.8 s of a first call of the factors path. The
kernels size every operand themselves, so `gemm_into` calls the BLAS routine numba's
`np.dot` calls (scipy's, through numba's helper library), with nothing to raise. (A slice
assignment, `a[i, :] = b[j, :]`, compiles the same error path: the kernels copy rows
element by element.)
"""

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import njit

try:  # numba's own BLAS call, as its np.dot lowers it
    from numba.np.linalg import call_xxgemm, ensure_blas
except ImportError:  # pragma: no cover - a numba that moved it: np.dot, checks and all
    call_xxgemm = None


@intrinsic
def gemm_into(typingctx, a, b, out):
    """out[...] = a @ b, for a (m x k) and out (m x n) C-contiguous and b (k x n) C- or
    F-contiguous (a transposed row block is F), one float dtype, k >= 1 (BLAS refuses a
    leading dimension of 0)."""
    arrays = (a, b, out)
    if not all(isinstance(t, types.Array) and t.ndim == 2 for t in arrays):
        return None
    if a.layout != "C" or out.layout != "C" or b.layout not in ("C", "F"):
        return None
    if a.dtype not in (types.float32, types.float64) or not a.dtype == b.dtype == out.dtype:
        return None
    ensure_blas()

    def codegen(context, builder, signature, args):
        x, y, z = (context.make_array(t)(context, builder, value)
                   for t, value in zip(signature.args, args))
        call_xxgemm(context, builder,
                    a, cgutils.unpack_tuple(builder, x.shape, 2), x.data,
                    b, cgutils.unpack_tuple(builder, y.shape, 2), y.data,
                    out, cgutils.unpack_tuple(builder, z.shape, 2), z.data)
        return context.get_dummy_value()

    return types.none(a, b, out), codegen


_DIRECT = call_xxgemm is not None


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def product_into(a, b, out):
    """out[...] = a @ b (as gemm_into), zeros where a has no columns."""
    if a.shape[1] == 0 or out.shape[0] == 0 or out.shape[1] == 0:
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = 0.0
    elif _DIRECT:
        gemm_into(a, b, out)
    else:  # pragma: no cover
        np.dot(a, b, out)
