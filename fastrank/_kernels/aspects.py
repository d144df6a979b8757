"""Aspect-aware gains: αβ-nDCG (SPEC §4) and classic α-nDCG (Clarke et al. 2008).

Arrays in, arrays out, nothing raises; the facade (`fastrank.diversity`) has checked
every index. Users are split into `n_chunks` contiguous ranges run under `prange`; each
range allocates its scratch once (item marker, running interest, per-group cursor and
gain) and resets only what a user touched.

αβ-nDCG, per user u (a slot i of `rows`):

* γ_u is loaded into `s` from the profile (items -> their aspects, weighted by the
  profile value) or from given user-aspect weights, then divided by its total.
* p(i, φ) = beta·r/r_max for an item of the user's truth row, alpha otherwise, and the
  gain of item i under the interest s is 1 - Π_{φ ∈ aspects(i)} (1 - p·s[φ]), the
  product taken in ascending aspect order; taking i multiplies s[φ] by 1 - p.
* For unrated items p = alpha, so `q[φ] = 1 - alpha·s[φ]` is kept per aspect and an
  unrated gain is 1 - Π q[φ]: the same floating-point operations, done once per aspect.

The ideal is greedy over the user's truth items plus every unrated catalogue item not
excluded. Unrated items with the same aspect set (a *group*, built by the facade with
its item ids sorted) have equal gain, so a group is one candidate whose id is its lowest
available item; taking it moves the group's cursor to the next available item.

Each step takes the candidate of largest gain; gains within rounding of the largest
are ties (`_tie_floor`), and among them the lowest item id wins, so the ideal does not
depend on the order in which equal numbers happened to be added or multiplied.

Lazy greedy with a buffer: a scan computes the candidates' gains, keeps those at or
above the `_KEEP`-th largest (all ties included) and remembers a bound above every gain
it left out (`bound`). Gains only fall as s falls (every factor 1 - p·s rises and IEEE
rounding is monotone), so candidates outside the buffer stay at or below `bound`. A
step recomputes the buffered gains that share an aspect with the last pick and takes
the lowest id among those that tie with the largest, unless `bound` reaches that tie;
then it scans again. Each pick is the argmax of the plain definition. Once the best
gain is 0 every later gain is 0, and the walk stops. Aspect sets are also kept as
64-bit masks (when there are at most 64 aspects; else all bits set): after a pick, only
buffered candidates sharing an aspect with it are recomputed.

A scan does not look at every group: it reaches groups through the user's aspects in
buckets of falling interest (and, up to 256 aspects, an aspect's groups through pairs of
aspects in the same order) and stops once the groups not reached cannot tie the best
(see `ideal_range`). Measured on the benchmark shapes, the gain and decay loops are
written out where they run, not called: a numba call that takes arrays pays reference
counting on each array per call.
"""

from functools import lru_cache

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from .frames import bounds, claim, claimed, matrix, number, offsets, segment, vector
from .frames import table as table_view
from .jit import njit

_KEEP = 32  # buffered candidates between scans (at least; a whole bin is taken)
_KEEP_MIN = 8  # distinct gains above the bound of the groups not reached that end a scan
# ... for a user with at most _NARROW aspects, whose scans are cheap to repeat: stopping at
# the first gain that beats the bound halves the groups read (shapes A and R), while
# users with thousands of aspects (shape B) pay O(aspects) per scan and do better at 8
_KEEP_MIN_NARROW = 1
_NARROW = 64
_BOUND_SLACK = 2.0 ** -40  # see _unseen_bound
_LAST = np.int64(2**62)  # the place of an aspect the scan has not reached
_BINS = 64  # bins of the gain histogram that finds the buffer's cut
_MIX = np.int64(-7046029254386353131)  # 2**64 / golden ratio, as int64: a multiplicative hash
_TIE_REL = 2.0 ** -40  # gains this close (relative) are ties: see _tie_floor
_TIE_ABS = 2.0 ** -44
# _tie_floor's `absolute` as numpy bools: a Python True compiles a version per literal value
_ABSOLUTE = np.bool_(True)
_RELATIVE = np.bool_(False)

# status codes per user, shared with the facade
OK = 0
NO_PROFILE = 1  # γ_u is all zero
NO_TRUTH = 2    # the truth row stores nothing


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _tie_floor(top, absolute):
    """The smallest gain that ties with the largest gain `top`.

    Gains that are equal in exact arithmetic can differ in their last bits, because the
    same numbers are added or multiplied in another order (an item's aspects, the picks
    that decayed an aspect). The greedy ideal takes the lowest item id among the gains
    within rounding of the largest: 2**-40 of it, plus 2**-44 where `absolute` (αβ's
    gain 1 - Π(1 - p·s) loses relative precision to the subtraction when it is small).
    Rounding errors are below 2**-48 (relative) and 2**-49 (absolute) at the sizes seen,
    and distinct gains of real data are orders of magnitude further apart.
    """
    floor = top - top * _TIE_REL
    if absolute:
        floor -= _TIE_ABS
    return floor


@njit(cache=True)
def _load_gamma(r, g_indptr, g_indices, g_data, from_profile, a_indptr, a_indices, item_mask,
                s, touched):
    """Write γ of row r into s (zero elsewhere) and its aspects into touched; return how
    many aspects it touches, or -1 (s left all zero) if γ is all zero. A profile's items'
    aspects are read from their masks where there are at most 64 aspects (the bits in
    ascending order, as the CSR row's: one random read an item instead of two, which were
    most of this function's time on the realistic shape) and from item_aspects' CSR
    arrays past that."""
    n = 0
    total = 0.0
    by_mask = s.shape[0] <= 64
    for j in range(g_indptr[r], g_indptr[r + 1]):
        v = g_data[j]
        if v == 0.0:  # a stored zero touches nothing (values are never negative)
            continue
        if from_profile and by_mask:
            bits = np.uint64(item_mask[g_indices[j]])
            while bits != 0:
                phi = np.int64(trailing_zeros(bits))
                bits &= bits - np.uint64(1)
                if s[phi] == 0.0:
                    touched[n] = phi
                    n += 1
                s[phi] += v
                total += v
        elif from_profile:
            item = g_indices[j]
            for q in range(a_indptr[item], a_indptr[item + 1]):
                phi = a_indices[q]
                if s[phi] == 0.0:
                    touched[n] = phi
                    n += 1
                s[phi] += v
                total += v
        else:
            phi = g_indices[j]
            touched[n] = phi
            n += 1
            s[phi] = v
            total += v
    if total <= 0.0:
        for t in range(n):
            s[touched[t]] = 0.0
        return -1
    for t in range(n):
        s[touched[t]] /= total
    return n


