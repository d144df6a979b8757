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

from numba import prange

from .jit import njit

PESSIMISTIC = 0
OPTIMISTIC = 1
AVERAGE = 2


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
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


@njit(parallel=True, cache=True, nogil=True, no_cfunc_wrapper=True)
def rank_rows(r_lo, n_items, m, hypergeometric, log_fact, sqrt_weight, out):
    """out[i, j] = sqrt_weight[i] * P(r = j + 1 | R = r_lo + i) for the full ranks of this
    block. log_fact[x] = log(x!) for x = 0..n_items (0..m for the binomial).

    binomial (the m negatives drawn with replacement from the n - 1 other items):
        P(j) = C(m, j) p^j (1 - p)^(m - j), p = (R - 1) / (n - 1);
    hypergeometric (drawn without replacement), N = n - 1 items of which K = R - 1 above:
        P(j) = C(K, j) C(N - K, m - j) / C(N, m), zero outside its support.
    Each row is anchored at its mode (log space, lgamma tables), walked outwards with the
    exact ratios P(j + 1) / P(j), and divided by its sum: the rounding of the large
    log-factorials (n up to 10^6 and more) is a common factor of the row and cancels."""
    for i in prange(out.shape[0]):
        big_r = r_lo + i
        if hypergeometric:
            _hypergeometric_row(n_items - 1, big_r - 1, m, log_fact, out[i])
        else:
            _binomial_row((big_r - 1) / (n_items - 1), m, log_fact, out[i])
        total = 0.0
        for j in range(m + 1):
            total += out[i, j]
        scale = sqrt_weight[i] / total
        for j in range(m + 1):
            out[i, j] *= scale


@njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _binomial_row(p, m, log_fact, row):
    for j in range(m + 1):
        row[j] = 0.0
    if p <= 0.0:
        row[0] = 1.0
        return
    if p >= 1.0:
        row[m] = 1.0
        return
    mode = min(int((m + 1) * p), m)
    row[mode] = math.exp(log_fact[m] - log_fact[mode] - log_fact[m - mode]
                         + mode * math.log(p) + (m - mode) * math.log1p(-p))
    odds = p / (1.0 - p)
    for j in range(mode, m):  # P(j + 1) = P(j) (m - j) / (j + 1) p / (1 - p)
        row[j + 1] = row[j] * ((m - j) / (j + 1.0)) * odds
    for j in range(mode, 0, -1):  # P(j - 1) = P(j) j / (m - j + 1) (1 - p) / p
        row[j - 1] = row[j] * (j / (m - j + 1.0)) / odds


@njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _hypergeometric_row(big_n, big_k, m, log_fact, row):
    for j in range(m + 1):
        row[j] = 0.0
    j_lo = max(0, m - (big_n - big_k))
    j_hi = min(m, big_k)
    mode = int((m + 1.0) * (big_k + 1.0) / (big_n + 2.0))
    mode = min(max(mode, j_lo), j_hi)
    row[mode] = math.exp(
        log_fact[big_k] - log_fact[mode] - log_fact[big_k - mode]
        + log_fact[big_n - big_k] - log_fact[m - mode] - log_fact[big_n - big_k - m + mode]
        - log_fact[big_n] + log_fact[m] + log_fact[big_n - m])
    for j in range(mode, j_hi):
        # P(j + 1) / P(j) = (K - j)(m - j) / ((j + 1)(N - K - m + j + 1))
        row[j + 1] = row[j] * ((big_k - j) * (m - j)
                               / ((j + 1.0) * (big_n - big_k - m + j + 1.0)))
    for j in range(mode, j_lo, -1):
        row[j - 1] = row[j] * (j * (big_n - big_k - m + j)
                               / ((big_k - j + 1.0) * (m - j + 1.0)))
