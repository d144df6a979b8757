"""Hostile input at every entry point: correct output or a ValueError / TypeError that
names the argument and the offending value. Never a crash, a numba or scipy internal
error, a giant allocation, a silent wrong number or a modified input (SPEC §5)."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import fastrank as fr
import fastrank.implicit as fi
from fastrank.synthetic import power_law

TRUTH = sp.csr_array(np.array([[3, 0, 1, 0, 0], [0, 0, 0, 2, 1], [0, 1, 0, 0, 0]], float))
TOPK = np.array([[2, 0, 4], [1, 3, -1], [1, 2, 3]])
RNG = np.random.default_rng(0)
U = RNG.standard_normal((6, 4))
V = RNG.standard_normal((8, 4))
_DENSE = (RNG.random((6, 8)) < 0.3).astype(float)
_DENSE[5, 2] = 1.0  # every user has a relevant item
TEST = sp.csr_array(_DENSE)


def declared(n_items):
    """TRUTH with a catalogue declared far larger than the items used."""
    return sp.csr_array((TRUTH.data, TRUTH.indices, TRUTH.indptr), shape=(3, n_items))


# -- catalogues too large for the kernels' per-item markers ---------------------------

@pytest.mark.parametrize("call", [
    lambda t: fr.evaluate(t, TOPK, ["ndcg@3"]),
    lambda t: fr.Evaluator(t, ["ndcg@3"]).update(None, TOPK),
    lambda t: fr.evaluate(t, TOPK, ["coverage@3", "novelty@3"], train=t),
    lambda t: fr.evaluate(t, TOPK, ["ndcg@3"], n_threads=1),
])
@pytest.mark.slow
def test_a_declared_catalogue_too_large_for_memory_is_a_clear_error(call):
    with pytest.raises(ValueError, match=r"truth has 2,199,023,255,552 columns \(items\).* "
                                         r"number the items that occur 0..n-1"):
        call(declared(2**41))


def test_a_catalogue_past_the_stamps_offsets_is_a_clear_error(monkeypatch):
    """The ranking walk's stamps keep an entry's offset in its row in 32 bits: a catalogue
    of 2^32 items or more (which only a machine of 64 GiB or more would let past the
    memory check) is refused by name; here the limit is lowered to the test's 5 items."""
    from fastrank._kernels import ranking

    monkeypatch.setattr(ranking, "MOST_ITEMS", 5)
    with pytest.raises(ValueError, match=r"truth has 5 columns \(items\), and the ranking "
                                         r"metrics take fewer than 2\^32; number the items"):
        fr.evaluate(TRUTH, TOPK, ["ndcg@3"])
    monkeypatch.setattr(ranking, "MOST_ITEMS", 6)
    assert fr.evaluate(TRUTH, TOPK, ["ndcg@3"])["ndcg@3"] > 0


def test_ranges_past_the_stamps_tags_split_into_more_ranges(monkeypatch):
    """The stamps' tags count a range's rows in 31 bits: the facade splits the users into
    ranges of at most RANGE_ROWS rows (2^30 - 1), whatever the threads; lowered here to 7
    rows, 200 users in 29 ranges give the values of one range."""
    from fastrank._kernels import ranking

    truth, topk = power_law(200, 60, 8, seed=3)
    metrics = ["ndcg@5", "map@8", "auc@8", "precision@3", "mrr@8"]
    expected = fr.evaluate(truth, topk, metrics, n_threads=1)
    monkeypatch.setattr(ranking, "RANGE_ROWS", 7)
    got = fr.evaluate(truth, topk, metrics, n_threads=1)
    for m in metrics:
        np.testing.assert_array_equal(got.per_user(m), expected.per_user(m))


# -- cutoffs and list lengths far past the catalogue ---------------------------------

def test_topk_past_the_catalogue_pads_and_refuses_absurd_lengths():
    ids, scores = fr.topk(U, V, 50)
    assert ids.shape == (6, 50) and (ids[:, 8:] == -1).all() and np.isinf(scores[:, 8:]).all()
    expected, _ = fr.topk(U, V, 8)
    np.testing.assert_array_equal(ids[:, :8], expected)
    with pytest.raises(ValueError, match="lists of k=1,000,000,000,000 items would need"):
        fr.topk(U, V, 10**12)


