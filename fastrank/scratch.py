"""Scratch memory that a walk's ranges borrow and return, kept between calls.

A walk's per-range scratch allocated on every call comes back as fresh pages: the
allocator returns a large free block to the system (glibc trims a heap whose free top
passes its threshold) and the next call faults every page in again, zeroed by the
kernel. For a call that takes milliseconds this is not small: shape B of αβ-nDCG (200
users, 27,000 items, 5,000 aspects) faulted in 1.9 MB of the ideal's scratch on every
call, half a millisecond of its 18 on two threads, most of it on one thread while the
other waited.

`borrowed` hands out arrays from buffers kept here (at most _LIMIT bytes in all, across
threads: a buffer is taken out of the pool while it is lent) and takes them back when the
call ends. Their contents are whatever the last borrower left: a walk initialises what it
reads.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import Any

import numpy as np

# bytes of buffers kept between calls; a larger buffer is freed when its call ends (a call
# that needs that much scratch has work enough that its page faults do not matter)
_LIMIT = 64 << 20

_lock = threading.Lock()
_free: list[np.ndarray] = []  # uint8 buffers, not lent, smallest first
_lent: set[int] = set()  # ids of the buffers out on loan


def _after_fork() -> None:
    """A child forked while another thread held the lock would wait on it forever."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork)


def _take(n_bytes: int) -> np.ndarray:
    """The smallest free buffer of at least n_bytes (> 0), or a new one; lent."""
    with _lock:
        for j, buf in enumerate(_free):  # smallest first: the first that fits
            if buf.nbytes >= n_bytes:
                del _free[j]
                break
        else:
            buf = np.empty(n_bytes, np.uint8)
        _lent.add(id(buf))
    return buf


def _give(buf: np.ndarray) -> None:
    with _lock:
        if id(buf) not in _lent:  # not lent here (or given back twice)
            return
        _lent.discard(id(buf))
        if not keeps(buf.nbytes):
            return
        bisect.insort(_free, buf, key=_SIZE)
        kept = sum(map(_SIZE, _free))
        while kept > _LIMIT:
            kept -= _free.pop().nbytes  # the largest first


_SIZE = attrgetter("nbytes")


def keeps(n_bytes: int) -> bool:
    """Whether a buffer of n_bytes would be kept between calls (else it is freed when
    given back, and a walk may do better with zero pages of its own)."""
    return n_bytes <= _LIMIT


def lend(n: int, dtype: Any) -> np.ndarray:
    """A 1-D array of n items of dtype, uninitialised, to `give` back when done with."""
    n_bytes = int(n) * np.dtype(dtype).itemsize
    if n_bytes == 0:  # nothing to lend: no buffer leaves the pool
        return np.empty(0, dtype)
    return _take(n_bytes)[:n_bytes].view(dtype)


def give(array: np.ndarray) -> None:
    """Take back an array from `lend` (the caller must not use it afterwards)."""
    owner = array.base
    if isinstance(owner, np.ndarray):
        _give(owner)


@contextmanager
def borrowed(*wants: tuple[int, Any]) -> Iterator[tuple[np.ndarray, ...]]:
    """1-D arrays of (length, dtype) each, uninitialised, for the length of the block."""
    arrays = tuple(lend(n, dtype) for n, dtype in wants)
    try:
        yield arrays
    finally:
        for array in arrays:
            give(array)
