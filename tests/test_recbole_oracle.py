"""RecBole itself as the oracle of the recbole dialect: its metric classes
(recbole/evaluator/metrics.py) and its Collector (recbole/evaluator/collector.py, which
turns a full-sort score matrix into the hit matrix and the mean ranks they read) on the
same scores, positives and history as fastrank's lists, truth and exclusions.

Skipped where RecBole is not installed: CI does not install it (it needs torch). Run it
in an environment that has RecBole 1.2 and fastrank on the path:

    python -m pytest tests/test_recbole_oracle.py -q

How RecBole sees fastrank's inputs, as its full-sort evaluation builds them: item ids shift
by one (its item 0 is a padding item, scored -inf); a user's history (fastrank's exclude)
is scored -inf; only users with a test interaction are evaluated; every test interaction
is positive (so RecBole is given the stored values > 0 only: fastrank's relevant items).
A fastrank list shorter than k (padded with -1) is RecBole's top k whose tail holds items
scored -inf (the padding item, the history), none of them positive.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import fastrank as fr

recbole = pytest.importorskip("recbole")
torch = pytest.importorskip("torch")

from recbole.evaluator import metrics as rb  # noqa: E402  (after the skip)
from recbole.evaluator.collector import Collector  # noqa: E402

# the recbole dialect's name (fastrank's recall, mrr, ndcg, hit_rate, map, precision; and
# gauc below): (RecBole's class, its result key)
TOPK = {"Recall": (rb.Recall, "recall"), "MRR": (rb.MRR, "mrr"), "NDCG": (rb.NDCG, "ndcg"),
        "Hit": (rb.Hit, "hit"), "MAP": (rb.MAP, "map"),
        "Precision": (rb.Precision, "precision")}


@pytest.fixture(autouse=True)
def numpy_float(monkeypatch):
    """RecBole 1.2's MRR, MAP and NDCG call np.float, which numpy 1.24 removed (fastrank
    needs numpy >= 1.24): give it back, as the builtin float it aliased, for each test."""
    monkeypatch.setattr(np, "float", float, raising=False)


def config(metrics, topk):
    """The keys of RecBole's Config that its metrics and Collector read; 20 decimal places
    make its rounding of the means a no-op."""
    return {"metrics": list(metrics), "topk": list(topk), "eval_args": {"mode": "full"},
            "device": torch.device("cpu"), "metric_decimal_place": 20}


def collect(scores, positive, history, cfg):
    """RecBole's Collector on a full-sort batch of the users with a positive: (its
    DataStruct, those users). scores (n_users, n_items) float64; positive and history
    boolean (n_users, n_items), disjoint (RecBole's history is the used items less the
    positive ones)."""
    users = np.flatnonzero(positive.any(axis=1))
    full = np.full((users.size, scores.shape[1] + 1), -np.inf)
    full[:, 1:] = np.where(history[users], -np.inf, scores[users])
    pos_u, pos_i = np.nonzero(positive[users])
    collector = Collector(cfg)
    collector.eval_batch_collect(torch.from_numpy(full), None, torch.from_numpy(pos_u),
                                 torch.from_numpy(pos_i + 1))
    return collector.get_data_struct(), users


def ranked_lists(scores, history, k):
    """Each user's items by falling score, the history left out, padded with -1 to k."""
    masked = np.where(history, -np.inf, scores)
    order = np.argsort(-masked, axis=1, kind="stable")[:, :k]
    width = order.shape[1]
    out = np.full((scores.shape[0], k), -1, np.int64)
    out[:, :width] = np.where(np.take_along_axis(masked, order, axis=1) > -np.inf, order, -1)
    return out


def make_case(seed, n_users, n_items, density, history_share=0.0, no_positive=0.0,
              zeros=0.0):
    """(truth values array, scores, history): graded values 1..3 (and stored zeros, judged
    non-relevant, with probability `zeros`), distinct scores, a history disjoint from the
    stored truth; a share of users with nothing stored."""
    rng = np.random.default_rng(seed)
    stored = rng.random((n_users, n_items)) < density
    stored[rng.random(n_users) < no_positive] = False
    values = np.where(stored, rng.integers(1, 4, (n_users, n_items)), 0).astype(float)
    judged_zero = stored & (rng.random((n_users, n_items)) < zeros)
    values[judged_zero] = 0.0
    history = ~stored & (rng.random((n_users, n_items)) < history_share)
    scores = rng.permutation(n_users * n_items).reshape(n_users, n_items) / 7.0
    return values, stored, scores, history


