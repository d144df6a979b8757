"""A cutoff past the lists is computed, as trec_eval, ir-measures, ranx, RecBole, RecTools
and LensKit compute it: the ranks past a list are empty. On every entry point and through
every dialect, `name@k` on lists narrower than k equals `name@k` on the same lists padded
with -1 to k columns; a cutoff far past the lists costs no more than the lists."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

import fastrank as fr
from fastrank import io

from .conftest import registry_labels

RNG = np.random.default_rng(7)
N_USERS, N_ITEMS, WIDTH = 40, 25, 4
TRUTH = sp.csr_array((RNG.random((N_USERS, N_ITEMS)) < 0.25)
                     * RNG.integers(1, 4, (N_USERS, N_ITEMS)))
TOPK = np.argsort(RNG.random((N_USERS, N_ITEMS)), axis=1)[:, :WIDTH]
TOPK[3, 2:] = -1  # a list that ends early
TOPK[5, 1] = TOPK[5, 0]  # a repeated id
ASPECTS = sp.csr_array((RNG.random((N_ITEMS, 5)) < 0.4) * 1.0)
SIDE = dict(train=sp.csr_array((RNG.random((N_USERS, N_ITEMS)) < 0.2) * 1.0),
            item_aspects=ASPECTS, baseline="popular",
            propensity=RNG.uniform(0.2, 1.0, N_ITEMS))


def padded(topk, k):
    return np.pad(topk, ((0, 0), (0, k - topk.shape[1])), constant_values=-1)


def cut_labels():
    """A label at cutoff 9 (past the lists of 4) of every registered metric that
    fr.evaluate computes and that takes a cutoff."""
    out = []
    for name in fr.METRICS.names():
        metric = fr.METRICS[name]
        if not metric.cutoff or metric.entry != "fr.evaluate" or \
                metric.engine in ("factors", "overlap"):
            continue
        required = [f"{p.name}={p.examples[len(p.examples) // 2]}" for p in metric.params
                    if p.default is None and p.name != "rel"]
        if name == "ild":
            required = []
        out.append(name + (f"({', '.join(required)})" if required else "") + "@9")
    return out


def side_for(label):
    metric = fr.METRICS[label.split("(")[0].split("@")[0]]
    side = {name: value for name, value in SIDE.items()
            if any(name in need for need in metric.needs)}
    if "baseline" in side:  # the popular items of the training interactions
        side["train"] = SIDE["train"]
    return side


@pytest.mark.parametrize("convention", ["recsys", "trec"])
@pytest.mark.parametrize("label", cut_labels())
def test_every_metric_past_the_lists_is_computed_as_on_padded_lists(label, convention):
    if convention == "trec" and fr.METRICS[label.split("(")[0].split("@")[0]].engine in \
            ("beyond", "debiased", "calibration", "auc"):
        convention = "recsys"  # one definition: the recsys rule counts
    side = side_for(label)
    short = fr.evaluate(TRUTH, TOPK, [label], convention=convention, **side)
    long = fr.evaluate(TRUTH, padded(TOPK, 9), [label], convention=convention, **side)
    assert short.k == WIDTH and long.k == 9
    if label in short.catalogue:
        assert short[label] == long[label]
    else:
        assert_array_equal(short.per_user(label), long.per_user(label))
        assert short[label] == long[label] or np.isnan(short[label]) and np.isnan(long[label])


@pytest.mark.parametrize("label", [f"{label}@9" if "@" not in label else
                                   label.rsplit("@", 1)[0] + "@9"
                                   for label in registry_labels() if "@" in label])
def test_the_registry_labels_with_parameters_past_the_lists(label):
    res = fr.evaluate(TRUTH, TOPK, [label], convention="trec")
    assert_array_equal(res.per_user(label),
                       fr.evaluate(TRUTH, padded(TOPK, 9), [label],
                                   convention="trec").per_user(label))


@pytest.mark.parametrize("dialect, labels", [
    ("trec_eval", ["ndcg_cut_10", "P_20", "recall_10", "map_cut_10", "success_10"]),
    ("ir_measures", ["nDCG@10", "P@20", "R@10", "AP@10", "RR@10", "Judged@10"]),
    ("ranx", ["ndcg@10", "precision@20", "recall@10", "map@10", "mrr@10", "hit_rate@10"]),
    ("recbole", ["NDCG@10", "Precision@20", "Recall@10", "MAP@10", "MRR@10", "Hit@10"]),
    ("rectools", ["NDCG(divide_by_achievable=True)@10", "Precision@20", "Recall@10", "MAP@10", "MRR@10", "HitRate@10"]),
])
def test_every_dialect_computes_cutoffs_past_the_lists(dialect, labels):
    convention = "trec" if dialect in ("trec_eval", "ir_measures", "ranx") else "recsys"
    short = fr.evaluate(TRUTH, TOPK, labels, dialect=dialect, convention=convention)
    long = fr.evaluate(TRUTH, padded(TOPK, 20), labels, dialect=dialect,
                       convention=convention)
    for label in labels:
        assert_array_equal(short.per_user(label), long.per_user(label))


def test_pytrec_eval_agrees_past_the_lists():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {str(u): {str(i): int(v) for i, v in zip(TRUTH.indices[TRUTH.indptr[u]:
                                                                   TRUTH.indptr[u + 1]],
                                                    TRUTH.data[TRUTH.indptr[u]:
                                                               TRUTH.indptr[u + 1]])}
             for u in range(N_USERS)}
    run = {str(u): {str(i): float(WIDTH - r) for r, i in enumerate(TOPK[u]) if i >= 0
                    and i not in TOPK[u][:r]} for u in range(N_USERS)}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.20", "P.20", "map_cut.20"}
                                            ).evaluate(run)
    res = fr.evaluate(TRUTH, TOPK, ["ndcg_cut_20", "P_20", "map_cut_20"],
                      dialect="trec_eval", convention="trec")
    counted = [u for u in range(N_USERS) if str(u) in scores]
    for label, key in (("ndcg_cut_20", "ndcg_cut_20"), ("P_20", "P_20"),
                       ("map_cut_20", "map_cut_20")):
        np.testing.assert_allclose(res.per_user(label)[counted],
                                   [scores[str(u)][key] for u in counted], rtol=1e-12)


def test_the_other_entry_points_compute_cutoffs_past_the_lists(tmp_path):
    k = 12
    # αβ-nDCG and α-nDCG of their own functions
    assert_array_equal(
        fr.ab_ndcg(TRUTH, TOPK, ASPECTS, profile=SIDE["train"], k=[2, k]).per_user(f"ab_ndcg@{k}"),
        fr.ab_ndcg(TRUTH, padded(TOPK, k), ASPECTS, profile=SIDE["train"],
                   k=[2, k]).per_user(f"ab_ndcg@{k}"))
    assert_array_equal(fr.alpha_ndcg(TRUTH, TOPK, ASPECTS, k=k).per_user(f"alpha_ndcg@{k}"),
                       fr.alpha_ndcg(TRUTH, padded(TOPK, k), ASPECTS,
                                     k=k).per_user(f"alpha_ndcg@{k}"))
    # the overlap of two systems' lists
    other = TOPK[::-1].copy()
    assert_array_equal(fr.overlap(TOPK, other, [f"jaccard@{k}", f"rbo@{k}"]).per_user(f"rbo@{k}"),
                       fr.overlap(padded(TOPK, k), padded(other, k),
                                  [f"jaccard@{k}", f"rbo@{k}"]).per_user(f"rbo@{k}"))
    # the streaming Evaluator, its K the first block's width
    ev = fr.Evaluator(TRUTH, [f"ndcg@{k}", "ndcg"])
    res = ev.update(np.arange(N_USERS), TOPK).result()
    assert res.k == WIDTH
    assert_array_equal(res.per_user(f"ndcg@{k}"),
                       fr.evaluate(TRUTH, padded(TOPK, k), [f"ndcg@{k}"]).per_user(f"ndcg@{k}"))
    # tables
    pd = pytest.importorskip("pandas")
    users, ranks = np.nonzero(TOPK >= 0)
    recs = pd.DataFrame({"user": users, "item": TOPK[users, ranks], "score": -ranks})
    recs = recs.drop_duplicates(["user", "item"])
    inter = pd.DataFrame({"user": TRUTH.nonzero()[0], "item": TRUTH.nonzero()[1],
                          "relevance": TRUTH.data})
    tables = io.from_tables(inter, recs).evaluate(["ndcg", f"ndcg@{k}"])
    assert tables.k == WIDTH and np.isfinite(tables[f"ndcg@{k}"])


def test_a_cutoff_far_past_the_lists_costs_no_more_than_the_lists():
    """A cutoff of a billion on lists of 4 allocates nothing of its size (it would take
    gigabytes per user): every family, and ndeval's normalisers."""
    huge = 10 ** 9
    labels = [label[:-2] + f"@{huge}" for label in cut_labels()
              if fr.METRICS[label.split("(")[0].split("@")[0]].engine
              in ("ranking", "trec", "aspects", "auc", "debiased")]
    for convention in ("recsys", "trec"):
        res = fr.evaluate(TRUTH, TOPK, labels, convention=convention, item_aspects=ASPECTS,
                          propensity=SIDE["propensity"])
        assert all(np.isfinite(res[label]) for label in labels)
    # past the lists every count stays, and precision-like ratios divide by the cutoff
    res = fr.evaluate(TRUTH, TOPK, [f"hits@{huge}", "hits", f"precision@{huge}"])
    assert_array_equal(res.per_user(f"hits@{huge}"), res.per_user("hits"))
    np.testing.assert_allclose(res.per_user(f"precision@{huge}"), res.per_user("hits") / huge,
                               rtol=1e-15)


def test_ndevals_normaliser_that_never_settles_is_refused_with_its_reason():
    with pytest.raises(ValueError, match=r"alpha_dcg@100000000 under the trec convention is "
                                         r"divided by ndeval's ideal over 100,000,000 ranks"):
        fr.evaluate(TRUTH, TOPK, ["alpha_dcg(alpha=0)@100000000"], convention="trec",
                    item_aspects=ASPECTS)


def test_k_cuts_the_lists_for_every_cutoff():
    """k= is the list length: the columns past it are not read, by a bare name nor by a
    cutoff past k (trec_eval's -M)."""
    cut = fr.evaluate(TRUTH, TOPK, ["ndcg@3", "hits@3", "hits"], k=2)
    short = fr.evaluate(TRUTH, TOPK[:, :2], ["ndcg@3", "hits@3", "hits"])
    assert cut.k == 2
    for label in ("ndcg@3", "hits@3", "hits"):
        assert_array_equal(cut.per_user(label), short.per_user(label))
