"""Plain-Python references for the debiased metrics, from their formulas (Yang et al. 2018).

For one user: relevant items (stored value > 0), m of them; hits = the relevant items of
the first k slots, first occurrence only, at their 1-based rank (padding takes a slot);
w_i = 1 / p_i. IPS divides the weighted sum by m·w̄ (w̄: the mean w over every relevant
entry of the whole truth), SNIPS by the sum of w over the user's relevant items:
    recall: Σ_hits w_i          dcg: Σ_hits w_i / log2(rank_i + 1)
    ap:     Σ_hits w_i · (hits within the first rank_i) / rank_i
"""

import math

from .reference_beyond import popularity

# the debiased metrics of fastrank.METRICS this reference computes
NAMES = ("recall_ips", "recall_snips", "dcg_ips", "dcg_snips", "ap_ips", "ap_snips")


def popularity_weights(train, n_items, gamma):
    """w_i = 1/p_i, p_i = (max(n_i, 1) / max_j max(n_j, 1)) ** ((gamma + 1) / 2), n_i the
    training users with a positive entry for i."""
    pop, _ = popularity(train)
    seen = [max(pop.get(i, 0), 1) for i in range(n_items)]
    top = max(seen)
    return [1.0 / (s / top) ** ((gamma + 1) / 2) for s in seen]


def mean_weight(rows, weights):
    """w̄: the mean weight over every relevant entry of the truth rows (1 without any)."""
    found = [weights[i] for row in rows for i, v in row.items() if v > 0]
    return sum(found) / len(found) if found else 1.0


def user_value(name, k, row, ids, weights, w_mean):
    """One user's value of a debiased metric at cutoff k (0 when the user has no relevant
    item: only the trec convention counts such a user)."""
    relevant = [i for i, v in row.items() if v > 0]
    base, _, norm = name.rpartition("_")
    seen, hits, total = set(), 0, 0.0
    for rank, item in enumerate(ids[:k], start=1):
        if item >= 0 and item not in seen and item in relevant:
            hits += 1
            w = weights[item]
            if base == "recall":
                total += w
            elif base == "dcg":
                total += w / math.log2(rank + 1)
            else:
                total += w * hits / rank
        if item >= 0:
            seen.add(item)
    den = len(relevant) * w_mean if norm == "ips" else sum(weights[i] for i in relevant)
    return total / den if den > 0 else 0.0


def reference(rows, topk, users, labels, weights_of, convention="recsys"):
    """{label: per-user list (None where not counted)}; weights_of(gamma) gives w."""
    out = {}
    for label in labels:
        head, _, kt = label.partition("@")
        name, _, inside = head.partition("(")
        gamma = float(inside.rstrip(")").split("=")[1]) if "=" in inside else 0.0
        weights = weights_of(gamma)
        w_mean = mean_weight(rows, weights)
        values = []
        for ids, u in zip(topk, users):
            row = rows[u]
            counted = bool(row) if convention == "trec" else any(v > 0 for v in row.values())
            k = int(kt) if kt else len(ids)
            values.append(user_value(name, k, row, list(ids), weights, w_mean) if counted else None)
        out[label] = values
    return out
