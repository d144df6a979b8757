"""coverage, gini, entropy, novelty, arp, ild and serendipity in fr.evaluate, against references."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastrank as fr
from fastrank.synthetic import power_law

from . import reference_beyond as ref
from .reference import n_relevant, truth_rows
from .reference_aspects import aspect_sets

N_ITEMS = 40


@pytest.fixture(scope="module")
def data():
    truth, topk = power_law(400, N_ITEMS, 8, seed=11)
    topk = topk.astype(np.int64)
    rng = np.random.default_rng(3)
    topk[rng.random(topk.shape) < 0.05] = -1          # padding
    topk[:, 7] = np.where(rng.random(400) < 0.2, topk[:, 0], topk[:, 7])  # repeats
    train, _ = power_law(700, N_ITEMS, 8, seed=12)
    aspects = sp.csr_array((rng.random((N_ITEMS, 5)) < 0.3).astype(np.int8))
    vectors = rng.normal(size=(N_ITEMS, 4))
    vectors[3] = 0.0  # a zero vector
    baseline = rng.integers(-1, N_ITEMS, (400, 6))
    return truth, topk, train, aspects, vectors, baseline


@pytest.mark.parametrize("convention", ["recsys", "trec"])
def test_per_user_measures_match_reference(data, convention):
    truth, topk, train, aspects, vectors, baseline = data
    metrics = ["novelty@3", "novelty", "arp@5", "ild@4", "ild", "serendipity@6", "ndcg@5"]
    res = fr.evaluate(truth, topk, metrics, convention=convention, train=train,
                      item_aspects=aspects, baseline=baseline)
    cos = fr.evaluate(truth, topk, ["ild@8"], convention=convention, item_vectors=vectors)
    pop, n_train = ref.popularity(train)
    rows, sets = truth_rows(truth), aspect_sets(aspects)
    jac, cosd = ref.jaccard_distance(sets), ref.cosine_distance(vectors.tolist())
    for u in range(400):
        counted = n_relevant(rows[u]) > 0 if convention == "recsys" else bool(rows[u])
        ids = topk[u].tolist()
        expect = {
            "novelty@3": ref.novelty(ref.distinct(ids, 3), pop, n_train),
            "novelty": ref.novelty(ref.distinct(ids, 8), pop, n_train),
            "arp@5": ref.arp(ref.distinct(ids, 5), pop),
            "ild@4": ref.ild(ref.distinct(ids, 4), jac),
            "ild": ref.ild(ref.distinct(ids, 8), jac),
            "serendipity@6": ref.serendipity(
                ref.distinct(ids, 6), 6, {i for i, v in rows[u].items() if v > 0},
                set(baseline[u].tolist())),
        }
        for label, value in expect.items():
            got = res.per_user(label)[u]
            if counted:
                assert got == pytest.approx(value, rel=1e-12, abs=1e-12), (label, u)
            else:
                assert np.isnan(got)
        if counted:
            assert cos.per_user("ild@8")[u] == pytest.approx(
                ref.ild(ref.distinct(ids, 8), cosd), rel=1e-9, abs=1e-12)
    assert res["novelty@3"] == pytest.approx(np.nanmean(res.per_user("novelty@3")), rel=1e-12)


def test_catalogue_measures_match_reference(data):
    truth, topk, _, _, _, _ = data
    res = fr.evaluate(truth, topk, ["coverage@2", "coverage", "gini@3", "gini"])
    rows = truth_rows(truth)
    lists = {k: [ref.distinct(topk[u].tolist(), k) for u in range(400)
                 if n_relevant(rows[u]) > 0] for k in (2, 3, 8)}
    assert res["coverage@2"] == pytest.approx(ref.coverage(lists[2], N_ITEMS), rel=1e-12)
    assert res["coverage"] == pytest.approx(ref.coverage(lists[8], N_ITEMS), rel=1e-12)
    assert res["gini@3"] == pytest.approx(ref.gini(lists[3], N_ITEMS), rel=1e-12)
    assert res["gini"] == pytest.approx(ref.gini(lists[8], N_ITEMS), rel=1e-12)
    assert res.catalogue == ("coverage@2", "coverage", "gini@3", "gini")
    with pytest.raises(ValueError, match="describes the catalogue"):
        res.per_user("gini")
    # one thread or two: the same exposure counts
    again = fr.evaluate(truth, topk, ["gini@3", "coverage"], n_threads=1)
    assert again["gini@3"] == res["gini@3"] and again["coverage"] == res["coverage"]


def test_popular_baseline_and_mixed_order(data):
    truth, topk, train, _, _, _ = data
    res = fr.evaluate(truth, topk, ["serendipity@8", "precision@8"], train=train,
                      baseline="popular")
    pop, _ = ref.popularity(train)
    popular = sorted(range(N_ITEMS), key=lambda i: (-pop.get(i, 0), i))[:8]
    explicit = fr.evaluate(truth, topk, ["serendipity@8"], baseline=np.array(popular))
    np.testing.assert_array_equal(res.per_user("serendipity@8"),
                                  explicit.per_user("serendipity@8"))
    assert res.metrics == ("serendipity@8", "precision@8")
    # serendipity never exceeds precision: it counts a subset of the hits
    assert np.all(np.nan_to_num(res.per_user("serendipity@8") - res.per_user("precision@8"))
                  <= 1e-15)


def test_popular_baseline_at_k_is_the_k_most_popular_whatever_the_lists_width(data):
    """serendipity@k against baseline="popular" compares with the k most popular items,
    the primitive model's list as long as the one judged: the same top-k lists give the
    same value whether the lists have k columns or more, and a larger evaluate(k=)."""
    truth, topk, train, _, _, _ = data
    pop, _ = ref.popularity(train)
    order = sorted(range(N_ITEMS), key=lambda i: (-pop.get(i, 0), i))
    rows = truth_rows(truth)
    labels = ["serendipity@1", "serendipity@3", "serendipity@5"]
    wide = fr.evaluate(truth, topk, labels, train=train, baseline="popular")
    narrow = fr.evaluate(truth, topk[:, :5], labels, train=train, baseline="popular")
    longer = fr.evaluate(truth, topk[:, :5], labels + ["serendipity@12"], k=12, train=train,
                         baseline="popular")
    for k in (1, 3, 5):
        label = f"serendipity@{k}"
        expected = [ref.serendipity(ref.distinct(topk[u].tolist(), k), k,
                                    {i for i, v in rows[u].items() if v > 0}, set(order[:k]))
                    if n_relevant(rows[u]) else np.nan for u in range(topk.shape[0])]
        np.testing.assert_allclose(wide.per_user(label), expected, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(narrow.per_user(label), wide.per_user(label))
        np.testing.assert_array_equal(longer.per_user(label), wide.per_user(label))


@pytest.mark.parametrize("metric, kwargs, match", [
    ("novelty@5", {}, r"novelty@5 needs train="),
    ("ild@5", {}, r"ild@5 needs item_aspects= or item_vectors="),
    ("serendipity@5", {}, r"serendipity@5 needs baseline="),
    ("ild@5", {"item_aspects": sp.csr_array(np.ones((40, 2))), "item_vectors": np.ones((40, 2))},
     "not both"),
    ("serendipity@5", {"baseline": "popular"}, "baseline='popular' needs train="),
    ("serendipity@5", {"baseline": np.array([[1, 2]] * 3)}, "one list per topk row"),
    ("serendipity@5", {"baseline": np.array([45])}, "outside"),
    ("arp@5", {"train": sp.csr_array((3, 7))}, "train has 7 columns"),
    ("ild@5", {"item_vectors": np.ones((39, 2))}, "item_vectors must be"),
])
def test_missing_or_bad_side_inputs(data, metric, kwargs, match):
    truth, topk, _, _, _, _ = data
    with pytest.raises(ValueError, match=match):
        fr.evaluate(truth, topk, [metric], **kwargs)


def test_repeated_train_entries_count_once_with_their_sum():
    """SPEC §1: a matrix with duplicates is read as its canonical copy. A user's repeated
    (user, item) entries in train= are one interaction of their summed value: popularity
    (arp, novelty), the debiased metrics' propensities and calibration's profiles see
    the same as with the summed matrix; entries that sum to 0 are no interaction."""
    truth = sp.csr_array(np.array([[1.0, 0, 1, 0], [0, 1, 1, 0]]))
    topk = np.array([[0, 1, 2], [3, 2, 1]])
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1], [0, 0]], np.int8))
    metrics = ["arp@3", "novelty@3", "miscalibration@2", "dcg_ips@3", "recall_ips@3"]
    data = np.array([1.0, 1.0, 1.0, 2.0, -2.0, 1.0])
    indices = np.array([0, 0, 1, 3, 3, 2])
    repeated = sp.csr_matrix((data, indices, np.array([0, 3, 6])), shape=(2, 4))
    before = repeated.copy()
    summed = repeated.copy()
    summed.sum_duplicates()
    got = fr.evaluate(truth, topk, metrics, train=repeated, item_aspects=aspects)
    want = fr.evaluate(truth, topk, metrics, train=summed, item_aspects=aspects)
    for metric in metrics:
        np.testing.assert_array_equal(got.per_user(metric), want.per_user(metric))
    assert got["novelty@3"] >= 0.0  # no item has more training users than there are
    assert (repeated != before).nnz == 0 and repeated.indices.tolist() == indices.tolist()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scale", [1.0, 1e-200, 1e200, 3e-310])
def test_cosine_ild_is_the_same_at_any_scale_of_the_vectors(scale):
    truth = sp.csr_array(np.array([[1.0, 1, 0], [0, 1, 1]]))
    topk = np.array([[0, 1, 2], [2, 1, 0]])
    vectors = np.array([[1.0, 1], [2, 2], [1, -1]])
    want = fr.evaluate(truth, topk, ["ild@3"], item_vectors=vectors)
    got = fr.evaluate(truth, topk, ["ild@3"], item_vectors=vectors * scale)
    np.testing.assert_allclose(got.per_user("ild@3"), want.per_user("ild@3"), rtol=1e-12)


def test_bad_vectors_and_ragged_baselines_are_refused_by_name():
    truth = sp.csr_array(np.array([[1.0, 1, 0], [0, 1, 1]]))
    topk = np.array([[0, 1, 2], [2, 1, 0]])
    with pytest.raises(ValueError, match="item_vectors has 0 dimensions per item"):
        fr.evaluate(truth, topk, ["ild@3"], item_vectors=np.zeros((3, 0)))
    with pytest.raises(ValueError, match="baseline must be one list .* pad shorter lists"):
        fr.evaluate(truth, topk, ["serendipity@2"], train=truth, baseline=[[0, 1], [2]])
    # [] is an empty list (numpy reads it as float64), the same for every row
    empty = fr.evaluate(truth, topk, ["serendipity@2"], train=truth, baseline=[])
    none = fr.evaluate(truth, topk, ["serendipity@2"], train=truth,
                       baseline=np.full((1, 2), -1))
    assert empty["serendipity@2"] == none["serendipity@2"]


@pytest.mark.parametrize("side, error, match", [
    (dict(train=sp.csr_array(np.ones((4, 3)))), ValueError, r"train has shape \(4, 3\)"),
    (dict(train=np.ones((4, 4))), TypeError, "train must be a scipy.sparse"),
    (dict(item_aspects=sp.csr_array(np.ones((3, 2)))), ValueError, "item_aspects has shape"),
    (dict(item_vectors=np.ones((3, 2))), ValueError, r"item_vectors has shape \(3, 2\)"),
    (dict(propensity=np.ones(5)), ValueError, r"propensity has shape \(5,\)"),
    (dict(baseline="nope"), ValueError, "baseline must be 'popular'"),
])
def test_side_inputs_no_metric_uses_are_still_checked_against_the_catalogue(side, error,
                                                                             match):
    """SPEC 5: mismatched shapes are errors, not dropped, whether a metric asked uses the
    input or not; inputs that fit are accepted and change nothing."""
    truth = sp.csr_array(np.eye(4))
    topk = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    with pytest.raises(error, match=match):
        fr.evaluate(truth, topk, ["ndcg@2"], **side)
    with pytest.raises(error, match=match):
        fr.Evaluator(truth, ["ndcg@2"], **side)
    fitting = fr.evaluate(truth, topk, ["ndcg@2"], train=truth, baseline="popular",
                          item_aspects=sp.csr_array(np.ones((4, 2))),
                          item_vectors=np.ones((4, 3)), propensity=np.full(4, 0.5))
    assert fitting["ndcg@2"] == fr.evaluate(truth, topk, ["ndcg@2"])["ndcg@2"]


def test_cosine_ild_stays_within_0_and_2_where_the_cosine_rounds_past_1():
    """Parallel vectors of different lengths are at distance 0, opposite ones at 2: the
    unit vectors' dot product can round a last bit past ±1."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=(100, 7))
    scale = rng.uniform(0.1, 1e3, (100, 1))
    vectors = np.vstack([base, base * scale, -base * scale])  # item u, u + 100, u + 200
    truth = sp.csr_array(np.ones((100, 300)))
    same = np.column_stack([np.arange(100), np.arange(100) + 100])
    opposite = np.column_stack([np.arange(100), np.arange(100) + 200])
    near = fr.evaluate(truth, same, ["ild@2"], item_vectors=vectors).per_user("ild@2")
    assert near.min() == 0.0 and near.max() < 1e-15
    far = fr.evaluate(truth, opposite, ["ild@2"], item_vectors=vectors).per_user("ild@2")
    assert far.max() == 2.0 and far.min() > 2.0 - 1e-15


