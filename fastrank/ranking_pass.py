"""The ranking family's passes: the one-pass ranking walk (`fastrank._kernels.ranking`),
one pass per view of the truth (as given; at a relevance threshold; every stored entry
relevant), and the counts of the convention (m, counted) it writes as it walks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ._types import AnyArray, BoolArray, FloatArray, IntArray
from ._kernels import codes
from .discounts import discounts
from .grammar import Request
from .pass_protocol import Inputs, Setup, group_by
from .thresholds import STORED
from .threads import n_ranges
from .validation import (RENUMBER_ITEMS, Truth, check_scratch, memory_guard, out_of_memory)

# Bytes of the ranking kernel's scratch per item and range: an int64 stamp.
_RANK_BYTES = 8


class SlotTable:
    """The requests of one kernel pass at one relevance threshold (`rel`), and the
    kernel's slot table for them: the distinct cutoffs, each slot's code, cutoff and
    parameter."""

    def __init__(self, rel: Any, requests: Iterable[Request]) -> None:
        self.rel, self.requests = rel, list(requests)
        cutoffs = sorted({r.k for r in self.requests}) or [1]
        self.cutoffs = np.array(cutoffs, dtype=np.int64)
        position = {int(k): c for c, k in enumerate(self.cutoffs)}
        self.slot_code = np.array([-1 if r.code is None else r.code for r in self.requests],
                                  dtype=np.int64)
        self.slot_cut = np.array([position[r.k] for r in self.requests], dtype=np.int64)
        self.slot_param = np.array([r.metric.kernel_value(r.params) for r in self.requests],
                                   dtype=np.float64)
        self.needs = walk_needs(self.slot_code)



class RankingPass(SlotTable):
    """The ranking walk at one view of the truth. The pass of the truth as given writes
    the convention's counts as it walks (`writes_counts`); at another threshold every row
    with an entry is walked (the zeroed entries stay stored) and the counted rows picked
    afterwards."""

    def __init__(self, rel: Any, requests: Iterable[Request], judged: bool) -> None:
        super().__init__(rel, requests)
        self.per_user = self.requests
        self.judged = judged
        self.writes_counts = rel is None

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        if self.rel is None:
            rank_into(inputs.data, inputs.topk, inputs.rows, self, self.judged, inputs.threads,
                      out, inputs.n_relevant, inputs.counted.view(np.uint8))
            return
        n_rows = inputs.topk.shape[0]
        rank_into(inputs.view(self.rel), inputs.topk, inputs.rows, self, True,
                  inputs.threads, out, np.empty(n_rows, np.int64), np.empty(n_rows, np.uint8))
        out[:, ~inputs.counted] = np.nan


def walk_needs(slot_code: IntArray) -> dict[str, bool]:
    """What the ranking kernel's walk keeps for these slot codes: a graded ideal, that
    ideal uncut, exponential gains, the hits' positions and values (codes with a
    parameter: ERR, nERR, RBP), the codes outside the walk's core (`codes.CORE`). Flags,
    not work the kernel would compile to find out."""
    found = set(slot_code.tolist())
    return {"need_ideal": bool(found & {codes.NDCG, codes.NDCG_EXP, codes.NDCG_UNCUT,
                                        codes.NERR}),
            "need_full": codes.NDCG_UNCUT in found,
            "need_exp": bool(found & {codes.NDCG_EXP, codes.DCG_EXP}),
            "need_acc": any(code >= codes.ERR for code in found),
            "need_extended": any(0 <= code < codes.ERR and code not in codes.CORE
                                 for code in found)}


def ranking_passes(requests: Sequence[Request], setup: Setup) -> list[RankingPass]:
    """One pass per view of the truth: the truth as given (value > 0 is relevant) first,
    then one per relevance threshold, then every stored entry relevant (judged)."""
    groups: dict[Any, list[Request]] = group_by(
        requests, lambda r: STORED if r.metric.truth_view == "stored" else r.rel)
    order = sorted(groups, key=lambda rel: (0, 0) if rel is None else (2, 0) if rel is STORED
                   else (1, rel))
    return [RankingPass(rel, groups[rel], setup.judged) for rel in order]




class InputFlagged(Exception):
    """The ranking walk met an entry that the input checks refuse (see
    ranking.BAD_INPUT): the caller scans the inputs, which raises the checks' error (or
    makes a non-canonical truth canonical), and runs again."""


def rank_into(data: Truth, topk: AnyArray, rows: IntArray, ranking: SlotTable, judged: bool,
              threads: int, out: FloatArray, n_relevant: IntArray, counted: BoolArray) -> None:
    """Run the ranking kernel, filling out, n_relevant and counted. The inputs are
    scanned, or (data.scanned False, `evaluate`) checked by the walk as it reads them:
    InputFlagged if it meets what the scans refuse."""
    from ._kernels import frames  # numba loads on first use, not at import
    from ._kernels.ranking import (BAD_INPUT, MEMO_ROWS, MOST_ITEMS, NEEDS_SORT, RANGE_ROWS,
                                   may_need_sort, memo_entries, rank_rows, scratch)

    n_rows, width = topk.shape
    largest = int(ranking.cutoffs[-1])
    n_chunks = n_ranges(n_rows, threads, n_rows * width + data.indices.shape[0], data.n_items)
    n_chunks = max(n_chunks, -(-n_rows // RANGE_ROWS))  # the stamps' tags fit 31 bits
    check_scratch(data.n_items, _RANK_BYTES, n_chunks)
    if data.n_items >= MOST_ITEMS:  # (a machine of some 64 GiB or more gets this far)
        raise ValueError(f"truth has {data.n_items:,} columns (items), and the ranking "
                         f"metrics take fewer than 2^32; {RENUMBER_ITEMS}")
    needs = ranking.needs
    dtypes = (data.indptr.dtype.type, data.indices.dtype.type, data.data.dtype.type,
              topk.dtype.type, rows.dtype.type)
    # the walk that keeps the hits for ERR, nERR and RBP compiles only when they are asked,
    # the one that sorts a row's grades where they are not whole and small (may_need_sort)
    acc = needs["need_acc"]
    # the walk of the core codes (codes.CORE) compiles without the others' sums and slots
    extended = needs["need_extended"]
    # the memo of graded ideals (a walk of its own) pays for its compile in large calls
    n_memo = memo_entries(ranking.cutoffs.shape[0], ranking.slot_code.shape[0],
                          needs["need_ideal"]) if n_rows >= MEMO_ROWS else 0
    memo = n_memo > 0
    sort_first = needs["need_ideal"] and (frames.ready(rank_rows, acc, True, *dtypes, memo,
                                                       extended)
                                          or may_need_sort(data.data))
    for sorting in (True,) if sort_first else (False, True):
        # the most values of a row the walk keeps: the longest row's where it sorts them
        # or takes the uncut ideal, else a row's largest grades up to the largest cutoff
        # (no pass over indptr for the longest row: 1 ms a million rows, on one thread)
        if sorting or needs["need_full"] or largest > width:
            if data.steps[0] < 0:  # an unscanned indptr that decreases: no scratch sized by it
                raise InputFlagged
            kept = data.max_row_nnz
        else:
            kept = largest
        # discounts for the positions walked and for the ideal (cut at the largest cutoff)
        disc = discounts(max(min(width, largest), kept if needs["need_full"] else
                             min(largest, kept), 1))
        with memory_guard("the ranking kernel"):
            floats, ints, at, n_block = scratch(
                n_rows, n_chunks, data.n_items, kept, ranking.cutoffs.shape[0],
                ranking.slot_code.shape[0], min(width, largest), n_memo, acc)
            frame = frames.Frame(
                data.indptr, data.indices, data.data, topk, rows, data.n_items,
                ranking.cutoffs, ranking.slot_code, ranking.slot_cut, ranking.slot_param,
                judged, disc, kept, frames.Rows(out), n_relevant, counted,
                needs["need_ideal"], needs["need_full"], needs["need_exp"], np.cumsum(disc),
                floats, ints, at, n_block, n_memo)
            walk = frames.walk(rank_rows, acc, sorting, *dtypes, memo, extended)
            done = frames.run(walk, frame, n_chunks)
        if (done == BAD_INPUT).any():
            raise InputFlagged
        if not (done == NEEDS_SORT).any():
            break
    if not done.all():  # a walk's C wrapper cannot raise: it returned 0
        raise out_of_memory("the ranking kernel")


def counts_into(data: Truth, rows: IntArray, judged: bool, threads: int,
                n_relevant: IntArray, counted: AnyArray) -> None:
    """n_relevant and counted of checked inputs, as the ranking kernel writes them, where
    no ranking slot is asked (a kernel that compiles in a fraction of its time)."""
    from ._kernels import frames
    from ._kernels.ranking import relevant_counts

    n_rows = rows.shape[0]
    n_chunks = max(n_ranges(n_rows, threads, data.indices.shape[0] + n_rows, 1), 1)
    walk = frames.walk(relevant_counts, data.indptr.dtype.type, data.data.dtype.type,
                       rows.dtype.type)
    frames.run(walk, frames.Frame(data.indptr, data.data, rows, judged, n_relevant, counted),
               n_chunks)
