"""The pool of scratch buffers lent to walks and kept between calls (fastrank.scratch)."""

import os

import numpy as np
import pytest

from fastrank import scratch


@pytest.fixture
def empty_pool(monkeypatch):
    monkeypatch.setattr(scratch, "_free", [])
    monkeypatch.setattr(scratch, "_lent", set())
    return scratch


def test_a_buffer_given_back_is_lent_again_for_what_fits(empty_pool):
    a = empty_pool.lend(1000, np.int64)
    assert a.dtype == np.int64 and a.shape == (1000,) and a.flags.c_contiguous
    empty_pool.give(a)
    b = empty_pool.lend(500, np.float64)  # fits in the same buffer
    assert b.dtype == np.float64 and b.shape == (500,) and np.shares_memory(a, b)
    c = empty_pool.lend(2000, np.int64)  # does not: a new buffer, while b is out
    assert not np.shares_memory(b, c)
    with empty_pool.borrowed((10, np.int32), (3, np.float64)) as (x, y):
        assert x.shape == (10,) and y.shape == (3,) and not np.shares_memory(x, y)
    assert len(empty_pool._free) == 2  # x's and y's buffers are back; b and c still out


def test_the_pool_keeps_at_most_its_limit(empty_pool, monkeypatch):
    monkeypatch.setattr(scratch, "_LIMIT", 10_000)
    big = empty_pool.lend(2_000, np.int64)  # 16,000 bytes: freed, not kept
    empty_pool.give(big)
    assert empty_pool._free == []
    arrays = [empty_pool.lend(600, np.int64) for _ in range(3)]  # 4,800 bytes each
    for array in arrays:
        empty_pool.give(array)
    assert sum(b.nbytes for b in empty_pool._free) <= 10_000
    assert len(empty_pool._free) == 2


def test_nothing_to_lend_takes_no_buffer_and_keeps_tells_the_limit(empty_pool, monkeypatch):
    a = empty_pool.lend(10, np.int64)
    empty_pool.give(a)
    with empty_pool.borrowed((0, np.float64)) as (none,):
        assert none.shape == (0,) and len(empty_pool._free) == 1
    assert len(empty_pool._free) == 1
    monkeypatch.setattr(scratch, "_LIMIT", 10_000)
    assert empty_pool.keeps(10_000) and not empty_pool.keeps(10_001)


def test_an_array_not_lent_is_not_taken_nor_one_given_twice(empty_pool):
    empty_pool.give(np.zeros(100))
    empty_pool.give(np.zeros(100, np.uint8)[10:])
    assert empty_pool._free == []
    a = empty_pool.lend(10, np.int64)
    empty_pool.give(a)
    empty_pool.give(a)
    assert len(empty_pool._free) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_can_lend_while_the_parent_holds_the_lock(empty_pool):
    with scratch._lock:
        pid = os.fork()
        if pid == 0:  # the child: a fresh lock, or this would wait forever
            a = scratch.lend(8, np.int64)
            scratch.give(a)
            os._exit(0 if len(scratch._free) == 1 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_smallest_buffer_that_fits_is_lent(empty_pool):
    sizes = [4000, 1000, 2000]
    arrays = [empty_pool.lend(n, np.uint8) for n in sizes]
    for array in arrays:
        empty_pool.give(array)
    assert [b.nbytes for b in empty_pool._free] == [1000, 2000, 4000]  # smallest first
    got = empty_pool.lend(1500, np.uint8)
    assert np.shares_memory(got, arrays[2])  # the 2,000-byte buffer, not the 4,000
    assert [b.nbytes for b in empty_pool._free] == [1000, 4000]
