"""The rank discounts every DCG reads: 1 / log2(i + 1), shared read-only for short lists."""

import numpy as np
import pytest

from fastrank import discounts as module
from fastrank.discounts import discounts


@pytest.mark.parametrize("length", [1, 10, module._SHARED, module._SHARED + 1])
def test_discounts_are_one_over_log2_of_rank_plus_one(length):
    disc = discounts(length)
    assert disc.shape == (length,) and disc.dtype == np.float64
    ranks = np.arange(1, length + 1, dtype=np.float64)
    np.testing.assert_array_equal(disc, 1.0 / np.log2(ranks + 1))
    assert disc[0] == 1.0


def test_short_discounts_are_shared_and_cannot_be_written():
    first = discounts(10)
    assert discounts(10) is first  # computed once
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 2.0
    long = discounts(module._SHARED + 1)  # long lists get their own, as before
    assert long.flags.writeable and discounts(module._SHARED + 1) is not long