def test_cutoffs_past_the_catalogue_see_empty_slots():
    """ndcg@10**12 of 8 items: the lists hold at most 8 items; precision divides by k."""
    big = fr.evaluate_factors(U, V, TEST, ["ndcg@1000000000000", "precision@1000000000000",
                                           "recall@1000000000000"])
    small = fr.evaluate_factors(U, V, TEST, ["ndcg@8", "precision@8", "recall@8"])
    np.testing.assert_array_equal(big.per_user("ndcg@1000000000000"), small.per_user("ndcg@8"))
    np.testing.assert_array_equal(big.per_user("recall@1000000000000"),
                                  small.per_user("recall@8"))
    np.testing.assert_allclose(big.per_user("precision@1000000000000"),
                               small.per_user("precision@8") * 8 / 10**12, rtol=1e-12)


def test_an_evaluator_with_a_huge_k_builds_no_padding():
    ev = fr.Evaluator(TRUTH, ["ndcg", "precision@4", "map"], k=10**12).update(None, TOPK)
    res = ev.result()
    wide = np.full((3, 6), -1)
    wide[:, :3] = TOPK
    padded = fr.evaluate(TRUTH, wide, ["ndcg@6", "precision@4", "map@6"])
    np.testing.assert_array_equal(res.per_user("ndcg"), padded.per_user("ndcg@6"))
    np.testing.assert_array_equal(res.per_user("precision@4"), padded.per_user("precision@4"))
    np.testing.assert_array_equal(res.per_user("map"), padded.per_user("map@6"))


def test_narrow_blocks_equal_padded_ones_for_every_metric():
    truth, topk = power_law(300, 40, 6, seed=3)
    train, _ = power_law(300, 40, 6, seed=4)
    metrics = ["ndcg@9", "ndcg_exp", "precision@8", "map@9", "mrr", "auc", "r_precision",
               "hit_rate@9", "f1@7", "novelty@9", "serendipity@8", "coverage@9", "gini@9"]
    kw = dict(train=train, baseline="popular")
    narrow = fr.Evaluator(truth, metrics, k=9, **kw).update(None, topk).result()
    padded = fr.evaluate(truth, np.pad(topk, ((0, 0), (0, 3)), constant_values=-1), metrics,
                         **kw)
    for label in metrics:
        if label in padded.catalogue:
            assert narrow[label] == padded[label]
        else:
            np.testing.assert_array_equal(narrow.per_user(label), padded.per_user(label))


def test_absurd_k_for_a_model_or_the_drop_in(als_like):
    model, train, test = als_like
    assert fi.ranking_metrics_at_k(model, train, test, K=10**12, show_progress=False) == \
        fi.ranking_metrics_at_k(model, train, test, K=test.shape[1] + 5, show_progress=False)

    class Lists:
        def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
            return np.zeros((len(userids), 3), np.int32), None

    with pytest.raises(ValueError, match="lists of 1,000,000,000,000 items .*would need"):
        fr.evaluate_model(Lists(), test, ["ndcg@1000000000000"], show_progress=False)


@pytest.fixture(scope="module")
def als_like():
    pytest.importorskip("implicit")
    from implicit.als import AlternatingLeastSquares
    from implicit.evaluation import train_test_split

    truth, _ = power_law(300, 50, 5, seed=2)
    train, test = train_test_split(sp.csr_matrix(truth, dtype=np.float32), 0.8,
                                   random_state=0)
    model = AlternatingLeastSquares(factors=4, iterations=2, random_state=0, num_threads=1)
    model.fit(train, show_progress=False)
    return model, train, test


@pytest.mark.parametrize("call", [
    lambda model, test: fr.evaluate_model(model, test, ["ndcg@3"], show_progress=False),
    lambda model, test: fi.ranking_metrics_at_k(model, test, test, K=3, show_progress=False),
])
def test_an_unfitted_model_is_named_with_the_fix(call):
    """implicit's models hold None factors until fitted: the evaluation says to fit, not
    an IndexError from the factors' shape."""
    pytest.importorskip("implicit")
    from implicit.als import AlternatingLeastSquares

    test = sp.csr_matrix(TRUTH)
    with pytest.raises(ValueError, match=r"model: this AlternatingLeastSquares has no "
                                         r"factors yet .* fit it first"):
        call(AlternatingLeastSquares(factors=4), test)


def test_ab_ndcg_scorer_with_a_huge_k_allocates_nothing_big():
    scorer = fr.AlphaBetaNDCG(TRUTH, sp.csr_array(np.eye(5, 2)), k=10**12,
                              user_aspects=np.ones((3, 2)))
    assert scorer.idcg.shape == (1, 3)


