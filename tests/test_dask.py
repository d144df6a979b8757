"""fastrank.dask on a real distributed.LocalCluster with two worker processes: equal to the
local evaluation of the same tables, per user and in the means; bad input named."""

import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest

import fastrank
import fastrank.dask
from fastrank import io

from .user_tables import (RANKED_INTERACTIONS, RANKED_RECO, check_tie_orders, ranked,
                          user_tables)

pytestmark = pytest.mark.slow  # a LocalCluster of two worker processes

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")  # any free port: 8787 may be taken
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


tables = partial(user_tables, n_users=4000)


def check_equal(res, local, metrics, user_ids):
    for name in metrics:
        assert res[name] == pytest.approx(local[name], rel=1e-12, nan_ok=True)
    assert res.n_users == local.n_users and res.n_rows == local.users.shape[0]
    frame = res.per_user.compute().set_index("user").loc[list(user_ids)]
    for name in metrics:
        np.testing.assert_array_equal(frame[name].to_numpy(), local.per_user(name))
    np.testing.assert_array_equal(frame["counted"].to_numpy(), local.counted)


@pytest.mark.parametrize("convention", ["recsys", "trec", "implicit"])
def test_equal_to_the_local_evaluation(client, convention):
    t, r = tables()
    metrics = ["ndcg@10", "precision@5", "recall", "map", "mrr@3", "auc@10", "r_precision",
               "hit_rate@1", "ndcg_exp@12"]
    data = io.from_tables(t, r)
    local = data.evaluate(metrics, convention=convention)
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=3), dd.from_pandas(r, npartitions=5),
                                 metrics, convention=convention)
    check_equal(res, local, metrics, data.users)


def test_every_registered_list_metric_and_dialect_names(client):
    """The metrics Dask takes come from the registry: trec_eval's bpref and iprec, the
    summed counts, the geometric gm_map, thresholds, and other tools' names."""
    t, r = tables(seed=2)
    metrics = ["bpref", "iprec(recall=0.3)", "num_ret", "num_rel_ret@5", "gm_map",
               "precision(rel=2)@5", "P_5", "ndcg_cut_10", "recip_rank", "hits@3"]
    data = io.from_tables(t, r)
    local = data.evaluate(metrics, convention="trec")
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=3), dd.from_pandas(r, npartitions=2),
                                 metrics, convention="trec")
    check_equal(res, local, metrics, data.users)
    with pytest.raises(ValueError, match="is not available on Dask"):
        fastrank.dask.evaluate(dd.from_pandas(t, npartitions=1), dd.from_pandas(r, npartitions=1),
                               ["coverage@5"])


def test_string_ids_ranks_and_given_k(client):
    t, r = tables(ids="str", seed=1)
    r = ranked(r)
    metrics = ["ndcg", "precision@3", "auc@5"]
    data = io.from_tables(t, r, k=8)
    local = data.evaluate(metrics)
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2), dd.from_pandas(r, npartitions=4),
                                 metrics, k=8, npartitions=3, split_every=2)
    check_equal(res, local, metrics, data.users)
    # the partitions' sums are added exactly: no fan-in changes a bit of a mean
    again = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2),
                                   dd.from_pandas(r, npartitions=4), metrics, k=8,
                                   npartitions=3, per_user=False)
    assert again.to_dict() == res.to_dict()


