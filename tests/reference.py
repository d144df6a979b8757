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


def n_relevant(row, rel=None):
    """m: the number of relevant items of a truth row (value > 0, or >= rel if given)."""
    return sum(1 for v in row.values() if is_relevant(v, rel))


def is_relevant(value, rel=None):
    return value > 0 if rel is None else value >= rel


def walk(row, ids, k, rel=None):
    """rel(i) for ranks 1..k: the gain value of a first-occurrence relevant id, else 0."""
    seen = set()
    gains = []
    for item in ids[:k]:
        if item >= 0 and item not in seen and is_relevant(row.get(item, 0.0), rel):
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


# every metric of fastrank.METRICS this reference computes (tests/test_registry.py checks
# that each registered metric of the ranking and trec engines is here)
NAMES = ("precision", "recall", "f1", "f_beta", "judged", "hit_rate", "mrr", "map", "mar", "ndcg",
         "ndcg_exp", "dcg", "dcg_exp", "cg", "r_precision", "auc", "hits", "num_ret", "num_rel",
         "num_rel_ret", "gm_map", "bpref", "iprec", "err", "nerr", "rbp", "rbp_resid", "infap",
         "gm_bpref", "rprec_mult",
         "relative_precision", "set_precision", "set_relative_precision", "set_map", "set_f",
         "num_nonrel_judged_ret", "yaap", "unjudged")
# how the mean over users is taken, where it is not the plain mean
SUMMED = ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")
GEOMETRIC = ("gm_map", "gm_bpref")


def err(gains, top):
    """Chapelle et al.'s expected reciprocal rank of a list of gains (0: not relevant):
    the user stops at rank i with chance R = (2^min(g, top) - 1) / 2^top."""
    total, going = 0.0, 1.0
    for i, g in enumerate(gains, start=1):
        chance = (2.0 ** min(g, top) - 1.0) / 2.0 ** top if g > 0 else 0.0
        total += going * chance / i
        going *= 1.0 - chance
    return total


def user_metric(name, k, row, ids, n_items, convention, uncut=False, rel=None, recall=None,
                beta=1.0, max_grade=4.0, p=0.8, mult=None):
    """One user's value of metric `name` at cutoff k (ids is the whole list of length K)
    with its parameters: rel, an entry is relevant when its value is >= it (default: > 0);
    recall, iprec's recall point; beta, F-beta's weight of recall; max_grade, ERR's
    largest grade; p, RBP's persistence."""
    rel_level, recall_point = rel, recall
    m = n_relevant(row, rel_level)
    gains = walk(row, ids, k, rel_level)
    rel = [1 if g > 0 else 0 for g in gains]
    hits = sum(rel)
    if name == "gm_map":
        return user_metric("map", k, row, ids, n_items, convention, uncut, rel_level)
    if name in ("hits", "num_rel_ret"):
        return float(hits)
    if name == "num_rel":
        return float(m)
    if name == "num_ret":
        return float(len({i for i in ids[:k] if i >= 0}))
    if name == "judged":
        seen, judged = [], 0
        for item in ids[:k]:
            if item >= 0 and item not in seen:
                seen.append(item)
                judged += item in row
        return judged / len(seen) if seen else 0.0
    if name == "f_beta":
        p, r, b2 = hits / k, (hits / m if m else 0.0), beta * beta
        return (1 + b2) * p * r / (b2 * p + r) if p + r > 0 else 0.0
    if name == "dcg_exp":
        return sum((2.0 ** g - 1) * d(i + 1) for i, g in enumerate(gains))
    if name == "err":
        return err(gains, max_grade)
    if name == "nerr":
        best = sorted((v for v in row.values() if is_relevant(v, rel_level)), reverse=True)
        best = err(best[:k], max_grade)
        return err(gains, max_grade) / best if best > 0 else 0.0
    if name == "rbp":
        return (1 - p) * sum(p ** i for i, g in enumerate(gains) if g > 0)
    if name == "rbp_resid":  # 1 - the rbp of "judged": what unjudged and later ranks add
        seen, judged = set(), 0.0
        for i, item in enumerate(ids[:k]):
            if item >= 0 and item not in seen and item in row:
                judged += (1 - p) * p ** i
            if item >= 0:
                seen.add(item)
        return 1.0 - judged
    if name in ("bpref", "gm_bpref"):
        return bpref(row, ids[:k], rel_level)
    if name in TREC_LIST:
        return trec_list_measure(name, row, ids, rel_level, k, mult=mult, beta=beta)
    if name == "iprec":
        return iprec(row, ids[:k], rel_level, recall_point)

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
        return safe(sum(walk_rel(row, ids, m, rel_level)), m)
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
            if is_relevant(row.get(item, 0.0), rel_level):
                h += 1
            else:
                miss += 1
                total += h
        total += (h + m) / 2.0 * (n_neg - miss)
        return total / (m * n_neg)
    raise ValueError(name)


