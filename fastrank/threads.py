"""Threads: numba's thread count for one call, and how many user ranges to run.

Every parallel entry point (`evaluate`, `Evaluator`, `evaluate_factors`, `fastrank trec`,
the bootstrap, the list grouping of the readers) runs its kernels inside
`numba_threads(n_threads)` and splits its users with `n_ranges`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import numpy as np

# Ranges of users per thread where the threading layer hands ranges out as threads come
# free (TBB): a few per thread even out the load; each range allocates and clears its own
# O(n_items) scratch once. numba's OpenMP and workqueue layers split a prange's iterations
# evenly between the threads up front (numba issue 2556), so there more ranges than
# threads balance nothing and only allocate more scratch: one range per thread.
_CHUNKS_PER_THREAD = 4
_STATIC_LAYERS = ("omp", "workqueue")


def _ranges_per_thread() -> int:
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet, so no layer is chosen
        return _CHUNKS_PER_THREAD
    return 1 if layer in _STATIC_LAYERS else _CHUNKS_PER_THREAD


def n_ranges(n_rows: int, threads: int, work: int, n_items: int) -> int:
    """How many user ranges to run: one per thread, or a few where the threading layer
    balances them (see _CHUNKS_PER_THREAD), but never so many that clearing each range's
    n_items scratch costs more than the work itself (few users, huge catalogue), and at
    least one per thread while there are rows."""
    by_work = max(threads, work // max(n_items, 1))
    return min(n_rows, _ranges_per_thread() * threads, by_work)


def check_n_threads(n_threads: object, max_threads: int | None = None) -> int | None:
    if n_threads is None:
        return None
    if max_threads is None:
        import numba

        max_threads = numba.config.NUMBA_NUM_THREADS
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)):
        raise TypeError(f"n_threads must be an int or None; got {type(n_threads).__name__}")
    if not 1 <= n_threads <= max_threads:
        raise ValueError(
            f"n_threads must be between 1 and {max_threads} (numba's NUMBA_NUM_THREADS); "
            f"got {n_threads}")
    return int(n_threads)


@contextmanager
def numba_threads(n_threads: int | None) -> Iterator[int]:
    """Run the block with numba's thread count set to n_threads (None: leave it); the
    count is per Python thread. Where numba's threading layer is its own workqueue (no
    OpenMP or TBB on the machine), which aborts the process when two Python threads run
    parallel kernels at once, the blocks of concurrent callers take turns."""
    import numba  # loaded on the first parallel call, not at import

    n_threads = check_n_threads(n_threads, numba.config.NUMBA_NUM_THREADS)
    with _turns(numba):
        if n_threads is None:
            yield numba.get_num_threads()
            return
        previous = numba.get_num_threads()
        if previous == n_threads:  # (setting it takes numba's launch lock: not for nothing)
            yield n_threads
            return
        numba.set_num_threads(n_threads)
        try:
            yield n_threads
        finally:
            numba.set_num_threads(previous)


def parallel_turn() -> AbstractContextManager[Any]:
    """Hold the turn (see numba_threads) for a parallel kernel run outside numba_threads,
    such as the input checks, at numba's current thread count."""
    import numba

    return _turns(numba)


_TURNS = threading.RLock()
_NO_TURN = nullcontext()


def _turns(numba: Any) -> AbstractContextManager[Any]:
    """The turn lock while the threading layer is the workqueue, or not yet chosen (the
    first parallel call chooses it); else nothing to hold. (The lock or a shared no-op,
    not a generator: several are entered on the clock of every call.)"""
    try:
        serial = numba.threading_layer() == "workqueue"
    except ValueError:  # not initialised yet
        serial = True
    return _TURNS if serial else _NO_TURN
