"""The trec family's passes: trec_eval's measures (bpref, iprec, infAP, ...) by trec_eval's
own kernel (`fastrank._kernels.trec`), one pass per relevance threshold."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._types import AnyArray, BoolArray, FloatArray, IntArray
from ._kernels import codes
from .grammar import Request
from .pass_protocol import Inputs, Setup, group_by
from .ranking_pass import SlotTable
from .threads import n_ranges
from .validation import Truth, memory_guard, optional_scratch, out_of_memory


class TrecPass(SlotTable):
    """trec_eval's measures at one relevance threshold."""

    def __init__(self, rel: object, requests: Sequence[Request]) -> None:
        super().__init__(rel, requests)
        self.per_user = self.requests

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        trec_into(inputs.data, inputs.topk, inputs.rows, self, inputs.threads, out,
                  inputs.counted)


def trec_passes(requests: Sequence[Request], setup: Setup) -> list[TrecPass]:
    return [TrecPass(rel, group) for rel, group in group_by(requests, lambda r: r.rel).items()]


def trec_into(data: Truth, topk: AnyArray, rows: IntArray, trec: SlotTable,
              threads: int, out: FloatArray, counted: BoolArray) -> None:
    """trec_eval's measures (bpref, iprec, infap, ...) of checked inputs, NaN where not
    counted.

    trec_eval's kernel reads truth row i for list i, stops at the first -1 and looks every
    id up: rows are gathered, padding and repeats before the end of a list become an id
    outside the catalogue (retrieved, not judged), as the ranking kernel counts them."""
    n_rows = topk.shape[0]
    # a measure with a cutoff sees the whole list (a hole before a later id is a
    # retrieved document); the others see the list cut at their k
    k = topk.shape[1] if any(r.metric.cutoff for r in trec.requests) else \
        max(r.k for r in trec.requests)
    lists = _trec_lists(topk[:, :k], data.n_items)
    indptr, indices, values = _rows_of(data, rows)
    level = math.ulp(0.0) if trec.rel is None else float(trec.rel)
    n_slots = len(trec.requests)
    none = np.zeros(n_slots, np.int64)
    columns = (np.array([r.code for r in trec.requests], np.int64),
               np.array([r.k if r.metric.cutoff else 0 for r in trec.requests], np.int64),
               trec.slot_param, none, none, np.zeros(0, np.int64), np.zeros(0, np.float64))
    max_row_nnz = int(np.diff(indptr).max()) if n_rows else 0
    with memory_guard("trec_eval's kernel"):
        values_out = trec_values(indptr, indices, values, lists, level, columns, threads,
                                 max_row_nnz, data.n_items + 1)
    empty = ~(topk[:, :k] >= 0).any(axis=1)
    for s, request in enumerate(trec.requests):
        if request.code == codes.TREC_UNJ:  # trec_eval -c resets unj of a query without results
            values_out[s, empty] = 0.0
    values_out[:, ~counted] = np.nan
    out[...] = values_out


def trec_values(indptr: IntArray, indices: AnyArray, values: FloatArray, lists: AnyArray,
                level: float, columns: Sequence[AnyArray], threads: int, max_row_nnz: int,
                n_docs: int, judged_only: bool = False, num_docs: int = 2 ** 63 - 1,
                max_level: float = 0) -> FloatArray:
    """trec_eval's kernel over checked CSR arrays and lists (ids below n_docs): the
    (slots, queries) values of the slot arrays `columns` (code, cut, point, lo, hi, extra
    levels, extra values); judged_only, num_docs and max_level as the kernel reads them."""
    from ._kernels import frames
    from ._kernels.trec import GAIN_CODES, trec_rows

    n_rows = lists.shape[0]
    longest = max(lists.shape[1], max_row_nnz, 1)
    # the C library's log2, which trec_eval divides by (numpy's own may differ in an ulp)
    log2s = np.array([math.log2(j) for j in range(2, longest + 3)], np.float64)
    out = np.zeros((columns[0].shape[0], n_rows), np.float64)
    n_chunks = max(n_ranges(n_rows, threads, lists.size, 1), 1)
    frame = frames.Frame(indptr, indices, values, lists, float(level), *columns,
                         bool(judged_only), num_docs, int(max_level),
                         optional_scratch(n_docs, 16, n_chunks), log2s, max_row_nnz, out)
    # the walk of measures without graded gains compiles none of theirs (trec_rows)
    graded = bool(GAIN_CODES & set(columns[0].tolist()))
    walk = frames.walk(trec_rows, indptr.dtype.type, indices.dtype.type, values.dtype.type,
                       lists.dtype.type, graded)
    if not frames.run(walk, frame, n_chunks).all():  # a walk's C wrapper cannot raise
        raise out_of_memory("trec_eval's kernel")
    return out


def _trec_lists(topk: AnyArray, n_items: int) -> IntArray:
    """Lists for trec_eval's kernel: a -1 or a repeated id before a list's last real id
    becomes n_items (a retrieved document that is in no qrels); trailing padding stays."""
    lists = np.array(topk, dtype=np.int64)
    if lists.shape[1] == 0:
        lists = np.full((lists.shape[0], 1), -1, np.int64)
    order = np.argsort(lists, axis=1, kind="stable")
    ordered = np.take_along_axis(lists, order, axis=1)
    repeat = np.zeros(lists.shape, np.bool_)
    repeat[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    again = np.zeros(lists.shape, np.bool_)
    np.put_along_axis(again, order, repeat, axis=1)
    hole = again | (lists < 0)
    real = ~hole
    # the position after each list's last real id: holes before it are filled
    last = lists.shape[1] - np.argmax(real[:, ::-1], axis=1)
    last[~real.any(axis=1)] = 0
    inside = np.arange(lists.shape[1])[None, :] < last[:, None]
    lists[hole & inside] = n_items
    lists[hole & ~inside] = -1
    # an empty list is scored as trec_eval -c scores a query without results: one
    # retrieved document in no qrels (iprec's 0/0 would otherwise be NaN)
    lists[~real.any(axis=1), 0] = n_items
    return np.ascontiguousarray(lists)


def _rows_of(data: Truth, rows: IntArray) -> tuple[IntArray, AnyArray, FloatArray]:
    """The CSR arrays of truth rows `rows` in that order (the truth itself when rows is
    every row in order)."""
    if rows.shape[0] == data.n_users and (rows == np.arange(data.n_users)).all():
        return data.indptr, data.indices, data.data
    starts, ends = data.indptr[rows], data.indptr[rows + 1]
    lengths = ends - starts
    indptr = np.zeros(rows.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
    return indptr, data.indices[take], data.data[take]