def walk_rel(row, ids, k, rel=None):
    return [1 if g > 0 else 0 for g in walk(row, ids, k, rel)]


def ranked(ids):
    """The list as trec_eval sees it: every slot up to the last first occurrence of a
    real id, a slot holding -1 or a repeat before it being a retrieved document that no
    one judged (None)."""
    firsts, last = set(), -1
    for i, item in enumerate(ids):
        if item >= 0 and item not in firsts:
            firsts.add(item)
            last = i
    seen, out = set(), []
    for item in ids[:last + 1]:
        out.append(item if item >= 0 and item not in seen else None)
        if item >= 0:
            seen.add(item)
    return out


def bpref(row, ids, rel_level):
    """Buckley & Voorhees' bpref as trec_eval 10 computes it: R relevant, N judged
    non-relevant (stored, 0 <= value, not relevant); negative values are unjudged."""
    big_r = n_relevant(row, rel_level)
    big_n = sum(1 for v in row.values() if v >= 0 and not is_relevant(v, rel_level))
    if big_r == 0:
        return 0.0
    total, nonrel_above = 0.0, 0
    for item in ranked(ids):
        value = row.get(item) if item is not None else None
        if value is None or value < 0:
            continue  # not judged
        if is_relevant(value, rel_level):
            total += 1.0 if nonrel_above == 0 else \
                1.0 - min(nonrel_above, big_r) / min(big_n, big_r)
        else:
            nonrel_above += 1
    return total / big_r


TREC_LIST = ("infap", "rprec_mult", "relative_precision", "set_precision",
             "set_relative_precision", "set_map", "set_f", "num_nonrel_judged_ret", "yaap",
             "unjudged")


