"""`fr.Evaluator`: evaluate lists block by block, merge partial evaluations, get one Result.

    ev = fr.Evaluator(truth, ["ndcg@10", "recall@10"])
    for lo in range(0, n_users, 100_000):
        ev.update(np.arange(lo, hi), topk[lo:hi])    # any blocks of users, in any order
    res = ev.result()                                # = fr.evaluate on the concatenated blocks

The per-user values go into arrays sized for every truth row, whose memory the operating
system commits only as blocks are written: streaming all users of a memory-mapped top-K
array holds the per-user outputs and one block, never a second copy of either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix

from .engine import Block, Plan, check_requests
from .means import counts_judged
from .side_inputs import SideInputs
from .dialects import check_dialect
from .grammar import metric_labels
from .threads import check_n_threads, numba_threads
from .validation import (LARGEST_INT, Truth, check_bool, check_int, check_topk,
                         check_truth, check_users)

if TYPE_CHECKING:
    from .result import Result

class Evaluator:
    """A mergeable accumulator of per-user metric values over blocks of users.

    Parameters
    ----------
    truth : scipy.sparse matrix, users x items
        As for `fr.evaluate`; checked once here.
    metrics : str or list of str
        As for `fr.evaluate`, the beyond-accuracy measures included.
    convention : {"recsys", "trec", "implicit"}
    dialect : str, optional
        As for `fr.evaluate`: read the labels as this tool writes them.
    k : int, optional
        The list length K (what "ndcg" without @k means). Default: the width of the first
        block. Narrower blocks are lists that end early (their missing slots are empty);
        wider ones are an error.
    repeats : bool
        Whether a truth row may appear in more than one block (or twice in one). Off by
        default: counting a user twice is a mistake more often than it is intended.
    train, item_aspects, item_vectors, baseline :
        Side inputs of the beyond-accuracy measures, as for `fr.evaluate`; a per-row
        baseline goes with each block instead (`update(..., baseline=)`).
    propensity : float array (n_items,), optional
        The item propensities of the debiased metrics, as for `fr.evaluate`.
    n_threads : int, optional
        Numba threads of each `update` (default: numba's thread count).
    show_progress : bool
        A progress bar (tqdm) over the truth's users, with users/s.

    Notes
    -----
    `update(users, topk)` adds a block; `merge(other)` adds another Evaluator's blocks;
    `result()` gives the `Result` of everything so far, rows in the order they were added:
    the same per-user values as `fr.evaluate` on the concatenated blocks, and the same
    means. More blocks may follow a `result()`.
    """

    def __init__(self, truth: SparseMatrix | Truth, metrics: str | Iterable[str], *,
                 convention: str = "recsys", dialect: str | None = None, k: int | None = None,
                 repeats: bool = False, train: SparseMatrix | None = None,
                 item_aspects: SparseMatrix | None = None,
                 item_vectors: ArrayLike | None = None, baseline: str | ArrayLike | None = None,
                 n_threads: int | None = None, show_progress: bool = False,
                 _external: Mapping[str, str] | None = None,
                 propensity: ArrayLike | None = None) -> None:
        self._data = truth if isinstance(truth, Truth) else check_truth(truth)
        self._metrics = list(metric_labels(metrics))
        self._side = SideInputs(train=train, item_aspects=item_aspects,
                                item_vectors=item_vectors, baseline=baseline,
                                propensity=propensity, baseline_later=True)
        self._requests = check_requests(self._metrics, convention, dialect,
                                        external=tuple(_external or ()), side=self._side)
        self.convention = convention
        self.dialect = check_dialect(dialect)
        # {label: what it computes} of the labels whose values update() is given
        self._external = dict(_external or {})
        self.repeats = check_bool(repeats, "repeats")
        self._n_threads = check_n_threads(n_threads)
        self._show_progress = show_progress
        self._bar: Any = None
        # the Plan, the rows and the store are set by k= or the first block (None before):
        # Any rather than Optional, which would need a None check at every use
        self._plan: Any = None if k is None else self._make_plan(check_int(k, "k"))
        # Without k=, a Plan for lists as long as the largest cutoff named checks the side
        # inputs' contents now (a propensity of 0, a train of another width), not at the
        # first block; that block keeps it when its lists are that long.
        self._early: Plan | None = None
        if self._plan is None:
            cutoffs = [r.k for r in self._requests if r.k < LARGEST_INT]
            self._early = self._make_plan(max(cutoffs, default=1))
        self._rows: Any
        self._store: Any
        self._rows = self._store = None
        self._size = 0
        self._shown = None
        self._seen: BoolArray | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (say, to merge in another process) without its progress bar, which
        holds a terminal's stream: the next block starts a new one."""
        state = self.__dict__.copy()
        state["_bar"] = None
        return state

    @property
    def n_rows(self) -> int:
        """How many top-K rows have been added."""
        return self._size

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self._metrics)

    @property
    def counts_judged(self) -> bool:
        """Do the labels count every judged user (the trec convention's rule) or only the
        users with a relevant item?"""
        return counts_judged(self._requests[0].convention)

    @property
    def k(self) -> int | None:
        """The list length, once known (k= or the first block), else None."""
        return None if self._plan is None else self._plan.k

    def _make_plan(self, k: int) -> Plan:
        return Plan(self._metrics, k, self.convention, self._data.n_items,
                    dialect=self.dialect, side=self._side, external=self._external)

    def update(self, users: ArrayLike | None, topk: ArrayLike, *,
               baseline: str | ArrayLike | None = None,
               _external: Mapping[str, FloatArray] | None = None) -> Evaluator:
        """Evaluate one block: `topk` rows are the lists of truth rows `users` (None: every
        truth row, in order). Returns self."""
        data = self._data
        topk = check_topk(topk, data.n_items)
        rows = check_users(users, topk.shape[0], data.n_users)
        first = self._plan is None  # the first block sets K, unless it fails
        early = self._early
        if first:
            self._plan = early if early is not None and early.k == topk.shape[1] else \
                self._make_plan(topk.shape[1])
            self._early = None
        try:
            topk = self._fit(topk)
            if not self.repeats:
                self._check_new(rows)
            self._reserve(rows.shape[0])
            with numba_threads(self._n_threads) as threads:
                self._plan.run(data, topk, rows, threads, baseline=baseline,
                               into=self._store, at=self._size, external=_external)
        except BaseException:
            if first and self._size == 0:  # as before the block: K is still open
                self._plan, self._early = None, early
                self._rows = self._store = None
            raise
        self._rows[self._size:self._size + rows.shape[0]] = rows
        self._size += rows.shape[0]
        if not self.repeats:  # only now: a block that failed can be passed again
            self._seen[rows] = True  # type: ignore[index]  # set by _check_new
        if self._show_progress:
            self._progress(rows.shape[0])
        return self

    def merge(self, other: Evaluator) -> Evaluator:
        """Add the blocks of another Evaluator of the same truth, metrics and convention
        (after this one's). Returns self."""
        if not isinstance(other, Evaluator):
            raise TypeError(f"merge takes another fr.Evaluator; got {type(other).__name__}")
        if not _same_truth(self._data, other._data):
            raise ValueError("merge: the two Evaluators have different truth matrices; "
                             "partial evaluations merge only over the same truth")
        for field in dataclasses.fields(SideInputs):
            name = field.name
            if not _same_input(getattr(self._side, name), getattr(other._side, name)):
                raise ValueError(f"merge: the two Evaluators have different {name}=; partial "
                                 f"evaluations merge only with the same side inputs")
        if _meanings(self) != _meanings(other) or other._external != self._external:
            if sorted(_meanings(self)) == sorted(_meanings(other)) and \
                    other._external == self._external:
                raise ValueError(
                    f"merge: the two Evaluators list the same metrics in another order "
                    f"({self._metrics} here, {other._metrics} there); build both with the "
                    f"metrics in one order (their per-user values are kept in that order)")
            raise ValueError(
                f"merge: metrics or convention differ ({self._metrics}, {self.convention!r}, "
                f"dialect {self.dialect!r} here; {other._metrics}, {other.convention!r}, "
                f"dialect {other.dialect!r} there); merge only Evaluators built with the "
                f"same metrics, convention and dialect")
        if other.repeats != self.repeats:
            raise ValueError("merge: one Evaluator allows repeated users and the other does "
                             "not; build both with the same repeats=")
        if self._plan is not None and other._plan is not None and \
                other._plan.k != self._plan.k:  # set by k= or a block, rows or not
            raise ValueError(f"merge: list lengths differ (K = {self._plan.k} here, "
                             f"{other._plan.k} there)")
        if other._size == 0:
            return self
        if self._plan is None:
            self._plan = other._plan
        if not self.repeats:
            self._check_new(other._rows[:other._size])
        self._append(other._rows[:other._size], other._block())
        if not self.repeats:
            self._seen[other._rows[:other._size]] = True  # type: ignore[index]  # as above
        return self

    def result(self) -> Result:
        """The Result of every block added so far (rows in the order they came)."""
        if self._plan is None:
            raise ValueError("result: no block has been added yet and k= was not given, so "
                             "the list length is unknown; call update(users, topk) first")
        self._reserve(0)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        return self._plan.result(  # type: ignore[no-any-return]  # _plan is a Plan here
            self._block(), self._rows[:self._size])

    # -- internals --------------------------------------------------------------------

    def _fit(self, topk: AnyArray) -> AnyArray:
        """A block's lists, checked against K: narrower ones go to the kernels as they are
        (slots past their columns are empty), wider ones are an error."""
        k = self._plan.k
        width = topk.shape[1]
        if width > k:
            raise ValueError(
                f"topk has {width} columns but this Evaluator's lists have K = {k} (set by "
                f"k= or by the first block); cut the lists to {k} or build the Evaluator "
                f"with k={width}")
        return topk

    def _check_new(self, rows: IntArray) -> None:
        """No truth row twice: not in an earlier block, not twice in this one."""
        if self._seen is None:
            self._seen = np.zeros(self._data.n_users, np.bool_)
        again = rows[self._seen[rows]]
        if again.size == 0 and rows.shape[0] > 1 and not (rows[1:] > rows[:-1]).all():
            unique, counts = np.unique(rows, return_counts=True)
            again = unique[counts > 1]
        if again.size:
            raise ValueError(
                f"users: truth row {int(again[0])} is evaluated more than once ({again.size} "
                f"such rows); each user would count twice in the means. Pass each user in "
                f"one block, or build the Evaluator with repeats=True if that is intended")

    def _reserve(self, n: int) -> None:
        """Room for n more rows in the store."""
        if self._store is None:
            capacity = max(self._data.n_users, n)
            self._store = self._plan.empty(capacity)  # committed by the OS as written
            self._store.shown = None
            self._rows = np.empty(capacity, np.int64)
        elif self._size + n > self._rows.shape[0]:
            self._grow(self._size + n)

    def _append(self, rows: IntArray, block: Block) -> None:
        self._reserve(rows.shape[0])
        lo, hi = self._size, self._size + rows.shape[0]
        self._rows[lo:hi] = rows
        self._store.fill(lo, block)
        self._size = hi

    def _grow(self, needed: int) -> None:
        capacity = max(needed, 2 * self._rows.shape[0])
        old, old_rows = self._store, self._rows
        self._store = self._plan.empty(capacity)
        self._store.shown = old.shown
        self._rows = np.empty(capacity, np.int64)
        self._rows[:self._size] = old_rows[:self._size]
        self._store.fill(0, Block(old.values[:, :self._size], old.n_relevant[:self._size],
                                  old.counted[:self._size], None))

    def _block(self) -> Block:
        s, n = self._store, self._size
        return Block(s.values[:, :n], s.n_relevant[:n], s.counted[:n], s.shown)

    def _progress(self, n: int) -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self._data.n_users, unit="users", unit_scale=True,
                             initial=self._size - n)  # the rows of earlier blocks
        self._bar.update(n)


def _meanings(evaluator: Evaluator) -> list[tuple[str, str, str]]:
    """What an Evaluator's labels compute: (label, canonical metric, convention) each."""
    return [(r.label, r.canonical, r.convention) for r in evaluator._requests]


def _same_truth(mine: Truth, theirs: Truth) -> bool:
    """Do two checked truths hold the same matrix (the same object, or equal arrays)?"""
    if mine is theirs:
        return True
    return ((mine.n_users, mine.n_items) == (theirs.n_users, theirs.n_items)
            and all(np.array_equal(a, b) for a, b in ((mine.indptr, theirs.indptr),
                                                       (mine.indices, theirs.indices),
                                                       (mine.data, theirs.data))))


def _same_input(a: Any, b: Any) -> bool:
    """Are two side inputs (None, a string, an array or a sparse matrix) the same?"""
    if a is b:
        return True
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if sp.issparse(a) or sp.issparse(b):
        return (sp.issparse(a) and sp.issparse(b) and a.shape == b.shape  # type: ignore[no-any-return]
                and (sp.csr_array(a) != sp.csr_array(b)).nnz == 0)
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b)
