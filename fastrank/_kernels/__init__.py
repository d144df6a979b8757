"""The numba kernels: arrays in and out, nothing raises (the facade has checked the inputs).

A rule for compile time: a count or flag that a kernel passes to another jitted function
starts as `np.int64(0)` or `np.bool_(False)`, not a bare `0` or `False`. Numba types a bare
constant as a literal (`Literal[int](0)`) and compiles the callee once for that type before
the loop's `+= 1` widens it to int64: every callee twice. tests/test_compile.py checks that
no kernel compiles a callee for a literal type.

Helpers that only other kernels call are compiled with `no_cpython_wrapper=True,
no_cfunc_wrapper=True`: numba otherwise builds and optimises a Python-callable wrapper
and a C-callable one for each, which nothing uses. Kernels that Python calls keep the
first and drop the second (`no_cfunc_wrapper=True`). The one kind that keeps its C
wrapper is a walk that the parallel driver calls through a pointer (`frames`,
`first_class`): a big walk linked into a `prange` driver is optimised and emitted three
times.

Kernels take `njit` from `jit`, not from numba: it compiles them without the passes of
numba's pipeline that have nothing to do in them (a fifth of the ranking walk's compile),
to the same machine code. tests/test_compile.py checks that every kernel does.
"""
