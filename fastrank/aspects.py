"""Item aspects (genres, topics, subtopics): checked once, and grouped by aspect set.

`item_aspects` is a sparse items x aspects matrix whose stored non-zero entries mark an
item's aspects (values 0/1 or bool). `check_aspects` turns it into canonical CSR arrays;
`aspect_groups` partitions the items that have aspects into groups with equal aspect
sets, which the αβ-nDCG ideal treats as one candidate each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix
from .discounts import discounts
from .scratch import give, lend
from .threads import n_ranges
from .validation import _csr_parts, _index_array, check_scratch, out_of_memory

if TYPE_CHECKING:
    from .validation import Truth


@dataclass(frozen=True)
class Aspects:
    """A checked item x aspect membership matrix as canonical CSR arrays."""

    indptr: IntArray     # int64, n_items + 1
    indices: AnyArray    # int32 or int64, sorted within each item
    n_items: int
    n_aspects: int

    @cached_property
    def masks(self) -> IntArray:
        """Each item's aspect set as a 64-bit mask (all bits set past 64 aspects)."""
        if self.n_aspects > 64:
            return np.full(self.n_items, -1, np.int64)
        bits = np.left_shift(np.int64(1), self.indices.astype(np.int64))
        owner = np.repeat(np.arange(self.n_items), np.diff(self.indptr))
        masks = np.zeros(self.n_items, np.int64)
        np.bitwise_or.at(masks, owner, bits)
        return masks

    @cached_property
    def table(self) -> AnyArray:
        """Each item's aspects in a row of one width, ascending, padded with the aspect
        n_aspects (whose interest the αβ walk keeps at 0); an item with more aspects than
        the width has -1 first and is read from the CSR arrays. The width covers 99% of
        the items; where that is over _TABLE_WIDTH the table has no columns (a long loop
        costs what the table saves)."""
        counts = np.diff(self.indptr)
        dtype = self._table_dtype
        if self.n_items == 0:
            return np.zeros((0, 0), dtype)
        below = np.cumsum(np.bincount(counts))  # items with at most w aspects
        width = int(np.searchsorted(below, np.ceil(_TABLE_SHARE * self.n_items)))
        if width > _TABLE_WIDTH:
            return np.zeros((self.n_items, 0), dtype)
        width = max(width, 1)
        table: AnyArray = np.full((self.n_items, width), self.n_aspects, dtype)
        starts = self.indptr[:-1]
        fits = counts <= width
        for w in range(width):  # the w-th aspect of each item that has one
            has = np.flatnonzero(fits & (counts > w))
            table[has, w] = self.indices[starts[has] + w]
        table[~fits, 0] = -1
        return table

    def table_for(self, lookups: int) -> AnyArray:
        """`table` for a walk that reads items' aspects `lookups` times, or a table of no
        columns (read the CSR arrays) where that is fewer than the items and the table is
        not built yet: building it reads every item."""
        if lookups < self.n_items and "table" not in self.__dict__:
            return np.zeros((0, 0), self._table_dtype)
        return self.table

    @property
    def _table_dtype(self) -> type:
        return np.int32 if self.n_aspects < np.iinfo(np.int32).max else np.int64


_TABLE_SHARE = 0.99  # the share of the items whose aspects fit Aspects.table's width
_TABLE_WIDTH = 8  # the widest table


def check_aspects(item_aspects: SparseMatrix, n_items: int, name: str = "item_aspects") -> Aspects:
    """Check an items x aspects 0/1 matrix with one row per catalogue item."""
    indptr, indices, data, (rows, n_aspects), canonical = _csr_parts(
        item_aspects, name, "0/1 membership", axes=("item", "aspect"))
    if rows != n_items:
        raise ValueError(
            f"{name} has {rows} rows but the catalogue has {n_items} items (the columns of "
            f"truth); pass one row per item, items x aspects")
    # the values as stored (converting a COO adds up its repeated entries)
    stored = np.asarray(item_aspects.data if item_aspects.format in ("csr", "csc", "coo", "bsr")
                        else data)
    # the usual matrix stores only 1s: one pass says so, and there is nothing to drop
    keep = None if (stored == 1).all() else _memberships(stored, data, name)
    if keep is not None or not canonical:
        values = np.ones(indices.shape[0], np.int8) if keep is None else \
            keep[: indices.shape[0]].astype(np.int8)
        csr = sp.csr_array((values, indices.copy(), indptr.copy()), shape=(rows, n_aspects))
        csr.sum_duplicates()
        csr.eliminate_zeros()
        indptr, indices = csr.indptr, csr.indices
    return Aspects(indptr=indptr.astype(np.int64, copy=False), indices=_index_array(indices),
                   n_items=rows, n_aspects=n_aspects)


