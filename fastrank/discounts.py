"""The rank discount of every DCG: d(i) = 1 / log2(i + 1)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

# lengths up to this are computed once and shared (read-only): a call's cutoffs are short,
# and recomputing a few hundred logarithms took tens of microseconds of a small call
_SHARED = 1 << 12


def discounts(length: int) -> NDArray[np.float64]:
    """d(i) = 1 / log2(i + 1) for ranks i = 1..length, as an array indexed from 0
    (read-only up to _SHARED ranks: shared between calls)."""
    if length <= _SHARED:
        return _shared(int(length))
    return _computed(length)


@lru_cache(maxsize=64)
def _shared(length: int) -> NDArray[np.float64]:
    disc = _computed(length)
    disc.flags.writeable = False
    return disc


def _computed(length: int) -> NDArray[np.float64]:
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))
