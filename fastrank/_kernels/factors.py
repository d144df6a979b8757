"""Fused scoring kernel: factors -> scores of one tile -> exclusion -> top-k (and full AUC).

Arrays in, arrays out, nothing raises; the facade (`fastrank.factors`) has checked shapes,
dtypes and indices.

Layout of the work. The users to score are cut into blocks of `block` users; blocks are
grouped into `n_chunks` contiguous ranges run under `prange`. A range allocates its
scratch once: the block's user factors, one tile of scores (`block x tile`, sized to
stay in the core's L2 cache) and the block's AUC counters. For each block the items are
walked tile by tile: one BLAS call (`gemm.product_into`, single-threaded inside the
worker: the facade limits BLAS threads) scores the tile, excluded items are set to -inf, and each
user's running top-k is updated from the tile while it is still in cache. So no more
than one tile of scores per worker ever exists.

Selection: a user's top-k is kept sorted, best first. The tile is read in chunks of
`_CHUNK` scores; a vectorised count of the scores above the current k-th best decides
whether the chunk needs a closer look, which it rarely does once the list is full. A
score enters only if it is strictly greater than the k-th best, so among equal scores
the lower item id (seen first) wins and stays first. `desc_ties` reproduces implicit's
heap instead: equal scores are kept with the higher id first, and the lowest id among
the k-th best ties is the one evicted. -inf (excluded) and NaN never enter: a list
with fewer than k admissible items keeps its -1 / -inf padding.

Block boundaries depend only on the position of a user in `rows`, never on the thread
count, so every value is bit-identical for any number of threads.
"""

import numpy as np

from .compare import lesser
from .frames import integer, matrix, segment, table, vector
from .gemm import product_into
from .jit import njit

_CHUNK = 64


@njit(cache=True, inline="always")
def _insert(s, j, k, count, top_s, top_i, desc_ties):
    """Insert score s of item j into the sorted top list; return the new fill count."""
    pos = count if count < k else k - 1
    while pos > 0 and (top_s[pos - 1] < s or (desc_ties and top_s[pos - 1] == s)):
        top_s[pos] = top_s[pos - 1]
        top_i[pos] = top_i[pos - 1]
        pos -= 1
    top_s[pos] = s
    top_i[pos] = j
    return count + 1 if count < k else k


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _scan(row, offset, k, top_i, top_s, count, desc_ties):
    """Update a user's top list (count filled) from the scores of items offset + j."""
    n = row.shape[0]
    thresh = top_s[k - 1] if count == k else -np.inf
    n_full = n - n % _CHUNK
    for start in range(0, n_full, _CHUNK):
        above = 0
        for j in range(start, start + _CHUNK):
            above += row[j] > thresh
        if above:
            for j in range(start, start + _CHUNK):
                s = row[j]
                if s > thresh:
                    count = _insert(s, offset + j, k, count, top_s, top_i, desc_ties)
                    if count == k:
                        thresh = top_s[k - 1]
    for j in range(n_full, n):
        s = row[j]
        if s > thresh:
            count = _insert(s, offset + j, k, count, top_s, top_i, desc_ties)
            if count == k:
                thresh = top_s[k - 1]
    return count


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _count_vs(row, x):
    """(number of scores > x, number == x) in row; a vectorised pass."""
    greater = 0
    equal = 0
    for j in range(row.shape[0]):
        greater += row[j] > x
        equal += row[j] == x
    return greater, equal