def _memberships(stored: AnyArray, data: AnyArray, name: str) -> BoolArray | None:
    """Which of the entries `data` (item_aspects' entries as CSR) are memberships, where
    the values as stored are not all 1: None where every one is, and an error where a
    stored value is neither 0 nor 1."""
    if stored.size and not np.all((stored == 0) | (stored == 1)):
        bad = stored[(stored != 0) & (stored != 1)].ravel()[0]
        raise ValueError(
            f"{name} must hold 0/1 (or bool) memberships; found the value {bad}. Mark an "
            f"item's aspects with 1, e.g. (item_aspects > 0).astype(np.int8)")
    keep = np.asarray(data) != 0
    return None if keep.all() else keep


@dataclass(frozen=True)
class Groups:
    """Items with at least one aspect, grouped by equal aspect set."""

    ptr: np.ndarray         # int64, n_groups + 1
    items: np.ndarray       # int32 (int64 past 2^31 items), the items of group g at
                            # items[ptr[g]:ptr[g + 1]], ascending
    first: np.ndarray       # as items, per group: its first (lowest) item, items[ptr[g]], in an
                            # array of the groups' size (the ideal reads it where items[]
                            # would miss the cache)
    item_group: np.ndarray  # as items, per item: its group (n_groups for items without aspects)
    aspect_ptr: np.ndarray  # int64, n_groups + 1: group g's aspects are
    aspects: np.ndarray     # aspects[aspect_ptr[g]:aspect_ptr[g + 1]], ascending
    masks: np.ndarray       # int64 per group, as Aspects.masks
    by_ptr: np.ndarray      # int64, n_aspects + 1: the groups that hold aspect φ are
    links: np.ndarray       # links[by_ptr[φ]:by_ptr[φ + 1]], ascending (by first item
                            # where pairs are indexed and there are at most 64 aspects)
    pair_ptr: np.ndarray    # int64, n_aspects² + 1 (or [0]: no pairs): the groups that hold
                            # φ and ψ are links[pair_ptr[φ·n + ψ]:pair_ptr[φ·n + ψ + 1]]
    width: int              # the most aspects of a group (0 without groups)


def aspect_groups(aspects: Aspects) -> Groups:
    """Group the items by aspect set on the calling thread (see Grouping)."""
    return Grouping(aspects).groups()


def _set_weights(n_aspects: int) -> IntArray:
    """The random 64-bit weight of each aspect that an item's set hash sums (group_sets),
    the same in every call: drawn once for counts up to _CACHED_ASPECTS (drawing them took
    40 microseconds of a call), where a few arrays of at most 512 KiB stay alive."""
    if n_aspects <= _CACHED_ASPECTS:
        return _cached_weights(n_aspects)
    return _draw_weights(n_aspects)


_CACHED_ASPECTS = 1 << 16


def _draw_weights(n_aspects: int) -> IntArray:
    return np.random.default_rng(0x5EED).integers(1, 2**63 - 1, size=n_aspects,
                                                  dtype=np.int64)


# shared by every call with that count: never written (left writeable, as a read-only
# array would compile the kernels once more for its type)
_cached_weights = lru_cache(maxsize=4)(_draw_weights)


