"""RecTools' partial AUCs inside `fastrank.evaluate` (the registry's "auc" engine):
`partial_auc@k` (pAUC@k) and `pap@k` (pAp@k), as `rectools.metrics.auc` computes them.

The k of these labels is not a list cutoff: it is the number of non-relevant items the
AUC is taken over, and the whole list (every column of topk) is read. A list needs about
k + m items (pAp: 2k) for the value to be the AUC it names; when a list has fewer than
k non-relevant items and misses a relevant item, RecTools calls it insufficient, and the
label's `insufficient=` says what to do, as RecTools' `insufficient_handling`:
"ignore" (compute it as is: the missing items rank below the list), "exclude" (NaN,
left out of the mean) or "raise" (a ValueError). The walk is `fastrank._kernels.auc`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ._types import AnyArray, BoolArray, FloatArray, IntArray
from .threads import n_ranges
from .validation import Truth, check_scratch, memory_guard

if TYPE_CHECKING:
    from .grammar import Request


class AUCPlan:
    """The partial-AUC requests of one evaluation, ready to run on any block of lists."""

    def __init__(self, requests: Iterable[Request], n_items: int) -> None:
        self.per_user = list(requests)
        self.n_items = n_items
        # the kernel's kind of each (pAUC or pAp): the registry's code
        self.slot_code = np.array([r.code for r in self.per_user], np.int64)
        self.slot_k = np.array([r.k for r in self.per_user], np.int64)
        self.handling = [r.metric.value(r.params, "insufficient") for r in self.per_user]

    def run(self, data: Truth, topk: AnyArray, rows: IntArray, counted: BoolArray,
            threads: int) -> FloatArray:
        """Per-user values, one row per request (NaN where not counted or excluded)."""
        from ._kernels.auc import partial_aucs

        n_rows = topk.shape[0]
        n_chunks = max(n_ranges(n_rows, threads, n_rows * topk.shape[1], self.n_items), 1)
        check_scratch(self.n_items, 16, n_chunks)
        out = np.empty((len(self.per_user), n_rows), np.float64)
        short = np.empty((len(self.per_user), n_rows), np.uint8)
        with memory_guard("the partial-AUC kernel"):
            partial_aucs(data.indptr, data.indices, data.data, topk, rows,
                         counted.view(np.uint8), self.slot_code, self.slot_k, self.n_items,
                         n_chunks, out, short)
        for s, (request, handling) in enumerate(zip(self.per_user, self.handling)):
            if handling == "ignore" or not short[s].any():
                continue
            if handling == "exclude":
                out[s, short[s] != 0] = np.nan
                continue
            n_short = int(np.count_nonzero(short[s]))
            first = int(rows[np.flatnonzero(short[s])[0]])
            raise ValueError(
                f"metrics: {request.label!r} needs at least k = {request.k} non-relevant items "
                f"in a list that misses a relevant item; {n_short} users have fewer (the "
                f"first: truth row {first}). Give longer lists (m + k items suffice for "
                f"partial_auc, 2k for pap), or write insufficient=ignore (compute as is) or "
                f"insufficient=exclude (leave those users out)")
        return out
