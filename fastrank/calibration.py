"""Miscalibration (Steck, "Calibrated recommendations", RecSys 2018) inside
`fastrank.evaluate` (the registry's "calibration" engine): `miscalibration@k`, the
Kullback-Leibler divergence KL(p‖q̃) of the aspect (genre) distribution q of a user's
first k items from the distribution p of the user's training items.

- p(g|u) = Σ_{i ∈ H_u} w_ui·p(g|i) / Σ_{i ∈ H_u} w_ui over the train items H_u (stored
  value > 0) that have an aspect; p(g|i) = 1/|aspects(i)| for each aspect of i (an
  item's aspects share 1 equally, as in the paper's genres). w_ui = 1, or the stored
  train value with `weighted=1` (ratings, play counts).
- q(g|u) the same over the first k items of the list (padding and repeats skipped), each
  weighing 1, or 1/log2(rank + 1) with `positions=log` (the paper allows position weights).
- q̃ = (1 − α)·q + α·p (α = `alpha=`, default 0.01, the paper's value), and
  miscalibration = Σ_g p(g)·ln(p(g)/q̃(g)) (natural log): 0 when q = p, −ln α when no
  listed item has an aspect; infinite when α = 0 and q misses an aspect of p.
- A user with no train item that has an aspect has no p: NaN, left out of the mean.

The walk is `fastrank._kernels.calibration`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix
from .aspects import check_aspects
from .beyond import train_parts
from .threads import n_ranges
from .validation import Truth, check_memory, check_scratch, out_of_memory

if TYPE_CHECKING:
    from .grammar import Request


def _train(train: SparseMatrix, n_items: int) -> tuple[IntArray, IntArray, FloatArray]:
    indptr, indices, values = train_parts(train, n_items)
    # p(g|u) does not change when a row's weights are scaled: divide each row by its
    # largest |value|, so that the sums of weights=value cannot overflow
    indptr = np.asarray(indptr, np.int64)
    if values.size:
        counts = np.diff(indptr)
        top = np.zeros(counts.shape[0])
        filled = counts > 0
        top[filled] = np.maximum.reduceat(np.abs(values), indptr[:-1][filled])
        scale = np.repeat(np.where(top > 0, top, 1.0), counts)
        values = values / scale
    return (indptr, np.asarray(indices, np.int64), values)


class CalibrationPlan:
    """The miscalibration requests with train and item_aspects checked once."""

    def __init__(self, requests: Iterable[Request], n_items: int, *, train: SparseMatrix,
                 item_aspects: SparseMatrix) -> None:
        self.per_user = list(requests)
        self.n_items = n_items
        self.train = _train(train, n_items)
        aspects = check_aspects(item_aspects, n_items)
        self.a_indptr, self.a_indices = aspects.indptr, aspects.indices
        self.n_aspects = aspects.n_aspects
        value = [{name: r.metric.value(r.params, name) for name in
                  ("alpha", "weights", "positions")} for r in self.per_user]
        self.slot_k = np.array([r.k for r in self.per_user], np.int64)
        self.slot_alpha = np.array([float(v["alpha"]) for v in value], np.float64)
        self.slot_weighted = np.array([v["weights"] == "value" for v in value], np.bool_)
        self.slot_discount = np.array([v["positions"] == "log" for v in value], np.bool_)

    def run(self, data: Truth, topk: AnyArray, rows: IntArray, counted: BoolArray,
            threads: int) -> FloatArray:
        """Per-user values, one row per request (NaN where not counted or without p)."""
        from ._kernels import frames
        from ._kernels.calibration import miscalibration_rows

        n_rows = topk.shape[0]
        n_train = self.train[0].shape[0] - 1
        if n_rows and int(rows.max()) >= n_train:
            raise ValueError(
                f"train has {n_train} rows but truth row {int(rows.max())} is evaluated; "
                f"miscalibration reads each user's train row: give train a row for every "
                f"truth row (the same users, in the same order)")
        n_chunks = max(n_ranges(n_rows, threads, n_rows * topk.shape[1], self.n_items), 1)
        check_scratch(self.n_items, 8, n_chunks)
        # and four markers per aspect (p, q, the touched aspects, their stamps) per range
        check_memory(32 * max(self.n_aspects, 1) * n_chunks,
                     f"item_aspects has {self.n_aspects:,} columns (aspects): "
                     f"miscalibration's per-aspect markers (32 bytes per aspect for each of "
                     f"{n_chunks} ranges of users)",
                     "number the aspects that occur 0..n-1 and build item_aspects with that "
                     "many columns")
        out = np.empty((len(self.per_user), n_rows), np.float64)
        args = (topk, rows, counted.view(np.uint8), self.slot_k, self.slot_alpha,
                self.slot_weighted, self.slot_discount, *self.train, self.a_indptr,
                self.a_indices, self.n_items, self.n_aspects, out)
        frame = frames.Frame(*args)
        done = frames.run(frames.walk(miscalibration_rows, frame.dtypes), frame, n_chunks)
        if not done.all():  # the walk's C wrapper cannot raise: it returned 0
            raise out_of_memory("the miscalibration kernel")
        return out
