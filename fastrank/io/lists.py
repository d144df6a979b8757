"""Turning (row, item, score or rank) records into fastrank's top-K array.

Shared by the TREC run reader and the data-frame reader: both hand over one record per
retrieved item and get back a (n_rows, width) int64 array, best first, padded with -1.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._types import AnyArray, BoolArray, IntArray
from ..threads import numba_threads


_SURROGATE = re.compile("[\ud800-\udfff]")


def factorize(values: ArrayLike) -> tuple[AnyArray, IntArray]:
    """(the sorted distinct values, each value's position among them): np.unique's
    (values, inverse), found by hashing (pandas' factorize where pandas is installed,
    else a dict), so only the distinct values are sorted; on millions of document names
    with a few thousand distinct ones this is 3 to 5 times faster than np.unique's sort."""
    values = np.asarray(values)
    if values.dtype.kind not in "US":
        return np.unique(values, return_inverse=True)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the environment
        seen: dict[Any, int] = {}
        codes = np.fromiter((seen.setdefault(v, len(seen)) for v in values.tolist()),
                            np.int64, values.size)
        distinct = np.array(list(seen), dtype=values.dtype)
    else:
        codes, distinct = pd.factorize(values)
        distinct = np.asarray(distinct, dtype=values.dtype)
        if distinct.dtype.kind == "U" and _SURROGATE.search("".join(distinct.tolist())):
            # pandas hashes strings with lone surrogates (bytes that were not UTF-8,
            # read with surrogateescape) as if they were equal: 'x\udce9' and 'x\udca9'
            # become one value. Such a value is then among the distinct ones: sort instead
            return np.unique(values, return_inverse=True)
    order = np.argsort(distinct, kind="stable")
    position = np.empty(order.size, np.int64)
    position[order] = np.arange(order.size)
    return distinct[order], position[codes]


def lookup(vocab: AnyArray, values: AnyArray) -> tuple[IntArray, BoolArray]:
    """(position of each value in the sorted vocab, whether it is there)."""
    index = np.searchsorted(vocab, values)
    if not vocab.size:
        return index, np.zeros(values.shape, bool)
    return index, vocab[np.minimum(index, vocab.size - 1)] == values


def by_score(rows: IntArray, items: IntArray, scores: AnyArray, n_rows: int,
             ids: AnyArray, ties: str = "trec_eval") -> tuple[IntArray, bool]:
    """(order, tied): the order of the records that ranks each row by score descending,
    and whether two records of one row have the same score. Equal scores go as `ties`
    says: "trec_eval", by item id descending as text, as trec_eval breaks them (its qsort
    compares the document ids as strings, strcmp, the larger first, so "9" ranks above
    "10"); "docno", by id ascending as text; "file", in the records' order.

    `items` are codes into `ids`, the sorted distinct ids. Codes of text ids already
    follow the strings' order; for ids of other types the text order is computed, and
    only when a row has a tie.
    """
    sign = -1 if ties == "docno" else 1
    second = np.zeros(rows.shape[0], np.int64) if ties == "file" else sign * items
    order = _sorted(rows, scores, second, n_rows)
    tied = _tied(rows, scores, order)
    if tied and ties != "file" and ids.dtype.kind not in "US":
        order = _sorted(rows, scores, sign * text_ranks(ids)[items], n_rows)
    return order, tied


def _sorted(rows: IntArray, first: AnyArray, second: IntArray, n_rows: int) -> IntArray:
    """The records' order grouped by row, each row by `first` descending, then `second`
    descending, then in the records' order."""
    from .._kernels.lists import group_rows, sort_rows

    order, starts = group_rows(rows, n_rows)
    with numba_threads(None):
        sort_rows(order, starts, first, second)
    return order  # type: ignore[no-any-return]  # the kernel's int64 array


def _tied(rows: IntArray, scores: AnyArray, order: IntArray) -> bool:
    """Do two records of one row have the same score?"""
    rows_s, scores_s = rows[order], scores[order]
    return bool(((rows_s[1:] == rows_s[:-1]) & (scores_s[1:] == scores_s[:-1])).any())


def text_ranks(ids: AnyArray) -> IntArray:
    """The rank of each id in the byte order of its text, as trec_eval orders document
    ids (UTF-8 text sorts as its code points do): int64, one per id."""
    if ids.dtype.kind in "iub":
        text = ids.astype(str)
    elif ids.dtype.kind in "US":
        text = ids
    else:
        text = np.array([str(v) for v in ids.tolist()], dtype=str)
    ranks = np.empty(ids.shape[0], np.int64)
    ranks[np.argsort(text, kind="stable")] = np.arange(ids.shape[0])
    return ranks


def by_rank(rows: IntArray, ranks: AnyArray, n_rows: int) -> tuple[IntArray, int]:
    """The order of the records that ranks each row by its rank column, ascending, and the
    position of the first record whose (row, rank) repeats an earlier one (-1 if none)."""
    order = _sorted(rows, -ranks, np.zeros(ranks.shape[0], np.int64), n_rows)
    rows_s, ranks_s = rows[order], ranks[order]
    repeated = np.flatnonzero((rows_s[1:] == rows_s[:-1]) & (ranks_s[1:] == ranks_s[:-1]))
    return order, (int(order[repeated[0] + 1]) if repeated.size else -1)


def pack(rows: IntArray, items: IntArray, n_rows: int,
         depth: int | None = None) -> tuple[IntArray, BoolArray]:
    """(topk, kept): rows grouped in ascending order and items in rank order within each row,
    packed into a (n_rows, width) int64 array padded with -1, where width is the longest
    list cut at `depth`; `kept` marks the records that fit."""
    counts = np.bincount(rows, minlength=n_rows)
    starts = np.cumsum(counts) - counts
    position = np.arange(rows.shape[0]) - starts[rows]
    width = int(counts.max()) if counts.size else 0
    if depth is not None:
        width = min(width, depth)
    topk = np.full((n_rows, max(width, 1)), -1, np.int64)
    kept = position < width
    topk[rows[kept], position[kept]] = items[kept]
    return topk, kept
