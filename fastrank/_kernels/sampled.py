"""Sampled-metric kernels: arrays in, arrays out, nothing raises.

The facade (`fastrank.sampled`) checks the inputs once and hands over
- a score matrix and a 0/1 mask of its positive cells, to count for every (user, positive)
  case the negatives scored above it and equal to it (`count_cases`);
- the (case -> value-table segment) map and the tables of metric values per sampled rank,
  to average each user's cases (`user_values`);
- a range of full ranks R, to write the rows sqrt(w_R) * P(r | R), r = 1..m+1, that the
  corrections are fitted on (`rank_rows`).
Each user (or row R) is computed whole by one thread, so nothing depends on the thread count.
"""

import math

from numba import njit, prange

PESSIMISTIC = 0
OPTIMISTIC = 1
AVERAGE = 2


@njit(parallel=True, cache=True, nogil=True)
def count_cases(scores, positive, case_ptr, above, equal):
    """For row u and its positive columns j (in column order), case c = case_ptr[u] + i:
    above[c] = negatives (cells with positive == 0) of row u scored higher than
    scores[u, j], equal[c] = negatives scored the same. Other positives are not counted."""
    n_cols = scores.shape[1]
    for u in prange(scores.shape[0]):
        c = case_ptr[u]
        for j in range(n_cols):
            if positive[u, j] == 0:
                continue
            s = scores[u, j]
            hi = 0
            eq = 0
            for t in range(n_cols):
                if positive[u, t] != 0:
                    continue
                v = scores[u, t]
                if v > s:
                    hi += 1
                elif v == s:
                    eq += 1
            above[c] = hi
            equal[c] = eq
            c += 1


@njit(parallel=True, cache=True, nogil=True)
def user_values(above, equal, offset, case_ptr, tables, ties, out):
    """out[v, u] = the mean over user u's cases c (case_ptr[u] .. case_ptr[u + 1]) of the
    table value at the case's sampled rank: tables[v, offset[c] + r - 1], with
    r = above + equal + 1 (ties == PESSIMISTIC), above + 1 (OPTIMISTIC), or the mean of
    the values at every rank above + 1 .. above + equal + 1 (AVERAGE)."""
    n_values = tables.shape[0]
    for u in prange(case_ptr.shape[0] - 1):
        lo = case_ptr[u]
        hi = case_ptr[u + 1]
        for v in range(n_values):
            total = 0.0
            for c in range(lo, hi):
                base = offset[c] + above[c]
                if ties == PESSIMISTIC:
                    total += tables[v, base + equal[c]]
                elif ties == OPTIMISTIC:
                    total += tables[v, base]
                else:
                    tied = 0.0
                    for t in range(equal[c] + 1):
                        tied += tables[v, base + t]
                    total += tied / (equal[c] + 1)
            out[v, u] = total / (hi - lo)


@njit(parallel=True, cache=True, nogil=True)
def rank_rows(r_lo, n_items, m, hypergeometric, log_fact, sqrt_weight, out):
    """out[i, j] = sqrt_weight[i] * P(r = j + 1 | R = r_lo + i) for the full ranks of this
    block, in log space. log_fact[x] = log(x!) for x = 0..n_items.

    binomial (the m negatives drawn with replacement from the n - 1 other items):
        P = C(m, j) p^j (1 - p)^(m - j), p = (R - 1) / (n - 1);
    hypergeometric (drawn without replacement):
        P = C(R - 1, j) C(n - R, m - j) / C(n - 1, m), zero outside its support."""
    n_rows = out.shape[0]
    for i in prange(n_rows):
        big_r = r_lo + i
        w = sqrt_weight[i]
        if hypergeometric:
            above = big_r - 1
            below = n_items - big_r
            log_all = log_fact[n_items - 1] - log_fact[m] - log_fact[n_items - 1 - m]
            for j in range(m + 1):
                if j > above or m - j > below:
                    out[i, j] = 0.0
                    continue
                lp = (log_fact[above] - log_fact[j] - log_fact[above - j]
                      + log_fact[below] - log_fact[m - j] - log_fact[below - m + j]
                      - log_all)
                out[i, j] = w * math.exp(lp)
        else:
            p = (big_r - 1) / (n_items - 1)
            for j in range(m + 1):
                if p == 0.0:
                    out[i, j] = w if j == 0 else 0.0
                    continue
                if p == 1.0:
                    out[i, j] = w if j == m else 0.0
                    continue
                lp = (log_fact[m] - log_fact[j] - log_fact[m - j]
                      + j * math.log(p) + (m - j) * math.log1p(-p))
                out[i, j] = w * math.exp(lp)
