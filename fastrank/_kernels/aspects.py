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

Lazy greedy with a buffer: a full scan computes every candidate's gain, keeps those at
or above the `_KEEP`-th largest (all ties included) and remembers the largest gain it
left out (`bound`). Gains only fall as s falls (every factor 1 - p·s rises and IEEE
rounding is monotone), so candidates outside the buffer stay at or below `bound`. A
step recomputes the buffered gains that share an aspect with the last pick and takes
the lowest id among those that tie with the largest, unless `bound` reaches that tie;
then it scans again. Each pick is the argmax of the plain definition. Once the best
gain is 0 every later gain is 0, and the walk stops. Aspect sets are also kept as
64-bit masks (when there are at most 64 aspects; else all bits set): after a pick, only
buffered candidates sharing an aspect with it are recomputed.

Measured on the benchmark shape, two things decide the speed of the scan. The gain and
decay loops are written out where they run, not called: a numba call that takes arrays
pays reference counting on each array per call, which made a helper-based scan ten
times slower. And the scan has no branch on a group's content: groups are ordered by
aspect count (so the inner loop's trip count rarely changes) and every group's product
is computed, which was three times faster than skipping groups by mask.
"""

import numpy as np
from numba import njit, prange

_KEEP = 32  # buffered candidates between full scans (at least; a whole bin is taken)
_BINS = 64  # bins of the gain histogram that finds the buffer's cut
_TINY = 1e-17  # below the smallest positive gain 1 - prod (2**-53)
_MIX = np.int64(-7046029254386353131)  # 2**64 / golden ratio, as int64: a multiplicative hash
_TIE_REL = 2.0 ** -40  # gains this close (relative) are ties: see _tie_floor
_TIE_ABS = 2.0 ** -44

# status codes per user, shared with the facade
OK = 0
NO_PROFILE = 1  # γ_u is all zero
NO_TRUTH = 2    # the truth row stores nothing


@njit(cache=True, inline="always")
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
def _load_gamma(r, g_indptr, g_indices, g_data, from_profile, a_indptr, a_indices, s, touched):
    """Write γ of row r into s (zero elsewhere) and its aspects into touched; return how
    many aspects it touches, or -1 (s left all zero) if γ is all zero."""
    n = 0
    total = 0.0
    for j in range(g_indptr[r], g_indptr[r + 1]):
        v = g_data[j]
        if v == 0.0:  # a stored zero touches nothing (values are never negative)
            continue
        if from_profile:
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


@njit(cache=True)
def _fill(t_start, t_end, t_indices, t_data, tused, p_scale, a_indptr, a_indices, t_mask,
          n_groups, grp_ptr, grp_items, grp_aptr, grp_aidx, grp_mask, base, gstamp, gpos,
          s, q, actmask, gain_t, gain_g, hist, b_ref, b_gain, b_id, b_mask, b_head, gnext,
          table, bound):
    """Full scan from the current interest: buffer the best candidates (b_*), return how
    many; bound[0] = the largest gain left out (-1: none).
    b_ref is the truth position of a truth candidate, or -(g + 1) for group g.

    Groups whose aspect sets agree on the user's aspects (`actmask`) have equal gains
    now and after every pick, so they share one buffer entry: its members are linked
    from b_head through gnext, and its id is the lowest available among them. Found
    through `table` (open addressing, [stamp, key, entry] per slot, stamp = this scan).
    Without masks (more than 64 aspects) every group is its own entry.

    Which candidates are "best" only decides how often the walk must scan again, not
    the result, so the cut is found cheaply: gains go into _BINS equal bins of (0, max],
    and the buffer takes the top bins until it holds at least _KEEP candidates.
    """
    top = 0.0  # the largest gain
    for j in range(t_start, t_end):
        gain = 0.0
        if not tused[j - t_start]:
            item = t_indices[j]
            p = max(t_data[j], 0.0) * p_scale
            prod = 1.0
            for a in range(a_indptr[item], a_indptr[item + 1]):
                prod *= 1.0 - p * s[a_indices[a]]
            gain = 1.0 - prod
        gain_t[j - t_start] = gain
        top = max(top, gain)
    # Every group, without a branch on its content: an exhausted group or one without
    # any aspect the user cares about gets gain 0 (q is 1.0 off the user's aspects).
    for g in range(n_groups):
        prod = 1.0
        for a in range(grp_aptr[g], grp_aptr[g + 1]):
            prod *= q[grp_aidx[a]]
        gain = 1.0 - prod
        if gstamp[g] == base and gpos[g] >= grp_ptr[g + 1]:
            gain = 0.0
        gain_g[g] = gain
        top = max(top, gain)
    bound[0] = -1.0
    if top <= 0.0:
        return 0
    # bins 1.._BINS split [0, top] in equal widths
    scale = (_BINS - 0.5) / top
    hist[:] = 0
    for j in range(t_end - t_start):
        hist[_bin(gain_t[j], scale)] += 1
    for g in range(n_groups):
        hist[_bin(gain_g[g], scale)] += 1
    cut = _BINS
    held = hist[_BINS]
    while cut > 1 and held < _KEEP:
        cut -= 1
        held += hist[cut]
    n_buf = 0
    for j in range(t_start, t_end):
        gain = gain_t[j - t_start]
        if gain <= 0.0:
            continue
        item = t_indices[j]
        if _bin(gain, scale) >= cut:
            b_ref[n_buf] = j
            b_gain[n_buf] = gain
            b_id[n_buf] = item
            b_mask[n_buf] = t_mask[j - t_start] & actmask
            n_buf += 1
        elif gain > bound[0]:
            bound[0] = gain
    table_mask = table.shape[0] - 1
    stamp = table[0, 0] = table[0, 0] + 1  # row 0 holds the scan counter
    for g in range(n_groups):
        gain = gain_g[g]
        if gain < max(bound[0], _TINY):  # zero, or cannot beat the bound: mostly true
            continue
        pos = grp_ptr[g]
        if gstamp[g] == base:
            pos = gpos[g]
        item = grp_items[pos]
        if _bin(gain, scale) >= cut:
            key = grp_mask[g] & actmask
            if actmask != -1:
                h = ((key * _MIX) >> 21) & table_mask | 1  # slots 1.., never row 0
                while table[h, 0] == stamp and table[h, 1] != key:
                    h = (h + 1) & table_mask | 1
                if table[h, 0] == stamp:  # joins an entry with the same gain forever
                    e = table[h, 2]
                    gnext[g] = b_head[e]
                    b_head[e] = g
                    if item < b_id[e]:
                        b_id[e] = item
                        b_ref[e] = -(g + 1)
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
            n_buf += 1
        else:
            bound[0] = gain  # above the bound (checked at the top of the loop)
    return n_buf


@njit(cache=True, inline="always")
def _bin(gain, scale):
    """Histogram bin of a gain in [0, top]: 1.._BINS (bin 1 also holds gain 0), no branch."""
    return min(np.int64(gain * scale) + 1, _BINS)


@njit(cache=True)
def _user_ideal(i, k_max, t_start, t_end, t_indices, t_data, tused, p_scale, alpha,
                a_indptr, a_indices, t_mask, n_groups, grp_ptr, grp_items, grp_aptr, grp_aidx,
                grp_mask, base, gstamp, gpos, mark, s, q, actmask, gain_t, gain_g, hist,
                b_ref, b_gain, b_id, b_mask, b_head, gnext, table, bound, disc, cutoffs, idcg):
    """The greedy ideal of one user: idcg[c, i] for every cutoff. Consumes s and q."""
    n_cut = cutoffs.shape[0]
    n_buf = _fill(t_start, t_end, t_indices, t_data, tused, p_scale, a_indptr, a_indices,
                  t_mask, n_groups, grp_ptr, grp_items, grp_aptr, grp_aidx, grp_mask, base,
                  gstamp, gpos, s, q, actmask, gain_t, gain_g, hist, b_ref, b_gain, b_id,
                  b_mask, b_head, gnext, table, bound)
    picked_mask = np.int64(0)  # aspects changed by the last pick
    acc = 0.0
    c = 0
    for step in range(k_max):
        top = -1.0
        for b in range(n_buf):
            if b_mask[b] & picked_mask != 0:  # its gain changed: recompute
                ref = b_ref[b]
                prod = 1.0
                if ref >= 0:
                    item = b_id[b]
                    p = max(t_data[ref], 0.0) * p_scale
                    for a in range(a_indptr[item], a_indptr[item + 1]):
                        prod *= 1.0 - p * s[a_indices[a]]
                else:
                    g = -ref - 1
                    for a in range(grp_aptr[g], grp_aptr[g + 1]):
                        prod *= q[grp_aidx[a]]
                b_gain[b] = 1.0 - prod
            top = max(top, b_gain[b])
        # a candidate left out could win or tie (gains only fall): scan everything again
        if bound[0] > 0.0 and bound[0] >= _tie_floor(top, True):
            n_buf = _fill(t_start, t_end, t_indices, t_data, tused, p_scale, a_indptr,
                          a_indices, t_mask, n_groups, grp_ptr, grp_items, grp_aptr, grp_aidx,
                          grp_mask, base, gstamp, gpos, s, q, actmask, gain_t, gain_g,
                          hist, b_ref, b_gain, b_id, b_mask, b_head, gnext, table, bound)
            top = -1.0
            for b in range(n_buf):
                top = max(top, b_gain[b])
        if top <= 0.0:
            break  # nothing left, or every gain from here on is 0
        # the lowest id among the gains that tie with the largest
        floor = _tie_floor(top, True)
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
            while member >= 0:
                pos = grp_ptr[member]
                if gstamp[member] == base:
                    pos = gpos[member]
                if pos < grp_ptr[member + 1] and (low < 0 or grp_items[pos] < b_id[best]):
                    low = member
                    b_id[best] = grp_items[pos]
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
        for a in range(a_indptr[item], a_indptr[item + 1]):
            phi = a_indices[a]
            s[phi] *= 1.0 - p
            q[phi] = 1.0 - alpha * s[phi]
    while c < n_cut:
        idcg[c, i] = acc
        c += 1


@njit(cache=True)
def _mark_unrated(item, base, mark, item_group, gstamp, gpos):
    """Item is not an unrated candidate of this user (a truth or excluded item)."""
    mark[item] = base
    g = item_group[item]
    gstamp[g] = base
    gpos[g] = -1


@njit(cache=True)
def _resolve(g, base, grp_ptr, grp_items, gpos, mark):
    """Cursor of a group the user's marks touched: its first unmarked item."""
    if gpos[g] >= 0 or g + 1 >= grp_ptr.shape[0]:  # resolved, or the aspectless slot
        return
    pos = grp_ptr[g]
    end = grp_ptr[g + 1]
    while pos < end and mark[grp_items[pos]] == base:
        pos += 1
    gpos[g] = pos


@njit(cache=True, parallel=True)
def ab_ideal(t_indptr, t_indices, t_data, rows, g_indptr, g_indices, g_data, from_profile,
             e_indptr, e_indices, a_indptr, a_indices, item_mask, n_aspects, grp_ptr,
             grp_items, grp_aptr, grp_aidx, grp_mask, item_group, alpha, beta, r_max,
             cutoffs, disc, max_row_nnz, n_chunks, idcg, status):
    """Greedy ideal DCG of αβ-nDCG: idcg[c, i] for cutoff c and user slot i (truth row
    rows[i]); status[i] is OK, NO_PROFILE or NO_TRUTH (idcg 0 for those).

    g_*: the profile (from_profile, users x items) or user-aspect weights (users x
    aspects); e_*: the exclusion pattern (users x items, may store nothing); item_mask:
    each item's aspect bitmask; grp_ptr / grp_items: the groups of equal aspect set, item
    ids ascending within each; grp_aptr / grp_aidx / grp_mask: each group's aspects;
    item_group[i]: the group of item i (n_groups for an item without aspects).
    """
    n_rows = rows.shape[0]
    n_items = item_group.shape[0]
    n_groups = grp_ptr.shape[0] - 1
    n_cut = cutoffs.shape[0]
    k_max = cutoffs[n_cut - 1]
    p_scale = beta / r_max
    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
        mark = np.zeros(n_items, np.int64)
        gstamp = np.zeros(n_groups + 1, np.int64)  # + a spare slot for aspectless items
        gpos = np.zeros(n_groups + 1, np.int64)
        gain_g = np.empty(max(n_groups, 1), np.float64)
        s = np.zeros(n_aspects, np.float64)
        q = np.ones(n_aspects, np.float64)
        touched = np.empty(n_aspects, np.int64)
        width = max(max_row_nnz, 1)
        tused = np.empty(width, np.uint8)
        gain_t = np.empty(width, np.float64)
        t_mask = np.empty(width, np.int64)
        hist = np.empty(_BINS + 1, np.int64)
        cap = n_groups + width
        b_ref = np.empty(cap, np.int64)
        b_gain = np.empty(cap, np.float64)
        b_id = np.empty(cap, np.int64)
        b_mask = np.empty(cap, np.int64)
        b_head = np.empty(cap, np.int64)
        gnext = np.empty(max(n_groups, 1), np.int64)
        size = 4  # a power of two, at least twice the groups + 1 (row 0: the counter)
        while size < 2 * n_groups + 2:
            size *= 2
        table = np.zeros((size, 3), np.int64)
        bound = np.empty(1, np.float64)
        for i in range(lo, hi):
            for c in range(n_cut):
                idcg[c, i] = 0.0
            r = rows[i]
            t_start = t_indptr[r]
            t_end = t_indptr[r + 1]
            n_touched = -1
            if t_end == t_start:
                status[i] = NO_TRUTH
            else:
                n_touched = _load_gamma(r, g_indptr, g_indices, g_data, from_profile,
                                        a_indptr, a_indices, s, touched)
                status[i] = OK if n_touched >= 0 else NO_PROFILE
            if n_touched < 0:
                continue
            base = np.int64(i) + 1
            actmask = np.int64(-1)  # all bits: no masks past 64 aspects
            if n_aspects <= 64:
                actmask = np.int64(0)
            for t in range(n_touched):
                phi = touched[t]
                q[phi] = 1.0 - alpha * s[phi]
                if n_aspects <= 64:
                    actmask |= np.int64(1) << phi
            for j in range(t_start, t_end):
                item = t_indices[j]
                _mark_unrated(item, base, mark, item_group, gstamp, gpos)
                tused[j - t_start] = 0
                t_mask[j - t_start] = item_mask[item]
            for j in range(e_indptr[r], e_indptr[r + 1]):
                _mark_unrated(e_indices[j], base, mark, item_group, gstamp, gpos)
            for j in range(t_start, t_end):
                _resolve(item_group[t_indices[j]], base, grp_ptr, grp_items, gpos, mark)
            for j in range(e_indptr[r], e_indptr[r + 1]):
                _resolve(item_group[e_indices[j]], base, grp_ptr, grp_items, gpos, mark)
            _user_ideal(i, k_max, t_start, t_end, t_indices, t_data, tused, p_scale, alpha,
                        a_indptr, a_indices, t_mask, n_groups, grp_ptr, grp_items, grp_aptr,
                        grp_aidx, grp_mask, base, gstamp, gpos, mark, s, q, actmask, gain_t,
                        gain_g, hist, b_ref, b_gain, b_id, b_mask, b_head, gnext, table, bound,
                        disc, cutoffs, idcg)
            for t in range(n_touched):
                phi = touched[t]
                s[phi] = 0.0
                q[phi] = 1.0


@njit(cache=True, parallel=True)
def ab_dcg(t_indptr, t_indices, t_data, rows, topk, g_indptr, g_indices, g_data,
           from_profile, a_indptr, a_indices, n_aspects, n_items, alpha, beta, r_max,
           cutoffs, disc, n_chunks, dcg):
    """αβ-DCG of each top-K row at every cutoff: dcg[c, i]. Rows without truth or γ get
    0 (the facade knows them from the ideal's status). A repeated id counts once."""
    n_rows = rows.shape[0]
    n_cut = cutoffs.shape[0]
    k_max = cutoffs[n_cut - 1]
    p_scale = beta / r_max
    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
        mark = np.zeros(n_items, np.int64)
        value = np.empty(n_items, np.float64)
        s = np.zeros(n_aspects, np.float64)
        touched = np.empty(n_aspects, np.int64)
        for i in range(lo, hi):
            for c in range(n_cut):
                dcg[c, i] = 0.0
            r = rows[i]
            n_touched = -1
            if t_indptr[r + 1] > t_indptr[r]:
                n_touched = _load_gamma(r, g_indptr, g_indices, g_data, from_profile,
                                        a_indptr, a_indices, s, touched)
            if n_touched < 0:
                continue
            base = 2 * (np.int64(i) + 1)
            for j in range(t_indptr[r], t_indptr[r + 1]):
                item = t_indices[j]
                mark[item] = base
                value[item] = max(t_data[j], 0.0)
            acc = 0.0
            c = 0
            for step in range(k_max):
                item = topk[i, step]
                if item >= 0 and mark[item] != base + 1:  # not padding, not a repeat
                    p = alpha
                    if mark[item] == base:
                        p = value[item] * p_scale
                    mark[item] = base + 1
                    prod = 1.0
                    for a in range(a_indptr[item], a_indptr[item + 1]):
                        prod *= 1.0 - p * s[a_indices[a]]
                    acc += (1.0 - prod) * disc[step]
                    for a in range(a_indptr[item], a_indptr[item + 1]):
                        s[a_indices[a]] *= 1.0 - p
                while c < n_cut and cutoffs[c] == step + 1:
                    dcg[c, i] = acc
                    c += 1
            for t in range(n_touched):
                s[touched[t]] = 0.0


@njit(cache=True)
def _alpha_reset(t_start, t_end, t_indices, t_data, a_indptr, a_indices, w):
    """w = 1 on every aspect of the row's relevant items (all a user can touch)."""
    for j in range(t_start, t_end):
        if t_data[j] > 0.0:
            item = t_indices[j]
            for a in range(a_indptr[item], a_indptr[item + 1]):
                w[a_indices[a]] = 1.0


@njit(cache=True, parallel=True)
def alpha_ndcg(t_indptr, t_indices, t_data, rows, topk, a_indptr, a_indices, n_aspects,
               n_items, alpha, cutoffs, disc, max_row_nnz, n_chunks, out, n_relevant):
    """Classic α-nDCG (Clarke et al. 2008, as TREC's ndeval): out[c, i] at each cutoff.

    The documents are the user's relevant items (truth > 0), their subtopics the items'
    aspects, judgments binary. An item's gain is Σ over its aspects of (1 - alpha)^n,
    n = how many earlier relevant items had that aspect (the power built by repeated
    multiplication, summed in ascending aspect order). The ideal is greedy over the
    relevant items (ties, to within rounding: the lower item id; see _tie_floor). Users
    with m = 0 get NaN; a zero ideal gives 0. A repeated id counts once.
    """
    n_rows = rows.shape[0]
    n_cut = cutoffs.shape[0]
    k_max = cutoffs[n_cut - 1]
    decay = 1.0 - alpha
    for chunk in prange(n_chunks):
        lo = (chunk * n_rows) // n_chunks
        hi = ((chunk + 1) * n_rows) // n_chunks
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
                floor = _tie_floor(top, False)
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
            # the list
            acc = 0.0
            c = 0
            for step in range(k_max):
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
            _alpha_reset(t_start, t_end, t_indices, t_data, a_indptr, a_indices, w)
