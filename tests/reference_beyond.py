"""Plain-Python references for the beyond-accuracy measures, from their definitions."""

import math

from .reference_aspects import ranked_once


def distinct(ids, k):
    """The list's first k ids without padding and repeats, in order."""
    return [item for _, item in ranked_once(ids, k)]


def popularity(train):
    """{item: number of training users with a positive entry}, and how many such users."""
    coo = train.tocoo()
    users = {}
    for u, i, v in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        if v > 0:
            users.setdefault(i, set()).add(u)
    owners = {u for members in users.values() for u in members}
    return {i: len(members) for i, members in users.items()}, len(owners)


def novelty(items, pop, n_train):
    if not items:
        return 0.0
    return sum(-math.log2(max(pop.get(i, 0), 1) / n_train) for i in items) / len(items)


def arp(items, pop):
    return sum(pop.get(i, 0) for i in items) / len(items) if items else 0.0


def ild(items, distance):
    pairs = [(a, b) for x, a in enumerate(items) for b in items[x + 1:]]
    return sum(distance(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0


def jaccard_distance(sets):
    def distance(a, b):
        union = set(sets[a]) | set(sets[b])
        return 1.0 - len(set(sets[a]) & set(sets[b])) / len(union) if union else 1.0
    return distance


def cosine_distance(vectors):
    def distance(a, b):
        na = math.sqrt(sum(x * x for x in vectors[a]))
        nb = math.sqrt(sum(x * x for x in vectors[b]))
        if na == 0 or nb == 0:
            return 1.0
        return 1.0 - sum(x * y for x, y in zip(vectors[a], vectors[b])) / (na * nb)
    return distance


def serendipity(items, k, relevant, baseline):
    return sum(1 for i in items if i in relevant and i not in baseline) / k


def coverage(lists, n_items):
    return len({i for items in lists for i in items}) / n_items


def gini(lists, n_items):
    """Gini by the mean absolute difference over all item pairs (another formula)."""
    x = [0] * n_items
    for items in lists:
        for i in items:
            x[i] += 1
    total = sum(x)
    if total == 0:
        return 0.0
    return sum(abs(a - b) for a in x for b in x) / (2 * n_items * total)


def entropy(lists):
    """-Σ p(i)·ln p(i) over the items the lists show, p(i) = item i's share of all the
    shown slots, divided by how many distinct items are shown (RecBole's ShannonEntropy)."""
    counts = {}
    for items in lists:
        for i in items:
            counts[i] = counts.get(i, 0) + 1
    total = sum(counts.values())
    if total == 0:
        return 0.0
    return -sum(c / total * math.log(c / total) for c in counts.values()) / len(counts)
