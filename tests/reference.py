"""A slow, plain-Python reference written straight from SPEC §2's formulas.

No numpy tricks, no shared code with the package: dicts, lists and loops, one user at a
time, so that each formula can be checked against the specification by eye.
"""

import math


def truth_rows(truth):
    """{item: value} per truth row, from any scipy.sparse matrix (duplicates summed)."""
    coo = truth.tocoo()
    rows = [dict() for _ in range(truth.shape[0])]
    for u, i, v in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        rows[u][i] = rows[u].get(i, 0.0) + float(v)
    return rows


def d(rank):
    """Discount of a 1-based rank."""
    return 1.0 / math.log2(rank + 1)


def n_relevant(row):
    """m: the number of relevant (value > 0) items of a truth row."""
    return sum(1 for v in row.values() if v > 0)


def walk(row, ids, k):
    """rel(i) for ranks 1..k: the gain value of a first-occurrence relevant id, else 0."""
    seen = set()
    gains = []
    for item in ids[:k]:
        if item >= 0 and item not in seen and row.get(item, 0.0) > 0:
            gains.append(row[item])
        else:
            gains.append(0.0)
        if item >= 0:
            seen.add(item)
    return gains


def ideal(row, gain, cut):
    values = sorted((v for v in row.values() if v > 0), reverse=True)
    if cut is not None:
        values = values[:cut]
    return sum(gain(v) * d(i + 1) for i, v in enumerate(values))


def user_metric(name, k, row, ids, n_items, convention, uncut=False):
    """One user's value of metric `name` at cutoff k (ids is the whole list of length K)."""
    m = n_relevant(row)
    gains = walk(row, ids, k)
    rel = [1 if g > 0 else 0 for g in gains]
    hits = sum(rel)

    def safe(num, den):
        return num / den if den > 0 else 0.0

    if name == "precision":
        if convention == "implicit":
            return safe(hits, min(k, m))
        return hits / k
    if name == "recall":
        return safe(hits, m)
    if name == "f1":
        p, r = hits / k, safe(hits, m)
        return 2 * p * r / (p + r) if p + r > 0 else 0.0
    if name == "hit_rate":
        return 1.0 if hits > 0 else 0.0
    if name == "mrr":
        for i, x in enumerate(rel):
            if x:
                return 1.0 / (i + 1)
        return 0.0
    if name in ("map", "mar"):
        total, h = 0.0, 0
        for i, x in enumerate(rel):
            if x:
                h += 1
                total += h / (i + 1)
        if name == "map" and convention != "trec":
            return safe(total, min(k, m))
        return safe(total, m)
    if name == "ndcg" and convention == "implicit":
        dcg = sum(x * d(i + 1) for i, x in enumerate(rel))
        return safe(dcg, sum(d(i + 1) for i in range(min(k, m))))
    if name == "ndcg":
        dcg = sum(g * d(i + 1) for i, g in enumerate(gains))
        return safe(dcg, ideal(row, lambda v: v, None if uncut else k))
    if name == "ndcg_exp":
        dcg = sum((2.0 ** g - 1) * d(i + 1) for i, g in enumerate(gains))
        return safe(dcg, ideal(row, lambda v: 2.0 ** v - 1, k))
    if name == "dcg":
        return sum(g * d(i + 1) for i, g in enumerate(gains))
    if name == "cg":
        return sum(gains)
    if name == "r_precision":
        return safe(sum(walk_rel(row, ids, m)), m)
    if name == "auc":
        if m == 0:
            return 0.0
        n_neg = n_items - m
        if n_neg == 0:
            return 1.0
        seen, h, miss, total = set(), 0, 0, 0.0
        for item in ids[:k]:
            if item < 0 or item in seen:
                continue
            seen.add(item)
            if row.get(item, 0.0) > 0:
                h += 1
            else:
                miss += 1
                total += h
        total += (h + m) / 2.0 * (n_neg - miss)
        return total / (m * n_neg)
    raise ValueError(name)


def walk_rel(row, ids, k):
    return [1 if g > 0 else 0 for g in walk(row, ids, k)]


def counts(row, convention):
    """Does this user count in the means?"""
    if convention == "trec":
        return len(row) > 0
    return any(v > 0 for v in row.values())


def reference(truth, topk, metrics, convention="recsys", users=None):
    """{label: (per-user list with None for uncounted users, mean)}."""
    rows = truth_rows(truth)
    n_items = truth.shape[1]
    topk = [list(map(int, r)) for r in topk]
    users = list(range(len(topk))) if users is None else [int(u) for u in users]
    K = len(topk[0]) if topk else 0
    out = {}
    for label in metrics:
        name, _, kt = label.partition("@")
        k = int(kt) if kt else K
        uncut = convention == "trec" and name == "ndcg" and not kt
        per_user = []
        for ids, u in zip(topk, users):
            row = rows[u]
            if not counts(row, convention):
                per_user.append(None)
                continue
            per_user.append(user_metric(name, k, row, ids, n_items, convention, uncut))
        counted = [v for v in per_user if v is not None]
        if not counted:
            mean = math.nan
        elif convention == "implicit" and name == "precision":
            num = den = 0
            for ids, u in zip(topk, users):
                row = rows[u]
                if counts(row, convention):
                    num += sum(walk_rel(row, ids, k))
                    den += min(k, n_relevant(row))
            mean = num / den
        else:
            mean = sum(counted) / len(counted)
        out[label] = (per_user, mean)
    return out


def scores_of(user_factors, item_factors):
    """Every user's score of every item, as Python floats (exact for integer factors)."""
    return [[sum(float(a) * float(b) for a, b in zip(u, v)) for v in item_factors]
            for u in user_factors]


def pattern_rows(matrix):
    """The set of stored items of each row of a sparse matrix (values ignored)."""
    if matrix is None:
        return None
    coo = matrix.tocoo()
    rows = [set() for _ in range(matrix.shape[0])]
    for u, i in zip(coo.row.tolist(), coo.col.tolist()):
        rows[u].add(i)
    return rows


def topk_reference(user_factors, item_factors, k, exclude=None):
    """Best-first k items per user: higher score first, lower id among equal scores,
    excluded items never; -1 / -inf pad a list with fewer than k admissible items."""
    scores = scores_of(user_factors, item_factors)
    excluded = pattern_rows(exclude)
    ids, best = [], []
    for u, row in enumerate(scores):
        allowed = [i for i in range(len(row)) if excluded is None or i not in excluded[u]]
        order = sorted(allowed, key=lambda i: (-row[i], i))[:k]
        ids.append(order + [-1] * (k - len(order)))
        best.append([row[i] for i in order] + [-math.inf] * (k - len(order)))
    return ids, best


def auc_full_reference(user_factors, item_factors, truth, exclude=None):
    """Full-ranking AUC per user: the share of (positive, negative) pairs in order, ties
    one half, over the non-excluded items; an excluded positive ranks below them all.
    None where the user has no positive."""
    scores = scores_of(user_factors, item_factors)
    rows = truth_rows(truth)
    excluded = pattern_rows(exclude)
    out = []
    for u, row in enumerate(scores):
        gone = excluded[u] if excluded is not None else set()
        positives = [i for i, v in rows[u].items() if v > 0]
        if not positives:
            out.append(None)
            continue
        negatives = [i for i in range(len(row)) if i not in gone and i not in positives]
        if not negatives:
            out.append(1.0)
            continue
        total = 0.0
        for p in positives:
            if p in gone:
                continue
            for n in negatives:
                total += 1.0 if row[p] > row[n] else 0.5 if row[p] == row[n] else 0.0
        out.append(total / (len(positives) * len(negatives)))
    return out
