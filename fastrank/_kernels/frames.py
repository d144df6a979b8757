"""One parallel driver for every walk: `run_ranges` runs `walk(chunk, n_chunks, frame)` for
each range under `prange`, where `frame` is an int64 array that holds the walk's arguments.

Why: numba lowers a `prange` loop into a function of its own for each driver, and the cost
of that on a first call grows with the driver's arguments, about 20 ms an array: 0.6 s for
a driver of twenty arguments, paid again by every driver of another signature. With the
arguments in a frame, every walk has the one signature `int64(int64, int64, int64[::1])`,
the driver compiles once (0.25 s) for all of them, and a walk of a new type compiles only
itself.

A frame holds four int64 cells per argument (`Frame`): an array's address, its first two
extents and its row stride in items (a cube's third extent); a number's value (a float's
bits). A walk reads its arguments back with `vector`, `matrix`, `cube`, `strided`,
`integer`, `real` and `number`, each given its slot and the array's dtype (a constant of
the walk's closure, so that a walk compiles once per dtype of its inputs; `Frame.dtypes`
gives them all), and carves scratch the facade allocated with `segment` and `table`.
These views do not own their memory: the caller holds the arrays until the driver returns
(`run`).
"""

import sys
from ctypes import c_void_p
from typing import Any, Callable, Dict, Tuple

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .first_class import Walk
from .jit import njit

# cells of an argument in the frame: address (or value), extent 0, extent 1, row stride
_CELLS = 4

# the one signature of a walk that run_ranges calls: (chunk, n_chunks, frame) -> done
WALK = types.int64(types.int64, types.int64, types.Array(types.int64, 1, "C"))


def _cells(context: Any, builder: Any, frame_type: Any, frame: Any, slot: Any) -> list:
    """The four int64 cells of argument `slot` of the frame, as LLVM values."""
    data = make_array(frame_type)(context, builder, frame).data
    first = builder.mul(slot, ir.Constant(slot.type, _CELLS))
    return [builder.load(builder.gep(data, [builder.add(first, ir.Constant(slot.type, j))]))
            for j in range(_CELLS)]


def _dtype_of(dtype: Any) -> Any:
    return dtype.dtype if isinstance(dtype, types.DTypeSpec) else dtype.instance_type


def _view(ndim: int, layout: str) -> Any:
    """An intrinsic (frame, slot, dtype) -> the array of that slot, `ndim` dimensions,
    C-contiguous or (layout "A") rows `stride` items apart."""

    def typer(typingctx: Any, frame: Any, slot: Any, dtype: Any) -> Any:
        array_type = types.Array(_dtype_of(dtype), ndim, layout)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            slot_value = context.cast(builder, args[1], signature.args[1], types.intp)
            address, n0, n1, stride = _cells(context, builder, signature.args[0], args[0],
                                              slot_value)
            view = make_array(array_type)(context, builder)
            itemsize = context.get_constant(
                types.intp, context.get_abi_sizeof(context.get_data_type(array_type.dtype)))
            if ndim == 1:
                shape, strides = [n0], [itemsize]
            elif ndim == 2:
                shape, strides = [n0, n1], [builder.mul(stride, itemsize), itemsize]
            else:  # C-contiguous, the fourth cell its third extent
                shape = [n0, n1, stride]
                strides = [builder.mul(builder.mul(n1, stride), itemsize),
                           builder.mul(stride, itemsize), itemsize]
            populate_array(view, data=builder.inttoptr(address, view.data.type), shape=shape,
                           strides=strides, itemsize=itemsize, meminfo=None)
            return view._getvalue()

        return array_type(frame, slot, dtype), codegen

    return intrinsic(typer)


vector = _view(1, "C")
vector.__doc__ = "The 1-D C-contiguous array of `slot`: vector(frame, slot, dtype)."
matrix = _view(2, "C")
matrix.__doc__ = "The 2-D C-contiguous array of `slot`: matrix(frame, slot, dtype)."
cube = _view(3, "C")
cube.__doc__ = "The 3-D C-contiguous array of `slot`: cube(frame, slot, dtype)."
strided = _view(2, "A")
strided.__doc__ = ("The 2-D array of `slot` whose rows are `stride` items apart (a block "
                   "of columns of a larger array): strided(frame, slot, dtype).")