class Grouping:
    """The items grouped by aspect set (one hash-table pass, `group_sets`, then the index
    of each group's aspects and each aspect's groups, `group_index`): groups ordered by set
    size, so that a scan's inner loop over a group's aspects runs the same number of times
    for long stretches (no branch mispredicts), then by lowest item.

    The kernel's arguments (`args`, outputs allocated here) can ride in another parallel
    run as one of its ranges (the check of a dense γ does this, `diversity._dense_gamma`),
    which then hands back n_groups (`done`); otherwise `groups()` runs it here, serially."""

    def __init__(self, aspects: Aspects) -> None:
        from ._kernels.aspects import group_scratch

        self.aspects = aspects
        n_items, n_stored = aspects.n_items, aspects.indices.shape[0]
        weights = _set_weights(max(aspects.n_aspects, 1))
        # item ids and groups in 32 bits where they fit: the ideal reads them at random
        # (a smaller footprint in the caches: 1-7% of the ideal on shapes A and R)
        ids = np.int32 if n_items < 2**31 else np.int64
        self.item_group = np.empty(n_items, ids)
        self.ptr = np.empty(n_items + 1, np.int64)
        self.items = np.empty(n_items, ids)
        self.aspect_ptr = np.empty(n_items + 1, np.int64)
        self.group_aspects = np.empty(n_stored, aspects.indices.dtype)
        self.by_ptr = np.empty(aspects.n_aspects + 1, np.int64)
        self.by_group = np.empty(n_stored, np.int64)
        # the kernel's own scratch, lent: fresh pages on every call cost more than the
        # hash table's pass (fastrank.scratch)
        self._scratch: np.ndarray | None = lend(group_scratch(n_items), np.int64)
        self.args = (aspects.indptr, aspects.indices, weights, aspects.n_aspects,
                     self.item_group, self.ptr, self.items, self.aspect_ptr,
                     self.group_aspects, self.by_ptr, self.by_group, self._scratch)
        self.n_links = n_stored  # the work: one hash term and one index entry each
        self.n_groups: int | None = None

    def done(self, n_groups: int) -> None:
        """Record a run of the kernel elsewhere (it wrote this grouping's arrays)."""
        self.n_groups = n_groups
        self.release()

    def release(self) -> None:
        """Give the kernel's scratch back to the pool, once: after the kernel ran, or where
        the caller fails before it does (a later call may already hold the buffer again,
        so a second give would hand it out twice)."""
        if self._scratch is not None:
            give(self._scratch)
            self._scratch = None

    def groups(self) -> Groups:
        if self.n_groups is None:
            from ._kernels.aspects import group_items

            self.n_groups = int(group_items(*self.args))
            self.release()
        n_groups, aspects = self.n_groups, self.aspects
        ptr = self.ptr[: n_groups + 1]
        items = self.items[: ptr[-1]]
        aspect_ptr = self.aspect_ptr[: n_groups + 1]
        n_links = int(aspect_ptr[-1])
        group_aspects, by_group = self.group_aspects[:n_links], self.by_group[:n_links]
        # groups come in ascending order of set size (group_sets): the last is the widest
        width = int(aspect_ptr[n_groups] - aspect_ptr[n_groups - 1]) if n_groups else 0
        pair_ptr, pair_groups = _pairs(group_aspects, aspect_ptr, aspects.n_aspects, width,
                                       n_links)
        first = items[ptr[:-1]]
        if aspects.n_aspects > 64:  # every bit set, as Aspects.masks
            masks = np.full(n_groups, -1, np.int64)
        else:
            masks = aspects.masks[first]
        if pair_groups.size and aspects.n_aspects <= 64:
            # an aspect's own groups in the order of their first items (the ideal's
            # _alone_lowest reads them so where masks and pairs are used)
            from ._kernels.aspects import alone_order

            links = np.empty(n_links + pair_groups.shape[0], np.int64)
            alone_order(self.item_group, ptr, items, aspect_ptr, group_aspects, self.by_ptr,
                        links)
            links[n_links:] = pair_groups
        else:
            links = np.concatenate([by_group, pair_groups]) if pair_groups.size else by_group
        return Groups(ptr=ptr, items=items, first=first, item_group=self.item_group,
                      aspect_ptr=aspect_ptr, aspects=group_aspects, masks=masks,
                      by_ptr=self.by_ptr, links=links, pair_ptr=pair_ptr, width=width)


# Pairs of aspects are indexed (n_aspects² offsets) up to this many aspects.
_PAIR_ASPECTS = 256


def _pairs(group_aspects: IntArray, aspect_ptr: IntArray, n_aspects: int, width: int,
           start: int) -> tuple[IntArray, IntArray]:
    """The groups of each ordered pair of distinct aspects (φ, ψ), ascending, as offsets
    (from `start`, for links) at φ·n_aspects + ψ; ([0], []) where there are too many
    aspects or no group has two."""
    if width < 2 or n_aspects > _PAIR_ASPECTS:
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    group_aspects = group_aspects.astype(np.int64)  # pair keys reach n_aspects²
    owner = np.repeat(np.arange(aspect_ptr.shape[0] - 1), np.diff(aspect_ptr))
    keys, groups = [], []
    for d in range(1, width):  # entries j and j + d of one group: both orders
        j = np.flatnonzero(owner[d:] == owner[:-d])
        first, second = group_aspects[j], group_aspects[j + d]
        keys += [first * n_aspects + second, second * n_aspects + first]
        groups += [owner[j], owner[j]]
    key = np.concatenate(keys)
    group = np.concatenate(groups)
    pair_ptr = np.full(n_aspects * n_aspects + 1, start, np.int64)
    np.cumsum(np.bincount(key, minlength=n_aspects * n_aspects), out=pair_ptr[1:])
    pair_ptr[1:] += start
    return pair_ptr, group[np.lexsort((group, key))]