def gamma_sizes(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: sizes[i], how many aspects γ of
    row rows[i] touches (0 where γ is all zero). The frame holds, in order: rows,
    g_indptr, g_indices, g_data, from_profile, a_indptr, a_indices, item_mask (each item's
    aspects as a mask, Aspects.masks), n_aspects, sizes (of
    the dtypes `dtypes` gives, as `frames.Frame.dtypes`). Returns 1, or 0 where its
    scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        rows = vector(frame, 0, dtypes[0])
        g_indptr = vector(frame, 1, dtypes[1])
        g_indices = vector(frame, 2, dtypes[2])
        g_data = vector(frame, 3, dtypes[3])
        from_profile = number(frame, 4, dtypes[4])
        a_indptr = vector(frame, 5, dtypes[5])
        a_indices = vector(frame, 6, dtypes[6])
        item_mask = vector(frame, 7, dtypes[7])
        n_aspects = number(frame, 8, dtypes[8])
        sizes = vector(frame, 9, dtypes[9])
        n_rows = rows.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        s = np.zeros(n_aspects, np.float64)
        touched = np.empty(n_aspects, np.int64)
        for i in range(lo, hi):
            if from_profile and n_aspects <= 64:
                # the aspects of the profile's items with a weight, as one mask (weights
                # are never negative: any weight of an item with aspects makes γ nonzero)
                r = rows[i]
                bits = np.uint64(0)
                for j in range(g_indptr[r], g_indptr[r + 1]):
                    if g_data[j] != 0.0:
                        bits |= np.uint64(item_mask[g_indices[j]])
                n = 0
                while bits != 0:
                    bits &= bits - np.uint64(1)
                    n += 1
                sizes[i] = n
                continue
            n = _load_gamma(rows[i], g_indptr, g_indices, g_data, from_profile, a_indptr,
                            a_indices, item_mask, s, touched)
            sizes[i] = max(n, 0)
            for t in range(n):
                s[touched[t]] = 0.0
        return np.int64(1)

    return walk


def gamma_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: γ of each row rows[i] as CSR
    (ptr from gamma_sizes), its aspects in the order _load_gamma touches them, and their
    shares. The frame holds, in order: rows, g_indptr, g_indices, g_data, from_profile,
    a_indptr, a_indices, item_mask, n_aspects, ptr, out_aspects, out_gamma (of the dtypes
    `dtypes` gives). Returns 1, or 0 where its scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        rows = vector(frame, 0, dtypes[0])
        g_indptr = vector(frame, 1, dtypes[1])
        g_indices = vector(frame, 2, dtypes[2])
        g_data = vector(frame, 3, dtypes[3])
        from_profile = number(frame, 4, dtypes[4])
        a_indptr = vector(frame, 5, dtypes[5])
        a_indices = vector(frame, 6, dtypes[6])
        item_mask = vector(frame, 7, dtypes[7])
        n_aspects = number(frame, 8, dtypes[8])
        ptr = vector(frame, 9, dtypes[9])
        out_aspects = vector(frame, 10, dtypes[10])
        out_gamma = vector(frame, 11, dtypes[11])
        n_rows = rows.shape[0]
        lo, hi = bounds(n_rows, chunk, n_chunks)
        s = np.zeros(n_aspects, np.float64)
        touched = np.empty(n_aspects, np.int64)
        for i in range(lo, hi):
            n = _load_gamma(rows[i], g_indptr, g_indices, g_data, from_profile, a_indptr,
                            a_indices, item_mask, s, touched)
            for t in range(n):
                phi = touched[t]
                out_aspects[ptr[i] + t] = phi
                out_gamma[ptr[i] + t] = s[phi]
                s[phi] = 0.0
        return np.int64(1)

    return walk


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _dense_rows(weights, sizes, totals, low, high, bad, lo, hi):
    """Rows lo..hi-1 of a dense weight matrix, as dense_weight_rows describes."""
    n_cols = weights.shape[1]
    for r in range(lo, hi):
        n = 0
        total = 0.0
        small = np.inf
        large = 0.0
        wrong = False
        for phi in range(n_cols):
            v = weights[r, phi]
            if not (v >= 0.0 and v < np.inf):
                wrong = True
            elif v != 0.0:
                n += 1
                total += v
                small = min(small, v)
                large = max(large, v)
        sizes[r] = n
        totals[r] = total
        low[r] = small
        high[r] = large
        bad[r] = wrong


def dense_weight_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows of a dense users x aspects weight
    matrix: per row its non-zero count, their sum (in column order, as _load_gamma adds
    them), the smallest positive and the largest weight, and whether a weight is
    negative, NaN or infinite. The frame holds, in order: weights, sizes, totals, low,
    high, bad (of the dtypes `dtypes` gives). Returns 1."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        weights = matrix(frame, 0, dtypes[0])
        lo, hi = bounds(weights.shape[0], chunk, n_chunks)
        _dense_rows(weights, vector(frame, 1, dtypes[1]), vector(frame, 2, dtypes[2]),
                    vector(frame, 3, dtypes[3]), vector(frame, 4, dtypes[4]),
                    vector(frame, 5, dtypes[5]), lo, hi)
        return np.int64(1)

    return walk


def dense_weight_rows_and_groups(dtypes):
    """group_items and then rows 0..first-1 of dense_weight_rows as the first range, the
    other rows over the other n_chunks - 1: the grouping of the items by aspect set beside
    the check of a dense γ, in one parallel run, where the grouping is about a thread's
    work (`first` evens out the ranges' work). Under numba's OpenMP layer (the
    usual one) the first range runs on the calling thread, which then reads the groups
    in its share of the ideal's walk: with the grouping as the last range, on the other
    thread, that walk took 2-4% longer. Values do not depend on which thread runs which
    range. The frame holds dense_weight_rows' six arguments, then group_items' twelve,
    then an int64 array of one cell for n_groups, then first (of the dtypes `dtypes`
    gives). Returns 1."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        weights = matrix(frame, 0, dtypes[0])
        first = number(frame, 19, dtypes[19])
        if chunk > 0:
            lo, hi = bounds(weights.shape[0] - first, chunk - 1, n_chunks - 1)
            lo += first
            hi += first
        else:
            lo, hi = 0, first
            n_groups = vector(frame, 18, dtypes[18])
            n_groups[0] = group_items(
                vector(frame, 6, dtypes[6]), vector(frame, 7, dtypes[7]),
                vector(frame, 8, dtypes[8]), number(frame, 9, dtypes[9]),
                vector(frame, 10, dtypes[10]), vector(frame, 11, dtypes[11]),
                vector(frame, 12, dtypes[12]), vector(frame, 13, dtypes[13]),
                vector(frame, 14, dtypes[14]), vector(frame, 15, dtypes[15]),
                vector(frame, 16, dtypes[16]), vector(frame, 17, dtypes[17]))
        _dense_rows(weights, vector(frame, 1, dtypes[1]), vector(frame, 2, dtypes[2]),
                    vector(frame, 3, dtypes[3]), vector(frame, 4, dtypes[4]),
                    vector(frame, 5, dtypes[5]), lo, hi)
        return np.int64(1)

    return walk


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def group_index(a_indptr, a_indices, ptr, items, n_aspects, aspect_ptr, group_aspects,
                by_ptr, by_group):
    """The aspects of each group of group_sets and the groups of each aspect, in one
    serial pass (numpy and scipy took a millisecond over 27,000 items, on the clock of
    every call). Group g is items[ptr[g]:ptr[g + 1]], one aspect set: its aspects are
    group_aspects[aspect_ptr[g]:aspect_ptr[g + 1]] (those of its first item, ascending),
    and the groups that hold aspect φ are by_group[by_ptr[φ]:by_ptr[φ + 1]], ascending.
    group_aspects and by_group have room for every stored aspect of every item; returns
    how many of each are written."""
    n_groups = ptr.shape[0] - 1
    aspect_ptr[0] = 0
    for g in range(n_groups):
        first = items[ptr[g]]
        a = aspect_ptr[g]
        for j in range(a_indptr[first], a_indptr[first + 1]):
            group_aspects[a] = a_indices[j]
            a += 1
        aspect_ptr[g + 1] = a
    n_links = aspect_ptr[n_groups]
    for phi in range(n_aspects + 1):
        by_ptr[phi] = 0
    for t in range(n_links):  # a count per aspect, then the offsets
        by_ptr[group_aspects[t] + 1] += 1
    for phi in range(n_aspects):
        by_ptr[phi + 1] += by_ptr[phi]
    for g in range(n_groups):  # groups ascending: each aspect's list comes out sorted
        for t in range(aspect_ptr[g], aspect_ptr[g + 1]):
            phi = group_aspects[t]
            by_group[by_ptr[phi]] = g
            by_ptr[phi] += 1
    for phi in range(n_aspects, 0, -1):  # each offset moved to the next aspect's: back
        by_ptr[phi] = by_ptr[phi - 1]
    by_ptr[0] = 0
    return n_links


@njit(cache=True, no_cfunc_wrapper=True)
def group_items(indptr, indices, weights, n_aspects, item_group, ptr, items, aspect_ptr,
                group_aspects, by_ptr, by_group, scratch):
    """group_sets, then group_index, in one call (also the first range of
    dense_weight_rows_and_groups); an item without aspects gets the spare group
    n_groups. Returns n_groups."""
    n_groups = group_sets(indptr, indices, weights, item_group, ptr, items, scratch)
    for i in range(item_group.shape[0]):
        if item_group[i] < 0:
            item_group[i] = n_groups
    group_index(indptr, indices, ptr[:n_groups + 1], items, n_aspects, aspect_ptr,
                group_aspects, by_ptr, by_group)
    return n_groups


@njit(cache=True)
def alone_order(item_group, ptr, items, aspect_ptr, group_aspects, by_ptr, out):
    """Each aspect's groups (by_ptr's lists) in the order of their lowest item: out, in
    one pass over the items (an item that is its group's first puts the group on the list
    of each of its aspects). The ideal reads an aspect's groups in this order where the
    groups' other aspects are all ones the user has no interest in (`_alone_lowest`)."""
    n_aspects = by_ptr.shape[0] - 1
    at = np.empty(n_aspects, np.int64)
    for phi in range(n_aspects):
        at[phi] = by_ptr[phi]
    n_groups = ptr.shape[0] - 1
    for i in range(item_group.shape[0]):
        g = item_group[i]
        if g >= n_groups or items[ptr[g]] != i:
            continue
        for t in range(aspect_ptr[g], aspect_ptr[g + 1]):
            phi = group_aspects[t]
            out[at[phi]] = g
            at[phi] += 1


