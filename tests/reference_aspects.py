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


# -- intent-aware measures (Agrawal et al. 2009; ndeval for the trec convention) ------------
# One user at a time: `row` {item: value}, `ids` its ranked list, `aspects` each item's
# sorted aspects. Intents: the aspects of the relevant items (value > 0); P(a) = 1/S, or
# the user's weights {aspect: w} over their total. Relevant to intent a: relevant and
# covering a. Repeated ids and padding (-1) are misses that keep their rank.

def intents(row, aspects):
    """{aspect: m_a, the relevant items covering it} of the user's intents."""
    out = {}
    for item, v in row.items():
        if v > 0:
            for a in aspects[item]:
                out[a] = out.get(a, 0) + 1
    return out


def intent_probabilities(row, aspects, weights=None):
    found = intents(row, aspects)
    if weights is None:
        return {a: Fraction(1, len(found)) for a in found}
    total = sum(Fraction(w) for w in weights.values())
    return {a: Fraction(weights.get(a, 0)) / total for a in found}


def relevant_walk(ids, k, row):
    """(rank, item) of the relevant first occurrences in the first k slots."""
    return [(rank, item) for rank, item in ranked_once(ids, k) if row.get(item, 0) > 0]


def p_ia(ids, k, row, aspects, weights=None):
    """Σ_a P(a)·hits_a@k / k."""
    prob = intent_probabilities(row, aspects, weights)
    hits = {a: 0 for a in prob}
    for _, item in relevant_walk(ids, k, row):
        for a in aspects[item]:
            hits[a] += 1
    return float(sum(prob[a] * Fraction(hits[a], k) for a in prob))


def map_ia(ids, k, row, aspects, full=False, weights=None):
    """Σ_a P(a)·AP_a@k, AP_a = Σ_{r ≤ k} P_a@r·rel_a(r) / min(k, m_a) (m_a if full)."""
    prob = intent_probabilities(row, aspects, weights)
    m = intents(row, aspects)
    hits = {a: 0 for a in prob}
    total = {a: Fraction(0) for a in prob}
    for rank, item in relevant_walk(ids, k, row):
        for a in aspects[item]:
            hits[a] += 1
            total[a] += Fraction(hits[a], rank)
    return float(sum(prob[a] * total[a] / (m[a] if full else min(k, m[a])) for a in prob))


def grade(value, max_grade, binary):
    """R = (2^g - 1)/2^g_max (exact for integer grades); 1/2 for binary grades.

    A whole grade under a fractional g_max is (2^g - 1) times one common factor (the float
    2^-g_max), so that R(2) = 3·R(1) exactly, as in the reals: gains that tie in the reals
    (item A at grade 1 on three intents, item B at grade 2 on one) tie here too, and the
    greedy ideal takes the lower id, as SPEC §4 says. Rounding each R on its own made B
    win by an ulp and the ideal differ by 0.5%."""
    if binary:
        return Fraction(1, 2)
    g, top = Fraction(value), Fraction(max_grade)
    if g.denominator == 1 and top.denominator == 1:
        return (Fraction(2) ** int(g) - 1) / Fraction(2) ** int(top)
    if g.denominator == 1:
        return (Fraction(2) ** int(g) - 1) * Fraction(2.0 ** -max_grade)
    return Fraction(2.0 ** (value - max_grade) - 2.0 ** -max_grade)


def err_ia(ids, k, row, aspects, max_grade=1, binary=False, weights=None):
    """Σ_a P(a)·Σ_{r ≤ k} R_a(r)/r·Π_{s < r}(1 - R_a(s))."""
    prob = intent_probabilities(row, aspects, weights)
    survive = {a: Fraction(1) for a in prob}
    total = Fraction(0)
    for rank, item in relevant_walk(ids, k, row):
        total += _err_gain(item, row, aspects, prob, survive, max_grade, binary) / rank
        _err_take(item, row, aspects, survive, max_grade, binary)
    return float(total)


def _err_gain(item, row, aspects, prob, survive, max_grade, binary):
    r = grade(row[item], max_grade, binary)
    return sum(prob[a] * r * survive[a] for a in aspects[item])


def _err_take(item, row, aspects, survive, max_grade, binary):
    r = grade(row[item], max_grade, binary)
    for a in aspects[item]:
        survive[a] *= 1 - r


def nerr_ia(ids, k, row, aspects, max_grade=1, binary=False, weights=None):
    """err_ia / the err_ia of the greedy ideal over the relevant items (exact gains,
    ties: the lowest id)."""
    prob = intent_probabilities(row, aspects, weights)
    if not prob:
        return 0.0
    survive = {a: Fraction(1) for a in prob}
    left = {item for item, v in row.items() if v > 0}
    ideal = Fraction(0)
    for rank in range(1, k + 1):
        best, best_gain = None, Fraction(0)
        for item in sorted(left):
            g = _err_gain(item, row, aspects, prob, survive, max_grade, binary)
            if g > best_gain:
                best, best_gain = item, g
        if best is None:
            break
        left.remove(best)
        ideal += best_gain / rank
        _err_take(best, row, aspects, survive, max_grade, binary)
    if ideal == 0:
        return 0.0
    return err_ia(ids, k, row, aspects, max_grade, binary, weights) / float(ideal)


