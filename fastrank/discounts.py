"""The rank discount of every DCG: d(i) = 1 / log2(i + 1)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def discounts(length: int) -> NDArray[np.float64]:
    """d(i) = 1 / log2(i + 1) for ranks i = 1..length, as an array indexed from 0."""
    return 1.0 / np.log2(np.arange(2, length + 2, dtype=np.float64))