def alpha_ndcg_values(data: Truth, topk: AnyArray, rows: IntArray, aspects: Aspects,
                      cutoffs: IntArray, alpha: float,
                      threads: int) -> tuple[FloatArray, IntArray]:
    """(α-nDCG per cutoff and top-K row, NaN where the user has no relevant item; m per
    row) of checked inputs: the kernel run for `fr.alpha_ndcg` and `fr.evaluate`."""
    from ._kernels import frames  # numba loads on first use
    from ._kernels.aspects import alpha_rows

    n = rows.shape[0]
    out = np.empty((cutoffs.shape[0], n), np.float64)
    n_relevant = np.empty(n, np.int64)
    # ranks walked: the list's, up to the largest cutoff, and the ideal's (at most m)
    walked = min(int(cutoffs[-1]), max(topk.shape[1], data.max_row_nnz, 1))
    chunks = max(n_ranges(n, threads, n * walked, data.n_items), 1)
    check_scratch(data.n_items, 8, chunks)
    args = (data.indptr, data.indices, data.data, rows, topk, aspects.indptr, aspects.indices,
            aspects.n_aspects, data.n_items, alpha, cutoffs, discounts(walked),
            data.max_row_nnz, out, n_relevant)
    frame = frames.Frame(*args)
    done = frames.run(frames.walk(alpha_rows, frame.dtypes), frame, chunks)
    if not done.all():  # the walk's C wrapper cannot raise: it returned 0
        raise out_of_memory("the α-nDCG kernel")
    return out, n_relevant


def intent_values(data: Truth, topk: AnyArray, rows: IntArray, aspects: Aspects,
                  cutoffs: IntArray, *, alpha: float = 0.5, binary: bool = False,
                  max_grade: float = 1.0, map_full: bool = False, want_ideal: bool = True,
                  weights: tuple[IntArray, AnyArray, FloatArray] | None = None,
                  threads: int = 1, novelty: bool = False, beta: float = 0.5,
                  want_full: bool = False) -> tuple[FloatArray, IntArray]:
    """(values[field, cutoff, row] of the intent-aware measures, the fields of
    `fastrank._kernels.intents`; the number of intents per row) of checked inputs:
    the kernel run for `fr.intent_aware` and `fr.evaluate`. `weights` (CSR arrays of
    users x aspects, non-negative) gives P(intent | user) instead of uniform. `novelty`
    runs the walk that also writes S-recall and NRBP (persistence `beta`), and nNRBP
    with `want_full` (the ideal over every relevant item); the other walk, which a call
    without them compiles, has none of their code."""
    from ._kernels import frames  # numba loads on first use
    from ._kernels.intents import N_CORE, N_FIELDS, intent_rows

    n = rows.shape[0]
    walked = max(min(int(cutoffs[-1]), topk.shape[1]), 1)  # the ranks past a list are empty
    out = np.empty((N_FIELDS if novelty else N_CORE, cutoffs.shape[0], n), np.float64)
    n_intents = np.empty(n, np.int64)
    has_weights = weights is not None
    if weights is None:
        weights = (np.zeros(data.n_users + 1, np.int64), np.zeros(0, np.int64),
                   np.zeros(0, np.float64))
    chunks = max(n_ranges(n, threads, n * walked, data.n_items), 1)
    check_scratch(data.n_items, 16, chunks)
    args = (data.indptr, data.indices, data.data, rows, topk, aspects.indptr, aspects.indices,
            aspects.n_aspects, data.n_items, weights[0], weights[1], weights[2], has_weights,
            float(alpha), bool(binary), float(max_grade), bool(map_full), bool(want_ideal),
            cutoffs, discounts(walked), data.max_row_nnz, out, n_intents, float(beta),
            bool(want_full))
    frame = frames.Frame(*args)
    done = frames.run(frames.walk(intent_rows, frame.dtypes, bool(novelty)), frame, chunks)
    if not done.all():  # the walk's C wrapper cannot raise: it returned 0
        raise out_of_memory("the intent-aware kernel")
    return out, n_intents