@pytest.mark.parametrize("topk, kw, match", [
    (np.array([[2, 0, 4], [1, 3, -1], [1, 2, 5]]), {}, "item id 5, outside"),
    (TOPK.astype(float), {}, "topk must be an integer array"),
    (TOPK[:, :0], {}, "topk has no columns"),
    (TOPK[:2], {}, "topk has 2 rows but truth has 3"),
    (TOPK[:2], {"users": [0, 1, 2]}, "topk has 2 rows but users has 3"),
    (TOPK, {"clip": "no"}, "clip"),
])
def test_ab_ndcg_refuses_bad_lists_before_computing_the_ideal(monkeypatch, topk, kw, match):
    """The one-call form checks its lists first: on a million users a bad id would
    otherwise surface only after seconds of the greedy ideal."""
    from fastrank import diversity

    def no_ideal(*args, **kwargs):
        raise AssertionError("the ideal was computed before the lists were checked")

    monkeypatch.setattr(diversity.AlphaBetaNDCG, "_ideal", no_ideal)
    with pytest.raises((ValueError, TypeError), match=match):
        fr.ab_ndcg(TRUTH, topk, sp.csr_array(np.eye(5, 2)), user_aspects=np.ones((3, 2)),
                   **kw)


# -- overflowing factors --------------------------------------------------------------

@pytest.mark.parametrize("scale, dtype", [(1e200, np.float64), (1e20, np.float32)])
def test_factors_whose_products_overflow_are_refused(scale, dtype):
    big_u, big_v = (U * scale).astype(dtype), (V * scale).astype(dtype)
    for call in (lambda: fr.evaluate_factors(big_u, big_v, TEST, ["auc", "ndcg@3"]),
                 lambda: fr.topk(big_u, big_v, 3),
                 lambda: fr.mae(TEST, user_factors=big_u, item_factors=big_v)):
        with pytest.raises(ValueError, match="dot products can exceed"):
            call()
    # large but safe factors still work, and the AUC stays in [0, 1]
    auc = fr.evaluate_factors(U * 1e100, V * 1e100, TEST, ["auc"]).per_user("auc")
    assert np.nanmin(auc) >= 0 and np.nanmax(auc) <= 1


# -- the evaluator checks what it is given when it is built ---------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    ({"metrics": ["bogus@3"]}, ValueError, "unknown metric 'bogus@3'"),
    ({"metrics": [None]}, TypeError, "metrics must be strings"),
    ({"metrics": ["ndcg@0"]}, ValueError, "must be at least 1"),
    ({"metrics": ["ndcg@²"]}, ValueError, r"cutoff in 'ndcg@²' must be a positive integer"),
    ({"metrics": ["novelty@3"]}, ValueError, "novelty@3 needs train="),
    ({"metrics": ["ndcg@3"], "n_threads": 0}, ValueError, "n_threads must be between 1"),
    ({"metrics": ["ndcg@3"], "n_threads": "x"}, TypeError, "n_threads must be an int"),
    ({"metrics": ["ndcg@3"], "repeats": "no"}, TypeError, "repeats must be True or False"),
])
def test_evaluator_refuses_bad_arguments_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        fr.Evaluator(TRUTH, **kwargs)


def test_merge_compares_the_whole_truth_and_the_side_inputs():
    other = TRUTH.copy()
    other.indices = other.indices.copy()
    other.indices[0] = 1  # same shape, nnz and indptr: a different matrix
    a = fr.Evaluator(TRUTH, ["ndcg@3"]).update([0], TOPK[:1])
    with pytest.raises(ValueError, match="different truth matrices"):
        a.merge(fr.Evaluator(other, ["ndcg@3"]).update([1], TOPK[1:2]))
    b = fr.Evaluator(TRUTH, ["novelty@3"], train=TRUTH).update([0], TOPK[:1])
    with pytest.raises(ValueError, match="different train="):
        b.merge(fr.Evaluator(TRUTH, ["novelty@3"], train=other).update([1], TOPK[1:2]))


def test_zero_users_give_an_empty_result():
    res = fr.evaluate_factors(U[:0], V, sp.csr_array((0, 8)), ["ndcg@3", "auc"])
    assert res.per_user("ndcg@3").shape == (0,) and np.isnan(res["ndcg@3"])
    res = fr.evaluate_factors(U, V, TEST, ["ndcg@3"], users=np.array([], int))
    assert res.n_users == 0


# -- models and the drop-in -----------------------------------------------------------