def topk_blocks(factor_type, row_type, ex_pointer_type, ex_index_type, t_pointer_type,
                t_index_type, t_value_type, id_type, want_auc):
    """The walk (`frames.run_ranges`) of a range of blocks (of `block` users each):
    top-k ids and scores (and full-ranking AUC) of the users `rows` from factors, in the
    scratch the facade allocates; returns 1, or 0 where the AUC's counters (the one
    allocation of the walk) could not be allocated.

    ids_out[i], scores_out[i]: the top-k of user rows[i] (-1 / -inf padded); auc_out[i]
    its AUC over every non-excluded item when want_auc (t_* is then the truth CSR: items
    with value > 0 are the positives), and neg_out[i] its number of negatives there
    (GAUC leaves out a user without any). ex_indptr / ex_indices: the sorted excluded items
    of every user (an empty pattern when nothing is excluded). want_auc is a constant of
    the closure: the walk without the full-ranking AUC compiles none of it (its block's
    positives, scored by a BLAS call of their own, and the counters), 1.5 of its 3 s.

    The frame, in order: user_factors, item_factors (factor_type, C-contiguous), rows
    (row_type), k, ex_indptr, ex_indices (of the closure's ex_* types), block, tile,
    desc_ties, t_indptr, t_indices, t_data (the t_* types), ids_out (id_type), scores_out
    (factor_type), auc_out (float64), neg_out (int64), and every range's scratch, which
    the facade allocates at once (`scratch`): floats (factor_type), ints (int64). The
    walk allocates nothing but the AUC's counters: each np.empty or np.zeros signature in
    it compiled an implementation of its own, 0.3 s of a first call."""

    # the C wrapper stays: run_ranges calls the walk through it
    @njit(cache=True, no_cpython_wrapper=True)
    def walk(chunk, n_chunks, frame):
        user_factors = matrix(frame, 0, factor_type)
        item_factors = matrix(frame, 1, factor_type)
        rows = vector(frame, 2, row_type)
        k = integer(frame, 3)
        ex_indptr = vector(frame, 4, ex_pointer_type)
        ex_indices = vector(frame, 5, ex_index_type)
        block = integer(frame, 6)
        tile = integer(frame, 7)
        desc_ties = integer(frame, 8)
        t_indptr = vector(frame, 9, t_pointer_type)
        t_indices = vector(frame, 10, t_index_type)
        t_data = vector(frame, 11, t_value_type)
        ids_out = matrix(frame, 12, id_type)
        scores_out = matrix(frame, 13, factor_type)
        auc_out = vector(frame, 14, np.float64)
        neg_out = vector(frame, 15, np.int64)
        floats = vector(frame, 16, factor_type)  # every range's scratch (`scratch`)
        ints = vector(frame, 17, np.int64)
        n_blocks = (rows.shape[0] + block - 1) // block
        per_chunk = (n_blocks + n_chunks - 1) // n_chunks
        b_lo = chunk * per_chunk
        b_hi = lesser(n_blocks, b_lo + per_chunk)
        if b_lo >= b_hi:  # more ranges than blocks
            return np.int64(1)
        n_rows = rows.shape[0]
        n_items, n_factors = item_factors.shape
        own = chunk * block * (n_factors + tile)  # this range's scratch (see `scratch`)
        ublk = table(floats, own, block, n_factors)
        tiles_at = own + block * n_factors  # where the tile's scores go
        counts = segment(ints, chunk * (3 * block + 1), block)
        ex_pos = segment(ints, chunk * (3 * block + 1) + block, block)
        pos_start = segment(ints, chunk * (3 * block + 1) + 2 * block, block + 1)
        for b in range(b_lo, b_hi):
            s = b * block
            n_blk = lesser(block, n_rows - s)
            for r in range(n_blk):
                u = rows[s + r]
                # element loops: a slice assignment compiles numba's shape-mismatch error
                for f in range(n_factors):
                    ublk[r, f] = user_factors[u, f]
                for j in range(ids_out.shape[1]):
                    ids_out[s + r, j] = -1
                    scores_out[s + r, j] = -np.inf
                counts[r] = 0
                ex_pos[r] = ex_indptr[u]
            users = ublk[:n_blk]
            if want_auc:  # a constant of the closure, like its two other tests below
                # the block's positives and their AUC counters
                pos_items, pos_scores, pos_ok = _positives(
                    users, item_factors, rows, s, n_blk, t_indptr, t_indices, t_data,
                    ex_indptr, ex_indices, pos_start)
                greater = np.zeros(pos_items.shape[0], dtype=np.int64)
                equal = np.zeros(pos_items.shape[0], dtype=np.int64)
                pos_at = pos_start.copy()
            for t0 in range(0, n_items, tile):
                t1 = lesser(t0 + tile, n_items)
                width = t1 - t0
                scores = table(floats, tiles_at, n_blk, width)
                product_into(users, item_factors[t0:t1].T, scores)
                for r in range(n_blk):
                    u = rows[s + r]
                    row = scores[r]
                    p = ex_pos[r]
                    hi = ex_indptr[u + 1]
                    while p < hi and ex_indices[p] < t1:
                        row[ex_indices[p] - t0] = -np.inf
                        p += 1
                    ex_pos[r] = p
                    counts[r] = _scan(row, t0, k, ids_out[s + r], scores_out[s + r],
                                      counts[r], desc_ties)
                    if want_auc:
                        # Positives are not negatives: hide them, then count the
                        # negatives scored above / level with each positive.
                        q = pos_at[r]
                        while q < pos_start[r + 1] and pos_items[q] < t1:
                            row[pos_items[q] - t0] = -np.inf
                            q += 1
                        pos_at[r] = q
                        for q in range(pos_start[r], pos_start[r + 1]):
                            if pos_ok[q]:
                                g, e = _count_vs(row, pos_scores[q])
                                greater[q] += g
                                equal[q] += e
            if want_auc:
                for r in range(n_blk):
                    u = rows[s + r]
                    m = pos_start[r + 1] - pos_start[r]
                    n_ok = 0
                    for q in range(pos_start[r], pos_start[r + 1]):
                        n_ok += pos_ok[q]
                    n_neg = n_items - (ex_indptr[u + 1] - ex_indptr[u]) - n_ok
                    neg_out[s + r] = n_neg
                    if m == 0:
                        auc_out[s + r] = np.nan
                    elif n_neg <= 0:
                        auc_out[s + r] = 1.0
                    else:
                        total = 0.0
                        for q in range(pos_start[r], pos_start[r + 1]):
                            if pos_ok[q]:
                                total += (n_neg - greater[q]) - 0.5 * equal[q]
                        auc_out[s + r] = total / (m * n_neg)
        return np.int64(1)

    return walk


