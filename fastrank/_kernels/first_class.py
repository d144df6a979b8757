"""Walks handed to the parallel driver as first-class functions (pointers), not linked in.

A jitted function that another one calls is linked into the caller: numba copies the
callee's code into the caller's module, optimises it again and emits it again. A `prange`
driver is two such callers (its parallel region and itself), so a big walk called from a
`prange` compiled three times. Passed as an argument of numba's first-class function type,
the walk compiles once and the driver (`frames.run_ranges`) calls it through its C
wrapper; both are cached on disk as before.
"""

from typing import Any

from numba.core.types.function_type import CompileResultWAP, FunctionType
from numba.core.typing.typeof import typeof_impl


class Walk(CompileResultWAP):
    """A compiled kernel as a first-class function argument, with its numba type made
    once: numba makes it from the signature at every call of the driver otherwise."""

    def __init__(self, cres: Any) -> None:
        super().__init__(cres)
        self.numba_type = FunctionType(cres.signature)


@typeof_impl.register(Walk)
def _typeof_walk(val: Walk, c: Any) -> FunctionType:
    return val.numba_type