def test_model_arguments_are_named():
    with pytest.raises(TypeError, match="model must have a recommend"):
        fr.evaluate_model(object(), TEST, ["ndcg@3"], show_progress=False)
    with pytest.raises(TypeError, match="train must be a scipy.sparse matrix"):
        fr.evaluate_model(object(), TEST, ["ndcg@3"], train=[[1]], show_progress=False)
    with pytest.raises(ValueError, match=r"train has shape \(6, 9\) but test has \(6, 8\)"):
        fr.evaluate_model(object(), TEST, ["ndcg@3"], train=sp.csr_array((6, 9)),
                          show_progress=False)


@pytest.mark.parametrize("answer", [
    lambda n, k: np.full((n, k), -1, np.int32),            # nothing but filler
    lambda n, k: np.zeros((n, 0), np.int32),               # no columns at all
    lambda n, k: np.tile(np.arange(k, dtype=np.int32), (n, 1)),  # training items only
    lambda n, k: np.full((n, k), 2**63 + 5, np.uint64),    # ids past int64
])
def test_a_batch_without_any_real_item_scores_zero(answer):
    dense = np.eye(6, 8)
    dense[:, :3] = 1.0
    train = sp.csr_array(dense)

    class Model:
        def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
            return answer(len(userids), 3), None

    res = fr.evaluate_model(Model(), TEST, ["ndcg@3", "hit_rate@3"], train=train,
                            show_progress=False)
    counted = res.counted
    assert (res.per_user("ndcg@3")[counted] == 0).all()


def test_drop_in_does_not_touch_the_callers_matrices():
    implicit = pytest.importorskip("implicit")
    from implicit.als import AlternatingLeastSquares

    train = sp.csr_matrix(np.eye(2, 4, dtype=np.float32))
    model = AlternatingLeastSquares(factors=2, iterations=1, random_state=0, num_threads=1)
    model.fit(train, show_progress=False)
    test = sp.csr_matrix((np.ones(3, np.float32), np.array([3, 3, 2], np.int32),
                          np.array([0, 2, 3], np.int32)), shape=(2, 4))
    before = (test.indices.copy(), test.indptr.copy(), test.data.copy())
    fi.ranking_metrics_at_k(model, train, test, K=2, show_progress=False)
    for a, b in zip(before, (test.indices, test.indptr, test.data)):
        np.testing.assert_array_equal(a, b)
    broken = test.copy()
    broken.indptr = np.array([0, 3, 2], np.int32)
    with pytest.raises(ValueError, match="test_user_items is a malformed CSR matrix"):
        fi.ranking_metrics_at_k(model, train, broken, K=2, show_progress=False)
    with pytest.raises(ValueError, match="train_user_items has shape"):
        fi.ranking_metrics_at_k(model, train[:1], test, K=2, show_progress=False)
    with pytest.raises(ZeroDivisionError) as nothing:
        fi.ranking_metrics_at_k(model, train, sp.csr_matrix((2, 4)), K=2, show_progress=False)
    assert isinstance(nothing.value, ValueError)
    del implicit


def test_callback_checks_its_inputs_when_built():
    with pytest.raises(TypeError, match="test must be a scipy.sparse matrix"):
        fi.EvalCallback(TEST.toarray(), ["ndcg@3"])
    with pytest.raises(TypeError, match="train must be a scipy.sparse matrix"):
        fi.EvalCallback(TEST, ["ndcg@3"], train=TEST.toarray())
    with pytest.raises(ValueError, match="min_delta must be finite"):
        fi.EvalCallback(TEST, ["ndcg@3"], min_delta=float("nan"))
    with pytest.raises(TypeError, match="min_delta must be a number"):
        fi.EvalCallback(TEST, ["ndcg@3"], min_delta="abc")


# -- arrays of the wrong kind ---------------------------------------------------------

@pytest.mark.parametrize("topk, error, match", [
    ([[0, 1], [2]], ValueError, "topk is ragged"),
    (TOPK.astype("timedelta64[s]"), TypeError, "topk must be an integer array"),
    (TOPK.astype(complex), TypeError, "topk must be an integer array"),
])
def test_topk_of_the_wrong_kind(topk, error, match):
    with pytest.raises(error, match=match):
        fr.evaluate(TRUTH, topk, ["ndcg@2"])