def scratch(n_chunks, block, tile, n_factors, dtype):
    """(floats, ints): the scratch of every range of the walk of `topk_blocks`, allocated
    by the facade at once. A range's floats are its block's user factors (block x
    n_factors) then a tile of scores (block x tile), of the factors' dtype; its ints its
    users' fill counts, their places in the exclusions (block each) and the block's
    positives' starts (block + 1). The walk writes each before it reads it."""
    floats = np.empty(n_chunks * block * (n_factors + tile), dtype)
    ints = np.empty(n_chunks * (3 * block + 1), np.int64)
    return floats, ints


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _positives(users, item_factors, rows, s, n_blk, t_indptr, t_indices, t_data,
               ex_indptr, ex_indices, pos_start):
    """The block's positive (value > 0) truth items, their scores and whether each is
    admissible (not excluded). pos_start[r]:pos_start[r + 1] are user r's, sorted by item.

    The scores come from one BLAS product of the block's users with the gathered
    positive items, the same routine that scores the tiles.
    """
    total = 0
    for r in range(n_blk):
        pos_start[r] = total
        u = rows[s + r]
        for p in range(t_indptr[u], t_indptr[u + 1]):
            total += t_data[p] > 0
    pos_start[n_blk] = total
    items = np.empty(total, dtype=np.int64)
    ok = np.empty(total, dtype=np.bool_)
    if total == 0:
        return items, np.empty(0, dtype=item_factors.dtype), ok
    q = 0
    for r in range(n_blk):
        u = rows[s + r]
        e = ex_indptr[u]
        e_hi = ex_indptr[u + 1]
        for p in range(t_indptr[u], t_indptr[u + 1]):
            if t_data[p] > 0:
                item = t_indices[p]
                while e < e_hi and ex_indices[e] < item:
                    e += 1
                items[q] = item
                ok[q] = not (e < e_hi and ex_indices[e] == item)
                q += 1
    # gemm, not gemv: at least two columns so BLAS takes the same path as the tiles
    width = max(total, 2)
    gathered = np.zeros((width, item_factors.shape[1]), dtype=item_factors.dtype)
    for q in range(total):
        for f in range(item_factors.shape[1]):
            gathered[q, f] = item_factors[items[q], f]
    product = np.empty((users.shape[0], width), dtype=item_factors.dtype)
    product_into(users, gathered.T, product)
    scores = np.empty(total, dtype=item_factors.dtype)
    for r in range(n_blk):
        for q in range(pos_start[r], pos_start[r + 1]):
            scores[q] = product[r, q]
    return items, scores, ok


@njit(cache=True, no_cfunc_wrapper=True)
def positive_counts(indptr, data, rows, out):
    """out[i] = m of truth row rows[i]: its number of stored values > 0."""
    for i in range(rows.shape[0]):
        r = rows[i]
        m = 0
        for p in range(indptr[r], indptr[r + 1]):
            m += data[p] > 0
        out[i] = m
    return out
