"""Walks handed to the parallel driver as pointers, not linked in.

A jitted function that another one calls is linked into the caller: numba copies the
callee's code into the caller's module, optimises it again and emits it again. A `prange`
driver is two such callers (its parallel region and itself), so a big walk called from a
`prange` compiled three times. Called through a pointer, the walk compiles once and the
driver (`frames.run_ranges`) calls its C wrapper; both are cached on disk as before.

The driver takes the wrapper's address as a plain int64, which numba's dispatcher types
and unboxes in C. Passed as numba's first-class function type, the walk was typed and
unboxed by some twenty Python calls on every run (typeof, signature checks, the wrapper
address looked up again): a one-range run took 4.7 microseconds in a loop, 0.63 now, and
several times that between kernels, where the interpreter runs cold.
"""

from typing import Any


class Walk:
    """A compiled walk: the address of its C wrapper, and the compile result that holds
    its code (alive as long as this is)."""

    def __init__(self, cres: Any) -> None:
        self.cres = cres
        self.address = int(cres.library.get_pointer_to_function(
            cres.fndesc.llvm_cfunc_wrapper_name))