def test_users_of_the_wrong_kind_name_the_offending_value():
    with pytest.raises(TypeError, match="users must be an integer array"):
        fr.evaluate(TRUTH, TOPK, ["ndcg@2"], users=np.array([0, 1, 2], "timedelta64[s]"))
    with pytest.raises(ValueError, match=r"users contains 7, outside \[0, 3\)"):
        fr.evaluate(TRUTH, TOPK, ["ndcg@2"], users=[0, 7, 1])
    with pytest.raises(ValueError, match=r"users must be 1-D row numbers \(the rows of "
                                         r"truth\); got shape \(1, 1\)"):
        fr.AlphaBetaNDCG(TRUTH, sp.csr_array(np.eye(5, 2)), k=2, users=[[0]],
                         user_aspects=np.ones((3, 2)))


def test_aspect_side_inputs():
    aspects = sp.csr_array(np.eye(5, 2))
    dense = np.array([[1.0, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 0, 1, 0]])
    one = fr.ab_ndcg(TRUTH, TOPK, aspects, profile=dense)
    two = fr.ab_ndcg(TRUTH, TOPK, aspects, profile=sp.csr_array(dense))
    np.testing.assert_array_equal(one.per_user("ab_ndcg@3"), two.per_user("ab_ndcg@3"))
    with pytest.raises(TypeError, match="user_aspects must be a 2-D numeric array"):
        fr.ab_ndcg(TRUTH, TOPK, aspects, user_aspects=np.ones((3, 2), complex))
    with pytest.raises(TypeError, match="clip must be True or False"):
        fr.ab_ndcg(TRUTH, TOPK, aspects, user_aspects=np.ones((3, 2)), clip="no")
    with pytest.raises(TypeError, match="item_vectors must hold real numbers"):
        fr.evaluate(TRUTH, TOPK, ["ild@3"], item_vectors=np.ones((5, 2), complex))
    nan_train = TRUTH.copy()
    nan_train.data[0] = np.nan
    with pytest.raises(ValueError, match="train contains NaN"):
        fr.evaluate(TRUTH, TOPK, ["novelty@3"], train=nan_train)


@pytest.mark.parametrize("k", [2.0, 1.5, np.float64(2), "2", b"2", np.array(2.5), object()])
@pytest.mark.parametrize("call", [
    lambda k: fr.ab_ndcg(TRUTH, TOPK, sp.csr_array(np.eye(5, 2)), k=k, profile=TRUTH),
    lambda k: fr.alpha_ndcg(TRUTH, TOPK, sp.csr_array(np.eye(5, 2)), k=k),
    lambda k: fr.AlphaBetaNDCG(TRUTH, sp.csr_array(np.eye(5, 2)), k=k, profile=TRUTH),
])
def test_a_cutoff_that_is_not_an_int_is_named(call, k):
    """A scalar cutoff that is not an int is refused by name (a float was iterated: "'float'
    object is not iterable"); a string is one cutoff, not a sequence of characters."""
    with pytest.raises(TypeError, match="k must be an int >= 1; got"):
        call(k)


def test_a_cutoff_as_a_0d_int_array_and_users_as_an_empty_list():
    aspects = sp.csr_array(np.eye(5, 2))
    np.testing.assert_array_equal(
        fr.alpha_ndcg(TRUTH, TOPK, aspects, k=np.array(2)).per_user("alpha_ndcg@2"),
        fr.alpha_ndcg(TRUTH, TOPK, aspects, k=2).per_user("alpha_ndcg@2"))
    # `[]` is float64 to numpy, not to the caller: no rows, as np.zeros(0, int) is
    ev = fr.Evaluator(TRUTH, ["ndcg@3"])
    ev.update([], np.zeros((0, 3), np.int64))
    ev.update([0, 1, 2], TOPK)
    assert ev.result()["ndcg@3"] == fr.evaluate(TRUTH, TOPK, ["ndcg@3"])["ndcg@3"]
    with pytest.raises(TypeError, match="users must be an integer array"):
        ev.update(np.zeros(0), np.zeros((0, 3), np.int64))  # a float array the caller made


# -- several Python threads at once ---------------------------------------------------

