"""Compile a later evaluation's kernels in a background process, while the caller does
something else: loads its data, trains a model's first epoch.

On an empty numba cache the first `fr.evaluate` spends seconds compiling its ranking
walk, on one core. `warm_up` starts a second Python process that evaluates a small
stand-in of the same shape (the metrics, the dtypes, a call of as many users), which
compiles the very kernels the real call will need into numba's on-disk cache; the real
call then loads them. On two cores the compile runs beside the caller's own work.

    warming = fr.warm_up(["ndcg@10", "map@10"], n_users=1_000_000)
    truth, topk = load(...)            # seconds of the caller's own work
    warming.wait()                     # the compile's remainder, if any
    fr.evaluate(truth, topk, ["ndcg@10", "map@10"])   # loads the kernels from the cache

With `factors=` (their dtype), the stand-in is an `fr.evaluate_factors` call instead, for
a training loop that evaluates its model (`fastrank.implicit.EvalCallback` starts one at
construction, on machines of more than 2 cores).

The stand-in's relevance values are whole grades (ratings, judgement scales, binary):
truth of other values compiles one more walk on its first call, as it would have. A
kernel already in the cache costs the background process only its start-up.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .engine import Plan, parse_requests
from .evaluate_topk import evaluate
from .factors import evaluate_factors, parse_factor_metrics, span_users
from .validation import check_int

# the dtypes the kernels read in place (see fr.evaluate)
_VALUES = ("float32", "float64")
_INTEGERS = ("int32", "int64")
# users of the stand-in for a small call (any number below the ranking walk's MEMO_ROWS,
# from which calls run a walk of their own, compiles the same)
_SMALL = 1024
# catalogue of the stand-in: its size compiles nothing of its own
_ITEMS = 1024
# factors of the stand-in's users and items (for evaluate_factors)
_FACTORS = 4


class WarmUp:
    """A background compile started by `warm_up`: `wait()` for it, `done` to poll it."""

    def __init__(self, process: subprocess.Popen[bytes] | None, ready: bool = False) -> None:
        self._process = process
        self._ready = ready  # with no process: the kernels were loaded here, or none can be
        if process is not None:
            _started.add(process)

    @property
    def done(self) -> bool:
        """Whether the background process has ended (or none was needed or could start)."""
        return self._process is None or self._process.poll() is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the compile to end (at most `timeout` seconds); True if it compiled
        or loaded every kernel, False if it failed, could not start or is still running
        at the timeout (the first evaluation then compiles what it lacks itself, as
        without warm_up)."""
        if self._process is None:
            return self._ready
        try:
            return self._process.wait(timeout) == 0
        except subprocess.TimeoutExpired:
            return False

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<fastrank WarmUp: {state}>"


# background processes still running when the interpreter exits are stopped: a compile
# nobody waits for is not worth a core
_started: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for process in list(_started):
        if process.poll() is None:
            process.kill()


