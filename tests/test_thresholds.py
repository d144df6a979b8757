"""A relevance threshold decides which users a metric counts. Under the recsys and implicit
conventions a metric with rel=t counts the users with an item of value >= t (a user whose
values are all below t is left out, NaN, not scored 0); under trec every judged user
counts, as trec_eval's -l counts every judged query. One rule for every family that takes
rel= (binary measures, trec_eval's, intent-aware, partial AUCs, debiased), on every path
that keeps or drops per-user values; a Result that mixes thresholds says over how many
users each mean was taken."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

import fastrank as fr

RNG = np.random.default_rng(11)
N_USERS, N_ITEMS = 60, 30
TRUTH = sp.csr_array((RNG.random((N_USERS, N_ITEMS)) < 0.2)
                     * RNG.integers(1, 4, (N_USERS, N_ITEMS)))
TOPK = np.argsort(RNG.random((N_USERS, N_ITEMS)), axis=1)[:, :6]
ASPECTS = sp.csr_array((RNG.random((N_ITEMS, 4)) < 0.4) * 1.0)
PROPENSITY = RNG.uniform(0.2, 1.0, N_ITEMS)
LEVEL = 3


def at_level(truth, level):
    """The truth with every entry below `level` stored as 0: judged, not relevant."""
    out = sp.csr_array((np.where(truth.data >= level, truth.data, 0.0), truth.indices,
                        truth.indptr), shape=truth.shape)
    assert out.nnz == truth.nnz  # the zeros stay stored (judged)
    return out


def threshold_labels():
    """A label with rel= of every registered metric that takes one and that fr.evaluate
    computes from lists, truth and the side inputs above."""
    out = []
    for name in fr.METRICS.names():
        metric = fr.METRICS[name]
        if metric.param("rel") is None or metric.entry != "fr.evaluate":
            continue
        required = [f"{p.name}={p.examples[len(p.examples) // 2]}" for p in metric.params
                    if p.default is None and p.name != "rel"]
        params = ", ".join(required + [f"rel={LEVEL}"])
        out.append(f"{name}({params})" + ("@4" if metric.cutoff else ""))
    return out


LABELS = threshold_labels()


def test_the_example_of_a_user_without_an_item_at_the_threshold():
    truth = sp.csr_array(np.array([[1, 0, 0, 1, 0], [2, 0, 1, 0, 0]]))
    topk = np.array([[0, 1, 2], [0, 1, 2]])
    res = fr.evaluate(truth, topk, ["recall(rel=2)@3"])
    assert_array_equal(res.per_user("recall(rel=2)@3"), [np.nan, 1.0])
    assert res["recall(rel=2)@3"] == 1.0 and res.n_users_of("recall(rel=2)@3") == 1
    assert res.n_users == 1  # the users some metric counts
    mixed = fr.evaluate(truth, topk, ["recall(rel=2)@3", "recall@3"])
    assert mixed.n_users == 2 and mixed.n_users_of("recall(rel=2)@3") == 1
    assert "recall(rel=2)@3  1.000000  (over 1 user)" in repr(mixed)
    means_only = fr.evaluate(truth, topk, ["recall(rel=2)@3", "recall@3"], per_user=False)
    assert means_only.to_dict() == mixed.to_dict()
    assert means_only.n_users_of("recall(rel=2)@3") == 1 and means_only.n_users == 2
    assert "(over 1 user)" in repr(means_only)
    trec = fr.evaluate(truth, topk, ["recall(rel=2)@3"], convention="trec")
    assert_array_equal(trec.per_user("recall(rel=2)@3"), [0.0, 1.0])


@pytest.mark.parametrize("convention", ["recsys", "trec"])
@pytest.mark.parametrize("label", LABELS)
def test_every_family_counts_the_users_of_its_threshold(label, convention):
    """name(rel=t) is name on the truth whose entries below t are judged non-relevant:
    the same values, and (recsys) the same users counted."""
    plain = label.replace(f", rel={LEVEL}", "").replace(f"(rel={LEVEL})", "")
    side = dict(item_aspects=ASPECTS, propensity=PROPENSITY)
    res = fr.evaluate(TRUTH, TOPK, [label, "ndcg@4"], convention=convention, **side)
    other = fr.evaluate(at_level(TRUTH, LEVEL), TOPK, [plain], convention=convention, **side)
    assert_array_equal(res.per_user(label), other.per_user(plain))
    counted = ~np.isnan(res.per_user(label))
    if convention == "recsys":
        has_item = np.diff(at_level(TRUTH, LEVEL).indptr) > 0
        has_item &= np.add.reduceat(TRUTH.data >= LEVEL,
                                    TRUTH.indptr[:-1].clip(max=TRUTH.nnz - 1)) > 0
        assert counted.sum() <= has_item.sum()
        assert not counted[~has_item].any()  # no user without an item at the threshold
        assert res.n_users_of(label) == counted.sum() < res.n_users
    else:  # every judged user, as trec_eval -l
        assert res.n_users_of(label) == res.n_users or label.startswith(("p_ia", "map_ia",
                                                                          "err_ia", "nerr_ia",
                                                                          "alpha_dcg",
                                                                          "st_recall", "nrbp",
                                                                          "nnrbp"))
    values = res.per_user(label)[counted]
    expected = {"sum": values.sum(), "geometric": np.exp(np.log(np.maximum(values, 1e-5))
                                                          .mean())
                }.get(res.aggregates[label], values.mean())
    np.testing.assert_allclose(res[label], expected, rtol=1e-12)


@pytest.mark.parametrize("per_user", [True, False])
def test_the_mean_of_a_threshold_is_over_its_users_on_every_path(per_user):
    labels = ["recall(rel=3)@4", "map(rel=2)@4", "ndcg@4", "p_ia(rel=3)@4"]
    whole = fr.evaluate(TRUTH, TOPK, labels, item_aspects=ASPECTS)
    res = fr.evaluate(TRUTH, TOPK, labels, item_aspects=ASPECTS, per_user=per_user,
                      show_progress=False)
    ev = fr.Evaluator(TRUTH, labels, item_aspects=ASPECTS)
    for lo in range(0, N_USERS, 17):
        ev.update(np.arange(lo, min(lo + 17, N_USERS)), TOPK[lo:lo + 17])
    streamed = ev.result()
    for label in labels:
        assert res[label] == whole[label] == pytest.approx(streamed[label], rel=1e-15)
        assert res.n_users_of(label) == whole.n_users_of(label) == streamed.n_users_of(label)
    assert whole.n_users_of("recall(rel=3)@4") < whole.n_users_of("map(rel=2)@4") \
        < whole.n_users


def test_statistics_take_the_users_of_the_threshold():
    label = "recall(rel=3)@4"
    a = fr.evaluate(TRUTH, TOPK, [label, "ndcg@4"])
    b = fr.evaluate(TRUTH, TOPK[:, ::-1].copy(), [label, "ndcg@4"])
    kept = a.per_user(label)[~np.isnan(a.per_user(label))]
    low, high = a.ci(label, method="normal")
    half = 1.959963984540054 * kept.std(ddof=1) / np.sqrt(kept.size)
    assert low == pytest.approx(kept.mean() - half) and high == pytest.approx(kept.mean() + half)
    table = fr.compare({"a": a, "b": b}, [label]).to_frame()
    assert list(table["users"]) == [kept.size, kept.size]
    segments = a.by(np.arange(N_USERS) % 2, [label], counts=True) \
        if "counts" in fr.Result.by.__code__.co_varnames else None
    assert segments is None or np.isfinite(np.asarray(segments.means[label])).all()


def test_dask_and_the_tables_count_the_users_of_the_threshold():
    pd = pytest.importorskip("pandas")
    from fastrank import io

    users, items = TRUTH.nonzero()
    inter = pd.DataFrame({"user": users, "item": items, "relevance": TRUTH[users, items]})
    rows, ranks = np.nonzero(TOPK >= 0)
    recs = pd.DataFrame({"user": rows, "item": TOPK[rows, ranks], "rank": ranks + 1})
    labels = ["recall(rel=3)@4", "ndcg@4"]
    res = io.from_tables(inter, recs).evaluate(labels)
    direct = fr.evaluate(TRUTH, TOPK, labels)
    assert res["recall(rel=3)@4"] == pytest.approx(direct["recall(rel=3)@4"], rel=1e-15)
    assert res.n_users_of("recall(rel=3)@4") == direct.n_users_of("recall(rel=3)@4")


def test_the_full_ranking_auc_of_factors_counts_the_users_of_its_threshold():
    """evaluate_factors' full-ranking AUC with rel=: the AUC of each user's items
    relevant at the threshold, users without one left out under recsys."""
    users = RNG.normal(size=(N_USERS, 3))
    items = RNG.normal(size=(N_ITEMS, 3))
    label = f"auc(rel={LEVEL})"
    res = fr.evaluate_factors(users, items, TRUTH, [label, "auc", "gauc", "ndcg@5"])
    level = fr.evaluate_factors(users, items, at_level(TRUTH, LEVEL), ["auc"])
    assert_array_equal(res.per_user(label), level.per_user("auc"))
    assert res.n_users_of(label) < res.n_users
    alone = fr.evaluate_factors(users, items, TRUTH, ["auc", "gauc"])
    for plain in ("auc", "gauc"):  # the default threshold's AUC beside another's
        assert_array_equal(res.per_user(plain), alone.per_user(plain))


def test_gauc_takes_no_threshold():
    """GAUC weighs each user by its relevant items: no rel= (threshold the truth)."""
    with pytest.raises(ValueError, match="gauc has no parameter 'rel'"):
        fr.evaluate_factors(np.ones((N_USERS, 2)), np.ones((N_ITEMS, 2)), TRUTH,
                            ["gauc(rel=2)"])