# ndeval's ideal sums: ranks summed at a time (the first span, doubling up to the last), and
# the most ranks summed before a sum that still grows is refused (its cost grows with k)
_FIRST_SPAN, _LAST_SPAN, _MOST_RANKS = 1 << 12, 1 << 20, 1 << 26


def _ideal_sums(term: Callable[[FloatArray], FloatArray], cutoffs: IntArray,
                name: str) -> FloatArray:
    """Σ_{r≤k} term(r) at each cutoff k, added rank by rank as np.cumsum adds them. The
    terms never grow: once a whole span of them leaves the sum as it was, so do all the
    later ones, and a cutoff past the lists costs no more than the ranks that count."""
    out = np.empty(cutoffs.shape[0], np.float64)
    total, done, c, span = 0.0, 0, 0, _FIRST_SPAN
    while c < cutoffs.shape[0]:
        if done >= _MOST_RANKS:
            raise ValueError(
                f"metrics: {name}@{int(cutoffs[-1])} under the trec convention is divided "
                f"by ndeval's ideal over {int(cutoffs[-1]):,} ranks, whose sum has not "
                f"settled after {_MOST_RANKS:,} (alpha near 0); use a cutoff up to "
                f"{_MOST_RANKS:,} or a larger alpha")
        hi = min(done + span, int(cutoffs[-1]))
        ranks = np.arange(done + 1, hi + 1, dtype=np.float64)
        sums = np.cumsum(np.concatenate(([total], term(ranks))))[1:]
        while c < cutoffs.shape[0] and cutoffs[c] <= hi:
            out[c] = sums[cutoffs[c] - done - 1]
            c += 1
        if sums[-1] == total:  # settled: every later rank adds nothing
            out[c:] = total
            break
        total, done, span = float(sums[-1]), hi, min(2 * span, _LAST_SPAN)
    return out


def ndeval_scale(values: FloatArray, n_intents: IntArray, cutoffs: IntArray, field: int,
                 alpha: float = 0.5) -> FloatArray:
    """ndeval's "collection-independent" ERR-IA and α-DCG from the plain ones (TREC's
    ndeval 4.5, pyndeval): divided by the score of a list whose every item is relevant to
    every intent, Σ_{r≤k} S·R(1-R)^(r-1)/r (ERR-IA, R = 1/2: the plain value already holds
    P = 1/S and R) and Σ_{r≤k} S·(1-α)^(r-1)·d(r) (α-DCG); ndeval leaves @1 undivided
    (its loop starts at rank 2): there ERR-IA@1 = α-DCG@1 = S if the first item is
    relevant, S the number of the user's intents the first item covers."""
    from ._kernels.intents import ERR_IA

    if field == ERR_IA:
        ideal = _ideal_sums(lambda ranks: 0.5 ** ranks / ranks,  # R(1-R)^(r-1)/r, R = 1/2
                            cutoffs, "err_ia")
        first = 2.0 * n_intents  # ERR-IA@1 = (1/S)·(1/2)·covered: ndeval's is covered
    else:
        ideal = _ideal_sums(  # (1-α)^(r-1)·d(r), d as discounts() computes it
            lambda ranks: (1.0 - alpha) ** (ranks - 1) * (1.0 / np.log2(ranks + 1)),
            cutoffs, "alpha_dcg")
        first = np.ones(n_intents.shape[0])
    out = np.empty_like(values)
    for c, k in enumerate(cutoffs):
        if k == 1:
            out[c] = values[c] * first
        else:
            norm = ideal[c] * (1.0 if field == ERR_IA else n_intents)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[c] = np.where(n_intents > 0, values[c] / norm, 0.0)
    return out


def ndeval_topics(data: Truth, rows: IntArray, aspects: Any) -> BoolArray:
    """Per list, whether its truth row judges an item that has an aspect: ndeval's topics
    (a judgment without a subtopic is no line of its qrels, and a topic without a line
    is not scored), which the trec convention's aspect metrics count (their mean is
    over these users: "available")."""
    has_aspect = np.diff(aspects.indptr) > 0
    stored = data.indices[:int(data.indptr[-1])]
    before = np.zeros(stored.shape[0] + 1, np.int64)  # entries with an aspect before each
    np.cumsum(has_aspect[stored], out=before[1:])
    judged = before[data.indptr[1:]] - before[data.indptr[:-1]] > 0
    return judged[rows]
