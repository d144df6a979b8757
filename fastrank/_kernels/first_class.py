"""Walks handed to a parallel driver as first-class functions (pointers), not linked in.

A jitted function that another one calls is linked into the caller: numba copies the
callee's code into the caller's module, optimises it again and emits it again. A `prange`
driver is two such callers (its parallel region and itself), so a big walk called from a
`prange` compiled three times. Passed as an argument of numba's first-class function type,
the walk compiles once and the driver calls it through its C wrapper; both are cached on
disk as before.
"""

from typing import Any, Dict, Tuple

from numba import typeof
from numba._dispatcher import compute_fingerprint
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.core.types.function_type import CompileResultWAP, FunctionType
from numba.core.typing.typeof import Purpose, typeof_impl


class Walk(CompileResultWAP):
    """A compiled kernel as a first-class function argument, with its numba type made
    once: numba makes it from the signature at every call of the driver otherwise (a
    tenth of a millisecond for a walk of 40 arguments, on the clock of every call)."""

    def __init__(self, cres: Any) -> None:
        super().__init__(cres)
        self.numba_type = FunctionType(cres.signature)


@typeof_impl.register(Walk)
def _typeof_walk(val: Walk, c: Any) -> FunctionType:
    return val.numba_type


_compiled: Dict[Tuple[Any, ...], Walk] = {}


def compiled(kernel: Dispatcher, *args: Any) -> Walk:
    """`kernel` compiled (or loaded from numba's cache) for the types of `args`, as a
    function a jitted caller takes as an argument. The kernel returns an int64; a C wrapper
    cannot raise, and returns 0 where the kernel raised (an allocation failed)."""
    key = (kernel,) + tuple(compute_fingerprint(a) for a in args)
    found = _compiled.get(key)
    if found is None:
        signature = types.int64(*(typeof(a, Purpose.argument) for a in args))
        found = _compiled[key] = Walk(kernel.get_compile_result(signature))
    return found