def test_ranks_are_positions(client):
    """Ranks 1, 4, 7, ...: two empty slots between a user's items, as from_tables reads
    them; K without a cutoff is the largest rank. RecTools' example: map@9 = 1/18."""
    t, r = tables(seed=4)
    r = ranked(r, spacing=3)
    metrics = ["map", "ndcg@10", "precision@5", "mrr", "recall"]
    data = io.from_tables(t, r)
    assert data.topk.shape[1] == r["rank"].max()
    local = data.evaluate(metrics)
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2), dd.from_pandas(r, npartitions=3),
                                 metrics)
    check_equal(res, local, metrics, data.users)
    inter = dd.from_pandas(pd.DataFrame(RANKED_INTERACTIONS), npartitions=1)
    reco = dd.from_pandas(pd.DataFrame(RANKED_RECO), npartitions=1)
    for labels in (["map@9", "precision@9"], ["map", "precision"]):
        got = fastrank.dask.evaluate(inter, reco, labels, relevance=None)
        assert list(got.values()) == pytest.approx([1 / 18, 1 / 9], rel=1e-12)
    half = dd.from_pandas(pd.DataFrame({**RANKED_RECO, "rank": [1.0, 1.5]}), npartitions=1)
    with pytest.raises(ValueError, match="recs column 'rank' holds 1.5 for user 1"):
        fastrank.dask.evaluate(inter, half, ["map"], relevance=None)
    far = dd.from_pandas(pd.DataFrame({**RANKED_RECO, "rank": [1, 10**9]}), npartitions=1)
    with pytest.raises(ValueError, match="rank 1000000000: a rank is a position"):
        fastrank.dask.evaluate(inter, far, ["map"], relevance=None)
    assert fastrank.dask.evaluate(inter, far, ["map@9"], relevance=None)["map@9"] == 0.0


def test_means_only_and_user_dtypes_that_differ(client):
    t, r = tables(seed=2)
    r["user"] = r["user"].astype(np.int32)
    local = io.from_tables(t, r.astype({"user": np.int64})).evaluate(["ndcg@10"])
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2), dd.from_pandas(r, npartitions=2),
                                 "ndcg@10", per_user=False)
    assert not res.has_per_user and res["ndcg@10"] == pytest.approx(local["ndcg@10"], rel=1e-12)
    assert res.to_dict() == {"ndcg@10": res["ndcg@10"]} and "ndcg@10" in repr(res)


def test_bad_input_is_named(client):
    t, r = tables(n_users=200)
    T, R = dd.from_pandas(t, npartitions=1), dd.from_pandas(r, npartitions=1)
    with pytest.raises(ValueError, match="truth has no column 'relevance'"):
        fastrank.dask.evaluate(T.drop(columns="relevance"), R, ["ndcg@10"])
    with pytest.raises(ValueError, match="recs has no column 'item'"):
        fastrank.dask.evaluate(T, R.rename(columns={"item": "doc"}), ["ndcg@10"])
    with pytest.raises(ValueError, match="neither a 'score' nor a 'rank' column"):
        fastrank.dask.evaluate(T, R.drop(columns="score"), ["ndcg@10"])
    same = "user= and item= both name the column 'user' of truth"
    with pytest.raises(ValueError, match=same):
        fastrank.dask.evaluate(T, R, ["ndcg@10"], item="user")
    with pytest.raises(ValueError, match=r"item= and score= \(or rank=\) both name the "
                                         r"column 'item' of recs"):
        fastrank.dask.evaluate(T, R, ["ndcg@10"], score="item")
    with pytest.raises(ValueError, match="'coverage@10' is not available on Dask.*fr.Evaluator"):
        fastrank.dask.evaluate(T, R, ["coverage@10"])
    with pytest.raises(ValueError, match="unknown metric|not available"):
        fastrank.dask.evaluate(T, R, ["ndgc@10"])
    with pytest.raises(TypeError, match="truth must be a dask DataFrame"):
        fastrank.dask.evaluate(t, R, ["ndcg@10"])
    with pytest.raises(ValueError, match="convention must be one of"):
        fastrank.dask.evaluate(T, R, ["ndcg@10"], convention="x")
    with pytest.raises(TypeError, match="metrics must be strings"):
        fastrank.dask.evaluate(T, R, [None])
    with pytest.raises(TypeError, match="n_items must be an int"):
        fastrank.dask.evaluate(T, R, ["auc@5"], n_items="x")
    with pytest.raises(ValueError, match="n_items must be at least 1"):
        fastrank.dask.evaluate(T, R, ["auc@5"], n_items=-5)
    with pytest.raises(ValueError, match="npartitions must be at least 1"):
        fastrank.dask.evaluate(T, R, ["ndcg@10"], npartitions=-1)
    with pytest.raises(ValueError, match="n_items=2 is less than the"):
        fastrank.dask.evaluate(T, R, ["auc@5"], n_items=2)
    with pytest.raises(ValueError, match="columns .items.*number the items that occur"):
        fastrank.dask.evaluate(T, R, ["auc@5"], n_items=10**12)


