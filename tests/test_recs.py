"""GAUC (RecBole), pAUC@k and pAp@k (RecTools), miscalibration (Steck
2018) and the overlap of two systems' lists, against plain-Python references written
from each source's formula (tests/reference_recs.py) and the sources' own examples."""

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastrank as fr
from tests import reference_recs as ref
from tests.reference import truth_rows


def integer_factors(seed, n_users, n_items, n_factors=3):
    """Small integer factors: exact scores, many ties."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-2, 3, (n_users, n_factors)).astype(np.float64),
            rng.integers(-2, 3, (n_items, n_factors)).astype(np.float64))


def graded(seed, shape, density):
    rng = np.random.default_rng(seed)
    values = np.where(rng.random(shape) < density, rng.integers(0, 4, shape), 0)
    out = sp.csr_array(values.astype(np.float64))
    return out


def lists_with_padding_and_repeats(seed, n_rows, n_items, width):
    """Random lists with -1 padding (at the end and inside) and repeated ids."""
    rng = np.random.default_rng(seed)
    topk = np.argsort(rng.random((n_rows, n_items)), axis=1)[:, :width].astype(np.int64)
    topk[rng.random(topk.shape) < 0.1] = -1
    short = rng.random(n_rows) < 0.2
    topk[short, width // 2:] = -1
    repeat = rng.random(topk.shape) < 0.1
    topk[:, 1:][repeat[:, 1:]] = topk[:, :-1][repeat[:, 1:]]
    return topk


def positives_of(truth):
    return [{i for i, v in row.items() if v > 0} for row in truth_rows(truth)]


# -- GAUC ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.slow
def test_gauc_is_recbole_s_formula_with_average_ranks(seed):
    U, V = integer_factors(seed, 40, 30)
    dense = graded(seed, (40, 30), 0.15).toarray()
    # exclusions never hold a test item, as RecBole's history never holds a test item
    rng = np.random.default_rng(seed + 7)
    excluded = ((rng.random((40, 30)) < 0.2) & (dense == 0)) * 1
    excluded[0] = 0
    dense[0, :] = 1.0  # user 0: every item relevant, no negative: dropped
    test, exclude = sp.csr_array(dense), sp.csr_array(excluded)
    res = fr.evaluate_factors(U, V, test, ["gauc", "auc", "recbole:GAUC"], exclude=exclude)
    scores = (U @ V.T).tolist()
    excluded = [set(exclude.indices[exclude.indptr[u]:exclude.indptr[u + 1]].tolist())
                for u in range(40)]
    users = ref.gauc_users(scores, positives_of(test), excluded)
    per_user = res.per_user("gauc")
    for u, value in enumerate(users):
        if value is None:
            assert math.isnan(per_user[u])
        else:
            assert per_user[u] == pytest.approx(value[0], rel=1e-12, abs=1e-15)
    assert res["gauc"] == pytest.approx(ref.gauc(users), rel=1e-12)
    assert res["recbole:GAUC"] == res["gauc"] and res.aggregates["gauc"] == "weighted"
    assert res.per_user("auc")[0] == 1.0 and math.isnan(per_user[0])
    # the per-user AUC is sklearn's roc_auc_score of the user's non-excluded items
    from sklearn.metrics import roc_auc_score
    for u in range(1, 40):
        keep = [i for i in range(30) if i not in excluded[u]]
        labels = [1 if i in positives_of(test)[u] else 0 for i in keep]
        if 0 < sum(labels) < len(labels):
            assert per_user[u] == pytest.approx(
                roc_auc_score(labels, [scores[u][i] for i in keep]), rel=1e-12)


def test_gauc_weights_and_leaves_out_users_without_positives_or_negatives():
    U = np.array([[1.0], [1.0], [1.0], [1.0]])
    V = np.array([[3.0], [2.0], [1.0]])
    # user 0: positive item 1 -> AUC 1/2 (one of two negatives below); user 1: items 0, 1
    # -> AUC 1, weight 2; user 2: nothing relevant; user 3: everything relevant
    test = sp.csr_array(np.array([[0, 1, 0], [1, 1, 0], [0, 0, 0], [1, 1, 1]], float))
    for convention in ("recsys", "trec", "implicit"):
        res = fr.evaluate_factors(U, V, test, ["gauc"], convention=convention)
        assert res["gauc"] == pytest.approx((0.5 * 1 + 1.0 * 2) / 3, rel=1e-15)
        assert_array_equal(np.isnan(res.per_user("gauc")), [False, False, True, True])
    low, high = res.ci("gauc", method="normal")
    assert low <= res["gauc"] <= high


def test_gauc_in_evaluate_model_and_refused_elsewhere():
    implicit = pytest.importorskip("implicit")
    U, V = integer_factors(3, 25, 40)
    test = graded(3, (25, 40), 0.2)
    train = graded(4, (25, 40), 0.2)
    model = implicit.cpu.als.AlternatingLeastSquares(factors=3, random_state=0)
    model.user_factors, model.item_factors = U.astype(np.float32), V.astype(np.float32)
    res = fr.evaluate_model(model, test, ["gauc", "ndcg@5"], train=train,
                            show_progress=False)
    direct = fr.evaluate_factors(U.astype(np.float32), V.astype(np.float32), test,
                                 ["gauc", "ndcg@5"], exclude=train)
    assert res["gauc"] == direct["gauc"]
    with pytest.raises(ValueError, match="computed by fr.evaluate_factors"):
        fr.evaluate(test, np.zeros((25, 3), np.int64), ["gauc"])
    with pytest.raises(ValueError, match="computed by fr.evaluate_factors"):
        fr.Evaluator(test, ["recbole:GAUC"])


# -- RecTools' pAUC@k and pAp@k ---------------------------------------------------------

def rectools_example():
    """The Examples of rectools.metrics.auc's PartialAUC and PAP: users 1, 2, 3 as rows 0,
    1, 2; items as they are."""
    truth = sp.csr_array((np.ones(6), ([0, 0, 1, 1, 2, 2], [1, 2, 1, 3, 1, 2])), shape=(3, 4))
    topk = np.array([[1, 2, -1], [3, 1, 2], [3, 2, -1]])
    return truth, topk


@pytest.mark.parametrize("name", ["partial_auc", "pap", "rectools:PartialAUC",
                                  "rectools:PAP"])
def test_rectools_docstring_examples(name):
    truth, topk = rectools_example()
    res = fr.evaluate(truth, topk, [f"{name}@1", f"{name}@3"])
    assert_allclose(res.per_user(f"{name}@1"), [1, 1, 0], rtol=1e-15)
    assert_allclose(res.per_user(f"{name}@3"), [1, 1, 1 / 3], rtol=1e-15)
    excluded = (f"{name}(insufficient_handling=exclude)@3" if ":" in name
                else f"{name}(insufficient=exclude)@3")
    res = fr.evaluate(truth, topk, [excluded])
    assert_allclose(res.per_user(excluded), [1, 1, np.nan], rtol=1e-15)
    assert res[excluded] == 1.0
    with pytest.raises(ValueError, match="needs at least k = 3 non-relevant items.*1 users"):
        fr.evaluate(truth, topk, [excluded.replace("exclude", "raise")])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("convention", ["recsys", "trec"])
def test_partial_aucs_match_the_reference(seed, convention):
    truth = graded(seed, (60, 25), 0.2)
    topk = lists_with_padding_and_repeats(seed, 60, 25, 9)
    labels = [f"{name}(insufficient={h})@{k}" for name in ("partial_auc", "pap")
              for k in (1, 3, 9) for h in ("ignore", "exclude")]
    res = fr.evaluate(truth, topk.astype(np.int32), labels, convention=convention)
    positives = positives_of(truth)
    judged = [bool(row) for row in truth_rows(truth)]
    largest = 0.0
    for label in labels:
        name, k = label.split("(")[0], int(label.rsplit("@", 1)[1])
        values = res.per_user(label)
        expect = []
        for u in range(60):
            counted = judged[u] if convention == "trec" else bool(positives[u])
            if not counted:
                expect.append(np.nan)
                continue
            value, short = ref.partial_auc(topk[u], positives[u], k, pap=name == "pap")
            expect.append(np.nan if short and "exclude" in label else value)
        assert_allclose(values, expect, rtol=1e-12, atol=0)
        largest = max(largest, float(np.nanmax(np.abs(values - np.array(expect)), initial=0)))
        kept = [v for v in expect if not math.isnan(v)]
        assert res[label] == pytest.approx(np.mean(kept), rel=1e-12)
    assert largest <= 1e-15


def test_partial_auc_edge_cases_and_inputs_untouched():
    # empty truth rows, m < k, padding only, duplicates; int64 read-only input
    truth = sp.csr_array(np.array([[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 2, 0]],
                                  float))
    topk = np.array([[0, 1, 2], [-1, -1, -1], [2, 2, 0], [3, 3, 3]], np.int64)
    topk.flags.writeable = False
    before = truth.copy()
    res = fr.evaluate(truth, topk, ["partial_auc@2", "pap@2"])
    assert math.isnan(res.per_user("partial_auc@2")[0])
    # row 1: nothing listed, its positive unlisted -> 0; row 2: 2 (neg), 2 (repeat), 0
    # (hit, 1 negative above: 2 - 1 = 1) over k·m = 4 -> 1/4 (pap: over k·min(k, m) = 4)
    assert_array_equal(res.per_user("partial_auc@2")[1:], [0.0, 0.25, 0.0])
    assert_array_equal(res.per_user("pap@2")[1:], [0.0, 0.25, 0.0])
    assert (truth != before).nnz == 0 and not topk.flags.writeable


def test_partial_auc_threads_give_bit_identical_values():
    truth = graded(9, (300, 40), 0.2)
    topk = lists_with_padding_and_repeats(9, 300, 40, 12)
    labels = ["partial_auc@5", "pap@3"]
    one = fr.evaluate(truth, topk, labels, n_threads=1)
    many = fr.evaluate(truth, topk, labels, n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    for label in labels:
        assert_array_equal(one.per_user(label), many.per_user(label))


def test_partial_auc_parameters_are_checked():
    truth, topk = rectools_example()
    with pytest.raises(ValueError, match="insufficient='drop' is not one of ignore, exclude"):
        fr.evaluate(truth, topk, ["partial_auc(insufficient=drop)@2"])


# -- miscalibration ---------------------------------------------------------------------

def aspects_of(matrix):
    return [set(matrix.indices[matrix.indptr[i]:matrix.indptr[i + 1]].tolist())
            for i in range(matrix.shape[0])]


@pytest.mark.parametrize("seed", range(4))
def test_miscalibration_matches_steck_s_formula(seed):
    rng = np.random.default_rng(seed)
    n_users, n_items = 50, 30
    truth = graded(seed, (n_users, n_items), 0.2)
    train = graded(seed + 50, (n_users, n_items), 0.25)
    item_aspects = sp.csr_array((rng.random((n_items, 5)) < 0.35) * 1)
    topk = lists_with_padding_and_repeats(seed, n_users, n_items, 8)
    labels = ["miscalibration@8", "miscalibration(alpha=0.1)@3",
              "miscalibration(weights=value, positions=log)@5",
              "miscalibration(alpha=0, weights=value)@8"]
    res = fr.evaluate(truth, topk, labels, train=train, item_aspects=item_aspects)
    aspects = aspects_of(item_aspects)
    history = truth_rows(train)
    positives = positives_of(truth)
    for label in labels:
        params = dict(p.split("=") for p in label[label.find("(") + 1:label.find(")")]
                      .replace(" ", "").split(",")) if "(" in label else {}
        k = int(label.rsplit("@", 1)[1])
        expect = []
        for u in range(n_users):
            value = ref.miscalibration(history[u], topk[u], k, aspects,
                                       float(params.get("alpha", 0.01)),
                                       params.get("weights", "equal"),
                                       params.get("positions", "equal"))
            expect.append(np.nan if value is None or not positives[u] else value)
        assert_allclose(res.per_user(label), expect, rtol=1e-12, atol=1e-15)
        kept = [v for v in expect if not math.isnan(v)]
        assert res[label] == pytest.approx(np.mean(kept), rel=1e-12) or \
            (math.isinf(res[label]) and math.isinf(np.mean(kept)))


def test_miscalibration_by_hand():
    # genres A=0, B=1. Train: item 0 {A}, item 1 {A, B} -> p = (3/4, 1/4).
    # List [2 {B}, -1, 2]: q = (0, 1); q̃ = 0.99·q + 0.01·p = (0.0075, 0.9925).
    item_aspects = sp.csr_array(np.array([[1, 0], [1, 1], [0, 1]]))
    train = sp.csr_array(np.array([[1, 1, 0]], float))
    truth = sp.csr_array(np.array([[0, 0, 1]], float))
    topk = np.array([[2, -1, 2]])
    res = fr.evaluate(truth, topk, ["miscalibration@3", "miscalibration(alpha=1)@3"],
                      train=train, item_aspects=item_aspects)
    expect = 0.75 * math.log(0.75 / 0.0075) + 0.25 * math.log(0.25 / 0.9925)
    assert res["miscalibration@3"] == pytest.approx(expect, rel=1e-14)
    assert res["miscalibration(alpha=1)@3"] == 0.0
    # an empty list: q = 0, q̃ = α·p, KL = −ln α
    res = fr.evaluate(truth, np.array([[-1, -1]]), ["miscalibration"], train=train,
                      item_aspects=item_aspects)
    assert res["miscalibration"] == pytest.approx(-math.log(0.01), rel=1e-14)
    # no history with an aspect: NaN, left out of the mean
    res = fr.evaluate(truth, topk, ["miscalibration@2"], train=sp.csr_array((1, 3)),
                      item_aspects=item_aspects)
    assert math.isnan(res.per_user("miscalibration@2")[0])
    with pytest.raises(ValueError, match="needs train="):
        fr.evaluate(truth, topk, ["miscalibration@2"], item_aspects=item_aspects)
    with pytest.raises(ValueError, match="needs item_aspects="):
        fr.evaluate(truth, topk, ["miscalibration@2"], train=train)
    with pytest.raises(ValueError, match="train has 1 rows but truth row 1"):
        fr.evaluate(sp.vstack([truth, truth]).tocsr(), np.vstack([topk, topk]),
                    ["miscalibration@2"], train=train, item_aspects=item_aspects)


def test_miscalibration_threads_and_read_only_inputs():
    rng = np.random.default_rng(5)
    truth = graded(5, (200, 50), 0.2)
    train = graded(6, (200, 50), 0.2)
    train.data.flags.writeable = False
    item_aspects = sp.csr_array((rng.random((50, 6)) < 0.3) * 1)
    topk = lists_with_padding_and_repeats(5, 200, 50, 10)
    topk.flags.writeable = False
    labels = ["miscalibration@10", "miscalibration(positions=log)@4"]
    one = fr.evaluate(truth, topk, labels, train=train, item_aspects=item_aspects,
                      n_threads=1)
    many = fr.evaluate(truth, topk, labels, train=train, item_aspects=item_aspects,
                       n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    for label in labels:
        assert_array_equal(one.per_user(label), many.per_user(label))
    assert one.ci(labels[0], seed=0)[0] <= one[labels[0]]


# -- fr.overlap --------------------------------------------------------------------------

def test_overlap_hand_computed_values():
    # row 0: equal lengths, X = 1, 1, 3: 0.1·(1 + 0.9/2 + 0.81) + 0.729 = 0.955
    # row 1: S = [1, 2], L = [2, 1, 3], p = 0.5 (eq. 32): X = 0, 2, 2:
    #   (Σ X_d/d·p^d = 1/4 + 1/12) + (X_s·(3 − 2)/(2·3)·p^3 = 1/24), times (1 − p)/p = 1,
    #   plus ((X_l − X_s)/l + X_s/s)·p^l = 1/8 -> 0.5
    # row 2: both empty (NaN); row 3: one empty (0); row 4: identical lists (1)
    a = np.array([[1, 2, 3], [1, 2, -1], [-1, -1, -1], [5, -1, -1], [7, 8, 9]])
    b = np.array([[1, 3, 2, -1], [2, 1, 3, -1], [-1, -1, -1, -1], [-1, -1, -1, -1],
                  [7, 7, 8, 9]])
    res = fr.overlap(a, b, ["jaccard@3", "rbo(p=0.9)@3", "rbo(p=0.5)", "rbo(p=0)@4"])
    assert_allclose(res.per_user("rbo(p=0.9)@3"), [0.955, 0.9, np.nan, 0, 1], rtol=1e-14)
    assert res.per_user("rbo(p=0.5)")[1] == 0.5
    assert_allclose(res.per_user("jaccard@3"), [1, 2 / 3, np.nan, 0, 2 / 3], rtol=1e-15)
    # p = 0: the agreement at depth 1
    assert_array_equal(res.per_user("rbo(p=0)@4"), [1, 0, np.nan, 0, 1])
    assert res["jaccard@3"] == pytest.approx((1 + 2 / 3 + 0 + 2 / 3) / 4, rel=1e-15)
    assert res.n_users == 4 and res.kind == "overlap" and res.convention is None
    low, high = res.ci("jaccard@3", seed=0)
    assert low <= res["jaccard@3"] <= high


@pytest.mark.parametrize("seed", range(4))
def test_overlap_matches_the_papers_formulas(seed):
    rng = np.random.default_rng(seed)
    a = lists_with_padding_and_repeats(seed, 80, 30, 10)
    b = lists_with_padding_and_repeats(seed + 10, 80, 30, 7).astype(np.int32)
    b[:10] = a[:10, :7]  # shared prefixes: high overlap
    b[10:15] = a[10:15, rng.permutation(7)]
    labels = ["jaccard@3", "jaccard", "rbo(p=0.9)@10", "rbo(p=0.5)@4", "rbo(p=0.98)"]
    res = fr.overlap(a, b, labels)
    largest = 0.0
    for label in labels:
        k = int(label.rsplit("@", 1)[1]) if "@" in label else 10
        if label.startswith("rbo"):
            p = float(label[label.index("=") + 1:label.index(")")])
            expect = [ref.rbo_ext(x, y, k, p) for x, y in zip(a, b)]
        else:
            expect = [ref.jaccard(x, y, k) for x, y in zip(a, b)]
        expect = np.array([np.nan if v is None else v for v in expect])
        assert_allclose(res.per_user(label), expect, rtol=1e-12, atol=1e-15)
        largest = max(largest, float(np.nanmax(np.abs(res.per_user(label) - expect))))
        assert res[label] == pytest.approx(np.nanmean(expect), rel=1e-12)
    assert largest < 1e-14
    # symmetric, and 1 for a list with itself
    swapped = fr.overlap(b, a, labels)
    for label in labels:
        assert_allclose(swapped.per_user(label), res.per_user(label), rtol=1e-14)
    same = fr.overlap(a, a, ["rbo(p=0.9)@10", "jaccard@10"])
    nonempty = (a >= 0).any(axis=1)
    assert_allclose(same.per_user("rbo(p=0.9)@10")[nonempty], 1.0, rtol=1e-14)


def test_overlap_of_ids_far_apart_is_the_overlap_of_their_numbering():
    """Ids such as 64-bit hashes (far past the lists' size) are numbered 0..n-1 before the
    kernel, whose markers are per id: the same values as small ids, no memory error."""
    a = lists_with_padding_and_repeats(3, 60, 25, 10)
    b = lists_with_padding_and_repeats(4, 60, 25, 8)
    labels = ["jaccard@5", "rbo(p=0.9)@10", "jaccard"]
    small = fr.overlap(a, b, labels)
    hashes = np.random.default_rng(0).choice(2**62, 25, replace=False) + 2**40
    far_a, far_b = (np.where(x >= 0, hashes[np.maximum(x, 0)], -1) for x in (a, b))
    far = fr.overlap(far_a, far_b, labels)
    for label in labels:
        np.testing.assert_array_equal(far.per_user(label), small.per_user(label))
    # uint64 ids past int64's range stay distinct (none is clipped onto another), and an
    # int64 list with padding matches a uint64 list id for id
    top = np.uint64(2**63) + np.arange(27, dtype=np.uint64) * np.uint64(2**50)
    plain_a, plain_b = np.where(a >= 0, a, 26), np.where(b >= 0, b, 25)  # no padding
    both = fr.overlap(top[plain_a], top[plain_b], labels)
    mixed = fr.overlap(a, np.where(b >= 0, b, 2**63 + 7).astype(np.uint64), labels)
    for label in labels:
        np.testing.assert_array_equal(both.per_user(label),
                                      fr.overlap(plain_a, plain_b, labels).per_user(label))
        np.testing.assert_array_equal(mixed.per_user(label),
                                      fr.overlap(a, plain_b, labels).per_user(label))


def test_overlap_inputs_threads_and_errors():
    a = lists_with_padding_and_repeats(3, 400, 60, 12)
    b = lists_with_padding_and_repeats(4, 400, 60, 12)
    a.flags.writeable = False
    before = b.copy()
    labels = ["jaccard@12", "rbo@6"]
    one = fr.overlap(a, b, labels, n_threads=1)
    many = fr.overlap(a, b.astype(np.int32), labels,
                      n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    for label in labels:
        assert_array_equal(one.per_user(label), many.per_user(label))
    assert_array_equal(b, before)
    with pytest.raises(ValueError, match="topk_a has 400 rows but topk_b has 3"):
        fr.overlap(a, b[:3])
    with pytest.raises(TypeError, match="topk_b must be an integer array"):
        fr.overlap(a, b.astype(float))
    with pytest.raises(ValueError, match="topk_a contains item id -2"):
        fr.overlap(np.full((400, 2), -2), b)
    with pytest.raises(ValueError, match="'ndcg@5' is not an overlap of two lists"):
        fr.overlap(a, b, ["ndcg@5"])
    with pytest.raises(ValueError, match=r"p='2' is not a number in \[0, 1\]"):
        fr.overlap(a, b, ["rbo(p=2)"])
    with pytest.raises(ValueError, match="computed by fr.overlap"):
        fr.evaluate(sp.csr_array((400, 60)), a, ["jaccard@5"])


def test_miscalibration_by_value_is_unchanged_by_huge_train_values():
    """p(g|u) is a ratio of weights: train values whose sum overflows give what their
    equal ratios give (review: it read 0, perfectly calibrated)."""
    truth = sp.csr_matrix(np.array([[1., 0, 0, 1], [0, 1, 1, 0]]))
    aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1]]))
    big = sp.csr_matrix(np.array([[1e308, 1e308, 0, 0], [1., 0, 0, 0]]))
    ones = sp.csr_matrix(np.array([[1., 1, 0, 0], [1., 0, 0, 0]]))
    labels = ["miscalibration(weights=value)", "miscalibration"]
    lists = np.array([[2, 2], [1, 3]])
    a = fr.evaluate(truth, lists, labels, train=big, item_aspects=aspects)
    b = fr.evaluate(truth, lists, labels, train=ones, item_aspects=aspects)
    for label in labels:
        np.testing.assert_allclose(a.per_user(label), b.per_user(label), rtol=1e-12)
    assert a.per_user(labels[0])[0] > 1.9


def test_miscalibration_with_a_subnormal_alpha_is_finite():
    """With alpha > 0 the mixed distribution is positive and KL finite; at alpha = 1e-320
    p/q̃ overflowed float64 and the value was inf. p = (3/4, 1/4) (item 0 on aspect 0, item
    2 split over both), the list's item has the second: q̃ = (3α/4, (1 - α) + α/4)."""
    truth = sp.csr_array(np.array([[0, 1.0, 0]]))
    train = sp.csr_array(np.array([[1.0, 0, 1]]))
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]], np.int8))
    alpha = 1e-320
    got = fr.evaluate(truth, np.array([[1]]), [f"miscalibration(alpha={alpha})@1"],
                      train=train, item_aspects=aspects).per_user(
        f"miscalibration(alpha={alpha})@1")[0]
    p = np.array([0.75, 0.25])
    mixed = np.array([alpha * 0.75, 1.0 - alpha + alpha * 0.25])
    want = float(np.sum(p * (np.log(p) - np.log(mixed))))
    assert np.isfinite(got) and got == pytest.approx(want, rel=1e-3)