def warm_up(metrics: str | Iterable[str], *, k: int = 10, convention: str = "recsys",
            dialect: str | None = None, n_users: int | None = None,
            values: Any = np.float64, indices: Any = np.int32,
            ids: Any = np.int32, factors: Any = None, exclude: Any = True) -> WarmUp:
    """Compile, in a background process, the kernels of a later `fr.evaluate` of
    `metrics`, so that its first call loads them from numba's cache.

    Parameters
    ----------
    metrics : str or sequence of str
        The labels the evaluation will ask, as `fr.evaluate` takes them. Metrics computed
        from the truth and the lists alone: those that need `train`, `item_aspects` and
        the like are refused.
    k : int
        The lists' length K (labels without a cutoff mean @K).
    convention, dialect : str
        As the evaluation will pass them.
    n_users : int, optional
        The users (top-K rows) of one evaluation: calls of 262,144 or more run a walk of
        their own. Default: a call of that many or more.
    values, indices, ids : dtype
        The truth's values (float32 or float64), its indices and indptr (int32 or int64;
        scipy's int32 below 2^31 entries), and the lists' ids (int32 or int64).
    factors : dtype, optional
        For a later `fr.evaluate_factors` (or `fr.evaluate_model` of a factor model)
        rather than `fr.evaluate`: the factors' dtype (float32 for implicit's models).
        Its labels then take `fr.evaluate_factors`'s metrics (`auc` over the whole
        catalogue too), each with a cutoff; `k` and `ids` are not used (the lists are
        ranked to the largest cutoff).
    exclude : bool or dtype
        With `factors`: whether that call passes `exclude=` (the training
        interactions), with indices and indptr of the dtype `indices` (True) or of this
        dtype (int32 or int64).

    Returns
    -------
    WarmUp
        `wait()` returns once the compile ends (True if it succeeded); the evaluation
        need not wait, but if it starts first it compiles the same kernels itself.
    """
    k = check_int(k, "k")
    if isinstance(metrics, Iterator):  # read twice below: a generator only once
        metrics = list(metrics)
    if factors is None:
        requests = parse_requests(metrics, k, convention, dialect)
        other = [r.label for r in requests if r.metric.needs]
        if other:
            raise ValueError(
                f"metrics: warm_up prepares the metrics of truth and lists alone, and "
                f"these need other inputs (train, item_aspects, ...): {', '.join(other)}; "
                f"leave them out (their first call compiles them)")
        Plan(metrics, k, convention, _ITEMS, dialect=dialect)  # fr.evaluate's refusals
        width = k
    else:  # evaluate_factors's refusals; its lists are as long as the largest cutoff
        requests, full = parse_factor_metrics(metrics, convention, dialect)
        width = max((r.k for r in requests if r.label not in full), default=1)
    indices = _dtype(indices, "indices", _INTEGERS)
    if isinstance(exclude, (bool, np.bool_)):
        exclude = indices if exclude else None
    else:
        exclude = _dtype(exclude, "exclude (True, False or an index dtype)", _INTEGERS)
    if n_users is not None:
        n_users = check_int(n_users, "n_users")
    spec = {"metrics": [r.label for r in requests], "k": k, "convention": convention,
            "dialect": dialect, "n_users": _stand_in_users(n_users, width, factors is not None),
            "values": _dtype(values, "values", _VALUES), "indices": indices,
            "ids": _dtype(ids, "ids", _INTEGERS),
            "factors": None if factors is None else _dtype(factors, "factors", _VALUES),
            "exclude": exclude}
    # the process starts first: in a fresh environment the check below takes a second of
    # imports, which the process need not wait for; if the check finds every kernel in
    # the cache (and so loaded here), the process is stopped in its start-up
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, json.dumps(spec)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:  # no interpreter to start (an embedded Python): the call compiles
        process = None
    try:
        ready = _ready_here(spec)
    except BaseException:  # a refusal the stand-in's call met: the process would fail too
        _stop(process)
        raise
    if ready:
        _stop(process)
        return WarmUp(None, ready=True)
    return WarmUp(process)


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None:
        process.kill()
        process.wait()


def _stand_in_users(n_users: int | None, width: int, fused: bool) -> int:
    """Users of the stand-in of a call of n_users (None: many) with lists `width` long:
    as many as make the same walks, which differ from MEMO_ROWS rows a call (for
    evaluate_factors, a span of its users)."""
    from ._kernels.ranking import MEMO_ROWS  # numba loads with the kernels

    most = MEMO_ROWS if n_users is None else n_users
    if fused:
        most = min(most, span_users(min(width, _ITEMS)))
    return MEMO_ROWS if most >= MEMO_ROWS else min(most, _SMALL)


