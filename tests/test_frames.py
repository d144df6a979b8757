"""The shared parallel driver: a walk reads back from its frame exactly the arrays and
numbers the facade put in it (any dtype, a block of columns, floats by their bits), and
a frame refuses an array the walk could not read in place."""

import numpy as np
import pytest
from numba import njit

from fastrank._kernels import frames
from fastrank._kernels.frames import cube, integer, matrix, number, real, strided, vector


def _copy_walk(value_type, matrix_type):
    """A walk whose range of rows copies values, matrix rows and two numbers into a block
    of columns of `out`."""

    @njit(cache=False)
    def walk(chunk, n_chunks, frame):
        values = vector(frame, 0, value_type)
        table = matrix(frame, 1, matrix_type)
        shift = integer(frame, 2)
        scale = real(frame, 3)
        out = strided(frame, 4, np.float64)
        n = values.shape[0]
        for i in range((chunk * n) // n_chunks, ((chunk + 1) * n) // n_chunks):
            out[0, i] = values[i] * scale + shift
            out[1, i] = table[i, 0] + table[i, table.shape[1] - 1]
        return np.int64(1)

    return walk


@pytest.mark.parametrize("value_type, matrix_type", [(np.float32, np.int32),
                                                     (np.float64, np.int64)])
@pytest.mark.parametrize("n_chunks", [1, 3])
def test_a_walk_reads_its_arguments_from_the_frame(value_type, matrix_type, n_chunks):
    rng = np.random.default_rng(0)
    values = rng.random(7).astype(value_type)
    table = rng.integers(-5, 5, (7, 4)).astype(matrix_type)
    table.flags.writeable = False  # read in place, read-only too
    whole = np.full((3, 12), -1.0)
    block = whole[:2, 3:10]  # a block of columns: rows 12 items apart
    frame = frames.Frame(values, table, 4, 0.25, frames.Rows(block))
    walk = frames.walk(_copy_walk, value_type, matrix_type)
    assert (frames.run(walk, frame, n_chunks) == 1).all()
    np.testing.assert_array_equal(block[0], values.astype(np.float64) * 0.25 + 4)
    np.testing.assert_array_equal(block[1], table[:, 0] + table[:, 3])
    assert (whole[2] == -1).all() and (whole[:, :3] == -1).all() and (whole[:, 10:] == -1).all()


def test_a_cube_and_numbers_of_either_kind():
    """A 3-D array is read whole; `number` reads an int or a float as the frame holds it
    (Frame.dtypes says which), so a walk made from the frame's dtypes reads either."""

    def walk_of(dtypes):
        @njit(cache=False)
        def walk(chunk, n_chunks, frame):
            values = cube(frame, 0, dtypes[0])
            scale = number(frame, 1, dtypes[1])
            out = vector(frame, 2, dtypes[2])
            out[0] = values[1, 2, 3] * scale
            out[1] = values.shape[0] * 100 + values.shape[1] * 10 + values.shape[2]
            return np.int64(1)

        return walk

    values = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for scale in (3, 0.5):
        out = np.zeros(2)
        frame = frames.Frame(values, scale, out)
        assert frames.run(frames.walk(walk_of, frame.dtypes), frame, 1).all()
        assert out.tolist() == [values[1, 2, 3] * scale, 234]


def test_a_frame_reads_a_strided_input_from_a_copy_and_refuses_what_no_walk_reads():
    strided_input = np.arange(10)[::2]
    frame = frames.Frame(strided_input, np.asfortranarray(np.ones((3, 4))))
    assert frame.values[0].flags.c_contiguous and frame.values[1].flags.c_contiguous
    assert frame.values[0].tolist() == [0, 2, 4, 6, 8]
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        frames.Frame(np.zeros((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="contiguous rows"):
        frames.Frame(frames.Rows(np.zeros((4, 6))[:, ::2]))
    # an empty block of any strides is nothing to read
    frames.Frame(frames.Rows(np.zeros((0, 3))[:, ::2]))


@pytest.mark.parametrize("n_chunks", [1, 2, 5])
def test_what_each_range_returns_comes_back_on_either_path(n_chunks):
    """One range runs on the calling thread, several under prange: either way run()
    hands back each range's own return value (1, 0 for scratch that failed, or a code)."""

    def coded():
        @njit(cache=False)
        def walk(chunk, n_chunks, frame):
            out = vector(frame, 0, np.int64)
            out[chunk] = n_chunks
            return chunk + 5

        return walk

    out = np.zeros(n_chunks, np.int64)
    done = frames.run(frames.walk(coded), frames.Frame(out), n_chunks)
    assert done.tolist() == list(range(5, 5 + n_chunks))
    assert (out == n_chunks).all()
    # a range on the calling thread still lets other Python threads run (as prange does)
    assert frames.run_ranges.targetoptions["nogil"]


def test_a_frame_holds_each_array_at_numpy_s_own_address(tmp_path, monkeypatch):
    """The frame reads an array's address from numpy's struct (the fast path on CPython);
    it must be the address numpy itself reports for every kind of array a facade passes,
    and the ctypes path, taken where the struct read disagrees, must say the same."""
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    frozen = np.arange(5, dtype=np.int32)
    frozen.flags.writeable = False
    mapped = np.lib.format.open_memmap(tmp_path / "m.npy", mode="w+", dtype=np.int64,
                                       shape=(7,))
    arrays = [base, base[2:], base[3], frozen, np.empty(0), np.zeros((0, 0)), mapped,
              np.zeros((2, 3, 4), np.int8), np.asarray(frozen)]
    assert frames._address is frames._header_address  # CPython: the fast path is taken
    for array in arrays:
        cells = frames.Frame(array).cells
        assert cells[0] == array.ctypes.data == frames._ctypes_address(array)
    rows = base[:, 2:7]  # a block of columns: its address is its first item's
    assert frames.Frame(frames.Rows(rows)).cells[0] == rows.ctypes.data
    # where the struct read disagrees with numpy (another layout), ctypes is used
    monkeypatch.setattr(frames, "_HEADER", frames._HEADER + 8)
    assert frames._pick_address() is frames._ctypes_address
    # and a frame built on that path holds the same cells
    monkeypatch.setattr(frames, "_address", frames._ctypes_address)
    for array in arrays:
        assert frames.Frame(array).cells[0] == array.ctypes.data
    assert frames.Frame(frames.Rows(rows)).cells[0] == rows.ctypes.data


@pytest.mark.parametrize("n_rows, n_chunks", [(7, 1), (7, 3), (200, 2), (5000, 2), (0, 2),
                                             (3, 5)])
@pytest.mark.parametrize("slow", [None, 0, 1])
def test_ranges_that_claim_rows_walk_each_row_once(n_rows, n_chunks, slow):
    """`claim` hands out rows a block at a time (`claimed`), each range's own share first,
    then the shares after it: every row is walked once, by whichever range came for it,
    none past the end. A range that starts late (spinning first) leaves rows of its share
    to the others; a range helps only once its own share is used up. Each row takes some
    10 microseconds of arithmetic, so that ranges overlap in time and claim from the same
    share."""

    def claiming():
        @njit(cache=False)
        def walk(chunk, n_chunks, frame):
            owner = vector(frame, 0, np.int64)
            seen = vector(frame, 1, np.int64)
            counters = vector(frame, 2, np.int64)
            late = integer(frame, 3)
            spin = integer(frame, 4)
            n = owner.shape[0]
            if chunk == late:  # some 50 ms of arithmetic before its first claim
                x = 0.0
                for j in range(50_000_000):
                    x = x * 0.999 + 1.0
                seen[0] += np.int64(x < 0)  # (keeps the loop; x is never negative)
            block = frames.claimed(n, n_chunks)
            share = np.int64(0)
            while True:
                first, upto, share = frames.claim(counters, chunk, n_chunks, n, block, share)
                if first < 0:
                    break
                for i in range(first, upto):
                    y = 0.0
                    for j in range(spin):
                        y = y * 0.999 + 1.0
                    owner[i] = chunk
                    seen[i] += 1 + np.int64(y < 0)  # (keeps the loop; y is never negative)
            return np.int64(1)

        return walk

    owner = np.full(n_rows, -1, np.int64)
    seen = np.zeros(n_rows, np.int64)
    counters = frames.claim_counters(n_chunks)
    late = -1 if slow is None else slow
    frame = frames.Frame(owner, seen, counters, late, 10_000)
    done = frames.run(frames.walk(claiming), frame, n_chunks)
    assert done.tolist() == [1] * n_chunks
    assert (seen == 1).all() and ((owner >= 0) & (owner < n_chunks)).all()
    if n_chunks == 2:
        # a range helps another share only once its own is used up, so the two ranges
        # cannot both have helped: one share is walked by its own range alone, whichever
        # thread the machine ran first (a timing-free check: on a loaded machine a thread
        # may not run before the other has claimed most of the rows)
        shares = [slice(*frames.bounds.py_func(n_rows, chunk, 2)) for chunk in (0, 1)]
        own = [owner[shares[chunk]] == chunk for chunk in (0, 1)]
        assert own[0].all() or own[1].all()
    assert frames.claimed.py_func(5000, 2) == 9 and frames.claimed.py_func(200, 2) == 1