def alpha_dcg(ids, k, row, aspects, alpha):
    """α-nDCG's numerator: Σ_r d(r)·Σ_{a ∈ aspects} (1 - α)^(times a was covered)."""
    return alpha_dcg_reference(ids, k, {i for i, v in row.items() if v > 0}, aspects, alpha)


def ndeval_err_ia(ids, k, row, aspects):
    """ndeval 4.5's ERR-IA, from its code: X = Σ_r Σ_a rel_a·(1/2)^(c_a)/r over the ideal
    ideal Σ_r S·(1/2)^(r - 1)/r; @1 undivided."""
    s = len(intents(row, aspects))
    if s == 0:
        return 0.0
    covered = {}
    x = Fraction(0)
    for rank, item in relevant_walk(ids, k, row):
        x += sum(Fraction(1, 2) ** covered.get(a, 0) for a in aspects[item]) / rank
        for a in aspects[item]:
            covered[a] = covered.get(a, 0) + 1
    if k == 1:
        return float(x)
    return float(x / sum(s * Fraction(1, 2) ** (r - 1) / r for r in range(1, k + 1)))


def ndeval_alpha_dcg(ids, k, row, aspects, alpha):
    """ndeval 4.5's α-DCG: the numerator over Σ_r S·(1 - α)^(r - 1)·d(r); @1 undivided."""
    s = len(intents(row, aspects))
    if s == 0:
        return 0.0
    x = alpha_dcg(ids, k, row, aspects, alpha)
    if k == 1:
        return x
    return x / sum(s * (1 - alpha) ** (r - 1) * d(r) for r in range(1, k + 1))


def st_recall(ids, k, row, aspects):
    """S-recall@k (ndeval's strec): the intents covered by a relevant item in the first k,
    over the intents."""
    found = intents(row, aspects)
    covered = {a for _, item in relevant_walk(ids, k, row) for a in aspects[item]}
    return len(covered) / len(found)


def _nrbp_sum(ranked, aspects, alpha, beta):
    """Σ_r β^(r-1)·Σ_{a of the item at r} (1-α)^(earlier relevant items on a), exact;
    `ranked` is [(rank, relevant item)]."""
    covered = {}
    total = Fraction(0)
    for rank, item in ranked:
        total += Fraction(beta) ** (rank - 1) * _alpha_gain(item, covered, aspects, alpha)
        for a in aspects[item]:
            covered[a] = covered.get(a, 0) + 1
    return total


def nrbp(ids, k, row, aspects, alpha=0.5, beta=0.5):
    """NRBP (Clarke et al. 2009, as ndeval): (1 - (1-α)·β)/S times the sum above over the
    whole list (k: its length)."""
    s = len(intents(row, aspects))
    scale = (1 - (1 - Fraction(alpha)) * Fraction(beta)) / s
    return float(scale * _nrbp_sum(relevant_walk(ids, k, row), aspects, alpha, beta))


def nnrbp(ids, k, row, aspects, alpha=0.5, beta=0.5):
    """NRBP / the NRBP of α-nDCG's greedy ideal over every relevant item, not cut (exact
    gains, ties: the lowest id); 0 where that is 0."""
    covered = {}
    left = sorted(item for item, v in row.items() if v > 0)
    ideal = []
    while left:
        gains = [_alpha_gain(item, covered, aspects, alpha) for item in left]
        best = max(gains)
        if best <= 0:
            break
        item = left.pop(gains.index(best))  # the first of the largest: the lowest id
        ideal.append((len(ideal) + 1, item))
        for a in aspects[item]:
            covered[a] = covered.get(a, 0) + 1
    top = _nrbp_sum(ideal, aspects, alpha, beta)
    if top == 0:
        return 0.0
    return float(_nrbp_sum(relevant_walk(ids, k, row), aspects, alpha, beta) / top)


def intent_reference(name, ids, k, row, aspects, convention="recsys", alpha=0.5,
                     max_grade=None, weights=None, beta=0.5):
    """One user's value of an intent-aware metric under a convention (0 without intents;
    max_grade None: the caller's largest truth value). Under trec (ndeval) a user none of
    whose judged items has an aspect is no topic: None."""
    trec = convention == "trec"
    if trec and not any(aspects[item] for item in row):
        return None
    if not intents(row, aspects):
        return 0.0
    if name == "p_ia":
        return p_ia(ids, k, row, aspects, weights)
    if name == "map_ia":
        return map_ia(ids, k, row, aspects, trec, weights)
    if name == "alpha_dcg":
        return (ndeval_alpha_dcg if trec else alpha_dcg)(ids, k, row, aspects, alpha)
    if name == "err_ia":
        return ndeval_err_ia(ids, k, row, aspects) if trec else err_ia(
            ids, k, row, aspects, max_grade, False, weights)
    if name == "nerr_ia":
        return nerr_ia(ids, k, row, aspects, max_grade, trec, weights)
    if name == "st_recall":
        return st_recall(ids, k, row, aspects)
    if name == "nrbp":
        return nrbp(ids, k, row, aspects, alpha, beta)
    if name == "nnrbp":
        return nnrbp(ids, k, row, aspects, alpha, beta)
    raise KeyError(name)