@njit(cache=True)
def _power_of_two(at_least):
    """The slots of a hash table (group_sets', ideal_range's): the smallest power of two,
    at least 4, that is at least `at_least`."""
    size = 4
    while size < at_least:
        size *= 2
    return size


def group_scratch(n_items):
    """int64s of group_sets' scratch (and group_items'), for a catalogue of n_items."""
    return 4 * n_items + _power_of_two.py_func(2 * n_items)


@njit(cache=True)
def group_sets(indptr, indices, weights, item_group, ptr, items, scratch):
    """Group the items that have aspects by equal aspect set (each item's aspects sorted)
    in one pass over a hash table: groups in the order of their size, then of their lowest
    item. Writes item_group[i] (-1 for an item without aspects), ptr[:n_groups + 1] and
    items (the items of group g at items[ptr[g]:ptr[g + 1]], ascending); returns n_groups.

    An item's set hash is the (wrapping) sum of its aspects' random 64-bit weights; a
    group is found by hash and then checked aspect by aspect, so equal hashes of
    different sets (collisions) stay apart."""
    n_items = indptr.shape[0] - 1
    longest = 0
    for i in range(n_items):
        longest = max(longest, indptr[i + 1] - indptr[i])
    start = np.zeros(longest + 2, np.int64)  # counting sort of the items by set size
    for i in range(n_items):
        start[indptr[i + 1] - indptr[i] + 1] += 1
    for w in range(1, longest + 2):
        start[w] += start[w - 1]
    n_members = n_items - start[1]
    order = scratch[:n_items]
    for i in range(n_items):
        w = indptr[i + 1] - indptr[i]
        order[start[w]] = i
        start[w] += 1
    size = _power_of_two(2 * n_members)  # twice the items to place
    table = scratch[n_items:n_items + size]
    table[:] = -1
    at = n_items + size
    leader = scratch[at:at + n_members]
    g_hash = scratch[at + n_members:at + 2 * n_members]
    count = scratch[at + 2 * n_members:at + 3 * n_members]
    count[:] = 0
    n_groups = 0
    for t in range(n_items - n_members, n_items):
        item = order[t]
        lo = indptr[item]
        hi = indptr[item + 1]
        h = np.int64(0)
        for a in range(lo, hi):
            h += weights[indices[a]]
        slot = ((h * _MIX) >> 21) & (size - 1)
        while True:
            g = table[slot]
            if g < 0:
                g = n_groups
                n_groups += 1
                table[slot] = g
                leader[g] = item
                g_hash[g] = h
                break
            if g_hash[g] == h:
                other = indptr[leader[g]]
                same = indptr[leader[g] + 1] - other == hi - lo
                a = 0
                while same and a < hi - lo:
                    same = indices[other + a] == indices[lo + a]
                    a += 1
                if same:
                    break
            slot = (slot + 1) & (size - 1)
        item_group[item] = g
        count[g] += 1
    for t in range(n_items - n_members):
        item_group[order[t]] = -1
    ptr[0] = 0
    for g in range(n_groups):
        ptr[g + 1] = ptr[g] + count[g]
        count[g] = ptr[g]
    for t in range(n_items - n_members, n_items):  # ascending ids within a set size
        item = order[t]
        g = item_group[item]
        items[count[g]] = item
        count[g] += 1
    return n_groups


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _unseen_bound(first, s_left, alpha, width):
    """Above the gain of any group not reached whose product starts from the factor
    `first` (1.0: none) and has at most `width` further aspects, each of interest at most
    s_left, so each factor at least 1 - alpha·s_left (q's own rounding is monotone). The
    product is lowered by 2**-40 of itself: a group multiplies its factors in another
    order, and products of the same factors differ in their last bits. 0 when every such
    gain is 0 (products of ones are exact)."""
    q_left = 1.0 - alpha * s_left
    prod = first
    if q_left < 1.0:
        for _ in range(width):
            prod *= q_left
    if prod >= 1.0:
        return 0.0
    return 1.0 - (prod - prod * _BOUND_SLACK)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _keep_few(gain, best_few, n_few, cap):
    """Add gain to best_few, the `cap` largest distinct positive gains seen (n_few of
    them, unsorted); the caller skips gains at or below the smallest once it is full.
    Returns (n_few, the smallest once full, else -1)."""
    for t in range(n_few):
        if best_few[t] == gain:
            return n_few, (_smallest(best_few, n_few) if n_few == cap else -1.0)
    if n_few < cap:
        best_few[n_few] = gain
        n_few += 1
    else:
        low = 0
        for t in range(1, n_few):
            if best_few[t] < best_few[low]:
                low = t
        best_few[low] = gain
    return n_few, (_smallest(best_few, n_few) if n_few == cap else -1.0)


@njit(cache=True, inline="always")
def _scan_groups(e_lo, e_hi, links, lim, base, gstamp, gpos, grp_ptr, grp_aptr, grp_aidx,
                 arank, q, cand, gain_c, n_cand, top, best_few, n_few, few_min, keep_min):
    """The scan's step over the groups links[e_lo:e_hi]: those with an aspect ranked
    below lim were found before (the caller lifts the ranks of the aspects the list is
    of); the others with a positive gain join cand / gain_c. Returns (n_cand, top, n_few,
    few_min), updated."""
    for e in range(e_lo, e_hi):
        g = links[e]
        if gstamp[g] == base and gpos[g] >= grp_ptr[g + 1]:
            continue  # every item of it is the user's or excluded
        prod = 1.0
        for a in range(grp_aptr[g], grp_aptr[g + 1]):
            chi = grp_aidx[a]
            if arank[chi] < lim:
                prod = -1.0  # found at another place
                break
            prod *= q[chi]
        gain = 1.0 - prod
        if prod < 0.0 or gain <= 0.0:
            continue
        cand[n_cand] = g
        gain_c[n_cand] = gain
        n_cand += 1
        top = max(top, gain)
        if gain > few_min:
            n_few, few_min = _keep_few(gain, best_few, n_few, keep_min)
    return n_cand, top, n_few, few_min


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _alone_lowest(lo, hi, links, bit, actmask, grp_mask, grp_ptr, grp_items, grp_first,
                  gstamp, gpos, base):
    """(group, item): the lowest available item among the groups links[lo:hi] whose only
    aspect of the user's interest is `bit` (as masks), and its group; (-1, -1) if none.
    Such groups all have the gain 1 - q[φ] exactly (their other factors are 1.0), so they
    are one candidate, and one of them holds its lowest item. The list is in the order of
    each group's first item (alone_order), and a group's available item is never below its
    first: the walk stops at the first group that starts at or past the lowest found.
    Called, not inlined: numba copies an inlined callee's IR into the ideal's walk, which
    then compiles for longer (test_compile), and it runs once a scan or a pick."""
    best_g = -1
    best_item = -1
    for e in range(lo, hi):
        g = links[e]
        item = grp_first[g]
        if best_g >= 0 and item >= best_item:
            break
        if grp_mask[g] & actmask != bit:
            continue
        if gstamp[g] == base:
            pos = gpos[g]
            if pos >= grp_ptr[g + 1]:
                continue  # every item of it is the user's or excluded
            item = grp_items[pos]
        if best_g < 0 or item < best_item:
            best_g = g
            best_item = item
    return best_g, best_item


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _smallest(values, n):
    low = values[0]
    for t in range(1, n):
        low = min(low, values[t])
    return low


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _bin(gain, scale):
    """Histogram bin of a gain in [0, top]: 1.._BINS (bin 1 also holds gain 0), no branch."""
    return min(np.int64(gain * scale) + 1, _BINS)


@njit(cache=True, inline="always")
def _mark_unrated(item, base, mark, item_group, grp_first, gstamp, gpos):
    """Item is not an unrated candidate of this user (a truth or excluded item). Its
    group is touched (gpos -1), and gpos -2 if the item is the group's first."""
    mark[item] = base
    g = item_group[item]
    if gstamp[g] != base:
        gstamp[g] = base
        gpos[g] = -1
    if g < grp_first.shape[0] and grp_first[g] == item:  # not the aspectless slot
        gpos[g] = -2