def _part_codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
    """A C-contiguous view of arena[offset:], shape args[2:] (see segment and table)."""
    array_type = signature.return_type
    source = make_array(signature.args[0])(context, builder, args[0])
    first = context.cast(builder, args[1], signature.args[1], types.intp)
    extents = [context.cast(builder, v, t, types.intp)
               for v, t in zip(args[2:], signature.args[2:])]
    itemsize = context.get_constant(
        types.intp, context.get_abi_sizeof(context.get_data_type(array_type.dtype)))
    strides = [itemsize] if array_type.ndim == 1 else [builder.mul(extents[1], itemsize),
                                                         itemsize]
    view = make_array(array_type)(context, builder)
    populate_array(view, data=builder.gep(source.data, [first]), shape=extents,
                   strides=strides, itemsize=itemsize, meminfo=None)
    return view._getvalue()


def offsets(lengths: Any) -> np.ndarray:
    """Where each piece of a range's scratch starts (pieces of `lengths` items, in order),
    then the range's share: the total rounded up to a whole number of 64-byte cache lines
    of 8-byte items, so that ranges never share a line. Read with `segment` and `table`."""
    at = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=at[1:])
    at[-1] = -(-at[-1] // 8) * 8
    return at


@intrinsic
def segment(typingctx: Any, arena: Any, offset: Any, n: Any) -> Any:
    """arena[offset:offset + n] of a 1-D C-contiguous arena, as a view: a range's piece
    of the scratch that the facade allocated for every range at once."""
    return types.Array(arena.dtype, 1, "C")(arena, offset, n), _part_codegen


@intrinsic
def table(typingctx: Any, arena: Any, offset: Any, n0: Any, n1: Any) -> Any:
    """arena[offset:offset + n0 * n1] as an (n0, n1) C-contiguous view (see segment)."""
    return types.Array(arena.dtype, 2, "C")(arena, offset, n0, n1), _part_codegen


def _scalar(is_float: bool) -> Any:
    """The codegen of a number of the frame: its first cell, as a float64 (its bits) or
    an int64."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        slot_value = context.cast(builder, args[1], signature.args[1], types.intp)
        value = _cells(context, builder, signature.args[0], args[0], slot_value)[0]
        return builder.bitcast(value, ir.DoubleType()) if is_float else value

    return codegen


@intrinsic
def real(typingctx: Any, frame: Any, slot: Any) -> Any:
    """The float64 of `slot` (its bits stored in the frame)."""
    return types.float64(frame, slot), _scalar(True)


@intrinsic
def integer(typingctx: Any, frame: Any, slot: Any) -> Any:
    """The int64 of `slot` (a count, a flag)."""
    return types.int64(frame, slot), _scalar(False)


@intrinsic
def number(typingctx: Any, frame: Any, slot: Any, dtype: Any) -> Any:
    """The number of `slot` as the frame holds it: float64 where `dtype` (its entry of
    `Frame.dtypes`) is float64, else int64 (an int or a bool)."""
    is_float = isinstance(_dtype_of(dtype), types.Float)
    return (types.float64 if is_float else types.int64)(frame, slot, dtype), _scalar(is_float)


@intrinsic
def _fetch_add(typingctx: Any, cells: Any, at: Any, n: Any) -> Any:
    """cells[at] += n atomically, returning the value before."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        data = make_array(signature.args[0])(context, builder, args[0]).data
        at_ = context.cast(builder, args[1], signature.args[1], types.intp)
        step = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", builder.gep(data, [at_]), step, "monotonic")

    return types.int64(cells, at, n), codegen


# the int64 cells between two ranges' counters: each on a cache line of its own, so that a
# range claiming rows from its own share does not pull a line away from another
CLAIM_STRIDE = 8


def claim_counters(n_chunks: int) -> np.ndarray:
    """The counters of `claim` for n_chunks ranges, all at 0 (a walk's frame holds them)."""
    return np.zeros(max(n_chunks, 1) * CLAIM_STRIDE, np.int64)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def claim(counters, chunk, n_chunks, n, block, share):
    """The next rows of range `chunk` of a walk over rows 0..n-1, as (first, upto, share):
    at most `block` rows (`claimed`) from its own share of the rows (`bounds`) while that
    has rows left, then from the shares of the ranges after it in turn; first is -1 once
    every share is taken. `share` counts the shares this range has emptied: 0 at first,
    then what the last call returned. Each share's rows are claimed by an atomic add on
    its counter (`claim_counters`), by its own range and by ranges come to help.

    So a range slowed down (its core taken by another process a while, its thread woken
    late, its rows costlier) leaves its last rows to the others instead of keeping the
    whole run waiting; and while no range helps, each writes its own share's outputs
    alone (rows claimed from one shared counter in turn wrote beside each other's, the
    same cache lines from both cores)."""
    while share < n_chunks:
        owner = (chunk + share) % n_chunks
        lo, hi = bounds(n, owner, n_chunks)
        first = lo + _fetch_add(counters, owner * CLAIM_STRIDE, block)
        if first < hi:
            return first, min(first + block, hi), share
        share += 1
    return np.int64(-1), np.int64(-1), share


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def claimed(n, n_chunks):
    """How many rows a range claims at a time (`claim`) from n rows over n_chunks ranges:
    about 256 claims a range, one row at a time for few rows."""
    return max(n // (256 * n_chunks), 1)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def bounds(n, chunk, n_chunks):
    """(lo, hi): range `chunk` of n_chunks near-equal contiguous ranges of 0..n-1, the
    rows a walk's range covers. Called, not copied in: it takes no array, so LLVM
    inlines it at no cost."""
    return (chunk * n) // n_chunks, ((chunk + 1) * n) // n_chunks


class Rows:
    """A 2-D array whose rows are contiguous but may lie a stride apart (a block of
    columns of a larger array), for a walk that reads it with `strided`."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


class Frame:
    """The frame of a walk's arguments: arrays (read with `vector`, `matrix` or `cube`),
    `Rows` (read with `strided`), ints, bools and floats. It keeps the arrays alive as long
    as it lives. An array that is not C-contiguous (a caller's strided or Fortran-ordered
    input that a facade reads in place, such as a dense γ: rare) is read from a
    C-contiguous copy; the facades allocate every array a walk writes, C-contiguous."""

    def __init__(self, *values: Any) -> None:
        # one pass, the cells gathered in a list and converted once: a frame is built on
        # every call's clock, and a walk of small inputs takes microseconds
        kept: list = []
        # the dtype of each array, and float64 or int64 for a number: the constant a walk
        # for any frame's types is made from (`walk(factory, frame.dtypes)`), which reads
        # a number with `number`
        dtypes: list = []
        cells: list = []
        for value in values:
            if isinstance(value, np.ndarray):
                if not value.flags.c_contiguous:
                    value = np.ascontiguousarray(value)
                dtypes.append(value.dtype.type)
                shape = value.shape
                if len(shape) == 1 and _address is _header_address:
                    # most arrays, read in line: a frame is built on every call's clock
                    cells += (_read_pointer(id(value) + _HEADER).value or 0, shape[0], 0, 0)
                else:
                    cells += _array_cells(value)
            elif isinstance(value, Rows):
                dtypes.append(value.array.dtype.type)
                cells += _rows_cells(value.array)
            elif isinstance(value, (float, np.floating)):
                dtypes.append(np.float64)
                cells += (int(np.float64(value).view(np.int64)), 0, 0, 0)
            else:
                dtypes.append(np.int64)
                cells += (int(value), 0, 0, 0)
            kept.append(value)
        self.values = tuple(kept)
        self.dtypes = tuple(dtypes)
        self.cells = np.array(cells, np.int64)


def _header_address(array: np.ndarray) -> int:
    """The address of an array's data, read from numpy's PyArrayObject: its first field
    after the object header (numpy's C API layout, the same since numpy 1.7), at
    id(array) + object.__basicsize__ on CPython, where id() is the object's address."""
    return _read_pointer(id(array) + _HEADER).value or 0


def _ctypes_address(array: np.ndarray) -> int:
    return array.ctypes.data or 0


_HEADER = object.__basicsize__
_read_pointer = c_void_p.from_address


class _Subclass(np.ndarray):
    pass


def _pick_address() -> Callable[[np.ndarray], int]:
    """`_header_address` on CPython where it agrees with numpy's own `ctypes.data` on
    arrays of every kind a frame holds (views, read-only, subclasses), else `ctypes.data`.
    Between kernels, where the interpreter runs cold, the header read took 44
    microseconds for 30 arrays and `ctypes.data`, which builds a ctypes object per
    array, 140; a call's frames hold dozens."""
    if sys.implementation.name != "cpython":  # id() need not be an address
        return _ctypes_address
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    frozen = np.zeros(3, np.int8)
    frozen.flags.writeable = False
    probes = (base, base[1:], base[:, 2:], base.T, frozen, np.empty(0), base.view(_Subclass))
    if all(_header_address(a) == a.ctypes.data for a in probes):
        return _header_address
    return _ctypes_address


_address = _pick_address()


def _array_cells(array: np.ndarray) -> Tuple[int, int, int, int]:
    # the fourth cell: a matrix's row stride (its width), a cube's third extent
    shape = array.shape
    if len(shape) == 1:
        return _address(array), shape[0], 0, 0
    if len(shape) == 2:
        return _address(array), shape[0], shape[1], shape[1]
    if len(shape) == 3:
        return _address(array), shape[0], shape[1], shape[2]
    raise ValueError(f"a walk reads arrays of 1 to 3 dimensions; got shape "
                     f"{array.shape}")  # the facades pass no other


def _rows_cells(array: np.ndarray) -> Tuple[int, int, int, int]:
    itemsize = array.dtype.itemsize
    n0, n1 = array.shape
    if array.size == 0:  # nothing is read: numpy gives an empty array any strides
        return _address(array), n0, n1, n1
    if (array.strides[1] == itemsize or n1 <= 1) and array.strides[0] % itemsize == 0 \
            and array.strides[0] >= 0:
        return _address(array), n0, n1, array.strides[0] // itemsize
    raise ValueError(f"an array of shape {array.shape} and strides {array.strides} has no "
                     f"contiguous rows")  # the facade passes columns of a C array


@intrinsic
def _call(typingctx: Any, address: Any, chunk: Any, n_chunks: Any, frame: Any) -> Any:
    """walk(chunk, n_chunks, frame) of the walk whose C wrapper is at `address`
    (`Walk.address`, an int64): a call through a pointer of the walk's one signature."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        function = ir.FunctionType(context.get_value_type(WALK.return_type),
                                   [context.get_value_type(t) for t in WALK.args])
        return builder.call(builder.inttoptr(args[0], function.as_pointer()), args[1:])

    return WALK.return_type(types.int64, *WALK.args), codegen


@njit(cache=True, parallel=True, nogil=True, no_cfunc_wrapper=True)
def run_ranges(address, frame, n_chunks, done):
    """done[chunk] = walk(chunk, n_chunks, frame) for every range, under prange, the walk
    called through its C wrapper's address: 1 once the range is walked, 0 if its walk
    could not allocate its scratch (or a code of the walk's own). One range runs on the
    calling thread: waking the other threads for nothing took some 60 microseconds, more
    than a small input's whole walk. The GIL is released either way (numba's parallel
    runs released it; nogil keeps that for one range), so Python threads that each
    evaluate still run side by side."""
    if n_chunks == 1:
        done[0] = _call(address, np.int64(0), np.int64(n_chunks), frame)
        return
    for chunk in prange(n_chunks):
        done[chunk] = _call(address, np.int64(chunk), np.int64(n_chunks), frame)


_walks: Dict[Tuple[Any, ...], Walk] = {}


def walk(factory: Any, *constants: Any) -> Walk:
    """The walk `factory(*constants)` compiled (or loaded from numba's cache) for the one
    walk signature, for run_ranges to call through its address; made once per process."""
    key = (factory,) + constants
    found = _walks.get(key)
    if found is None:
        found = _walks[key] = Walk(factory(*constants).get_compile_result(WALK))
    return found


def ready(factory: Any, *constants: Any) -> bool:
    """Whether the walk `factory(*constants)` is already compiled or loaded here."""
    return (factory,) + constants in _walks


def run(walk_: Walk, frame: Frame, n_chunks: int) -> np.ndarray:
    """Run a walk over n_chunks ranges: what each range's walk returned (1 once walked, 0
    if it could not allocate its scratch, or a code of the walk's own)."""
    done = np.zeros(n_chunks, np.int64)
    run_ranges(walk_.address, frame.cells, n_chunks, done)
    return done
