"""`njit`: numba's, with a compile pipeline cut to the passes the kernels use.

A first call's time is mostly numba compiling the kernels (the ranking walk: some 6 s of
7 on an empty cache, on a slow 2-core machine), and most of that is numba's own passes
over the function's IR, each a walk over every statement. Two of the default passes have
nothing to do in these kernels, and numba runs them all the same:
- `WithLifting`: for `with` blocks (objmode); the kernels have none;
- `InlineClosureLikes`: inlines functions defined inside the kernel (closures, the code
  objects of comprehensions, `functools.reduce`) and rewrites array comprehensions; the
  kernels define none (a kernel's own closure constants are not closures inside it). It
  recomputed every variable's lifetimes over the whole IR: 0.5-0.7 s of the ranking
  walk's compile.
A kernel that asks `array_expressions=False` also skips `NopythonRewrites`, which fuses
whole-array arithmetic (`a * b + c` of arrays) into one loop: the walks written as loops
have none (0.15 s of the ranking walk's compile).

The passes dropped change nothing in the code numba generates for these kernels: the
ranking walk's LLVM IR, of the core codes and of every code (memo, sort, ERR), is the
same to the byte as under numba's pipeline (numba 0.68, 2026-11-28). Parallel kernels
(`parallel=True`) keep numba's pipeline: their `prange` lowering is numba's business.
The cache does not depend on the pipeline: a kernel compiled either way loads the same.
"""

from typing import Any

from numba import njit as _numba_njit

try:  # numba's compiler internals (stable since 0.49); a numba that moved them: its own
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import PassManager
    from numba.core.typed_passes import NopythonRewrites
    from numba.core.untyped_passes import InlineClosureLikes, WithLifting
except ImportError:  # pragma: no cover - numba's pipeline, every pass run
    CompilerBase = None


def _pipeline(name: str, skipped: tuple) -> Any:
    """A compiler class whose one pipeline is numba's nopython one without `skipped`."""

    def define_pipelines(self: Any) -> list:
        default = DefaultPassBuilder.define_nopython_pipeline(self.state)
        lean = PassManager(name)
        for pass_class, description in default.passes:
            if pass_class not in skipped:
                lean.add_pass(pass_class, description)
        lean.finalize()
        return [lean]

    return type(name, (CompilerBase,), {"define_pipelines": define_pipelines})


if CompilerBase is not None:
    Lean = _pipeline("Lean", (WithLifting, InlineClosureLikes))
    LeanLoops = _pipeline("LeanLoops", (WithLifting, InlineClosureLikes, NopythonRewrites))
else:  # pragma: no cover
    Lean = LeanLoops = None


def njit(*args: Any, array_expressions: bool = True, **options: Any) -> Any:
    """numba.njit, compiled through `Lean` (or `LeanLoops` with array_expressions=False)
    unless `parallel` or a pipeline of its own is asked."""
    if not options.get("parallel") and Lean is not None:
        options.setdefault("pipeline_class", Lean if array_expressions else LeanLoops)
    return _numba_njit(*args, **options)
