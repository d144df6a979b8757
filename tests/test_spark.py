"""fastrank.spark on a local SparkSession (2 cores, 4 shuffle partitions): equal to the local
evaluation of the same tables, per user and in the means; bad input named. Skipped without
pyspark or without Java."""

import os
import shutil
import sys
import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest

import fastrank
from fastrank import io

from .user_tables import (RANKED_INTERACTIONS, RANKED_RECO, check_tie_orders, ranked,
                          user_tables)

pytest.importorskip("pyspark")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("Spark needs Java (no java on PATH, no JAVA_HOME)", allow_module_level=True)

import fastrank.spark  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas"),
              # pyspark's toPandas passes pandas 3 the copy= it deprecates
              pytest.mark.filterwarnings(
                  "ignore:The copy keyword is deprecated:DeprecationWarning:pyspark")]


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (SparkSession.builder.master("local[2]").appName("fastrank-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "4")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                   .config("spark.pyspark.python", sys.executable)
                   .config("spark.driver.memory", "1g")
                   .getOrCreate())
    session.sparkContext.setLogLevel("OFF")  # the workers' expected errors, not printed
    yield session
    session.stop()


tables = partial(user_tables, n_users=3000, object_ids=True)


def check_equal(res, local, metrics, user_ids, per_user=True):
    for name in metrics:
        assert res[name] == pytest.approx(local[name], rel=1e-12, nan_ok=True)
    assert res.n_users == local.n_users and res.n_rows == local.users.shape[0]
    if not per_user:
        assert not res.has_per_user
        return
    frame = res.per_user.toPandas()
    assert frame.shape[0] == local.users.shape[0] and frame["user"].is_unique
    frame = frame.set_index("user").loc[list(user_ids)]
    for name in metrics:
        np.testing.assert_array_equal(frame[name].to_numpy(), local.per_user(name))
    np.testing.assert_array_equal(frame["counted"].to_numpy(), local.counted)
    np.testing.assert_array_equal(frame["n_relevant"].to_numpy(), local.n_relevant)


@pytest.mark.parametrize("convention", ["recsys", "trec", "implicit"])
def test_equal_to_the_local_evaluation(spark, convention):
    t, r = tables()
    metrics = ["ndcg@10", "precision@5", "recall", "map", "mrr@3", "auc@10", "r_precision",
               "hit_rate@1", "ndcg_exp@12"]
    data = io.from_tables(t, r)
    local = data.evaluate(metrics, convention=convention)
    res = fastrank.spark.evaluate(spark.createDataFrame(t), spark.createDataFrame(r),
                                  metrics, convention=convention, per_user=convention != "trec")
    check_equal(res, local, metrics, data.users, per_user=convention != "trec")
    assert isinstance(res, fastrank.spark.SparkResult) and res.convention == convention


def test_every_registered_list_metric_and_dialect_names(spark):
    """The metrics Spark takes come from the registry: trec_eval's bpref and iprec, the
    summed counts, the geometric gm_map, thresholds, and other tools' names."""
    t, r = tables(seed=2)
    metrics = ["bpref", "iprec(recall=0.3)", "num_ret", "num_rel_ret@5", "gm_map",
               "precision(rel=2)@5", "P_5", "ndcg_cut_10", "recip_rank", "hits@3"]
    data = io.from_tables(t, r)
    local = data.evaluate(metrics, convention="trec")
    res = fastrank.spark.evaluate(spark.createDataFrame(t), spark.createDataFrame(r), metrics,
                                  convention="trec")
    check_equal(res, local, metrics, data.users)


def test_string_ids_ranks_given_k_and_more_partitions(spark):
    t, r = tables(ids="str", seed=1)
    r = ranked(r).astype({"rank": np.int32})
    metrics = ["ndcg", "precision@3", "auc@5"]
    data = io.from_tables(t, r, k=8)
    local = data.evaluate(metrics)
    res = fastrank.spark.evaluate(spark.createDataFrame(t), spark.createDataFrame(r), metrics,
                                  k=8, npartitions=7, n_threads=2)
    check_equal(res, local, metrics, data.users)


def test_ranks_are_positions(spark):
    """Ranks 1, 4, 7, ...: two empty slots between a user's items, as from_tables reads
    them; K without a cutoff is the largest rank. RecTools' example: map@9 = 1/18."""
    t, r = tables(seed=4)
    r = ranked(r, spacing=3)
    metrics = ["map", "ndcg@10", "precision@5", "mrr", "recall"]
    data = io.from_tables(t, r)
    assert data.topk.shape[1] == r["rank"].max()
    local = data.evaluate(metrics)
    res = fastrank.spark.evaluate(spark.createDataFrame(t), spark.createDataFrame(r), metrics)
    check_equal(res, local, metrics, data.users)
    inter = spark.createDataFrame(pd.DataFrame(RANKED_INTERACTIONS))
    reco = spark.createDataFrame(pd.DataFrame(RANKED_RECO))
    for labels in (["map@9", "precision@9"], ["map", "precision"]):
        got = fastrank.spark.evaluate(inter, reco, labels, relevance=None)
        assert list(got.values()) == pytest.approx([1 / 18, 1 / 9], rel=1e-12)
    half = spark.createDataFrame(pd.DataFrame({**RANKED_RECO, "rank": [1.0, 1.5]}))
    with pytest.raises(ValueError, match="recs column 'rank' holds 1.5 for user 1"):
        fastrank.spark.evaluate(inter, half, ["map"], relevance=None)
    far = spark.createDataFrame(pd.DataFrame({**RANKED_RECO, "rank": [1, 10**9]}))
    with pytest.raises(ValueError, match="rank 1000000000: a rank is a position"):
        fastrank.spark.evaluate(inter, far, ["map"], relevance=None)
    assert fastrank.spark.evaluate(inter, far, ["map@9"], relevance=None)["map@9"] == 0.0


def test_empty_partitions_one_sided_users_and_user_types_that_differ(spark):
    """Six users in 8 partitions (most empty); a judged user without a list (scores 0),
    listed users without judgments (not counted); int truth ids against long recs ids."""
    from pyspark.sql import functions as F

    t = pd.DataFrame({"user": [1, 1, 2, 3, 3, 4], "item": [10, 11, 10, 12, 13, 11],
                      "relevance": [1.0, 2.0, 1.0, 1.0, 3.0, 1.0]})
    r = pd.DataFrame({"user": [1, 1, 1, 3, 3, 5, 5, 6], "item": [11, 12, 10, 13, 10, 10, 11, 12],
                      "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.0]})
    metrics = ["ndcg", "recall@2", "map", "auc"]
    data = io.from_tables(t, r)
    local = data.evaluate(metrics)
    assert data.without_recommendations == 2 and data.without_truth == 2
    truth = spark.createDataFrame(t).withColumn("user", F.col("user").cast("int"))
    res = fastrank.spark.evaluate(truth, spark.createDataFrame(r), metrics, npartitions=8)
    check_equal(res, local, metrics, data.users)
    assert dict(res.per_user.dtypes)["user"] == "bigint"
    # no recommendations at all: every judged user scores 0
    empty = spark.createDataFrame(r.iloc[:0], "user long, item long, score double")
    res = fastrank.spark.evaluate(truth, empty, ["ndcg", "recall@3"], k=3, per_user=False)
    assert res["ndcg"] == 0.0 and res["recall@3"] == 0.0 and res.n_users == 4


def test_means_only_and_the_result_mapping(spark):
    t, r = tables(n_users=1000, seed=3)
    local = io.from_tables(t, r).evaluate(["ndcg@10", "map@5"])
    res = fastrank.spark.evaluate(spark.createDataFrame(t), spark.createDataFrame(r),
                                  ["ndcg@10", "map@5"], per_user=False, npartitions=3)
    assert not res.has_per_user and res.n_users == local.n_users
    with pytest.raises(ValueError, match="per_user needs per-user values, and this result "
                                         "holds means only"):
        res.per_user
    assert res.to_dict() == pytest.approx(local.to_dict(), rel=1e-12)
    assert res.metrics == ("ndcg@10", "map@5") and len(res) == 2 and "SparkResult" in repr(res)


def test_bad_input_is_named(spark):
    t, r = tables(n_users=200)
    T, R = spark.createDataFrame(t), spark.createDataFrame(r)
    with pytest.raises(ValueError, match="truth has no column 'relevance'"):
        fastrank.spark.evaluate(T.drop("relevance"), R, ["ndcg@10"])
    with pytest.raises(ValueError, match="recs has no column 'item'"):
        fastrank.spark.evaluate(T, R.withColumnRenamed("item", "doc"), ["ndcg@10"])
    with pytest.raises(ValueError, match="neither a 'score' nor a 'rank' column"):
        fastrank.spark.evaluate(T, R.drop("score"), ["ndcg@10"])
    with pytest.raises(ValueError, match="'coverage@10' is not available on Spark"):
        fastrank.spark.evaluate(T, R, ["coverage@10"])
    with pytest.raises(TypeError, match="truth must be a Spark DataFrame"):
        fastrank.spark.evaluate(t, R, ["ndcg@10"])
    with pytest.raises(ValueError, match="convention must be one of"):
        fastrank.spark.evaluate(T, R, ["ndcg@10"], convention="x")
    with pytest.raises(ValueError, match="npartitions must be at least 1"):
        fastrank.spark.evaluate(T, R, ["ndcg@10"], npartitions=0)
    with pytest.raises(TypeError, match=r"'user' ids are text in truth \(string\) and integer "
                                        r"in recs \(bigint\)"):
        fastrank.spark.evaluate(T.withColumn("user", T["user"].cast("string")), R, ["ndcg"])
    # raised in a Python worker, raised again on the driver as itself
    with pytest.raises(ValueError, match="n_items=2 is less than the"):
        fastrank.spark.evaluate(T, R, ["auc@5"], n_items=2)
    nulls = t.astype({"user": "Int64"})
    nulls.loc[3, "user"] = pd.NA
    with pytest.raises(ValueError, match="truth column 'user' has 1 missing values"):
        fastrank.spark.evaluate(spark.createDataFrame(nulls), R, ["ndcg@10"])


def test_column_names_spark_would_read_as_fields_and_columns_named_twice(spark):
    """Names with a dot or a backtick are columns, not nested fields; a column read as two
    roles, or a score of text, is refused as the local evaluation refuses it."""
    t, r = tables(n_users=150)
    odd = {"user": "u.id", "item": "it`em", "relevance": "r.v", "score": "model.score"}
    local = io.from_tables(t, r, k=10).evaluate(["ndcg@10", "auc@10"])
    T = spark.createDataFrame(t.rename(columns=odd))
    R = spark.createDataFrame(r.rename(columns=odd))
    # auc: a job counts the items; ndcg without a cutoff: a job finds the longest list
    res = fastrank.spark.evaluate(T, R, ["ndcg@10", "auc@10", "ndcg"], **odd)
    whole = io.from_tables(t, r).evaluate(["ndcg"])
    assert res["ndcg@10"] == pytest.approx(local["ndcg@10"], rel=1e-12)
    assert res["auc@10"] == pytest.approx(local["auc@10"], rel=1e-12)
    assert res["ndcg"] == pytest.approx(whole["ndcg"], rel=1e-12)
    assert set(res.per_user.columns) >= {"u.id", "ndcg@10"}
    T, R = spark.createDataFrame(t), spark.createDataFrame(r)
    same = "user= and item= both name the column 'user' of truth"
    with pytest.raises(ValueError, match=same):
        fastrank.spark.evaluate(T, R, ["ndcg@10"], item="user")
    with pytest.raises(ValueError, match=same):
        io.from_tables(t, r, item="user")
    with pytest.raises(TypeError, match="recs column 'score' \\(score\\) must hold numbers; "
                                        "got Spark type string"):
        fastrank.spark.evaluate(T, R.withColumn("score", R["score"].cast("string")),
                                ["ndcg@10"])
    with pytest.raises(TypeError, match="truth column 'relevance' \\(relevance\\) must hold"):
        fastrank.spark.evaluate(T.withColumn("relevance", T["relevance"].cast("string")), R,
                                ["ndcg@10"])


def test_the_docs_example(spark, capsys):
    """The Spark block of docs/scale.md (marked no-run for tests/test_readme.py) runs as
    written (its getOrCreate finds this session) and prints the output block the page
    shows after it, compared as tests/test_readme.py compares the pages' blocks."""
    from .test_readme import ROOT, blocks, output_difference

    found = [block for block in blocks(ROOT / "docs" / "scale.md")
             if block.language == "python" and "pyspark" in block.code]
    assert len(found) == 1 and found[0].output is not None
    block = found[0]
    exec(compile(block.code, "docs/scale.md (Spark)", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    difference = output_difference(block.output, out, block.varies,
                                   f"docs/scale.md:{block.output_line}")
    assert difference is None, difference
    assert "| cat|               NaN|     NaN|         0|  false|" in out


def test_per_user_must_be_a_bool():
    """Checked before any table is read (no session needed), as fr.evaluate checks it."""
    for value in ("no", 0):
        with pytest.raises(TypeError, match="per_user must be True or False"):
            fastrank.spark.evaluate(None, None, ["ndcg"], per_user=value)


def test_tied_scores_take_the_names_order_or_warn(spark):
    check_tie_orders(fastrank.spark.evaluate, lambda frame, n: spark.createDataFrame(frame))