def test_python_threads_with_different_thread_counts_agree_bit_for_bit():
    truth, topk = power_law(3000, 200, 10, seed=9)
    metrics = ["ndcg@10", "map@5", "auc@10", "recall@3"]
    expected = fr.evaluate(truth, topk, metrics, n_threads=1)
    import numba

    before = numba.get_num_threads()
    failures = []

    def work(n_threads):
        for _ in range(10):
            res = fr.evaluate(truth, topk, metrics, n_threads=n_threads)
            for label in metrics:
                if not np.array_equal(res.per_user(label), expected.per_user(label),
                                      equal_nan=True):
                    failures.append((n_threads, label))

    threads = [threading.Thread(target=work, args=(1 + i % 2,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and numba.get_num_threads() == before


# -- inputs are never modified --------------------------------------------------------

@given(st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_inputs_are_never_modified(seed):
    rng = np.random.default_rng(seed)
    truth = sp.random_array((20, 15), density=0.3, rng=rng, format="coo")
    truth = sp.csr_matrix((truth.data, (truth.row, truth.col)), shape=(20, 15))
    truth.indices = truth.indices[::-1].copy()  # unsorted: fastrank works on a copy
    topk = rng.integers(-1, 15, (20, 4))
    topk.flags.writeable = False
    saved = [a.copy() for a in (truth.indptr, truth.indices, truth.data)]
    fr.evaluate(truth, topk, ["ndcg@4", "coverage@4", "novelty@2"], train=truth)
    fr.Evaluator(truth, ["map@3"]).update(None, topk).result()
    for a, b in zip(saved, (truth.indptr, truth.indices, truth.data)):
        np.testing.assert_array_equal(a, b)


def test_ndcg_exp_of_huge_grades_is_finite_and_exact():
    """2^rel - 1 overflows past rel = 1024; the ratio is still well defined."""
    from fractions import Fraction

    truth = sp.csr_array(np.array([[2000.0, 1999.0, 3.0, 0.0], [1.0, 0.0, 2.0, 5.0]]))
    topk = np.array([[1, 0, 2], [3, 2, 0]])
    res = fr.evaluate(truth, topk, ["ndcg_exp@3", "ndcg_exp@2"])

    def exact(grades_ranked, grades_all, k):
        def dcg(grades):
            return sum(Fraction(2 ** int(g) - 1) * Fraction(1 / np.log2(i + 2))
                       for i, g in enumerate(grades[:k]))
        return float(dcg(grades_ranked) / dcg(sorted(grades_all, reverse=True)))

    for k in (2, 3):
        values = res.per_user(f"ndcg_exp@{k}")
        assert np.isfinite(values).all()
        assert values[0] == pytest.approx(exact([1999, 2000, 3], [2000, 1999, 3], k), rel=1e-12)
        assert values[1] == pytest.approx(exact([5, 2, 1], [5, 2, 1], k), rel=1e-12)


# -- second round: the ends of int64 and float64, files, paths, messages --------------

def test_lengths_past_2_to_the_62_are_refused_by_name():
    for k in (2**63, np.uint64(2**64 - 1)):
        with pytest.raises(ValueError, match="k must be at most 2\\*\\*62"):
            fr.Evaluator(TRUTH, ["ndcg"], k=k)
        with pytest.raises(ValueError, match="k must be at most 2\\*\\*62"):
            fr.AlphaBetaNDCG(TRUTH, sp.csr_array(np.eye(5, 2)), k=k,
                             user_aspects=np.ones((3, 2)))
    with pytest.raises(ValueError, match="not below 2\\*\\*62, the bound of every cutoff"):
        fr.evaluate_factors(U, V, TEST, ["ndcg@9223372036854775808"])
    # 2**62 itself too: a request without a cutoff stands for it, and the message was a
    # list length of 1
    with pytest.raises(ValueError, match="not below 2\\*\\*62, the bound of every cutoff"):
        fr.Evaluator(TRUTH, [f"ndcg@{2**62}"])


def test_a_list_length_longer_than_the_lists():
    """fr.evaluate(k=): lists narrower than k end early, as Tables.evaluate uses it."""
    res = fr.evaluate(TRUTH, TOPK, ["ndcg@5", "precision@5", "map"], k=5)
    wide = np.pad(TOPK, ((0, 0), (0, 2)), constant_values=-1)
    same = fr.evaluate(TRUTH, wide, ["ndcg@5", "precision@5", "map"])
    for label in ("ndcg@5", "precision@5", "map"):
        np.testing.assert_array_equal(res.per_user(label), same.per_user(label))
    assert res.k == 5
    from fastrank import io

    data = io.from_tables({"user": [1], "item": [2], "relevance": [1.0]},
                          {"user": np.array([], int), "item": np.array([], int),
                           "score": np.array([])}, k=5)
    assert data.evaluate(["ndcg@5"])["ndcg@5"] == 0.0  # no recommendation: scores 0


def test_catalogue_metrics_of_no_counted_user_are_nan_as_every_mean():
    """coverage and gini over no counted user (before any block, or no user with a
    relevant item) are NaN like the other means: a gini of 0 reads as equal exposure.
    Counted users whose lists are all padding show nothing: coverage 0, gini 0."""
    labels = ["coverage@2", "gini@2", "ndcg@2"]
    res = fr.Evaluator(TRUTH, labels, k=2).result()
    assert all(np.isnan(res[label]) for label in labels)
    nobody = fr.evaluate(sp.csr_array((3, 5)), np.zeros((3, 2), np.int64), labels)
    assert all(np.isnan(nobody[label]) for label in labels) and nobody.n_users == 0
    empty = fr.evaluate(sp.csr_array(np.eye(3, 5)), np.full((3, 2), -1), labels)
    assert empty["coverage@2"] == 0.0 and empty["gini@2"] == 0.0 and empty["ndcg@2"] == 0.0


def test_per_user_outputs_too_large_for_memory_are_refused(monkeypatch):
    import fastrank.validation as validation

    monkeypatch.setattr(validation, "physical_memory", lambda: 200_000)
    with pytest.raises(ValueError, match="the per-user values of .* metrics for 10,000 users "
                                         "would need"):
        fr.Evaluator(sp.csr_array((10_000, 5)), ["ndcg@2", "map@2"]).update([0], TOPK[:1])
    truth, topk = power_law(200, 30, 40, seed=1)
    with pytest.raises(ValueError, match="per-user values of 81 metrics for 200 users"):
        fr.evaluate(truth, topk, ["ndcg", "map@3"], curves=True)


def test_ndcg_of_huge_linear_grades_is_exact():
    truth = sp.csr_array(np.array([[1e308, 1e308, 1e308, 0.0]]))
    ones = sp.csr_array(np.array([[1.0, 1.0, 1.0, 0.0]]))
    for lists in ([[2, 1, 0]], [[0, 3, 1]]):
        big = fr.evaluate(truth, np.array(lists), ["ndcg@3", "ndcg"])
        small = fr.evaluate(ones, np.array(lists), ["ndcg@3", "ndcg"])
        assert big.to_dict() == small.to_dict()
    assert fr.evaluate(truth, np.array([[2, 1, 0]]), ["dcg@3"])["dcg@3"] == np.inf


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300])
def test_rmse_and_mae_at_the_ends_of_float64(scale):
    truth = sp.csr_array(np.array([[3.0, 0.0, 4.0], [0.0, 1.0, 0.0]]) * scale)
    zeros = np.zeros(3)
    for fn, name, per_user, pooled in (
            (fr.rmse, "rmse", [np.sqrt(12.5), 1.0], np.sqrt(26 / 3)),
            (fr.mae, "mae", [3.5, 1.0], 8 / 3)):
        res = fn(truth, zeros)
        np.testing.assert_allclose(res.per_user(name), np.array(per_user) * scale, rtol=1e-14)
        assert res[name] == pytest.approx(pooled * scale, rel=1e-14)


def test_aspect_weights_far_from_one_are_refused():
    aspects = sp.csr_array(np.eye(5, 3))
    with pytest.raises(ValueError, match=r"profile holds 1e\+308, outside \[2\*\*-1000"):
        fr.ab_ndcg(TRUTH, TOPK, aspects,
                   profile=sp.csr_array(np.array([[1e308, 1e308, 0, 0, 0]] * 3)))
    with pytest.raises(ValueError, match="user_aspects holds"):
        fr.ab_ndcg(TRUTH, TOPK, aspects, user_aspects=np.full((3, 3), 1e-320))
    with pytest.raises(ValueError, match="truth holds"):
        fr.ab_ndcg(TRUTH * 1e-320, TOPK, aspects, user_aspects=np.ones((3, 3)))


def test_integer_scores_and_ranks_past_2_to_the_53_keep_their_order():
    """Scores and ranks past 2**53 are compared exactly: no false tie (in float64 both
    ranks would be 2**53). Such ranks are positions no list reaches: refused as such, or
    cut by k."""
    from fastrank import io

    truth = {"user": [1], "item": [1], "relevance": [1.0]}
    big = np.array([2**53 + 1, 2**53], np.int64)
    scored = io.from_tables(truth, {"user": [1, 1], "item": [1, 2], "score": big})
    assert scored.evaluate(["precision@1"])["precision@1"] == 1.0
    with pytest.raises(ValueError, match="gives user 1 rank 9007199254740993: a rank is a "
                                         "position"):
        io.from_tables(truth, {"user": [1, 1], "item": [1, 2], "rank": big})
    ranked = io.from_tables(truth, {"user": [1, 1, 1], "item": [1, 2, 3],
                                    "rank": np.append(big, 1)}, k=2)
    assert ranked.items[ranked.topk[0]].tolist() == [3]
    with pytest.raises(ValueError, match="gives rank 9007199254740993 twice for user 1"):
        io.from_tables(truth, {"user": [1, 1], "item": [1, 2], "rank": big[[0, 0]]})


def test_timedelta_ids_from_a_model_are_refused():
    class Model:
        def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
            return np.zeros((len(userids), 2), "m8[s]"), None

    with pytest.raises(TypeError, match="model.recommend returned item ids of dtype "
                                        "timedelta64"):
        fr.evaluate_model(Model(), TEST, ["ndcg@2"], show_progress=False)


def test_messages_name_the_offending_values():
    with pytest.raises(ValueError, match=r"users contains 7, outside \[0, 6\), the rows of "
                                         r"user_factors"):
        fr.topk(U, V, 3, users=[0, 7])
    with pytest.raises(ValueError, match=r"baseline contains item id 9, outside \[-1, 5\)"):
        fr.evaluate(TRUTH, TOPK, ["serendipity@2"], baseline=[9])
    bad = TRUTH.copy()
    bad.indices = bad.indices.copy()
    bad.indices[0] = 11
    with pytest.raises(ValueError, match=r"column indices must lie in \[0, 5\); found 11"):
        fr.evaluate(bad, TOPK, ["ndcg@2"])


def test_paths_that_cannot_be_files(tmp_path):
    from fastrank import io, trec

    with pytest.raises(ValueError, match="cannot be read"):
        io.read_qrels(tmp_path / ("a" * 300))
    with pytest.raises(TypeError, match="qrels must be a file path"):
        trec.evaluate_files(5, tmp_path / "r")
    with pytest.raises(ValueError, match="no judgments"):  # a device is read like a file
        io.read_qrels("/dev/null")
    qrels = tmp_path / "q"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "r"
    run.write_text("1 Q0 a 1 1 r\n")
    with pytest.raises(TypeError, match="qrels must be a fastrank.io.Qrels .* got Run"):
        io.trec_arrays(io.read_run(run), io.read_qrels(qrels))
    res = fr.evaluate(TRUTH, TOPK, ["ndcg"], curves=True)
    for path, match in ((tmp_path / "missing" / "x.png", "does not exist"),
                        (tmp_path / "x", "has no suffix"), (tmp_path, "has no suffix"),
                        (tmp_path / "x.xyz", "a format that cannot be written")):
        with pytest.raises(ValueError, match=match):
            res.plot("ndcg", path=path)


def test_columns_numpy_cannot_hold_are_named():
    pl = pytest.importorskip("polars")
    from fastrank import io

    table = pl.DataFrame({"user": pl.Series([1, 2], dtype=pl.Int128), "item": [1, 2],
                          "relevance": [1.0, 1.0]})
    with pytest.raises(TypeError, match="truth column 'user' cannot be read as a numpy array"):
        io.from_tables(table, table.rename({"relevance": "score"}))


@pytest.mark.slow
def test_concurrent_calls_take_turns_on_numba_s_workqueue_layer():
    """Without OpenMP or TBB numba's workqueue layer aborts the process when two Python
    threads run parallel kernels at once: fastrank's callers take turns there."""
    import os
    import subprocess
    import sys

    script = (
        "import threading, numpy as np, fastrank as fr, numba\n"
        "from fastrank.synthetic import power_law\n"
        "truth, topk = power_law(2000, 100, 10, seed=1)\n"
        "want = fr.evaluate(truth, topk, ['ndcg@10']).per_user('ndcg@10')\n"
        "assert numba.threading_layer() == 'workqueue'\n"
        "bad = []\n"
        "def work(n):\n"
        "    for _ in range(20):\n"
        "        got = fr.evaluate(truth, topk, ['ndcg@10'], n_threads=n)\n"
        "        bad.append(not np.array_equal(got.per_user('ndcg@10'), want, equal_nan=True))\n"
        "ts = [threading.Thread(target=work, args=(1 + i % 2,)) for i in range(4)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "assert not any(bad)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "NUMBA_THREADING_LAYER": "workqueue"})
    assert done.returncode == 0, done.stderr[-2000:]