@pytest.mark.parametrize("labels, side, error, match", [
    (["ild@2"], dict(item_vectors=[[1, 0], [1], [0, 0], [0, 1]]), ValueError,
     "item_vectors .* rows have different lengths"),
    (["ild@2"], dict(item_vectors=sp.csr_array(np.eye(4))), TypeError,
     r"item_vectors must be a dense .* item_vectors.toarray\(\)"),
    (["miscalibration@2"], dict(item_aspects=sp.csr_array(np.eye(4))), ValueError,
     "miscalibration@2 needs train= .*profile of aspects"),
    (["miscalibration@2"], dict(train=sp.csr_array(np.ones((4, 4))), item_aspects=sp.csr_array(
        (np.ones(2, np.int8), ([0, 1], [0, 10**11])), shape=(4, 10**11 + 1))), ValueError,
     "item_aspects has 100,000,000,001 columns .* number the aspects"),
])
def test_side_inputs_a_measure_reads_are_refused_by_name(labels, side, error, match):
    truth = sp.csr_array(np.eye(4))
    topk = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    with pytest.raises(error, match=match):
        fr.evaluate(truth, topk, labels, **side)


def test_entropy_matches_reference(data):
    truth, topk, _, _, _, _ = data
    res = fr.evaluate(truth, topk, ["entropy@1", "entropy@3", "entropy"])
    rows = truth_rows(truth)
    lists = {k: [ref.distinct(topk[u].tolist(), k) for u in range(400)
                 if n_relevant(rows[u]) > 0] for k in (1, 3, 8)}
    for label, k in (("entropy@1", 1), ("entropy@3", 3), ("entropy", 8)):
        assert res[label] == pytest.approx(ref.entropy(lists[k]), rel=1e-12), label
    assert res.catalogue == ("entropy@1", "entropy@3", "entropy")
    with pytest.raises(ValueError, match="describes the catalogue"):
        res.per_user("entropy")
    for dtype in (np.int32, np.int64):
        again = fr.evaluate(truth, topk.astype(dtype), ["entropy@3"], n_threads=1)
        assert again["entropy@3"] == res["entropy@3"]


def test_entropy_edges():
    truth = sp.csr_array(np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0]]))
    # padding and a repeat are not items shown; an uncounted row (no relevant) shows nothing
    topk = np.array([[0, 0, -1], [1, 2, 0], [3, 3, 3]])
    res = fr.evaluate(truth, topk, ["entropy@3", "entropy@1"])
    assert res["entropy@3"] == pytest.approx(ref.entropy([[0], [1, 2, 0]]), rel=1e-12)
    assert res["entropy@1"] == pytest.approx(ref.entropy([[0], [1]]), rel=1e-12)
    # one item everywhere: entropy 0; no counted user: NaN like every mean over no user
    assert fr.evaluate(truth, np.array([[1], [1], [0]]), ["entropy"])["entropy"] == 0.0
    empty = sp.csr_array((3, 4))
    assert np.isnan(fr.evaluate(empty, topk, ["entropy"])["entropy"])
    # every slot padded: nothing shown, 0
    assert fr.evaluate(truth, np.full((3, 2), -1), ["entropy"])["entropy"] == 0.0