def as_truth(values, stored, form, dtype):
    rows, cols = np.nonzero(stored)
    data = values[rows, cols].astype(dtype)
    coo = sp.coo_array((data, (rows, cols)), shape=values.shape)
    return {"csr_array": coo.tocsr, "csr_matrix": lambda: sp.csr_matrix(coo),
            "coo": lambda: coo}[form]()


def cutoffs(k):
    return list(range(1, k + 1)) if k <= 12 else sorted({1, 2, 3, 5, 10, k // 2, k - 1, k})


# name: (n_users, n_items, K, density, history share, share of users without a positive,
#        share of stored values that are judged 0)
CASES = {
    "m < k": (60, 40, 10, 0.08, 0.1, 0.1, 0.0),
    "m > k": (60, 40, 4, 0.5, 0.1, 0.05, 0.0),
    "short lists": (50, 25, 20, 0.15, 0.6, 0.1, 0.0),
    "k = 1": (80, 30, 1, 0.1, 0.2, 0.1, 0.0),
    "large k": (40, 300, 301, 0.05, 0.2, 0.1, 0.0),
    "no positives": (60, 30, 8, 0.1, 0.1, 0.5, 0.0),
    "judged zeros": (60, 30, 8, 0.2, 0.1, 0.1, 0.3),
}
# (topk dtype, truth form, truth dtype)
TYPES = [(np.int64, "csr_array", np.float64), (np.int32, "csr_matrix", np.float32),
         (np.int64, "coo", np.float32), (np.int32, "csr_array", np.float64)]


def check_topk(values, stored, scores, history, k, types=TYPES[0]):
    """fastrank's recbole names on the lists of `scores` (less the history) against
    RecBole's metric classes on its Collector's hit matrix of the same scores: per user
    at every cutoff compared, and RecBole's means; (largest per-user, largest mean
    difference)."""
    positive = values > 0
    ks = cutoffs(k)
    cfg = config(list(TOPK), ks)
    data, users = collect(scores, positive, history, cfg)
    topk_type, form, truth_type = types
    lists = ranked_lists(scores, history, k).astype(topk_type)
    labels = [f"recbole:{name}@{c}" for name in TOPK for c in ks]
    res = fr.evaluate(as_truth(values, stored, form, truth_type), lists, labels)
    # graded values change nothing: RecBole's metrics are binary, and so are these
    binary = fr.evaluate(as_truth(positive * 1.0, stored, "csr_array", np.float64),
                         lists, labels)
    for label in labels:
        assert np.array_equal(res.per_user(label), binary.per_user(label), equal_nan=True)
    counted = np.zeros(values.shape[0], bool)
    counted[users] = True
    assert res.n_users == users.size
    worst = [0.0, 0.0]
    for name, (cls, key) in TOPK.items():
        metric = cls(cfg)
        pos_index, pos_len = metric.used_info(data)
        per_user = (metric.metric_info(pos_index, pos_len) if name in ("Recall", "NDCG", "MAP")
                    else metric.metric_info(pos_index))
        means = metric.calculate_metric(data)
        for c in ks:
            label = f"recbole:{name}@{c}"
            ours = res.per_user(label)
            assert np.isnan(ours[~counted]).all(), label  # RecBole never evaluates them
            assert_allclose(ours[users], per_user[:, c - 1], rtol=1e-12, atol=1e-15,
                            err_msg=label)
            assert res[label] == pytest.approx(means[f"{key}@{c}"], rel=1e-12, abs=1e-15)
            worst[0] = max(worst[0], float(np.abs(ours[users] - per_user[:, c - 1]).max()))
            worst[1] = max(worst[1], abs(res[label] - means[f"{key}@{c}"]))
    return tuple(worst)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("case", list(CASES))
def test_topk_metrics_equal_recbole_per_user_and_in_the_mean(case, seed):
    n_users, n_items, k, density, history_share, no_positive, zeros = CASES[case]
    values, stored, scores, history = make_case(seed, n_users, n_items, density,
                                                history_share, no_positive, zeros)
    if case == "short lists":
        assert (ranked_lists(scores, history, k) == -1).any()
    check_topk(values, stored, scores, history, k, TYPES[seed % len(TYPES)])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_users=st.integers(1, 10),
       n_items=st.integers(1, 15), k_share=st.floats(0, 1), density=st.floats(0.02, 1),
       history_share=st.floats(0, 0.9), zeros=st.sampled_from([0.0, 0.3]),
       types=st.sampled_from(TYPES))
def test_topk_metrics_equal_recbole_on_small_random_shapes(seed, n_users, n_items, k_share,
                                                           density, history_share, zeros,
                                                           types):
    k = 1 + int(k_share * n_items)  # 1 .. n_items + 1, RecBole's largest top k
    values, stored, scores, history = make_case(seed, n_users, n_items, density,
                                                history_share, 0.2, zeros)
    assume((values > 0).any())  # RecBole has no user to evaluate otherwise
    check_topk(values, stored, scores, history, k, types)


def test_on_recbole_s_own_lists_of_tied_scores():
    """Tied scores: RecBole's lists are torch.topk's, whose order among ties is its own
    (not the lower id first, as fastrank's topk and evaluate_factors rank them), so the two
    tools' lists of one model can differ. On RecBole's own lists (its Collector's
    rec.items) fastrank's numbers are RecBole's."""
    n_users, n_items, k = 60, 30, 12
    U, V = integer_factors(3, n_users, n_items)
    values, stored, _, history = make_case(3, n_users, n_items, 0.15, 0.2, 0.1)
    positive = values > 0
    ks = cutoffs(k)
    cfg = config([*TOPK, "ItemCoverage"], ks)  # ItemCoverage makes it keep rec.items
    data, users = collect(U @ V.T, positive, history, cfg)
    items = data.get("rec.items").numpy() - 1  # RecBole's ids shift by one
    items[(items < 0) | history[users[:, None], items]] = -1  # its padding, the history
    ours = fr.topk(U, V, k, exclude=sp.csr_array(history * 1.0))[0][users]
    assert not np.array_equal(items, ours)  # torch.topk orders ties its own way
    res = fr.evaluate(as_truth(values, stored, "csr_array", np.float64), items,
                      [f"recbole:{name}@{c}" for name in TOPK for c in ks],
                      users=users)
    for name, (cls, key) in TOPK.items():
        means = cls(cfg).calculate_metric(data)
        for c in ks:
            assert res[f"recbole:{name}@{c}"] == pytest.approx(means[f"{key}@{c}"],
                                                               rel=1e-12, abs=1e-15)


def integer_factors(seed, n_users, n_items, n_factors=3):
    """Small integer factors: exact float64 scores with many ties."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-2, 3, (n_users, n_factors)).astype(np.float64),
            rng.integers(-2, 3, (n_items, n_factors)).astype(np.float64))


def recbole_gauc(scores, positive, history):
    """(RecBole's GAUC over the users it keeps, {user: its AUC}) from its Collector's mean
    ranks (ties share their mean rank); each user's AUC is its GAUC over that user alone."""
    cfg = config(["GAUC"], [1])
    data, users = collect(scores, positive, history, cfg)
    metric = rb.GAUC(cfg)
    mean = metric.calculate_metric(data)["gauc"]
    ranks = data.get("rec.meanrank").numpy()
    per_user = {}
    for row, user in enumerate(users):
        pos_rank_sum, n_ranked, m = ranks[row]
        if n_ranked - m > 0:  # a user without a non-relevant item is dropped
            per_user[int(user)] = metric.metric_info(ranks[row:row + 1, :1],
                                                     ranks[row:row + 1, 1],
                                                     ranks[row:row + 1, 2])
    return mean, per_user


@pytest.mark.parametrize("seed", range(6))
def test_gauc_equals_recbole_with_ties(seed):
    n_users, n_items = 50, 30
    U, V = integer_factors(seed, n_users, n_items)
    values, stored, _, history = make_case(seed, n_users, n_items, 0.15, 0.2, 0.1,
                                           zeros=0.2 if seed % 2 else 0.0)
    values[1], stored[1], history[1] = 2.0, True, False  # every item relevant: dropped
    values[2], stored[2] = np.where(history[2], 0, 1.0), ~history[2]  # all the rest relevant
    positive = values > 0
    scores = U @ V.T
    mean, per_user = recbole_gauc(scores, positive, history)
    _, form, dtype = TYPES[seed % len(TYPES)]
    res = fr.evaluate_factors(U, V, as_truth(values, stored, form, dtype), ["recbole:GAUC"],
                              exclude=sp.csr_array(history * 1.0))
    ours = res.per_user("recbole:GAUC")
    assert math.isnan(ours[1]) and math.isnan(ours[2])
    for user in range(n_users):
        if user in per_user:
            assert ours[user] == pytest.approx(per_user[user], rel=1e-12, abs=1e-15)
        else:
            assert math.isnan(ours[user])
    assert len(per_user) > 30
    assert res["recbole:GAUC"] == pytest.approx(mean, rel=1e-12)


def test_gauc_with_a_test_item_in_the_history_needs_the_history_less_the_test_items():
    """RecBole's history is the user's used items less its test items (a repeated item
    stays ranked); fastrank ranks an excluded test item below every other: exclude the
    training items less the test items to reproduce RecBole."""
    n_users, n_items = 40, 25
    U, V = integer_factors(11, n_users, n_items)
    values, stored, _, history = make_case(11, n_users, n_items, 0.2, 0.3, 0.0)
    rng = np.random.default_rng(12)
    train = history | (stored & (rng.random(stored.shape) < 0.3))  # repeats of test items
    positive = values > 0
    mean, _ = recbole_gauc(U @ V.T, positive, train & ~stored)
    truth = as_truth(values, stored, "csr_array", np.float64)
    right = fr.evaluate_factors(U, V, truth, ["recbole:GAUC"],
                                exclude=sp.csr_array((train & ~stored) * 1.0))
    assert right["recbole:GAUC"] == pytest.approx(mean, rel=1e-12)
    wrong = fr.evaluate_factors(U, V, truth, ["recbole:GAUC"], exclude=sp.csr_array(train * 1.0))
    assert wrong["recbole:GAUC"] < mean


@pytest.mark.parametrize("seed", range(3))
def test_the_refusals_of_itemcoverage_giniindex_averagepopularity_hold(seed):
    """The reasons of the refusals, against RecBole: ItemCoverage and GiniIndex count its
    padding item 0 in the catalogue (fastrank's coverage and gini give their numbers on a
    catalogue with that empty item first), AveragePopularity counts interactions where arp
    counts users (equal with each interaction once, apart once one repeats)."""
    n_users, n_items, k = 50, 40, 10
    values, stored, scores, history = make_case(seed, n_users, n_items, 0.1, 0.1, 0.1)
    cfg = config(["ItemCoverage", "GiniIndex", "AveragePopularity"], [k])
    data, users = collect(scores, values > 0, history, cfg)
    items = data.get("rec.items").numpy()
    assert (items > 0).all()  # lists of k items: no padding item, no history in them
    coverage = rb.ItemCoverage(cfg).get_coverage(items, n_items + 1)
    gini = rb.GiniIndex(cfg).get_gini(items, n_items + 1)
    lists = ranked_lists(scores, history, k)
    truth = as_truth(values, stored, "csr_array", np.float64)
    train = sp.csr_array(history * 1.0)
    labels = [f"coverage@{k}", f"gini@{k}", f"arp@{k}"]
    plain = fr.evaluate(truth, lists, labels, train=train)
    padded = fr.evaluate(sp.hstack([sp.csr_array((n_users, 1)), truth], format="csr"),
                         np.where(lists >= 0, lists + 1, -1), labels,
                         train=sp.hstack([sp.csr_array((n_users, 1)), train], format="csr"))
    assert plain[f"coverage@{k}"] != pytest.approx(coverage, rel=1e-6)
    assert plain[f"gini@{k}"] != pytest.approx(gini, rel=1e-6)
    assert padded[f"coverage@{k}"] == pytest.approx(coverage, rel=1e-12)
    assert padded[f"gini@{k}"] == pytest.approx(gini, rel=1e-12)
    popularity = rb.AveragePopularity(cfg)
    once = {int(i) + 1: int(c) for i, c in enumerate(history.sum(axis=0))}
    arp = popularity.metric_info(popularity.get_pop(items, once))[:, k - 1].mean()
    assert plain[f"arp@{k}"] == pytest.approx(arp, rel=1e-12)
    twice = {i: 2 * c for i, c in once.items()}  # every interaction repeated
    arp = popularity.metric_info(popularity.get_pop(items, twice))[:, k - 1].mean()
    assert arp == pytest.approx(2 * plain[f"arp@{k}"], rel=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_shannon_entropy_is_recboles(seed):
    """recbole:ShannonEntropy@k against RecBole's ShannonEntropy on its Collector's lists:
    equal where every evaluated user's top k holds k items (no padding item 0); a list
    shorter than k is where RecBole counts its padding item and fastrank does not."""
    n_users, n_items = 50, 40
    values, stored, scores, history = make_case(seed, n_users, n_items, 0.1, 0.1, 0.1)
    ks = [1, 3, 10]
    cfg = config(["ShannonEntropy"], ks)
    data, _ = collect(scores, values > 0, history, cfg)
    assert (data.get("rec.items").numpy() > 0).all()  # k items each
    want = rb.ShannonEntropy(cfg).calculate_metric(data)
    lists = ranked_lists(scores, history, max(ks))
    truth = as_truth(values, stored, "csr_array", np.float64)
    got = fr.evaluate(truth, lists, [f"recbole:ShannonEntropy@{k}" for k in ks])
    for k in ks:
        assert got[f"recbole:ShannonEntropy@{k}"] == pytest.approx(
            want[f"shannonentropy@{k}"], rel=1e-12, abs=1e-15), k