def test_huge_k_builds_no_padding(client):
    t, r = tables(n_users=500)
    data = io.from_tables(t, r)
    metrics = ["ndcg@1000000000000", "precision@5"]
    local = fastrank.Evaluator(data.truth, metrics, k=10**12).update(None, data.topk).result()
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2), dd.from_pandas(r, npartitions=2),
                                 metrics, per_user=False)
    for label in metrics:
        assert res[label] == pytest.approx(local[label], rel=1e-12)


def test_tied_integer_items_rank_by_their_text_as_in_trec_eval(client):
    """Items 9 and 10 tie: trec_eval compares document ids as strings, "9" first."""
    t = pd.DataFrame({"user": [1, 1], "item": [9, 3], "relevance": [1.0, 1.0]})
    r = pd.DataFrame({"user": [1, 1, 1], "item": [9, 10, 3], "score": [0.5, 0.5, 0.1]})
    res = fastrank.dask.evaluate(dd.from_pandas(t, npartitions=1),
                                 dd.from_pandas(r, npartitions=2),
                                 ["precision@1", "mrr", "ndcg@3"], convention="trec")
    assert res["precision@1"] == 1.0 and res["mrr"] == 1.0
    assert res["ndcg@3"] == pytest.approx(0.9197207891481876, rel=1e-12)


def test_ids_of_different_types_are_never_merged(client):
    t, r = tables(n_users=300)
    T = dd.from_pandas(t, npartitions=2)
    with pytest.raises(TypeError, match=r"'item' ids are integer in truth \(int64\) and "
                                        r"float in recs \(float64\)"):
        fastrank.dask.evaluate(T, dd.from_pandas(r.astype({"item": float}), npartitions=2),
                               ["ndcg@10"])
    with pytest.raises(TypeError, match="'user' ids are integer in truth .* and float in recs"):
        fastrank.dask.evaluate(T, dd.from_pandas(r.assign(user=r["user"] + 0.5),
                                                 npartitions=2), ["ndcg@10"])
    # uint64 users beyond 2**63 next to int64 ones: exact, not wrapped or rounded
    big = np.uint64(2**63)
    t2 = t.assign(user=t["user"].astype(np.uint64) + big)
    r2 = r.assign(user=r["user"].astype(np.uint64) + big)
    local = io.from_tables(t2, r2).evaluate(["ndcg@10"])
    res = fastrank.dask.evaluate(dd.from_pandas(t2, npartitions=2),
                                 dd.from_pandas(r2.astype({"user": np.uint64}), npartitions=3),
                                 ["ndcg@10"], per_user=False)
    assert res.n_users == local.n_users
    assert res["ndcg@10"] == pytest.approx(local["ndcg@10"], rel=1e-12)
    small = r.assign(user=r["user"].astype(np.uint64))  # uint64 within int64's range
    local = io.from_tables(t, small).evaluate(["ndcg@10"])
    res = fastrank.dask.evaluate(T, dd.from_pandas(small, npartitions=2), ["ndcg@10"],
                                 per_user=False)
    assert res.n_users == local.n_users
    assert res["ndcg@10"] == pytest.approx(local["ndcg@10"], rel=1e-12)
    # negative int64 ids in truth and uint64 ids past 2**63 in recs: no one integer type
    # holds both, and each is matched exactly as from_tables matches it (-1 is not 2**64-1)
    t3 = t.assign(user=t["user"] - 150)
    # the same bits as the truth's ids, read as uint64: -1 becomes 2**64 - 1
    r3 = r.assign(user=(r["user"].to_numpy().astype(np.int64) - 150).view(np.uint64))
    data = io.from_tables(t3, r3)
    local = data.evaluate(["ndcg@10", "recall@5"])
    for n in (1, 3):
        res = fastrank.dask.evaluate(dd.from_pandas(t3, npartitions=2),
                                     dd.from_pandas(r3, npartitions=n), ["ndcg@10", "recall@5"])
        assert res.n_users == local.n_users
        assert res.to_dict() == pytest.approx(local.to_dict(), rel=1e-12)
        got = res.per_user.compute()
        values = dict(zip(got["user"], got["ndcg@10"]))
        expected = data.per_user(local)["ndcg@10"]
        assert sorted(values) == sorted(expected.index)
        np.testing.assert_array_equal([values[u] for u in expected.index], expected)