@njit(cache=True, inline="always")
def _resolve(g, base, grp_ptr, grp_items, gpos, mark):
    """Cursor of a group the user's marks touched: its first unmarked item. Where its
    first item is not the user's (gpos -1), that one, without reading the group's items
    or their marks (random reads that missed the cache for most touched groups)."""
    if gpos[g] >= 0 or g + 1 >= grp_ptr.shape[0]:  # resolved, or the aspectless slot
        return
    pos = grp_ptr[g]
    if gpos[g] == -2:
        end = grp_ptr[g + 1]
        pos += 1
        while pos < end and mark[grp_items[pos]] == base:
            pos += 1
    gpos[g] = pos


# the int64 and float64 pieces of a range's scratch in ideal_range, in order
(_I_MARK, _I_GSTAMP, _I_GPOS, _I_CAND, _I_TOUCHED, _I_ORDER, _I_BUCKET, _I_B_START,
 _I_O_BUCKET, _I_ARANK, _I_TUSED, _I_T_MASK, _I_HIST, _I_B_REF, _I_B_ID, _I_B_MASK,
 _I_B_HEAD, _I_GNEXT, _I_TABLE, _I_END) = range(20)
_F_GAIN_C, _F_S, _F_Q, _F_B_TOP, _F_BEST_FEW, _F_GAIN_T, _F_B_GAIN, _F_END = range(8)


def _shared(at):
    """`at`, read-only: the layouts below are cached, one per shape, and shared."""
    at.flags.writeable = False
    return at


# (a layout took some 20 to 60 microseconds of a call to compute, most of a small call's
# facade: numpy's small operations run cold between kernels)
@lru_cache(maxsize=32)
def ideal_scratch(n_items, n_groups, n_aspects, max_row_nnz):
    """(at_i, at_f): where each piece of a range's int64 and float64 scratch in
    ideal_range starts (the _I_* and _F_* pieces, in order), the last entry the size of
    a range's share (a whole number of cache lines). Read-only, cached."""
    width_t = max(max_row_nnz, 1)
    cap = n_groups + width_t
    groups = max(n_groups, 1)
    ints = [n_items, n_groups + 1, n_groups + 1, groups, n_aspects, n_aspects, n_aspects,
            n_aspects + 2, n_aspects, n_aspects, width_t, width_t, _BINS + 1, cap, cap, cap,
            cap, groups, 3 * _power_of_two.py_func(2 * n_groups + 2)]
    floats = [groups, n_aspects, n_aspects, n_aspects + 1, _KEEP_MIN, width_t, cap]
    return _shared(offsets(ints)), _shared(offsets(floats))