def _dtype(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in allowed:
        raise TypeError(f"{name} must be one of the dtypes {', '.join(allowed)}; got "
                        f"{value!r}")
    return str(dtype.name)


def stand_in(n_users: int, k: int, values: str, indices: str, ids: str) -> tuple[Any, Any]:
    """(truth, topk): n_users rows of two relevant items of grades 1-3 in a catalogue of
    _ITEMS, and lists of k ids that hit some of them, of the given dtypes: inputs whose
    evaluation runs the walks of real ones of those dtypes and as many users."""
    import scipy.sparse as sp

    rows = np.arange(n_users, dtype=np.int64)
    first = rows % (_ITEMS - 1)
    columns = np.stack([first, first + 1], axis=1).ravel().astype(indices)
    indptr = np.arange(0, 2 * n_users + 1, 2, dtype=indices)
    data = (1 + np.arange(2 * n_users) % 3).astype(values)
    truth = sp.csr_array((data, columns, indptr), shape=(n_users, _ITEMS))
    # scipy picks its own index dtype: set the one asked
    truth.indices, truth.indptr = columns, indptr
    topk = ((rows[:, None] + np.arange(k)) % _ITEMS).astype(ids)
    return truth, topk


class _WouldCompile(Exception):
    """numba was about to compile, in a call that must only load (see _ready_here)."""


def _no_compile() -> Any:
    """A numba compile listener that stops every compile the calling thread starts (a
    kernel found in numba's cache loads without one)."""
    from numba.core import event

    thread = threading.get_ident()

    class NoCompile(event.Listener):  # type: ignore[misc]
        def on_start(self, ev: Any) -> None:
            if threading.get_ident() == thread:
                raise _WouldCompile

        def on_end(self, ev: Any) -> None:
            pass

    return NoCompile()


def _ready_here(spec: dict[str, Any]) -> bool:
    """Whether every kernel of the spec's evaluation is in numba's cache: its stand-in is
    evaluated here, loading them, until numba would compile one (then the background
    process does). Cached, the later call finds its kernels loaded."""
    from numba.core import config, event

    if config.DISABLE_JIT:  # nothing to compile
        return True
    listener = _no_compile()
    event.register("numba:compile", listener)
    try:
        _evaluate_stand_in(spec)
    except _WouldCompile:
        return False
    finally:
        event.unregister("numba:compile", listener)
    return True


# the background process's program (not `-m fastrank.warm`: the package imports this
# module before runpy runs it again as __main__)
_CHILD = "import sys; from fastrank.warm import _main; sys.exit(_main(sys.argv[1:]))"


def _main(argv: list[str]) -> int:
    """The background process: evaluate the stand-in of the spec argv[0] (JSON)."""
    _evaluate_stand_in(json.loads(argv[0]))
    return 0


def _evaluate_stand_in(spec: dict[str, Any]) -> None:
    """fr.evaluate (or fr.evaluate_factors) of the spec's stand-in (`stand_in`), on one
    thread."""
    truth, topk = stand_in(spec["n_users"], spec["k"], spec["values"], spec["indices"],
                           spec["ids"])
    if spec["factors"] is None:
        evaluate(truth, topk, spec["metrics"], k=spec["k"], convention=spec["convention"],
                 dialect=spec["dialect"], n_threads=1)
        return
    import scipy.sparse as sp

    rows = np.arange(truth.shape[0])
    users = ((rows[:, None] + np.arange(_FACTORS)) % 7).astype(spec["factors"])
    items = ((np.arange(_ITEMS)[:, None] * np.arange(1, _FACTORS + 1)) % 5).astype(
        spec["factors"])
    exclude = None
    if spec["exclude"]:  # one item of each user's, past its relevant ones
        indices = ((rows + 2) % _ITEMS).astype(spec["exclude"])
        indptr = np.arange(rows.shape[0] + 1).astype(spec["exclude"])
        exclude = sp.csr_array((np.ones(rows.shape[0], np.float32), indices, indptr),
                               shape=truth.shape)
        exclude.indices, exclude.indptr = indices, indptr
    evaluate_factors(users, items, truth, spec["metrics"], exclude=exclude,
                     convention=spec["convention"], dialect=spec["dialect"], n_threads=1)
