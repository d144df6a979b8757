"""fastrank against independent tools: pytrec_eval (trec), implicit (implicit), scikit-learn."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

import fastrank as fr
from bench.vs_implicit import FixedModel

pytrec_eval = pytest.importorskip("pytrec_eval")


def random_case(seed, n_users=60, n_items=40, k=10, grades=(0, 1, 2, 3), p=0.15, pad=True):
    """Truth with graded values (stored zeros included) and lists of distinct ids."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n_users, n_items)) < p
    values = rng.choice(grades, size=(n_users, n_items))
    rows, cols = np.nonzero(mask)
    truth = sp.csr_array((values[rows, cols].astype(np.float64), (rows, cols)),
                         shape=(n_users, n_items))
    topk = np.argsort(rng.random((n_users, n_items)), axis=1)[:, :k]
    if pad:  # shorten some lists with -1 padding, leaving at least one id
        lengths = rng.integers(1, k + 1, n_users)
        topk[np.arange(k)[None, :] >= lengths[:, None]] = -1
    return truth, topk


TREC_MEASURES = {  # fastrank label -> pytrec_eval key, at K = 10
    "precision@5": "P_5", "precision@10": "P_10", "recall@5": "recall_5",
    "map@5": "map_cut_5", "map": "map", "mar@10": "map", "ndcg@5": "ndcg_cut_5",
    "ndcg@10": "ndcg_cut_10", "ndcg": "ndcg", "mrr": "recip_rank", "r_precision": "Rprec",
    "hit_rate@1": "success_1", "hit_rate@5": "success_5",
}


@pytest.mark.parametrize("seed", range(4))
def test_trec_convention_matches_pytrec_eval(seed):
    truth, topk = random_case(seed)
    qrels, run = {}, {}
    truth_coo = truth.tocoo()
    for u, i, v in zip(truth_coo.row, truth_coo.col, truth_coo.data):
        qrels.setdefault(f"q{u}", {})[f"d{i}"] = int(v)
    for u, ids in enumerate(topk):
        run[f"q{u}"] = {f"d{i}": float(100 - r) for r, i in enumerate(ids) if i >= 0}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"P.5,10", "recall.5", "map_cut.5", "map", "ndcg_cut.5,10", "ndcg",
                "recip_rank", "Rprec", "success.1,5"})
    expected = evaluator.evaluate(run)
    res = fr.evaluate(truth, topk, list(TREC_MEASURES), convention="trec")
    evaluated = sorted(int(q[1:]) for q in expected)
    assert evaluated == np.flatnonzero(res.counted).tolist()
    for label, key in TREC_MEASURES.items():
        want = np.array([expected[f"q{u}"][key] for u in evaluated])
        assert_allclose(res.per_user(label)[evaluated], want, rtol=1e-12, atol=1e-15,
                        err_msg=label)
        assert_allclose(res[label], want.mean(), rtol=1e-12, err_msg=label)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 5, 10])
def test_implicit_convention_matches_implicit(seed, k):
    evaluation = pytest.importorskip("implicit.evaluation")
    truth, topk = random_case(seed, n_users=200, n_items=50, k=k, grades=(1, 2), pad=False)
    train = sp.csr_matrix(truth.shape, dtype=np.float32)
    test = sp.csr_matrix(truth)
    test.indptr, test.indices = test.indptr.astype(np.int32), test.indices.astype(np.int32)
    expected = evaluation.ranking_metrics_at_k(FixedModel(topk), train, test, K=k,
                                               show_progress=False)
    res = fr.evaluate(truth, topk, [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"],
                      convention="implicit")
    for name in ("precision", "map", "ndcg", "auc"):
        assert_allclose(res[f"{name}@{k}"], expected[name], rtol=1e-12, err_msg=name)


def _scores_from_ranking(topk, n_items, rng):
    """Scores that rank each row's listed ids first, in order, and the rest below."""
    n_users, k = topk.shape
    scores = -rng.random((n_users, n_items))  # unlisted items: distinct negative scores
    for u in range(n_users):
        scores[u, topk[u]] = np.arange(k, 0, -1)
    return scores


@pytest.mark.parametrize("k", [1, 3, 10])
def test_recsys_ndcg_matches_sklearn_ndcg_score(k):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(k)
    truth, topk = random_case(k, n_users=80, n_items=30, k=10, pad=False)
    scores = _scores_from_ranking(topk, 30, rng)
    res = fr.evaluate(truth, topk, [f"ndcg@{k}"])
    dense = truth.toarray()
    for u in np.flatnonzero(res.counted):
        want = ndcg_score(dense[u:u + 1], scores[u:u + 1], k=k)
        assert_allclose(res.per_user(f"ndcg@{k}")[u], want, rtol=1e-12)


def test_full_ranking_auc_and_mar_match_sklearn():
    from sklearn.metrics import average_precision_score, roc_auc_score

    n_items = 25
    truth, topk = random_case(9, n_users=50, n_items=n_items, k=n_items, grades=(1,), pad=False)
    rng = np.random.default_rng(9)
    scores = _scores_from_ranking(topk, n_items, rng)
    res = fr.evaluate(truth, topk, ["auc", "mar"])
    dense = truth.toarray() > 0
    for u in np.flatnonzero(res.counted):
        if dense[u].all():
            continue
        assert_allclose(res.per_user("auc")[u], roc_auc_score(dense[u], scores[u]), rtol=1e-12)
        assert_allclose(res.per_user("mar")[u], average_precision_score(dense[u], scores[u]),
                        rtol=1e-12)