def trec_list_measure(name, row, ids, rel_level, k, mult=None, beta=1.0):
    """trec_eval 10's measures of a whole ranking, from their definitions: levels are the
    stored values (negative: pooled, not judged), a document outside the row is retrieved
    but not pooled; R = the relevant stored values."""
    docs = ranked(ids)
    if not docs:  # trec_eval -c: one retrieved document that no one judged
        docs = [None]
    levels = [row.get(item) if item is not None else None for item in docs]
    rel = [v is not None and v >= 0 and is_relevant(v, rel_level) for v in levels]
    n, big_r = len(docs), n_relevant(row, rel_level)
    hits = [0]
    for r in rel:
        hits.append(hits[-1] + r)
    found = hits[-1]
    if name == "infap":
        total, relevant, nonrel, unjudged = 0.0, 0, 0, 0
        eps = 0.00001
        for j, v in enumerate(levels):
            if v is None:
                continue
            if v < 0:
                unjudged += 1
            elif not rel[j]:
                nonrel += 1
            else:
                relevant += 1
                if j == 0:
                    total += 1.0
                else:
                    judged_share = (relevant - 1 + nonrel + unjudged) / j
                    total += 1 / (j + 1) + j / (j + 1) * judged_share * \
                        (relevant - 1 + eps) / (relevant - 1 + nonrel + 2 * eps)
        return total / big_r if big_r else total
    if name == "rprec_mult":
        cut = int(mult * big_r + 0.9)
        if cut > n:
            return found / cut
        first = next((j + 1 for j, r in enumerate(rel) if r), 0)
        return hits[cut] / cut if 0 < first <= cut else 0.0
    if name == "relative_precision":
        return hits[min(k, n)] / min(k, big_r) if big_r else 0.0
    if name == "set_precision":
        return found / n
    if name == "set_relative_precision":
        return found / min(n, big_r) if big_r else 0.0
    if name == "set_map":
        return found * found / (n * big_r) if big_r else 0.0
    if name == "set_f":
        if not found:
            return 0.0
        precision, recall = found / n, found / big_r
        return (beta + 1) * precision * recall / (beta * precision + recall)
    if name == "num_nonrel_judged_ret":
        return float(sum(1 for j, v in enumerate(levels) if v is not None and v >= 0
                         and not rel[j]))
    if name == "yaap":
        total = sum(hits[j + 1] / (j + 1) for j, r in enumerate(rel) if r)
        return math.log((1 + total) / (1 + big_r - total))
    if name == "unjudged":
        if not ranked(ids):
            return 0.0  # trec_eval -c resets unj of a query without results
        return sum(1 for v in levels[:k] if v is None or v < 0) / k
    raise AssertionError(name)


def iprec(row, ids, rel_level, point):
    """Interpolated precision at a recall point (trec_eval 10): the best precision at any
    rank at or after the one where round(point * R) relevant documents are found (half
    away from zero); 0 if the list never finds that many."""
    big_r = n_relevant(row, rel_level)
    need = math.floor(point * big_r + 0.5)
    docs = ranked(ids)
    hits, at = [], 0
    for item in docs:
        at += 1 if item is not None and is_relevant(row.get(item, 0.0), rel_level) else 0
        hits.append(at)
    if not docs or need > at:
        return 0.0
    first = next((r for r, h in enumerate(hits) if h >= need), 0) if need > 0 else 0
    return max(hits[r] / (r + 1) for r in range(first, len(docs)))


def counts(row, convention, rel=None):
    """Does this user count in the mean of a metric with threshold rel? trec: every
    judged user (trec_eval -l); recsys, implicit: a user with an item relevant at rel."""
    if convention == "trec":
        return len(row) > 0
    return any(is_relevant(v, rel) for v in row.values())


def reference(truth, topk, metrics, convention="recsys", users=None):
    """{label: (per-user list with None for uncounted users, mean)}."""
    rows = truth_rows(truth)
    n_items = truth.shape[1]
    topk = [list(map(int, r)) for r in topk]
    users = list(range(len(topk))) if users is None else [int(u) for u in users]
    K = len(topk[0]) if topk else 0
    out = {}
    for label in metrics:
        name, params, kt = split_label(label)
        k = int(kt) if kt else K
        uncut = convention == "trec" and name == "ndcg" and not kt
        per_user = []
        for ids, u in zip(topk, users):
            row = rows[u]
            if not counts(row, convention, params.get("rel")):
                per_user.append(None)
                continue
            per_user.append(user_metric(name, k, row, ids, n_items, convention, uncut,
                                        **params))
        counted = [v for v in per_user if v is not None]
        if not counted:
            mean = math.nan
        elif name in SUMMED:
            mean = sum(counted)
        elif name in GEOMETRIC:
            mean = math.exp(sum(math.log(max(v, 0.00001)) for v in counted) / len(counted))
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


def split_label(label):
    """(name, {param: number}, cutoff text) of "name(key=value, ...)@k" labels."""
    head, _, kt = label.partition("@")
    name, _, inside = head.partition("(")
    params = {}
    for part in inside.rstrip(")").split(","):
        if "=" in part:
            key, value = part.split("=")
            params[key.strip()] = float(value)
    return name.strip(), params, kt


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
