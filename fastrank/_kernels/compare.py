"""`lesser` and `greater`: Python's min and max of two numbers, for the kernels of a first
call. numba compiles its builtin min and max again for each function that calls them
(four times over in the ranking kernel's first call); these compile once per type.
Same results as the builtins: the second argument wins only if strictly smaller (larger),
so a NaN second argument never wins."""

from .jit import njit


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def lesser(a, b):
    return b if b < a else a


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def greater(a, b):
    return b if b > a else a
