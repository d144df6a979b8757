"""fastrank.implicit and fr.evaluate_model against real implicit models (CPU)."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastrank as fr
import fastrank.implicit as fi
from fastrank.synthetic import power_law

implicit = pytest.importorskip("implicit")
from implicit.als import AlternatingLeastSquares  # noqa: E402
from implicit.bpr import BayesianPersonalizedRanking  # noqa: E402
from implicit.evaluation import ranking_metrics_at_k as implicit_metrics  # noqa: E402
from implicit.evaluation import train_test_split  # noqa: E402
from implicit.nearest_neighbours import CosineRecommender  # noqa: E402

NAMES = ("precision", "map", "ndcg", "auc")


def int32_csr(matrix):
    matrix = sp.csr_matrix(matrix, dtype=np.float32)
    matrix.indptr = matrix.indptr.astype(np.int32)
    matrix.indices = matrix.indices.astype(np.int32)
    return matrix


@pytest.fixture(scope="module")
def split():
    truth, _ = power_law(3000, 800, 10, seed=7, max_relevant=60)
    train, test = train_test_split(int32_csr(truth), 0.8, random_state=1)
    return int32_csr(train), int32_csr(test)


@pytest.fixture(scope="module")
def als(split):
    model = AlternatingLeastSquares(factors=16, iterations=4, random_state=0,
                                    num_threads=1)
    model.fit(split[0], show_progress=False)
    return model


def assert_same_metrics(ours, theirs):
    assert ours.keys() == theirs.keys()
    assert ours["precision"] == theirs["precision"]  # ratio of two integer counts
    for name in NAMES:
        assert_allclose(ours[name], theirs[name], rtol=1e-12)


@pytest.mark.parametrize("k", [1, 5, 10, 40])
@pytest.mark.slow
def test_drop_in_equals_implicit_on_als(als, split, k):
    train, test = split
    ours = fi.ranking_metrics_at_k(als, train, test, K=k, show_progress=False)
    assert_same_metrics(ours, implicit_metrics(als, train, test, K=k, show_progress=False))


def test_drop_in_equals_implicit_on_bpr(split):
    train, test = split
    bpr = BayesianPersonalizedRanking(factors=8, iterations=5, random_state=0, num_threads=1)
    bpr.fit(train, show_progress=False)
    ours = fi.ranking_metrics_at_k(bpr, train, test, K=10, show_progress=False)
    assert_same_metrics(ours, implicit_metrics(bpr, train, test, K=10, show_progress=False))


# implicit's CosineRecommender.fit normalises the matrix to COO and warns about it itself
@pytest.mark.filterwarnings("ignore:Method expects CSR input:Warning:implicit")
def test_drop_in_on_item_knn_drops_the_training_items_it_pads_with(split):
    """implicit's item-kNN pads short lists with the user's own training items (score 0)
    even when asked to filter them; implicit's metrics count those slots as misses, which
    moves map and auc. fastrank treats them as empty slots; precision agrees exactly."""
    train, test = split
    knn = CosineRecommender(K=20)
    knn.fit(train, show_progress=False)
    ours = fi.ranking_metrics_at_k(knn, train, test, K=10, show_progress=False)
    theirs = implicit_metrics(knn, train, test, K=10, show_progress=False)
    assert ours["precision"] == theirs["precision"]
    users = np.flatnonzero(np.diff(test.indptr)).astype(np.int32)
    ids, _ = knn.recommend(users, train[users], N=10)
    ids = np.where(np.asarray(train[np.repeat(users, 10), ids.ravel()]).reshape(ids.shape) != 0,
                   -1, ids)
    assert (ids == -1).any()  # the case this test is about does occur
    expected = fr.evaluate(test, ids, [f"{n}@10" for n in NAMES], convention="implicit",
                           users=users)
    for name in NAMES:
        assert_allclose(ours[name], expected[f"{name}@10"], rtol=1e-12)


def test_test_rows_past_the_models_users_without_entries_are_left_out_as_by_implicit(split):
    """A model that knows fewer users than test has rows: implicit only ever asks for
    users with a test entry, and so gives its values where the rows past the model's
    users are empty; fastrank refused every such call."""
    train, test = split
    model = AlternatingLeastSquares(factors=8, iterations=2, random_state=0, num_threads=1)
    model.fit(train[:2500], show_progress=False)
    head = int32_csr(sp.vstack([test[:2500], sp.csr_matrix((500, test.shape[1]))]))
    for k in (5, 10):
        ours = fi.ranking_metrics_at_k(model, train, head, K=k, show_progress=False)
        assert_same_metrics(ours, implicit_metrics(model, train, head, K=k,
                                                   show_progress=False))
    res = fr.evaluate_model(model, head, ["ndcg@10"], train=train, show_progress=False)
    assert res.per_user("ndcg@10").shape == (3000,)
    assert np.isnan(res.per_user("ndcg@10")[2500:]).all()
    with pytest.raises(ValueError, match=r"knows 2500 users, and row 25\d\d has test entries"
                                         r".*test\[:2500\]"):
        fi.ranking_metrics_at_k(model, train, test, K=10, show_progress=False)


def test_single_metric_functions(als, split):
    train, test = split
    full = fi.ranking_metrics_at_k(als, train, test, K=5, show_progress=False)
    assert fi.precision_at_k(als, train, test, K=5, show_progress=False) == full["precision"]
    assert fi.mean_average_precision_at_k(als, train, test, 5, False) == full["map"]
    assert fi.ndcg_at_k(als, train, test, K=5, show_progress=False) == full["ndcg"]
    assert fi.AUC_at_k(als, train, test, K=5, show_progress=False) == full["auc"]


def test_int64_indices_work_where_implicit_fails(als, split):
    train, test = split
    wide_train, wide_test = sp.csr_matrix(train), sp.csr_matrix(test)
    for m in (wide_train, wide_test):
        m.indptr = m.indptr.astype(np.int64)
        m.indices = m.indices.astype(np.int64)
    with pytest.raises(ValueError):
        implicit_metrics(als, wide_train, wide_test, K=10, show_progress=False)
    assert fi.ranking_metrics_at_k(als, wide_train, wide_test, K=10, show_progress=False) == \
        fi.ranking_metrics_at_k(als, train, test, K=10, show_progress=False)


@pytest.mark.slow
def test_k_beyond_the_catalogue_counts_no_filler(als, split):
    """implicit scores filler slots as items (item 0, then the user's training items);
    fastrank leaves them empty: equal to evaluating honest lists with -1 padding."""
    train, test = split
    n_items = train.shape[1]
    k = n_items + 5
    ours = fi.ranking_metrics_at_k(als, train, test, K=k, show_progress=False)
    users = np.flatnonzero(np.diff(test.indptr)).astype(np.int32)
    ids, scores = als.recommend(users, train[users], N=k)
    ids[scores == -np.finfo(np.float32).max] = -1  # filtered items, returned as filler
    ids[:, n_items:] = -1                          # slots past the catalogue: item 0
    liked = sp.csr_array((np.ones(test.nnz), test.indices, test.indptr), shape=test.shape)
    expected = fr.evaluate(liked, ids, [f"{n}@{k}" for n in NAMES], convention="implicit",
                           users=users)
    for name in NAMES:
        assert_allclose(ours[name], expected[f"{name}@{k}"], rtol=1e-12)
    assert ours["precision"] != implicit_metrics(als, train, test, K=k,
                                                 show_progress=False)["precision"]
    # any K past the catalogue ranks all of it: the same numbers, up to K's bound 2**62
    assert fi.ranking_metrics_at_k(als, train, test, K=2**62, show_progress=False) == ours


def test_evaluate_model_mf_path_equals_model_recommend(als, split):
    train, test = split
    metrics = ["ndcg@10", "map@10", "recall@20", "auc@20"]
    res = fr.evaluate_model(als, test, metrics, train=train, ties="implicit",
                            show_progress=False)
    users = np.flatnonzero(np.diff(test.indptr))
    ids, _ = als.recommend(users, train[users], N=20)
    expected = fr.evaluate(test, ids, metrics, users=users)
    for name in metrics:
        assert_allclose(res.per_user(name)[users], expected.per_user(name), rtol=1e-12)
        assert res[name] == pytest.approx(expected[name], rel=1e-12)


class Wrapped:
    """A model that is not implicit's: only `recommend`, delegating to another model."""

    def __init__(self, inner):
        self.inner = inner
        self.asked = []

    def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
        self.asked.extend(np.asarray(userids).tolist())
        return self.inner.recommend(userids, user_items, N=N,
                                    filter_already_liked_items=filter_already_liked_items)


def test_evaluate_model_generic_path_equals_fused_path(als, split, capsys):
    train, test = split
    metrics = ["ndcg@10", "precision@5", "mrr@10"]
    model = Wrapped(als)
    generic = fr.evaluate_model(model, test, metrics, train=train, batch_size=700)
    fused = fr.evaluate_model(als, test, metrics, train=train, ties="implicit",
                              show_progress=False)
    for name in metrics:
        assert_allclose(generic.per_user(name), fused.per_user(name), rtol=1e-12)
    assert sorted(model.asked) == np.flatnonzero(np.diff(test.indptr)).tolist()
    assert "users" in capsys.readouterr().err  # the progress bar
    with pytest.raises(ValueError, match="needs the score of every item"):
        fr.evaluate_model(model, test, ["auc"], train=train, show_progress=False)


def test_generic_path_drops_filler_ids():
    """A model that pads with training items and item 0, as implicit does."""
    truth = sp.csr_array(np.array([[0, 1, 0, 1], [1, 0, 0, 0]], dtype=np.float64))
    train = sp.csr_array(np.array([[1, 0, 1, 0], [0, 1, 1, 1]], dtype=np.float64))

    class Filler:
        def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
            ids = np.array([[3, 1, 0, 2, 0, 0], [0, 1, 2, 3, 0, 0]], dtype=np.int32)
            return ids[np.asarray(userids)][:, :N], np.zeros((len(userids), N))

    res = fr.evaluate_model(Filler(), truth, ["precision@6", "hit_rate@6"], train=train,
                            show_progress=False)
    # user 0: items 3 and 1 are real, 0 and 2 were trained on, the rest is filler
    assert res.per_user("precision@6")[0] == pytest.approx(2 / 6)
    # user 1: only item 0 is admissible; it is a hit
    assert res.per_user("hit_rate@6")[1] == 1.0


class Fixed:
    """A model that returns given lists whatever it is asked (it may ignore filtering)."""

    def __init__(self, lists):
        self.lists = np.asarray(lists, dtype=np.int32)  # as implicit returns them

    def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
        ids = self.lists[np.asarray(userids)][:, :N]
        return ids, np.zeros(ids.shape, np.float32)


@pytest.mark.parametrize("lists, train, test, k", [
    # filler (-1) first: the real items after it keep their ranks
    ([[-1, 0, 1]], [[0, 0]], [[0, 1]], 3),
    # the model ignores filter_already_liked_items: training item 0 comes back first
    ([[0, 1, 2, 3]], [[1, 0, 0, 0]], [[0, 0, 0, 1]], 4),
    # an id past the catalogue and a repeat before the hit
    ([[5, 2, 2, 1, 3]], [[0, 0, 0, 0]], [[0, 0, 0, 1]], 5),
])
def test_drop_in_keeps_the_items_after_filler(lists, train, test, k):
    """Only the filler slot itself is empty: precision, map and ndcg equal implicit's."""
    model = Fixed(lists)
    train, test = int32_csr(np.array(train)), int32_csr(np.array(test))
    ours = fi.ranking_metrics_at_k(model, train, test, K=k, show_progress=False)
    theirs = implicit_metrics(model, train, test, K=k, show_progress=False)
    for name in ("precision", "map", "ndcg"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-12)
    assert ours["precision"] == 1.0


def test_generic_path_equals_implicit_where_no_filler_is_relevant():
    """Random lists with filler anywhere (-1, ids past the catalogue, repeats, unfiltered
    training items): precision, map and ndcg equal implicit's whenever implicit does not
    count a filler slot as a hit, i.e. no relevant item repeats in a list."""
    rng = np.random.default_rng(11)
    n_users, n_items, k = 60, 9, 6
    held = rng.random((n_users, n_items)) < 0.3
    trained = (rng.random((n_users, n_items)) < 0.3) & ~held
    held[held.sum(axis=1) == 0, 0] = True
    trained[:, 0] &= ~held[:, 0]
    lists = rng.integers(-1, n_items + 2, (n_users, k))
    repeats = np.array([len(set(row[held[u, np.clip(row, 0, n_items - 1)] & (row >= 0)
                                    & (row < n_items)])) != np.count_nonzero(
        held[u, np.clip(row, 0, n_items - 1)] & (row >= 0) & (row < n_items))
        for u, row in enumerate(lists)])
    lists[repeats] = -1  # keep only users where implicit counts no hit twice
    model = Fixed(lists)
    train, test = int32_csr(trained), int32_csr(held)
    ours = fi.ranking_metrics_at_k(model, train, test, K=k, show_progress=False)
    theirs = implicit_metrics(model, train, test, K=k, show_progress=False)
    for name in ("precision", "map", "ndcg"):
        assert ours[name] == pytest.approx(theirs[name], rel=1e-12)
    # and every user as the formula on the lists with only the filler slots emptied
    clean = np.where((lists < 0) | (lists >= n_items), -1, lists)
    clean[(clean >= 0) & trained[np.arange(n_users)[:, None], np.clip(clean, 0, None)]] = -1
    res = fr.evaluate_model(model, test, [f"{n}@{k}" for n in NAMES], train=train,
                            convention="implicit", show_progress=False)
    expected = fr.evaluate(sp.csr_array(held.astype(float)), clean,
                           [f"{n}@{k}" for n in NAMES], convention="implicit")
    for name in NAMES:
        assert_array_equal(res.per_user(f"{name}@{k}"), expected.per_user(f"{name}@{k}"))


@pytest.mark.parametrize("answer, error, match", [
    ((np.array([[0.0, 1.0]]), None), TypeError, "model.recommend returned item ids of dtype"),
    ((np.array([[0, None]], dtype=object), None), TypeError, "model.recommend"),
    ((np.array([[0, np.nan]]), None), TypeError, "model.recommend"),
    ((np.array([[0, 1], [1, 0]]), None), ValueError, r"shape \(2, 2\) for 1 users"),
    (np.array([[0, 1]]), TypeError, r"must return \(ids, scores\)"),
    (([[0, 1], [1]], None), ValueError, "ragged"),
])
def test_model_output_errors_name_recommend(answer, error, match):
    class Odd:
        def recommend(self, userids, user_items, N=10, filter_already_liked_items=True):
            return answer

    truth = sp.csr_array(np.array([[0.0, 1.0]]))
    with pytest.raises(error, match=match):
        fr.evaluate_model(Odd(), truth, ["ndcg@2"], show_progress=False)


def test_evaluate_model_default_ties_equal_evaluate_factors(als, split):
    train, test = split
    metrics = ["ndcg@10", "recall@20", "auc"]
    res = fr.evaluate_model(als, test, metrics, train=train, show_progress=False)
    fused = fr.evaluate_factors(als.user_factors, als.item_factors, test, metrics,
                                exclude=train)
    for name in metrics:
        assert_array_equal(res.per_user(name), fused.per_user(name))


def test_callback_history_matches_evaluation_after_fit(split):
    train, test = split
    model = AlternatingLeastSquares(factors=8, iterations=4, random_state=0, num_threads=1)
    cb = fi.EvalCallback(test, ["ndcg@10", "auc"], train=train, every=2)
    model.fit(train, callback=cb, show_progress=False)
    assert [h["iteration"] for h in cb.history] == [2, 4]
    final = fr.evaluate_model(model, test, ["ndcg@10", "auc"], train=train,
                              show_progress=False)
    assert cb.history[-1]["ndcg@10"] == final["ndcg@10"]
    assert cb.history[-1]["auc"] == final["auc"]
    assert all(h["train_seconds"] > 0 and h["eval_seconds"] > 0 for h in cb.history)


class _Warming:
    def __init__(self, calls, kwargs):
        self.kwargs, self.calls = kwargs, calls

    def wait(self, timeout=None):
        self.calls.append("wait")
        return True


def test_callback_warms_up_what_its_evaluations_compile(split, monkeypatch):
    """At construction the callback starts fr.warm_up for its metrics, the test's dtypes
    and the model's factors (float32 without a model: implicit's default), and its first
    evaluation waits for it, once."""
    train, test = split
    calls = []
    monkeypatch.setattr(fi, "warm_up", lambda metrics, **kwargs: calls.append(
        (metrics, kwargs)) or _Warming(calls, kwargs))
    model = AlternatingLeastSquares(factors=8, iterations=2, random_state=0, num_threads=1,
                                    dtype=np.float64)
    cb = fi.EvalCallback(test, ["ndcg@10", "auc"], train=train, model=model,
                         convention="trec", warm=True)
    metrics, kwargs = calls[0]
    assert metrics == ["ndcg@10", "auc"]
    assert kwargs == dict(convention="trec", n_users=test.shape[0], values=test.dtype,
                          indices=test.indices.dtype, factors=np.float64,
                          exclude=train.indices.dtype)
    model.fit(train, callback=cb, show_progress=False)
    assert calls[1:] == ["wait"] and len(cb.history) == 2
    assert fi.EvalCallback(test, ["ndcg@10"], warm=True)._warming.kwargs["factors"] == \
        np.float32
    assert fi.EvalCallback(test, ["ndcg@10"], warm=True)._warming.kwargs["exclude"] is False
    del calls[:]
    fi.EvalCallback(test, ["ndcg@10"], warm=False)
    assert calls == []
    # by default only where training leaves a core to the compile
    monkeypatch.setattr(fi.os, "cpu_count", lambda: 2)
    fi.EvalCallback(test, ["ndcg@10"])
    assert calls == []
    monkeypatch.setattr(fi.os, "cpu_count", lambda: 8)
    fi.EvalCallback(test, ["ndcg@10"])
    assert len(calls) == 1
    with pytest.raises(TypeError, match="warm"):
        fi.EvalCallback(test, ["ndcg@10"], warm="no")


@pytest.mark.parametrize("kind", ["bpr", "lmf"])
def test_callback_on_bpr_and_lmf(split, kind):
    """BPR calls a callback with (epoch, seconds, correct, skipped), LMF with (epoch,
    seconds); both fit in compiled code, where the callback cannot find the model."""
    from implicit.bpr import BayesianPersonalizedRanking
    from implicit.lmf import LogisticMatrixFactorization

    train, test = split
    make = BayesianPersonalizedRanking if kind == "bpr" else LogisticMatrixFactorization
    model = make(factors=8, iterations=2, random_state=0, num_threads=1)
    cb = fi.EvalCallback(test, ["ndcg@10"], train=train).fit(model, train,
                                                            show_progress=False)
    assert [h["iteration"] for h in cb.history] == [1, 2]
    final = fr.evaluate_model(model, test, ["ndcg@10"], train=train, show_progress=False)
    assert cb.history[-1]["ndcg@10"] == final["ndcg@10"]
    assert all(h["loss"] is None for h in cb.history)
    if kind == "bpr":
        assert all(h["correct"] > 0 and h["skipped"] >= 0 for h in cb.history)
    else:
        assert "correct" not in cb.history[0]
    with pytest.raises(TypeError, match="pass model= to EvalCallback"):
        make(factors=8, iterations=1, random_state=0).fit(
            train, callback=fi.EvalCallback(test, ["ndcg@10"], warm=False),
            show_progress=False)


def test_early_stopping_keeps_the_best_factors(split):
    train, test = split
    # Nearly unregularised wide ALS overfits after its first iterations.
    model = AlternatingLeastSquares(factors=64, iterations=25, regularization=1e-4,
                                    random_state=0, num_threads=1)
    cb = fi.EvalCallback(test, ["ndcg@10"], train=train, patience=2)
    cb.fit(model, train, show_progress=False)
    assert cb.stopped_iteration is not None and cb.stopped_iteration < 25
    assert cb.stopped_iteration - cb.best_iteration == 2
    assert len(cb.history) == cb.stopped_iteration
    values = [h["ndcg@10"] for h in cb.history]
    assert cb.best_value == max(values)
    restored = fr.evaluate_model(model, test, ["ndcg@10"], train=train, show_progress=False)
    assert restored["ndcg@10"] == cb.best_value


def test_callback_bad_arguments(split):
    train, test = split
    with pytest.raises(ValueError, match="monitor"):
        fi.EvalCallback(test, ["ndcg@10"], monitor="map@10")
    with pytest.raises(ValueError, match="patience"):
        fi.EvalCallback(test, ["ndcg@10"], patience=0)
    with pytest.raises(ValueError, match="every"):
        fi.EvalCallback(test, ["ndcg@10"], every=0)
    with pytest.raises(ValueError, match="needs a cutoff"):
        fi.EvalCallback(test, ["ndcg"])


def test_drop_in_bad_arguments(als, split):
    train, test = split
    with pytest.raises(ValueError, match="K must be at least 1"):
        fi.ranking_metrics_at_k(als, train, test, K=0)
    with pytest.raises(TypeError, match="test_user_items must be a scipy.sparse"):
        fi.ranking_metrics_at_k(als, train, test.toarray())
    with pytest.raises(ValueError, match="train_user_items has shape"):
        fi.ranking_metrics_at_k(als, train[:, :10], test)