def test_nullable_ids_with_missing_values_and_empty_tables(client):
    t, r = tables(n_users=200)
    t = t.assign(user=pd.array(t["user"].tolist(), dtype="Int64"))
    t.loc[3, "user"] = pd.NA
    with pytest.raises(ValueError, match="truth column 'user' has 1 missing values"):
        fastrank.dask.evaluate(dd.from_pandas(t, npartitions=2),
                               dd.from_pandas(r, npartitions=2), ["ndcg@10"])
    empty = r.iloc[:0]
    res = fastrank.dask.evaluate(dd.from_pandas(t.dropna(), npartitions=2),
                                 dd.from_pandas(empty, npartitions=1), ["ndcg"],
                                 per_user=False)
    assert res["ndcg"] == 0.0  # judged users without lists score 0


@pytest.mark.parametrize("ids", ["int", "str"])
def test_categorical_user_columns_of_other_categories_are_users_as_locally(client, ids):
    """A categorical user column beside another dtype, or of other categories: the users
    outside one table's categories are users (as from_tables has them), not missing ids
    (a cast to the other's categories) nor numpy's 'Cannot interpret' (its result_type)."""
    t = pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 10, 12],
                      "relevance": [1.0, 2.0, 1.0, 0.0]})
    r = pd.DataFrame({"user": [1, 1, 2, 3, 4], "item": [10, 12, 11, 12, 10],
                      "score": [0.9, 0.8, 0.7, 0.6, 0.5]})
    if ids == "str":
        t, r = t.astype({"user": str}), r.astype({"user": str})
    metrics = ["ndcg@2", "recall"]
    for a, b in ((t.astype({"user": "category"}), r.astype({"user": "category"})),
                 (t.astype({"user": "category"}), r), (t, r.astype({"user": "category"}))):
        local = io.from_tables(a, b).evaluate(metrics)
        res = fastrank.dask.evaluate(dd.from_pandas(a, npartitions=2),
                                     dd.from_pandas(b, npartitions=2), metrics)
        assert res.to_dict() == pytest.approx(local.to_dict(), rel=1e-12)
        assert res.n_rows == 4 and res.n_users == local.n_users


def test_per_user_must_be_a_bool():
    t = pd.DataFrame({"user": [1], "item": [1], "relevance": [1.0]})
    r = pd.DataFrame({"user": [1], "item": [1], "score": [1.0]})
    for value in ("no", 0):
        with pytest.raises(TypeError, match="per_user must be True or False"):
            fastrank.dask.evaluate(dd.from_pandas(t, npartitions=1),
                                   dd.from_pandas(r, npartitions=1), ["ndcg"], per_user=value)


def test_tied_scores_take_the_names_order_or_warn(client):
    check_tie_orders(fastrank.dask.evaluate, lambda frame, n: dd.from_pandas(frame, npartitions=n))
