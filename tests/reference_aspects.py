"""Plain-Python references for the aspect metrics: αβ-nDCG (SPEC §4) and α-nDCG.

Written from the definitions, one user and one candidate at a time: no groups, no
buffers, no numpy. Gains are computed in exact rational arithmetic (fractions.Fraction
of the float inputs), so two gains that are equal by the definition compare equal and
the greedy ideal breaks the tie by the lowest item id, as SPEC §4 says, whatever order
a float implementation adds or multiplies them in. Only the discounted sums are floats.
"""

from fractions import Fraction

from .reference import d, truth_rows


def aspect_sets(item_aspects):
    """Sorted aspect list of every item (stored non-zero entries)."""
    csr = item_aspects.tocsr()
    csr.sum_duplicates()
    return [sorted(int(a) for a, v in zip(csr.indices[csr.indptr[i]:csr.indptr[i + 1]],
                                          csr.data[csr.indptr[i]:csr.indptr[i + 1]]) if v != 0)
            for i in range(csr.shape[0])]


def gamma_from_profile(profile_row, aspects):
    """γ_u: the profile weight on each aspect over the total; None if all zero."""
    s = {}
    total = Fraction(0)
    for item in sorted(profile_row):
        v = Fraction(profile_row[item])
        if v == 0:
            continue
        for phi in aspects[item]:
            s[phi] = s.get(phi, Fraction(0)) + v
            total += v
    if total <= 0:
        return None
    return {phi: w / total for phi, w in s.items()}


def gamma_given(weights_row):
    total = Fraction(0)
    s = {}
    for phi in sorted(weights_row):
        if weights_row[phi] != 0:
            s[phi] = Fraction(weights_row[phi])
            total += s[phi]
    if total <= 0:
        return None
    return {phi: w / total for phi, w in s.items()}


def ab_gain(item, p, s, aspects):
    prod = Fraction(1)
    for phi in aspects[item]:
        prod *= 1 - p * s.get(phi, 0)
    return 1 - prod


def ab_decay(item, p, s, aspects):
    for phi in aspects[item]:
        if phi in s:
            s[phi] *= 1 - p


def ab_p(item, row, alpha, beta, r_max):
    if item in row:
        return Fraction(beta) * Fraction(max(row[item], 0.0)) / Fraction(r_max)
    return Fraction(alpha)


def ranked_once(ids, k):
    """(rank, item) of the first k slots, skipping padding and repeated ids."""
    seen = set()
    for rank, item in enumerate(ids[:k], start=1):
        if item >= 0 and item not in seen:
            seen.add(item)
            yield rank, item


def ab_dcg_at(ids, k, row, gamma, aspects, alpha, beta, r_max):
    s = dict(gamma)
    total = 0.0
    for rank, item in ranked_once(ids, k):
        p = ab_p(item, row, alpha, beta, r_max)
        total += float(ab_gain(item, p, s, aspects)) * d(rank)
        ab_decay(item, p, s, aspects)
    return total


def ab_idcg_at(k, row, gamma, aspects, excluded, n_items, alpha, beta, r_max):
    """Greedy ideal: k times the candidate of largest gain (ties: lowest id)."""
    s = dict(gamma)

    def gain(item):
        return ab_gain(item, ab_p(item, row, alpha, beta, r_max), s, aspects)

    def take(item):
        ab_decay(item, ab_p(item, row, alpha, beta, r_max), s, aspects)

    return greedy_ideal(k, set(row) | {i for i in range(n_items) if i not in excluded},
                        gain, take)


def greedy_ideal(k, candidates, gain, take):
    """Σ gain·d(rank) of k greedy picks: each time the candidate of largest gain(item)
    (ties: the lowest id), which take(item) then applies to the state."""
    left = set(candidates)
    total = 0.0
    for rank in range(1, k + 1):
        best, best_gain = None, -1
        for item in sorted(left):
            g = gain(item)
            if g > best_gain:  # exact: an equal gain keeps the lower id
                best, best_gain = item, g
        if best is None:
            break
        left.remove(best)
        total += float(best_gain) * d(rank)
        take(best)
    return total


def ab_ndcg_reference(truth, topk, item_aspects, cutoffs, alpha, beta, *, profile=None,
                      user_aspects=None, exclude=None, r_max=None, users=None):
    """{k: [value or None per topk row]}; None where the user is not counted."""
    rows = truth_rows(truth)
    aspects = aspect_sets(item_aspects)
    n_items = truth.shape[1]
    if r_max is None:
        values = [v for row in rows for v in row.values()]
        r_max = max(values) if values and max(values) > 0 else 1.0
    if exclude is None and profile is not None:
        exclude = profile
    excluded_rows = truth_rows(exclude) if exclude is not None else [{} for _ in rows]
    pref_rows = truth_rows(profile if profile is not None else _as_sparse(user_aspects))
    users = list(range(len(rows))) if users is None else [int(u) for u in users]
    out = {k: [] for k in cutoffs}
    for i, u in enumerate(users):
        row = rows[u]
        gamma = (gamma_from_profile(pref_rows[u], aspects) if profile is not None
                 else gamma_given(pref_rows[u]))
        for k in cutoffs:
            if not row or gamma is None:
                out[k].append(None)
                continue
            ideal = ab_idcg_at(k, row, gamma, aspects, set(excluded_rows[u]), n_items, alpha,
                               beta, r_max)
            dcg = ab_dcg_at([int(x) for x in topk[i]], k, row, gamma, aspects, alpha, beta,
                            r_max)
            out[k].append(dcg / ideal if ideal > 0 else 0.0)
    return out


def _as_sparse(dense_or_sparse):
    import numpy as np
    import scipy.sparse as sp

    if sp.issparse(dense_or_sparse):
        return dense_or_sparse
    return sp.csr_array(np.asarray(dense_or_sparse, dtype=float))


def alpha_dcg_reference(ids, k, relevant, aspects, alpha):
    """α-DCG@k: each relevant item's gain is Σ over its aspects of (1-α)^(times covered)."""
    covered = {}
    total = 0.0
    for rank, item in ranked_once(ids, k):
        if item not in relevant:
            continue
        total += float(_alpha_gain(item, covered, aspects, alpha)) * d(rank)
        for phi in aspects[item]:
            covered[phi] = covered.get(phi, 0) + 1
    return total


def _alpha_gain(item, covered, aspects, alpha):
    """Σ over the item's aspects of (1 - α)^(times covered), exact."""
    return sum((Fraction(1) - Fraction(alpha)) ** covered.get(phi, 0) for phi in aspects[item])


def alpha_idcg_reference(k, relevant, aspects, alpha):
    """Greedy ideal over the relevant items (ties: lowest id)."""
    covered = {}

    def take(item):
        for phi in aspects[item]:
            covered[phi] = covered.get(phi, 0) + 1

    return greedy_ideal(k, relevant, lambda item: _alpha_gain(item, covered, aspects, alpha),
                        take)
