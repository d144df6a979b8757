"""Plain-Python references, each from its source's formula: RecBole's
GAUC, RecTools' pAUC@k and pAp@k, Jaccard@k and RBO_ext (Webber, Moffat & Zobel 2010),
and Steck's miscalibration. Loops and dicts, no numpy tricks."""

import math

NAMES = ("gauc", "partial_auc", "pap", "jaccard", "rbo", "miscalibration")


def distinct(ids, k=None):
    """The real items of a list's first k slots, first occurrences only, in order."""
    out = []
    for item in list(ids)[:k]:
        item = int(item)
        if item >= 0 and item not in out:
            out.append(item)
    return out


# -- GAUC (RecBole 1.2, recbole/evaluator/metrics.py GAUC, its docstring's formula) -------

def average_ranks(scores):
    """Descending ranks 1..n, tied scores sharing their mean rank."""
    order = sorted(range(len(scores)), key=lambda j: -scores[j])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        for j in order[start:end + 1]:
            ranks[j] = (start + 1 + end + 1) / 2
        start = end + 1
    return ranks


def gauc_users(scores, positives, excluded):
    """[(AUC(u), |R(u)|)] of the users RecBole keeps: AUC(u) = (|R|·(n + 1) − |R|(|R| +
    1)/2 − Σ rank_i) / (|R|·(n − |R|)) over the n ranked (non-excluded) items, rank_i the
    descending rank of the i-th positive; users with no positive or no negative dropped
    (None)."""
    out = []
    for row, pos, gone in zip(scores, positives, excluded):
        items = [i for i in range(len(row)) if i not in gone]
        ranks = average_ranks([row[i] for i in items])
        n = len(items)
        r = [ranks[x] for x, i in enumerate(items) if i in pos]
        n_pos = len(r)
        if n_pos == 0 or n - n_pos == 0:
            out.append(None)
            continue
        auc = (n_pos * (n + 1) - n_pos * (n_pos + 1) / 2 - sum(r)) / (n_pos * (n - n_pos))
        out.append((auc, n_pos))
    return out


def gauc(users):
    kept = [u for u in users if u is not None]
    return sum(a * w for a, w in kept) / sum(w for _, w in kept)


# -- RecTools pAUC@k and pAp@k (rectools.metrics.auc docstrings) -----------------------

def partial_auc(ids, relevant, k, pap=False):
    """(value, insufficient) from the docstring's formula, 1/(k·|S+|)·Σ_{S+}Σ_{S−}
    1[s(x_i) ≥ s(x_j)], on the ranking RecTools' "ignore" implies: the list, then as many
    unlisted negatives as needed, then the unlisted positives. S− = the top k negatives;
    S+ = every positive (pAUC) or the top min(k, m) positives (pAp)."""
    listed = distinct(ids)
    ranking = [(item, item in relevant) for item in listed]
    ranking += [(None, False)] * k                          # unlisted negatives
    ranking += [(item, True) for item in sorted(relevant) if item not in listed]
    negatives = [x for x, (_, good) in enumerate(ranking) if not good][:k]
    positives = [x for x, (_, good) in enumerate(ranking) if good]
    m = len(relevant)
    if pap:
        positives = positives[:min(k, m)]
    den = k * len(positives)
    pairs = sum(1 for i in positives for j in negatives if i < j)
    n_neg_listed = sum(1 for item in listed if item not in relevant)
    missed = any(item not in listed for item in relevant)
    return (pairs / den if den else 0.0), (n_neg_listed < k and missed)


# -- Overlap of two lists ------------------------------------------------------------

def jaccard(a, b, k):
    a, b = set(distinct(a, k)), set(distinct(b, k))
    if not a and not b:
        return None
    return len(a & b) / len(a | b)


def rbo_ext(a, b, k, p):
    """RBO_ext of Webber et al. 2010, eq. 32 (equal lengths: eq. 30): S the shorter list
    (length s), L the longer (length l), X_d = |S_{:d} ∩ L_{:d}|, and for d > s,
    X_d = |S ∩ L_{:d}|:
    (1 − p)/p·(Σ_{d=1}^{l} X_d/d·p^d + Σ_{d=s+1}^{l} X_s·(d − s)/(s·d)·p^d)
    + ((X_l − X_s)/l + X_s/s)·p^l."""
    a, b = distinct(a, k), distinct(b, k)
    if not a and not b:
        return None
    if not a or not b:
        return 0.0
    S, L = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(S), len(L)

    def X(d):
        return len(set(S[:d]) & set(L[:d]))

    total = sum(X(d) / d * p ** d for d in range(1, l + 1))
    total += sum(X(s) * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    return (1 - p) / p * total + ((X(l) - X(s)) / l + X(s) / s) * p ** l


# -- Steck 2018, eq. 1-4 -------------------------------------------------------------

def genre_distribution(weighted_items, aspects):
    """{g: Σ w_i·p(g|i) / Σ w_i}, p(g|i) = 1/|aspects(i)|, over the items with an aspect."""
    dist, total = {}, 0.0
    for item, w in weighted_items:
        genres = aspects[item]
        if not genres:
            continue
        total += w
        for g in genres:
            dist[g] = dist.get(g, 0.0) + w / len(genres)
    if total == 0:
        return None
    return {g: v / total for g, v in dist.items()}


def miscalibration(history, ids, k, aspects, alpha=0.01, weights="equal", positions="equal"):
    """KL(p‖q̃), q̃ = (1 − α)q + αp; history: {item: stored train value}."""
    p = genre_distribution([(i, v if weights == "value" else 1.0)
                            for i, v in history.items() if v > 0], aspects)
    if p is None:
        return None
    listed = []
    for rank, item in enumerate(list(ids)[:k], start=1):
        item = int(item)
        if item >= 0 and item not in [x for x, _ in listed]:
            listed.append((item, 1 / math.log2(rank + 1) if positions == "log" else 1.0))
    q = genre_distribution(listed, aspects) or {}
    kl = 0.0
    for g, pg in p.items():
        mixed = (1 - alpha) * q.get(g, 0.0) + alpha * pg
        kl += pg * math.log(pg / mixed) if mixed > 0 else math.inf
    return kl
