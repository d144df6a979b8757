"""fr.topk and fr.evaluate_factors against plain-Python references and fr.evaluate."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastrank as fr
from tests.reference import auc_full_reference, topk_reference


def integer_factors(seed, n_users, n_items, n_factors=3, dtype=np.float32):
    """Small integer factors: every score is exact in any precision and ties are common."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-2, 3, (n_users, n_factors)).astype(dtype),
            rng.integers(-2, 3, (n_items, n_factors)).astype(dtype))


def random_pattern(seed, shape, density, values=False):
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < density
    data = rng.integers(1, 4, shape).astype(np.float64) if values else np.ones(shape)
    return sp.csr_array(np.where(mask, data, 0.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(4))
def test_topk_matches_reference_with_ties_and_exclusion(seed, dtype):
    U, V = integer_factors(seed, 37, 150, dtype=dtype)
    exclude = random_pattern(seed + 100, (37, 150), 0.2)
    ids, scores = fr.topk(U, V, 12, exclude=exclude)
    ref_ids, ref_scores = topk_reference(U, V, 12, exclude)
    assert ids.dtype == np.int32 and scores.dtype == dtype
    assert_array_equal(ids, ref_ids)
    assert_array_equal(scores, np.array(ref_scores, dtype=dtype))


def test_topk_matches_numpy_argsort_on_real_valued_factors():
    rng = np.random.default_rng(5)
    U = rng.standard_normal((300, 16))
    V = rng.standard_normal((4000, 16))
    ids, scores = fr.topk(U, V, 20)
    full = U @ V.T
    assert_array_equal(ids, np.argsort(-full, axis=1, kind="stable")[:, :20])
    assert_allclose(scores, np.take_along_axis(full, ids.astype(np.int64), axis=1),
                    rtol=1e-12)


def test_topk_pads_when_fewer_items_than_k_remain():
    U, V = integer_factors(1, 3, 5)
    exclude = sp.csr_array(np.array([[1, 1, 1, 0, 0], [0] * 5, [1] * 5], dtype=np.float64))
    ids, scores = fr.topk(U, V, 7, exclude=exclude)
    assert (ids[0, 2:] == -1).all() and np.isneginf(scores[0, 2:]).all()
    assert set(ids[0, :2]) == {3, 4}
    assert (ids[1, 5:] == -1).all() and sorted(ids[1, :5]) == [0, 1, 2, 3, 4]
    assert (ids[2] == -1).all() and np.isneginf(scores[2]).all()


def test_exclusion_counts_every_stored_entry_and_duplicates():
    U, V = integer_factors(2, 2, 6)
    # explicit zeros and duplicate entries are still exclusions
    exclude = sp.csr_array((np.array([0.0, 1.0, 1.0]), np.array([3, 1, 1]),
                            np.array([0, 3, 3])), shape=(2, 6))
    ids, _ = fr.topk(U, V, 6, exclude=exclude)
    assert not {1, 3} & set(ids[0]) and (ids[0, 4:] == -1).all()
    assert sorted(ids[1]) == list(range(6))


def test_topk_users_subset_and_thread_count_invariance():
    rng = np.random.default_rng(3)
    U = rng.standard_normal((1500, 8)).astype(np.float32)
    V = rng.standard_normal((700, 8)).astype(np.float32)
    exclude = random_pattern(4, (1500, 700), 0.05)
    users = rng.permutation(1500)[:900]
    one = fr.topk(U, V, 10, exclude=exclude, users=users, n_threads=1)
    many = fr.topk(U, V, 10, exclude=exclude, users=users, n_threads=2)
    full = fr.topk(U, V, 10, exclude=exclude)
    for a, b in zip(one, many):
        assert_array_equal(a, b)
    assert_array_equal(one[0], full[0][users])


def test_inputs_are_not_modified_and_read_only_inputs_work():
    U, V = integer_factors(7, 20, 30)
    exclude = random_pattern(8, (20, 30), 0.3)
    copies = (U.copy(), V.copy(), exclude.copy())
    U.flags.writeable = False
    V.flags.writeable = False
    ids, _ = fr.topk(U, V, 5, exclude=exclude)
    assert_array_equal(ids, topk_reference(U, V, 5, exclude)[0])
    assert_array_equal(U, copies[0])
    assert_array_equal(V, copies[1])
    assert (exclude != copies[2]).nnz == 0


METRICS = ["precision@5", "recall@10", "map@10", "ndcg@10", "mrr@10", "hit_rate@3", "auc@10"]


@pytest.mark.parametrize("convention", ["recsys", "trec", "implicit"])
def test_evaluate_factors_equals_evaluate_on_reference_lists(convention):
    U, V = integer_factors(11, 120, 90, n_factors=4)
    test = random_pattern(12, (120, 90), 0.05, values=True)
    exclude = random_pattern(13, (120, 90), 0.1)
    res = fr.evaluate_factors(U, V, test, METRICS, exclude=exclude, convention=convention)
    ids, _ = topk_reference(U, V, 10, exclude)
    expected = fr.evaluate(test, np.array(ids), METRICS, convention=convention)
    assert res.to_dict() == expected.to_dict()
    for name in METRICS:
        assert_array_equal(res.per_user(name), expected.per_user(name))
    assert_array_equal(res.counted, expected.counted)
    assert_array_equal(res.n_relevant, expected.n_relevant)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_full_auc_matches_reference(dtype):
    U, V = integer_factors(21, 60, 40, dtype=dtype)
    test = random_pattern(22, (60, 40), 0.15, values=True)
    exclude = random_pattern(23, (60, 40), 0.15)  # overlaps test: excluded positives
    res = fr.evaluate_factors(U, V, test, ["auc", "ndcg@5"], exclude=exclude)
    expected = auc_full_reference(U, V, test, exclude)
    got = res.per_user("auc")
    for u, value in enumerate(expected):
        if value is None:
            assert math.isnan(got[u]) and not res.counted[u]
        else:
            assert got[u] == pytest.approx(value, rel=1e-12, abs=1e-15)


def test_a_result_with_the_full_auc_keeps_k_and_compares():
    """The full-ranking auc goes through the one Result builder: k, convention, counts
    and the metrics' order are kept, and fr.compare takes the Result."""
    U, V = integer_factors(24, 60, 40)
    test = random_pattern(25, (60, 40), 0.15, values=True)
    a = fr.evaluate_factors(U, V, test, ["ndcg@5", "auc", "map@3"])
    assert a.k == 5 and a.metrics == ("ndcg@5", "auc", "map@3") and a.convention == "recsys"
    assert a.aggregates == {"ndcg@5": "mean", "auc": "mean", "map@3": "mean"}
    b = fr.evaluate_factors(U[::-1].copy(), V, test, ["ndcg@5", "auc", "map@3"])
    table = fr.compare({"a": a, "b": b}, ["ndcg@5", "auc"])
    assert len(table.to_frame()) == 4
    only_auc = fr.evaluate_factors(U, V, test, ["auc"], convention="trec")
    assert only_auc.convention == "trec" and only_auc["auc"] == pytest.approx(
        fr.evaluate_factors(U, V, test, ["auc", "ndcg@2"], convention="trec")["auc"])


def test_trec_users_judged_only_non_relevant_are_ranked_too():
    """Under the trec convention a user whose judgments are all non-relevant counts: its
    list is ranked, so num_ret, coverage and gini see it (its auc is 0)."""
    U, V = integer_factors(26, 40, 30)
    test = random_pattern(27, (40, 30), 0.1, values=True)
    test.data[::3] = 0.0  # stored, not relevant: some users have only these
    labels = ["num_ret@3", "gini@3", "coverage@3", "precision@3", "ndcg@3"]
    for convention in ("trec", "recsys"):
        got = fr.evaluate_factors(U, V, test, labels + ["auc"], convention=convention)
        want = fr.evaluate(test, fr.topk(U, V, 3)[0], labels, convention=convention)
        for label in labels:
            assert got[label] == pytest.approx(want[label], rel=1e-12), (convention, label)
    assert "full-ranking AUC" in got.describe("auc")
    with pytest.raises(ValueError, match="'novelty@2' needs train, which evaluate_factors "
                                         "does not take"):
        fr.evaluate_factors(U, V, test, ["novelty@2"])


def test_full_auc_matches_scikit_learn():
    roc_auc_score = pytest.importorskip("sklearn.metrics").roc_auc_score
    rng = np.random.default_rng(31)
    U = rng.standard_normal((50, 6))
    V = rng.standard_normal((500, 6))
    test = random_pattern(32, (50, 500), 0.02, values=True)
    res = fr.evaluate_factors(U, V, test, ["auc"])
    scores = U @ V.T
    dense = test.toarray() > 0
    for u in np.flatnonzero(dense.any(axis=1)):
        assert_allclose(res.per_user("auc")[u], roc_auc_score(dense[u], scores[u]), rtol=1e-12)


def test_users_without_positives_are_not_scored_but_reported():
    U, V = integer_factors(41, 4, 10)
    # row 0: one relevant item; row 1: nothing stored; row 2: only a stored zero (judged,
    # not relevant); row 3: two relevant items
    test = sp.csr_array((np.array([2.0, 0.0, 1.0, 3.0]), np.array([1, 4, 0, 9]),
                         np.array([0, 1, 1, 2, 4])), shape=(4, 10))
    rec = fr.evaluate_factors(U, V, test, ["ndcg@3", "auc"])
    assert list(rec.counted) == [True, False, False, True]
    trec = fr.evaluate_factors(U, V, test, ["ndcg@3", "auc"], convention="trec")
    assert list(trec.counted) == [True, False, True, True]
    assert trec.per_user("ndcg@3")[2] == 0.0 and trec.per_user("auc")[2] == 0.0


def test_evaluate_factors_users_and_progress(capsys):
    U, V = integer_factors(51, 30, 25)
    test = random_pattern(52, (30, 25), 0.2, values=True)
    users = np.array([5, 3, 29, 3])
    res = fr.evaluate_factors(U, V, test, ["ndcg@5", "auc"], users=users, show_progress=True)
    full = fr.evaluate_factors(U, V, test, ["ndcg@5", "auc"])
    assert_array_equal(res.users, users)
    for name in ("ndcg@5", "auc"):
        assert_array_equal(res.per_user(name), full.per_user(name)[users])
    assert "users" in capsys.readouterr().err


@pytest.mark.parametrize("call, message", [
    (lambda U, V, T: fr.topk(U, V[:, :2], 3), "factors per row"),
    (lambda U, V, T: fr.topk(U, V, 0), "k must be at least 1"),
    (lambda U, V, T: fr.topk(U, V, 2.5), "k must be an int >= 1"),
    (lambda U, V, T: fr.topk(np.where(U == 1, np.nan, U), V, 3), "user_factors contains NaN"),
    (lambda U, V, T: fr.topk(U, V[0], 3), "item_factors must be 2-D"),
    (lambda U, V, T: fr.topk(U, V, 3, exclude=T[:, :5]), "exclude has shape"),
    (lambda U, V, T: fr.topk(U, V, 3, users=[0, 99]), r"users contains 99, outside \[0, "),
    (lambda U, V, T: fr.evaluate_factors(U, V, T[:5], ["ndcg@3"]), "test has shape"),
    # a test of the right shape, factors of too few items: the factors' mismatch, not
    # exclude's (which matches test)
    (lambda U, V, T: fr.evaluate_factors(U, V[:7], T, ["ndcg@3"], exclude=T),
     r"test has shape \(10, 8\) but the factors describe 10 users x 7 items"),
    (lambda U, V, T: fr.evaluate_factors(U[:9], V, T, ["ndcg@3"], exclude=T),
     r"test has shape \(10, 8\) but the factors describe 9 users"),
    (lambda U, V, T: fr.evaluate_factors(U, V, T, ["ndcg@3"], show_progress="no"),
     "show_progress must be True or False"),
    (lambda U, V, T: fr.evaluate_factors(U, V, T, ["ndcg"]), "needs a cutoff"),
    (lambda U, V, T: fr.evaluate_factors(U, V, T, ["r_precision"]), "not available from factors"),
    (lambda U, V, T: fr.evaluate_factors(U, V, T, ["ndgc@3"]), "unknown metric"),
    (lambda U, V, T: fr.evaluate_factors(U, V, T, []), "metrics is empty"),
])
def test_bad_input_names_the_argument(call, message):
    U, V = integer_factors(61, 10, 8)
    T = random_pattern(62, (10, 8), 0.3)
    with pytest.raises((ValueError, TypeError), match=message):
        call(U, V, T)


def test_mixed_and_integer_dtypes_are_promoted():
    U, V = integer_factors(71, 12, 9)
    ids64, _ = fr.topk(U.astype(np.int64), V.astype(np.float64), 4)
    ids32, _ = fr.topk(U, V.astype(np.float32), 4)
    assert_array_equal(ids64, ids32)


def test_factors_of_extreme_but_finite_scales_are_ranked():
    """Row norms whose squares pass float64 (2^600) beside ones whose squares underflow
    (2^-600): every product is U @ V.T's exactly, and ranks as it does (the check of the
    products' bound once multiplied inf by 0 and refused them as NaN)."""
    U, V = integer_factors(81, 6, 9)
    U, V = U.astype(np.float64) + 1.0, V.astype(np.float64) - 0.5
    ids, scores = fr.topk(U * 2.0 ** 600, V * 2.0 ** -600, 3)
    plain, _ = fr.topk(U, V, 3)
    assert_array_equal(ids, plain)
    assert np.isfinite(scores).all()
    with pytest.raises(ValueError, match="dot products can exceed float64"):
        fr.topk(U * 2.0 ** 600, V * 2.0 ** 600, 3)
