"""Debiased (inverse-propensity-weighted) recall, DCG and AP inside `fastrank.evaluate`
(the registry's "debiased" engine), after Yang et al., "Unbiased offline recommender
evaluation for missing-not-at-random implicit feedback" (RecSys 2018).

A relevant item i of the truth (an observed positive) is seen with a propensity p_i; its
weight is w_i = 1 / p_i. The propensities come from `propensity=` (an array of n_items,
finite and > 0), or are estimated from the popularity of the items in `train=` with the
paper's power-law model: p_i = (max(n_i, 1) / max_j n_j) ** ((γ + 1) / 2), n_i being the
number of training users with a positive entry for i (an item no one has counts as seen
once, as for novelty), scaled so that the most popular item has p = 1. γ is the label's
`gamma=` (default 0: p ∝ √n_i). The walk is `fastrank._kernels.debiased`.

Per user, with hits the relevant items of the first k and c_i an item's credit (1 for
recall, d(rank) for DCG, P@rank for AP), the paper's estimator (1/|S_u|)·Σ_hits c_i·w_i
needs |S_u|, the number of items relevant to the user whether observed or not. SNIPS
estimates it per user, Σ_{relevant i} w_i (only the ratios of the propensities matter);
IPS estimates it as m·w̄, w̄ the mean weight over every relevant entry of the truth
(the inverse of the mean observation rate; again only ratios matter). With equal
propensities both are the plain metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix

from .beyond import popularity
from .discounts import discounts
from .threads import n_ranges
from .validation import Truth, check_scratch, out_of_memory

if TYPE_CHECKING:
    from .grammar import Request

# the smallest propensity accepted: the weights 1/p of a whole catalogue still sum to a
# finite float64
SMALLEST_PROPENSITY = 1e-250


def check_propensity(propensity: ArrayLike, n_items: int) -> FloatArray:
    """The weights 1/p (a new float64 array) of the `propensity=` array, or an error
    naming what is wrong. The caller's array is never modified."""
    if sp.issparse(propensity):
        raise TypeError("propensity must be a dense 1-D array with one propensity per item; "
                        "got a sparse matrix. Pass propensity.toarray().ravel()")
    values = np.asarray(propensity)
    if values.dtype == np.bool_ or values.dtype.kind not in "iuf":
        raise TypeError(f"propensity must hold real numbers (the chance that a relevant item "
                        f"is observed), one per item; got dtype {values.dtype}")
    if values.ndim != 1 or values.shape[0] != n_items:
        raise ValueError(f"propensity must be 1-D with one value per item (n_items = "
                         f"{n_items}, truth's columns); got shape {values.shape}")
    values = values.astype(np.float64)  # a copy: the caller's array stays as it is
    bad = ~np.isfinite(values)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(f"propensity contains {float(values[at])!r} at item {at} "
                         f"({int(bad.sum())} such items); every propensity must be a finite "
                         f"number > 0")
    low = values < SMALLEST_PROPENSITY
    if low.any():
        at = int(np.flatnonzero(low)[0])
        raise ValueError(
            f"propensity contains {float(values[at])!r} at item {at} ({int(low.sum())} items below "
            f"{SMALLEST_PROPENSITY:g}); an item that is never observed cannot be reweighted "
            f"(and 1 / propensity must stay far from overflow): give every item a propensity "
            f"of at least {SMALLEST_PROPENSITY:g}, e.g. np.clip(propensity, 1e-3, 1)")
    return 1.0 / values


def popularity_weights(counts: FloatArray, gamma: float) -> FloatArray:
    """1/p for the popularity model p_i = (max(n_i, 1) / max_j n_j) ** ((gamma + 1) / 2)."""
    seen = np.maximum(counts, 1.0)
    return (seen / seen.max()) ** (-(gamma + 1.0) / 2.0) if seen.size else seen


class DebiasedPlan:
    """The debiased requests with their propensities checked and turned into weights once
    (one weight vector per γ), ready to run on any block of lists."""

    def __init__(self, requests: Iterable[Request], n_items: int, *,
                 train: SparseMatrix | None, propensity: ArrayLike | None) -> None:
        """requests whose side inputs `check_side_inputs` has accepted."""
        self.n_items = n_items
        self.requests = list(requests)
        check_scratch(n_items, 8, 1)  # the weights of every item
        if propensity is not None:
            written = [r.label for r in self.requests if "gamma" in dict(r.params)]
            if written:
                raise ValueError(
                    f"{written[0]}: gamma= is the exponent of propensities estimated from "
                    f"train=, but propensity= is given and used as it is; drop gamma= from "
                    f"the label, or drop propensity= to estimate the propensities")
            weights = check_propensity(propensity, n_items)
            self.groups = [(weights, self.requests)]
        else:
            counts = popularity(train, n_items)[0]
            by_gamma: dict[float, list[Request]] = {}
            for r in self.requests:
                by_gamma.setdefault(r.metric.kernel_value(r.params), []).append(r)
            self.groups = [(popularity_weights(counts, gamma), group)
                           for gamma, group in by_gamma.items()]
        # the order of the per-user rows of `run`
        self.per_user = [r for _, group in self.groups for r in group]
        self._means: tuple[Truth, list[float]] | None = None

    def mean_weights(self, data: Truth) -> list[float]:
        """The mean weight over every relevant entry of the truth (all its rows), per
        group: the IPS slots divide by m times it. Kept for the truth last seen."""
        if self._means is None or self._means[0] is not data:
            relevant = data.indices[data.data > 0]
            self._means = (data, [float(np.mean(weights[relevant])) if relevant.size else 1.0
                                  for weights, _ in self.groups])
        return self._means[1]

    def run(self, data: Truth, topk: AnyArray, rows: IntArray, counted: BoolArray,
            threads: int) -> FloatArray:
        """Per-user values, one row per request of `per_user`, NaN where not counted."""
        from ._kernels import frames
        from ._kernels.debiased import debiased_rows

        n_rows, width = topk.shape
        means = self.mean_weights(data)
        out = np.empty((len(self.per_user), n_rows), np.float64)
        n_chunks = max(n_ranges(n_rows, threads, n_rows * width, self.n_items), 1)
        check_scratch(self.n_items, 16, n_chunks)  # two int64 markers per item and range
        row = 0
        for (weights, group), w_mean in zip(self.groups, means):
            cutoffs = np.array(sorted({r.k for r in group}), dtype=np.int64)
            position = {int(k): c for c, k in enumerate(cutoffs)}
            slot_code = np.array([r.code for r in group], dtype=np.int64)
            slot_cut = np.array([position[r.k] for r in group], dtype=np.int64)
            disc = discounts(max(min(width, int(cutoffs[-1])), 1))
            args = (data.indptr, data.indices, data.data, topk, rows, counted.view(np.uint8),
                    weights, w_mean, cutoffs, slot_code, slot_cut, disc, self.n_items,
                    out[row:row + len(group)])
            frame = frames.Frame(*args)
            done = frames.run(frames.walk(debiased_rows, frame.dtypes), frame, n_chunks)
            if not done.all():  # the walk's C wrapper cannot raise: it returned 0
                raise out_of_memory("the debiased kernel")
            row += len(group)
        return out

