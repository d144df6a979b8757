"""Keep BLAS single-threaded while numba workers call it.

The fused kernels call BLAS (through numba's `np.dot`) from inside their own parallel
workers, one block of users per worker. A multi-threaded BLAS would then start threads
of its own on a machine whose cores are already busy; the result is the same, but the
two thread pools fight and the time can grow tenfold. threadpoolctl finds whichever
BLAS is loaded (OpenBLAS, MKL, BLIS, FlexiBLAS) and sets it to one thread for the
duration, restoring the caller's setting afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_controller: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    global _controller
    from threadpoolctl import ThreadpoolController

    if _controller is None:
        import scipy.linalg.cython_blas  # noqa: F401  (the BLAS numba's np.dot calls)

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