def ideal_range(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: Greedy ideal DCG of αβ-nDCG:
    idcg[c, i] for cutoff c and user slot i (truth row rows[i]); status[i] is OK,
    NO_PROFILE or NO_TRUTH (idcg 0 for those).

    gam_*: γ of each slot as CSR (gamma_rows; an empty row: γ all zero), or, where
    gam_dense has rows, γ of slot i is row rows[i] of gam_dense over gam_totals[rows[i]]
    (its non-zero entries, gam_ptr[i + 1] - gam_ptr[i] of them; gam_aspects and
    gam_values are unused): a dense γ is read in place, not copied to CSR; e_*: the
    exclusion pattern (users x items, may store nothing); item_mask: each item's aspect
    bitmask; grp_ptr / grp_items: the groups of equal aspect set, item ids ascending
    within each; grp_aptr / grp_aidx / grp_mask: each group's aspects; item_group[i]: the
    group of item i (n_groups for an item without aspects); links[by_ptr[φ]:by_ptr[φ + 1]]:
    the groups of aspect φ, links[pair_ptr[φ·n_aspects + ψ]:...+ 1]: those of both φ and
    ψ (pair_ptr holds one entry, and no pairs are used, where the caller built none);
    width: the most aspects of a group; p_scale = beta / r_max.

    The frame holds, in order: t_indptr, t_indices, t_data, rows, gam_ptr, gam_aspects,
    gam_values, gam_dense, gam_totals, e_indptr, e_indices, a_indptr, a_indices,
    item_mask, n_aspects, grp_ptr, grp_items, grp_aptr, grp_aidx, grp_mask, item_group,
    by_ptr, pair_ptr, links, width, alpha, p_scale, cutoffs, disc, max_row_nnz, idcg,
    status, then the scratch of every range and where its pieces lie: at_i, at_f, ints,
    floats (from ideal_scratch), then the counters from which the ranges claim their rows
    (`frames.claim_counters`), then grp_first (each group's first item, grp_items at
    grp_ptr[g], in an array that stays in the cache: read where a group's cursor is not
    moved): arrays of the dtypes `dtypes` gives, as `frames.Frame.dtypes`. The walk
    initialises the scratch it reads before writing (the facade lends it from
    `fastrank.scratch`, as the last call left it). Returns 1."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        t_indptr = vector(frame, 0, dtypes[0])
        t_indices = vector(frame, 1, dtypes[1])
        t_data = vector(frame, 2, dtypes[2])
        rows = vector(frame, 3, dtypes[3])
        gam_ptr = vector(frame, 4, dtypes[4])
        gam_aspects = vector(frame, 5, dtypes[5])
        gam_values = vector(frame, 6, dtypes[6])
        gam_dense = matrix(frame, 7, dtypes[7])
        gam_totals = vector(frame, 8, dtypes[8])
        e_indptr = vector(frame, 9, dtypes[9])
        e_indices = vector(frame, 10, dtypes[10])
        a_indptr = vector(frame, 11, dtypes[11])
        a_indices = vector(frame, 12, dtypes[12])
        item_mask = vector(frame, 13, dtypes[13])
        n_aspects = number(frame, 14, dtypes[14])
        grp_ptr = vector(frame, 15, dtypes[15])
        grp_items = vector(frame, 16, dtypes[16])
        grp_aptr = vector(frame, 17, dtypes[17])
        grp_aidx = vector(frame, 18, dtypes[18])
        grp_mask = vector(frame, 19, dtypes[19])
        item_group = vector(frame, 20, dtypes[20])
        by_ptr = vector(frame, 21, dtypes[21])
        pair_ptr = vector(frame, 22, dtypes[22])
        links = vector(frame, 23, dtypes[23])
        width = number(frame, 24, dtypes[24])
        alpha = number(frame, 25, dtypes[25])
        p_scale = number(frame, 26, dtypes[26])
        cutoffs = vector(frame, 27, dtypes[27])
        disc = vector(frame, 28, dtypes[28])
        max_row_nnz = number(frame, 29, dtypes[29])
        idcg = matrix(frame, 30, dtypes[30])
        status = vector(frame, 31, dtypes[31])
        at_i = vector(frame, 32, dtypes[32])
        at_f = vector(frame, 33, dtypes[33])
        ints = vector(frame, 34, dtypes[34])
        floats = vector(frame, 35, dtypes[35])
        counters = vector(frame, 36, dtypes[36])
        grp_first = vector(frame, 37, dtypes[37])
        n_rows = rows.shape[0]
        block = claimed(n_rows, n_chunks)
        n_items = item_group.shape[0]
        n_groups = grp_ptr.shape[0] - 1
        dense = gam_dense.shape[0] > 0  # γ read from a dense weight matrix
        n_cut = cutoffs.shape[0]
        k_max = cutoffs[n_cut - 1]
        pairs = pair_ptr.shape[0] > 1
        # with pairs and masks, an aspect's own list is in the order of its groups' first
        # items (alone_order), for _alone_lowest
        alone = pairs and n_aspects <= 64
        by_mask = n_aspects <= 64  # an item's aspects also as a mask (item_mask)
        width_t = max(max_row_nnz, 1)
        cap = n_groups + width_t
        own = chunk * at_i[_I_END]  # this range's scratch (ideal_scratch)

        mark = segment(ints, own + at_i[_I_MARK], n_items)
        gstamp = segment(ints, own + at_i[_I_GSTAMP], n_groups + 1)
        gpos = segment(ints, own + at_i[_I_GPOS], n_groups + 1)
        cand = segment(ints, own + at_i[_I_CAND], max(n_groups, 1))
        touched = segment(ints, own + at_i[_I_TOUCHED], n_aspects)
        order = segment(ints, own + at_i[_I_ORDER], n_aspects)
        bucket = segment(ints, own + at_i[_I_BUCKET], n_aspects)
        b_start = segment(ints, own + at_i[_I_B_START], n_aspects + 2)
        o_bucket = segment(ints, own + at_i[_I_O_BUCKET], n_aspects)
        arank = segment(ints, own + at_i[_I_ARANK], n_aspects)
        tused = segment(ints, own + at_i[_I_TUSED], width_t)
        t_mask = segment(ints, own + at_i[_I_T_MASK], width_t)
        hist = segment(ints, own + at_i[_I_HIST], np.int64(_BINS + 1))
        b_ref = segment(ints, own + at_i[_I_B_REF], cap)
        b_id = segment(ints, own + at_i[_I_B_ID], cap)
        b_mask = segment(ints, own + at_i[_I_B_MASK], cap)
        b_head = segment(ints, own + at_i[_I_B_HEAD], cap)
        gnext = segment(ints, own + at_i[_I_GNEXT], max(n_groups, 1))
        size = _power_of_two(2 * n_groups + 2)  # twice the groups + 1 (row 0 unused)
        table = table_view(ints, own + at_i[_I_TABLE], size, np.int64(3))
        table_mask = size - 1
        own = chunk * at_f[_F_END]
        gain_c = segment(floats, own + at_f[_F_GAIN_C], max(n_groups, 1))
        s = segment(floats, own + at_f[_F_S], n_aspects)
        q = segment(floats, own + at_f[_F_Q], n_aspects)
        b_top = segment(floats, own + at_f[_F_B_TOP], n_aspects + 1)
        best_few = segment(floats, own + at_f[_F_BEST_FEW], np.int64(_KEEP_MIN))
        gain_t = segment(floats, own + at_f[_F_GAIN_T], width_t)
        b_gain = segment(floats, own + at_f[_F_B_GAIN], cap)
        # what the walk reads before it writes: the stamps 0, the interest 0 (q = 1)
        for j in range(n_items):
            mark[j] = 0
        for g in range(n_groups + 1):
            gstamp[g] = 0
            gpos[g] = 0
        for a in range(n_aspects):
            s[a] = 0.0
            q[a] = 1.0
            arank[a] = _LAST
        for h in range(size):
            table[h, 0] = 0
            table[h, 1] = 0
            table[h, 2] = 0
        stamp = 0
        # rows claimed a block at a time, from this range's share and then from the others'
        # (frames.claim): a row's values depend neither on its range nor on the rows walked
        # before it (its stamps are its own); only when the run ends does
        share = np.int64(0)
        while True:
            first, upto, share = claim(counters, chunk, n_chunks, n_rows, block, share)
            if first < 0:
                break
            for i in range(first, upto):
                for c in range(n_cut):
                    idcg[c, i] = 0.0
                r = rows[i]
                t_start = t_indptr[r]
                t_end = t_indptr[r + 1]
                n_touched = gam_ptr[i + 1] - gam_ptr[i]
                if t_end == t_start:
                    status[i] = NO_TRUTH
                    continue
                if n_touched == 0:
                    status[i] = NO_PROFILE
                    continue
                status[i] = OK
                keep_min = _KEEP_MIN_NARROW if n_touched <= _NARROW else _KEEP_MIN
                base = np.int64(i) + 1
                actmask = np.int64(-1)  # all bits: no masks past 64 aspects
                if n_aspects <= 64:
                    actmask = np.int64(0)
                phi = -1  # a dense γ row's column
                for t in range(n_touched):
                    if dense:
                        phi += 1
                        while gam_dense[r, phi] == 0.0:
                            phi += 1
                        s[phi] = gam_dense[r, phi] / gam_totals[r]
                    else:
                        phi = gam_aspects[gam_ptr[i] + t]
                        s[phi] = gam_values[gam_ptr[i] + t]
                    touched[t] = phi
                    q[phi] = 1.0 - alpha * s[phi]
                    if n_aspects <= 64:
                        actmask |= np.int64(1) << phi
                for j in range(t_start, t_end):
                    item = t_indices[j]
                    _mark_unrated(item, base, mark, item_group, grp_first, gstamp, gpos)
                    tused[j - t_start] = 0
                    t_mask[j - t_start] = item_mask[item]
                for j in range(e_indptr[r], e_indptr[r + 1]):
                    _mark_unrated(e_indices[j], base, mark, item_group, grp_first, gstamp,
                                  gpos)
                for j in range(t_start, t_end):
                    _resolve(item_group[t_indices[j]], base, grp_ptr, grp_items, gpos, mark)
                for j in range(e_indptr[r], e_indptr[r + 1]):
                    _resolve(item_group[e_indices[j]], base, grp_ptr, grp_items, gpos, mark)
                # the walk
                n_buf = 0
                bound = -1.0
                scan = True  # the buffer must be (re)filled before this step's pick
                picked_mask = np.int64(0)  # aspects changed by the last pick
                acc = 0.0
                c = 0
                for step in range(k_max):
                    top = -1.0
                    if not scan:
                        for b in range(n_buf):
                            if b_mask[b] & picked_mask != 0:  # its gain changed: recompute
                                ref = b_ref[b]
                                prod = 1.0
                                if ref >= 0:
                                    item = b_id[b]
                                    p = max(t_data[ref], 0.0) * p_scale
                                    if by_mask:  # its aspects of interest (see the scan)
                                        bits = np.uint64(b_mask[b])
                                        while bits != 0:
                                            phi = np.int64(trailing_zeros(bits))
                                            bits &= bits - np.uint64(1)
                                            prod *= 1.0 - p * s[phi]
                                    else:
                                        for a in range(a_indptr[item], a_indptr[item + 1]):
                                            prod *= 1.0 - p * s[a_indices[a]]
                                else:
                                    g = -ref - 1
                                    for a in range(grp_aptr[g], grp_aptr[g + 1]):
                                        prod *= q[grp_aidx[a]]
                                b_gain[b] = 1.0 - prod
                            top = max(top, b_gain[b])
                        # a candidate left out could win or tie (gains only fall): scan again
                        scan = bound > 0.0 and bound >= _tie_floor(top, _ABSOLUTE)
                    if scan:
                        scan = False
                        top = 0.0
                        # distinct gains in best_few, the largest ones seen (unsorted)
                        n_few = np.int64(0)
                        few_min = -1.0  # their smallest once there are keep_min of them
                        for j in range(t_start, t_end):
                            gain = 0.0
                            if not tused[j - t_start]:
                                item = t_indices[j]
                                p = max(t_data[j], 0.0) * p_scale
                                prod = 1.0
                                if by_mask:
                                    # the item's aspects of interest from its mask, ascending
                                    # as its row: a factor of an aspect without interest is
                                    # 1.0, which changes no product, and the row's two reads
                                    # miss the cache on a user's first scan
                                    bits = np.uint64(t_mask[j - t_start] & actmask)
                                    while bits != 0:
                                        phi = np.int64(trailing_zeros(bits))
                                        bits &= bits - np.uint64(1)
                                        prod *= 1.0 - p * s[phi]
                                else:
                                    for a in range(a_indptr[item], a_indptr[item + 1]):
                                        prod *= 1.0 - p * s[a_indices[a]]
                                gain = 1.0 - prod
                            gain_t[j - t_start] = gain
                            top = max(top, gain)
                            if gain > few_min and gain > 0.0:
                                n_few, few_min = _keep_few(gain, best_few, n_few, keep_min)
                        s_top = 0.0
                        for t in range(n_touched):
                            s_top = max(s_top, s[touched[t]])
                        unseen = _unseen_bound(1.0, s_top, alpha, width)
                        n_cand = 0
                        # a group may be next
                        if unseen > 0.0 and unseen >= _tie_floor(top, _ABSOLUTE):
                            # the user's aspects in buckets of falling interest (a counting sort:
                            # bucket 0 holds the largest interest, s_top)
                            n_b = n_touched
                            b_scale = (n_b - 0.5) / s_top
                            b_start[: n_b + 2] = 0
                            b_top[:n_b] = 0.0
                            for t in range(n_touched):
                                phi = touched[t]
                                k = n_b - 1 - min(np.int64(s[phi] * b_scale), n_b - 1)
                                bucket[t] = k
                                b_start[k + 2] += 1
                                b_top[k] = max(b_top[k], s[phi])
                            for k in range(2, n_b + 2):
                                b_start[k] += b_start[k - 1]
                            for t in range(n_touched):  # b_start[k + 1]: where bucket k's next goes
                                k = bucket[t]
                                order[b_start[k + 1]] = touched[t]
                                o_bucket[b_start[k + 1]] = k
                                b_start[k + 1] += 1
                            if pairs:  # a pair's group is checked against places not reached yet
                                for t in range(n_touched):
                                    arank[order[t]] = t
                            pending = -1.0  # above the groups left out at the places reached
                            k = 0  # bucket k is order[b_start[k]:b_start[k + 1]]
                            while k < n_b:
                                for place in range(b_start[k], b_start[k + 1]):
                                    phi = order[place]
                                    arank[phi] = place
                                    if not pairs:
                                        n_cand, top, n_few, few_min = _scan_groups(
                                            by_ptr[phi], by_ptr[phi + 1], links, place, base,
                                            gstamp, gpos, grp_ptr, grp_aptr, grp_aidx, arank, q,
                                            cand, gain_c, n_cand, top, best_few, n_few, few_min,
                                            keep_min)
                                        continue
                                    # with pairs, the groups whose second aspect is at place m,
                                    # m = place + 1, ...; then (m = n_touched) those of phi alone
                                    # (the ranks of phi and psi are lifted past every place while
                                    # their own list is read)
                                    arank[phi] = _LAST
                                    m = place + 1
                                    while m < n_touched:
                                        psi = order[m]
                                        arank[psi] = _LAST
                                        n_cand, top, n_few, few_min = _scan_groups(
                                            pair_ptr[phi * n_aspects + psi],
                                            pair_ptr[phi * n_aspects + psi + 1], links, m + 1,
                                            base, gstamp, gpos, grp_ptr, grp_aptr, grp_aidx, arank,
                                            q, cand, gain_c, n_cand, top, best_few, n_few, few_min,
                                            keep_min)
                                        arank[psi] = m
                                        m += 1
                                        left = _unseen_bound(q[phi], 0.0, alpha, np.int64(0))
                                        if m < n_touched:
                                            left = _unseen_bound(q[phi], b_top[o_bucket[m]], alpha,
                                                                 width - 1)
                                        if left <= 0.0 or (few_min > left
                                                           and left < _tie_floor(top, _ABSOLUTE)):
                                            pending = max(pending, left)
                                            break
                                    if m == n_touched and alone:
                                        # not stopped: the groups of phi alone, one candidate
                                        g, item = _alone_lowest(
                                            by_ptr[phi], by_ptr[phi + 1], links,
                                            np.int64(1) << phi, actmask, grp_mask, grp_ptr,
                                            grp_items, grp_first, gstamp, gpos, base)
                                        if g >= 0:
                                            prod = 1.0
                                            for a in range(grp_aptr[g], grp_aptr[g + 1]):
                                                prod *= q[grp_aidx[a]]
                                            gain = 1.0 - prod
                                            if gain > 0.0:
                                                cand[n_cand] = g
                                                gain_c[n_cand] = gain
                                                n_cand += 1
                                                top = max(top, gain)
                                                if gain > few_min:
                                                    n_few, few_min = _keep_few(
                                                        gain, best_few, n_few, keep_min)
                                    elif m == n_touched:  # not stopped: the groups of phi alone
                                        n_cand, top, n_few, few_min = _scan_groups(
                                            by_ptr[phi], by_ptr[phi + 1], links, _LAST, base,
                                            gstamp, gpos, grp_ptr, grp_aptr, grp_aidx, arank, q,
                                            cand, gain_c, n_cand, top, best_few, n_few, few_min,
                                            keep_min)
                                    arank[phi] = place
                                place = b_start[k + 1]
                                k += 1
                                while k < n_b and b_start[k + 1] == b_start[k]:
                                    k += 1  # empty buckets
                                unseen = (-1.0 if k == n_b else
                                      _unseen_bound(1.0, b_top[k], alpha, width))
                                unseen = max(unseen, pending)
                                if unseen <= 0.0 or (few_min > unseen
                                                     and unseen < _tie_floor(top, _ABSOLUTE)):
                                    break
                            for t in range(n_touched if pairs else place):
                                arank[order[t]] = _LAST
                        bound = unseen
                        n_buf = 0
                        if top > 0.0:
                            # bins 1.._BINS split [0, top] in equal widths
                            scale = (_BINS - 0.5) / top
                            hist[:] = 0
                            for t in range(t_end - t_start):
                                hist[_bin(gain_t[t], scale)] += 1
                            for e in range(n_cand):
                                hist[_bin(gain_c[e], scale)] += 1
                            cut = _BINS
                            held = hist[_BINS]
                            while cut > 1 and held < _KEEP:
                                cut -= 1
                                held += hist[cut]
                            # and every gain that ties with the top: the pick takes the
                            # lowest id among them all (below 2**-44 every gain ties)
                            cut = min(cut, _bin(max(_tie_floor(top, _ABSOLUTE), 0.0), scale))
                            for j in range(t_start, t_end):
                                gain = gain_t[j - t_start]
                                if gain <= 0.0:
                                    continue
                                if _bin(gain, scale) >= cut:
                                    b_ref[n_buf] = j
                                    b_gain[n_buf] = gain
                                    b_id[n_buf] = t_indices[j]
                                    b_mask[n_buf] = t_mask[j - t_start] & actmask
                                    n_buf += 1
                                elif gain > bound:
                                    bound = gain
                            stamp += 1
                            for e in range(n_cand):
                                gain = gain_c[e]
                                if _bin(gain, scale) < cut:
                                    bound = max(bound, gain)
                                    continue
                                g = cand[e]
                                item = grp_first[g]  # the group's first, unless touched
                                if gstamp[g] == base:
                                    item = grp_items[gpos[g]]
                                key = grp_mask[g] & actmask
                                if actmask != -1:
                                    # slots 1.., not row 0
                                    h = ((key * _MIX) >> 21) & table_mask | 1
                                    while table[h, 0] == stamp and table[h, 1] != key:
                                        h = (h + 1) & table_mask | 1
                                    # joins an entry: the same gain forever
                                    if table[h, 0] == stamp:
                                        f = table[h, 2]
                                        gnext[g] = b_head[f]
                                        b_head[f] = g
                                        if item < b_id[f]:
                                            b_id[f] = item
                                            b_ref[f] = -(g + 1)
                                        continue
                                    table[h, 0] = stamp
                                    table[h, 1] = key
                                    table[h, 2] = n_buf
                                b_ref[n_buf] = -(g + 1)
                                b_gain[n_buf] = gain
                                b_id[n_buf] = item
                                b_mask[n_buf] = key
                                b_head[n_buf] = g
                                gnext[g] = -1
                                if alone and key & (key - 1) == 0:
                                    # one aspect of interest: the groups of that aspect alone,
                                    # which _alone_lowest walks again (-2 - the aspect)
                                    for a in range(grp_aptr[g], grp_aptr[g + 1]):
                                        if key == np.int64(1) << grp_aidx[a]:
                                            b_head[n_buf] = -2 - grp_aidx[a]
                                n_buf += 1
                        top = -1.0
                        for b in range(n_buf):
                            top = max(top, b_gain[b])
                    if top <= 0.0:
                        break  # nothing left, or every gain from here on is 0
                    # the lowest id among the gains that tie with the largest
                    floor = _tie_floor(top, _ABSOLUTE)
                    best = -1
                    for b in range(n_buf):
                        if b_gain[b] >= floor and (best < 0 or b_id[b] < b_id[best]):
                            best = b
                    item = b_id[best]
                    ref = b_ref[best]
                    acc += b_gain[best] * disc[step]
                    while c < n_cut and cutoffs[c] == step + 1:
                        idcg[c, i] = acc
                        c += 1
                    picked_mask = b_mask[best]
                    remove = True
                    g = -1
                    if ref >= 0:
                        p = max(t_data[ref], 0.0) * p_scale
                        tused[ref - t_start] = 1
                    else:
                        p = alpha
                        g = -ref - 1
                        pos = grp_ptr[g]
                        if gstamp[g] == base:
                            pos = gpos[g]
                        end = grp_ptr[g + 1]
                        pos += 1
                        while pos < end and mark[grp_items[pos]] == base:
                            pos += 1
                        gstamp[g] = base
                        gpos[g] = pos
                        # the entry's next id: the lowest available among its member groups
                        low = -1
                        member = b_head[best]
                        if member < -1:  # the groups of one aspect alone
                            phi = -2 - member
                            member = -1
                            low, next_id = _alone_lowest(
                                by_ptr[phi], by_ptr[phi + 1], links, np.int64(1) << phi,
                                actmask, grp_mask, grp_ptr, grp_items, grp_first, gstamp, gpos,
                                base)
                            b_id[best] = next_id
                        while member >= 0:
                            pos = grp_ptr[member]
                            item = grp_first[member]
                            if gstamp[member] == base:
                                pos = gpos[member]
                                if pos < grp_ptr[member + 1]:
                                    item = grp_items[pos]
                            if pos < grp_ptr[member + 1] and (low < 0 or item < b_id[best]):
                                low = member
                                b_id[best] = item
                            member = gnext[member]
                        if low >= 0:
                            b_ref[best] = -(low + 1)
                            remove = False
                    if remove:
                        n_buf -= 1
                        b_ref[best] = b_ref[n_buf]
                        b_gain[best] = b_gain[n_buf]
                        b_id[best] = b_id[n_buf]
                        b_mask[best] = b_mask[n_buf]
                        b_head[best] = b_head[n_buf]
                    # the pick's aspects of interest (the others' s stays 0 and q 1.0):
                    # from its mask, else a group's from the group's own (an item's row is
                    # a cache miss), a truth item's from its row
                    if by_mask:
                        bits = np.uint64(picked_mask)
                        while bits != 0:
                            phi = np.int64(trailing_zeros(bits))
                            bits &= bits - np.uint64(1)
                            s[phi] *= 1.0 - p
                            q[phi] = 1.0 - alpha * s[phi]
                    elif g < 0:
                        for a in range(a_indptr[item], a_indptr[item + 1]):
                            phi = a_indices[a]
                            s[phi] *= 1.0 - p
                            q[phi] = 1.0 - alpha * s[phi]
                    else:
                        for a in range(grp_aptr[g], grp_aptr[g + 1]):
                            phi = grp_aidx[a]
                            s[phi] *= 1.0 - p
                            q[phi] = 1.0 - alpha * s[phi]
                while c < n_cut:
                    idcg[c, i] = acc
                    c += 1
                for t in range(n_touched):
                    phi = touched[t]
                    s[phi] = 0.0
                    q[phi] = 1.0
        return np.int64(1)

    return walk


def gamma_shares(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: γ of slot i as a dense row of
    `shares` (users x aspects, the values the ideal read: a share, or a dense weight over
    its row's total; 0 for an aspect γ does not touch), which ab_dcg_rows copies whole.

    The frame holds, in order: rows, gam_ptr, gam_aspects, gam_values, gam_dense,
    gam_totals (γ as ideal_range reads it), shares (arrays of the dtypes `dtypes` gives,
    as `frames.Frame.dtypes`). Returns 1."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        rows = vector(frame, 0, dtypes[0])
        gam_ptr = vector(frame, 1, dtypes[1])
        gam_aspects = vector(frame, 2, dtypes[2])
        gam_values = vector(frame, 3, dtypes[3])
        gam_dense = matrix(frame, 4, dtypes[4])
        gam_totals = vector(frame, 5, dtypes[5])
        shares = matrix(frame, 6, dtypes[6])
        n_aspects = shares.shape[1]
        dense = gam_dense.shape[0] > 0
        lo, hi = bounds(rows.shape[0], chunk, n_chunks)
        for i in range(lo, hi):
            for a in range(n_aspects):
                shares[i, a] = 0.0
            if gam_ptr[i + 1] == gam_ptr[i]:  # γ all zero: the walk skips the row
                continue
            if dense:
                r = rows[i]
                for a in range(n_aspects):
                    shares[i, a] = gam_dense[r, a] / gam_totals[r]
            else:
                for t in range(gam_ptr[i], gam_ptr[i + 1]):
                    shares[i, gam_aspects[t]] = gam_values[t]
        return np.int64(1)

    return walk


@lru_cache(maxsize=32)
def dcg_scratch(n_items, n_aspects):
    """Where ab_dcg_rows' pieces of a range's float64 scratch start (its stamps and
    values, then its interests), the last entry the size of a range's share. Read-only,
    cached."""
    return _shared(offsets([2 * n_items, n_aspects + 1]))


def ab_dcg_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: αβ-nDCG of each top-K row at
    every cutoff, out[c, i]: its αβ-DCG over idcg[c, i] (0 where idcg is 0), NaN where the
    ideal's status is not OK (no truth or no γ). A repeated id counts once.

    γ of slot i is read from the first of: `shares` (gamma_shares' dense rows, when it
    has rows: copied whole, where aspects are few), a dense weight matrix (gam_dense over
    gam_totals, read only at the listed items' aspects), or CSR (gam_ptr, gam_aspects,
    gam_values: loaded and cleared). An item's aspects are read from `a_table` (its row,
    ascending, padded with the aspect n_aspects, whose interest stays 0 so that a padded
    factor is exactly 1: the same product) unless the table has no columns or the row
    starts with -1 (more aspects than its width); then from the CSR arrays. A loop of one
    length for every item is what makes the table faster: the CSR loop's trip count
    varies from item to item, and the branch that ends it is mispredicted.

    The frame holds, in order: t_indptr, t_indices, t_data, rows, topk, gam_ptr,
    gam_aspects, gam_values, gam_dense, gam_totals, shares, a_indptr, a_indices, a_table,
    n_aspects, n_items, alpha, beta, r_max, cutoffs, disc, idcg, status, out, then every
    range's scratch and where its pieces lie: at, floats (from dcg_scratch; arrays of the
    dtypes `dtypes` gives, as `frames.Frame.dtypes`). The walk zeroes its scratch first (the
    facade lends it from `fastrank.scratch`, as the last call left it); where `floats`
    is empty (few lists on a large catalogue, or more scratch than the pool keeps) each
    range allocates its own. Returns 1, or 0 where that allocation failed. Per item, a
    stamp (2(i + 1) for row i's truth, + 1 once listed: exact in float64) and its value
    side by side in `mark`, one cache line for the list's random lookups: two arrays took
    12% longer."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, error_model="numpy", no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        t_indptr = vector(frame, 0, dtypes[0])
        t_indices = vector(frame, 1, dtypes[1])
        t_data = vector(frame, 2, dtypes[2])
        rows = vector(frame, 3, dtypes[3])
        topk = matrix(frame, 4, dtypes[4])
        gam_ptr = vector(frame, 5, dtypes[5])
        gam_aspects = vector(frame, 6, dtypes[6])
        gam_values = vector(frame, 7, dtypes[7])
        gam_dense = matrix(frame, 8, dtypes[8])
        gam_totals = vector(frame, 9, dtypes[9])
        shares = matrix(frame, 10, dtypes[10])
        a_indptr = vector(frame, 11, dtypes[11])
        a_indices = vector(frame, 12, dtypes[12])
        a_table = matrix(frame, 13, dtypes[13])
        n_aspects = number(frame, 14, dtypes[14])
        n_items = number(frame, 15, dtypes[15])
        alpha = number(frame, 16, dtypes[16])
        beta = number(frame, 17, dtypes[17])
        r_max = number(frame, 18, dtypes[18])
        cutoffs = vector(frame, 19, dtypes[19])
        disc = vector(frame, 20, dtypes[20])
        idcg = matrix(frame, 21, dtypes[21])
        status = vector(frame, 22, dtypes[22])
        out = matrix(frame, 23, dtypes[23])
        at = vector(frame, 24, dtypes[24])
        floats = vector(frame, 25, dtypes[25])
        n_rows = rows.shape[0]
        copy = shares.shape[0] > 0  # γ copied whole from its dense row
        dense = gam_dense.shape[0] > 0  # γ read from a dense weight matrix
        width = a_table.shape[1]
        n_cut = cutoffs.shape[0]
        k_max = cutoffs[n_cut - 1]
        steps = min(k_max, topk.shape[1])  # the ranks past the lists' columns are empty
        p_scale = beta / r_max
        lo, hi = bounds(n_rows, chunk, n_chunks)
        if floats.shape[0] > 0:  # lent: zeroed here
            own = chunk * at[2]  # this range's scratch (dcg_scratch)
            mark = segment(floats, own + at[0], 2 * n_items)
            s = segment(floats, own + at[1], n_aspects + 1)
            mark[:] = 0.0
            s[:] = 0.0
        else:  # fresh zero pages, faulted in only where the lists and truth touch them
            mark = np.zeros(2 * n_items, np.float64)  # per item: stamp, value
            s = np.zeros(n_aspects + 1, np.float64)  # + the table's padding, always 0
        for i in range(lo, hi):
            if status[i] != OK:  # no truth or no γ: not counted
                for c in range(n_cut):
                    out[c, i] = np.nan
                continue
            r = rows[i]
            if copy:  # every aspect overwritten: nothing to clear after the row
                for a in range(n_aspects):
                    s[a] = shares[i, a]
            elif dense:  # only the aspects of the listed items: the rest are never read
                for step in range(steps):
                    item = topk[i, step]
                    if item >= 0:
                        for a in range(a_indptr[item], a_indptr[item + 1]):
                            phi = a_indices[a]
                            s[phi] = gam_dense[r, phi] / gam_totals[r]
            else:
                for t in range(gam_ptr[i], gam_ptr[i + 1]):
                    s[gam_aspects[t]] = gam_values[t]
            base = 2.0 * (i + 1)
            for j in range(t_indptr[r], t_indptr[r + 1]):
                item = t_indices[j]
                mark[2 * item] = base
                mark[2 * item + 1] = max(t_data[j], 0.0)
            acc = 0.0
            c = 0
            for step in range(steps):
                item = topk[i, step]
                if item >= 0 and mark[2 * item] != base + 1:  # not padding, not a repeat
                    p = alpha
                    if mark[2 * item] == base:
                        p = mark[2 * item + 1] * p_scale
                    mark[2 * item] = base + 1
                    prod = 1.0
                    kept = 1.0 - p
                    # one pass: an item's aspects are distinct (canonical CSR), so each
                    # reads s before the item's own update, as two passes would
                    if width > 0 and a_table[item, 0] >= 0:
                        for w in range(width):
                            phi = a_table[item, w]
                            v = s[phi]
                            prod *= 1.0 - p * v
                            s[phi] = v * kept
                    else:
                        for a in range(a_indptr[item], a_indptr[item + 1]):
                            phi = a_indices[a]
                            v = s[phi]
                            prod *= 1.0 - p * v
                            s[phi] = v * kept
                    acc += (1.0 - prod) * disc[step]
                while c < n_cut and cutoffs[c] == step + 1:
                    out[c, i] = acc / idcg[c, i] if idcg[c, i] > 0 else 0.0
                    c += 1
            while c < n_cut:
                out[c, i] = acc / idcg[c, i] if idcg[c, i] > 0 else 0.0
                c += 1
            if dense and not copy:
                for step in range(steps):
                    item = topk[i, step]
                    if item >= 0:
                        for a in range(a_indptr[item], a_indptr[item + 1]):
                            s[a_indices[a]] = 0.0
            elif not copy:
                for t in range(gam_ptr[i], gam_ptr[i + 1]):
                    s[gam_aspects[t]] = 0.0
        return np.int64(1)

    return walk


@njit(cache=True)
def _alpha_reset(t_start, t_end, t_indices, t_data, a_indptr, a_indices, w):
    """w = 1 on every aspect of the row's relevant items (all a user can touch)."""
    for j in range(t_start, t_end):
        if t_data[j] > 0.0:
            item = t_indices[j]
            for a in range(a_indptr[item], a_indptr[item + 1]):
                w[a_indices[a]] = 1.0


def alpha_rows(dtypes):
    """The walk (`frames.run_ranges`) of a range of rows: Classic α-nDCG (Clarke et al.
    2008, as TREC's ndeval): out[c, i] at each cutoff.

    The documents are the user's relevant items (truth > 0), their subtopics the items'
    aspects, judgments binary. An item's gain is Σ over its aspects of (1 - alpha)^n,
    n = how many earlier relevant items had that aspect (the power built by repeated
    multiplication, summed in ascending aspect order). The ideal is greedy over the
    relevant items (ties, to within rounding: the lower item id; see _tie_floor). Users
    with m = 0 get NaN; a zero ideal gives 0. A repeated id counts once.

    The frame holds, in order: t_indptr, t_indices, t_data, rows, topk, a_indptr,
    a_indices, n_aspects, n_items, alpha, cutoffs, disc, max_row_nnz, out, n_relevant
    (arrays of the dtypes `dtypes` gives, as `frames.Frame.dtypes`). Returns 1, or 0
    where the walk's scratch could not be allocated."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        t_indptr = vector(frame, 0, dtypes[0])
        t_indices = vector(frame, 1, dtypes[1])
        t_data = vector(frame, 2, dtypes[2])
        rows = vector(frame, 3, dtypes[3])
        topk = matrix(frame, 4, dtypes[4])
        a_indptr = vector(frame, 5, dtypes[5])
        a_indices = vector(frame, 6, dtypes[6])
        n_aspects = number(frame, 7, dtypes[7])
        n_items = number(frame, 8, dtypes[8])
        alpha = number(frame, 9, dtypes[9])
        cutoffs = vector(frame, 10, dtypes[10])
        disc = vector(frame, 11, dtypes[11])
        max_row_nnz = number(frame, 12, dtypes[12])
        out = matrix(frame, 13, dtypes[13])
        n_relevant = vector(frame, 14, dtypes[14])
        n_rows = rows.shape[0]
        n_cut = cutoffs.shape[0]
        k_max = cutoffs[n_cut - 1]
        decay = 1.0 - alpha
        lo, hi = bounds(n_rows, chunk, n_chunks)
        mark = np.zeros(n_items, np.int64)
        w = np.ones(n_aspects, np.float64)
        used = np.empty(max(max_row_nnz, 1), np.uint8)
        gains = np.empty(max(max_row_nnz, 1), np.float64)
        ideal = np.empty(n_cut, np.float64)
        for i in range(lo, hi):
            r = rows[i]
            t_start = t_indptr[r]
            t_end = t_indptr[r + 1]
            m = 0
            base = 2 * (np.int64(i) + 1)
            for j in range(t_start, t_end):
                used[j - t_start] = 0
                if t_data[j] > 0.0:
                    mark[t_indices[j]] = base
                    m += 1
            n_relevant[i] = m
            if m == 0:
                for c in range(n_cut):
                    out[c, i] = np.nan
                continue
            # the greedy ideal over the relevant items
            acc = 0.0
            c = 0
            for step in range(k_max):
                top = -1.0
                for j in range(t_start, t_end):
                    gain = -1.0
                    if t_data[j] > 0.0 and not used[j - t_start]:
                        item = t_indices[j]
                        gain = 0.0
                        for a in range(a_indptr[item], a_indptr[item + 1]):
                            gain += w[a_indices[a]]
                    gains[j - t_start] = gain
                    top = max(top, gain)
                if top <= 0.0:
                    break
                # ascending ids: the first gain that ties with the largest has the lowest id
                floor = _tie_floor(top, _RELATIVE)
                best = t_start
                while gains[best - t_start] < floor:
                    best += 1
                best_gain = gains[best - t_start]
                used[best - t_start] = 1
                acc += best_gain * disc[step]
                item = t_indices[best]
                for a in range(a_indptr[item], a_indptr[item + 1]):
                    w[a_indices[a]] *= decay
                while c < n_cut and cutoffs[c] == step + 1:
                    ideal[c] = acc
                    c += 1
            while c < n_cut:
                ideal[c] = acc
                c += 1
            _alpha_reset(t_start, t_end, t_indices, t_data, a_indptr, a_indices, w)
            # the list; the ranks past its columns are empty
            acc = 0.0
            c = 0
            for step in range(min(k_max, topk.shape[1])):
                item = topk[i, step]
                if item >= 0 and mark[item] == base:  # relevant, first time
                    mark[item] = base + 1
                    gain = 0.0
                    for a in range(a_indptr[item], a_indptr[item + 1]):
                        gain += w[a_indices[a]]
                        w[a_indices[a]] *= decay
                    acc += gain * disc[step]
                while c < n_cut and cutoffs[c] == step + 1:
                    out[c, i] = acc / ideal[c] if ideal[c] > 0.0 else 0.0
                    c += 1
            while c < n_cut:
                out[c, i] = acc / ideal[c] if ideal[c] > 0.0 else 0.0
                c += 1
            _alpha_reset(t_start, t_end, t_indices, t_data, a_indptr, a_indices, w)
        return np.int64(1)

    return walk
