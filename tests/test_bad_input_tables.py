"""Malformed tables into fastrank.io.from_tables and per_user_table: every one is a
ValueError or TypeError naming the table, the column and the offending value, never an
IndexError, KeyError, a library's internal message or a silently wrong number."""

from pathlib import PurePath

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import scipy.sparse as sp

import fastrank as fr
from fastrank import io

from .test_tables import make

TRUTH = {"user": [1, 2, 3], "item": [1, 2, 3], "relevance": [1.0, 1.0, 1.0]}
RECS = {"user": [1, 2, 3], "item": [1, 2, 3], "score": [1.0, 0.5, 0.25]}


@pytest.mark.parametrize("truth, recs, relevance, message", [
    (TRUTH, {**RECS, "score": [1.0, 0.5, 0.25, 0.1]}, "relevance",
     "recs columns differ in length: 'user' has 3, 'item' has 3, 'score' has 4 values"),
    (TRUTH, {**RECS, "item": [1, 2]}, "relevance",
     "recs columns differ in length: 'user' has 3, 'item' has 2, 'score' has 3 values"),
    (TRUTH, {**RECS, "score": [1.0, 0.5]}, "relevance",
     "recs columns differ in length: 'user' has 3, 'item' has 3, 'score' has 2 values"),
    (TRUTH, {"user": [1, 1, 2], "item": [1, 2, 3], "rank": [1, 2]}, "relevance",
     "recs columns differ in length: 'user' has 3, 'item' has 3, 'rank' has 2 values"),
    ({**TRUTH, "relevance": [1.0, 2.0]}, RECS, "relevance",
     "truth columns differ in length: 'user' has 3, 'item' has 3, 'relevance' has 2 values"),
    ({**TRUTH, "item": [1, 2, 3, 4]}, RECS, "relevance",
     "truth columns differ in length: 'user' has 3, 'item' has 4, 'relevance' has 3 values"),
    ({**TRUTH, "user": [1]}, RECS, None,
     "truth columns differ in length: 'user' has 1, 'item' has 3 values"),
])
def test_dict_columns_of_unequal_length(truth, recs, relevance, message):
    with pytest.raises(ValueError, match=message):
        io.from_tables(make("dict", truth), make("dict", recs), relevance=relevance)


def test_an_unused_column_may_have_another_length():
    data = io.from_tables({**TRUTH, "note": ["x"]}, {**RECS, "rank": [1]})
    assert data.topk.tolist() == [[0], [1], [2]]


def test_integer_column_labels_answer_to_the_label_and_its_text():
    named = io.from_tables(pd.DataFrame(TRUTH), pd.DataFrame(RECS))
    truth, recs = pd.DataFrame(TRUTH), pd.DataFrame(RECS)
    truth.columns = recs.columns = [0, 1, 2]
    for names in ({"user": 0, "item": 1, "relevance": 2, "score": 2},
                  {"user": "0", "item": "1", "relevance": "2", "score": "2"}):
        data = io.from_tables(truth, recs, **names)
        assert data.users.tolist() == named.users.tolist()
        np.testing.assert_array_equal(data.topk, named.topk)
        assert (data.truth != named.truth).nnz == 0
    with pytest.raises(ValueError, match=r"truth has no column 'user'; its columns are "
                                         r"\[0, 1, 2\]"):
        io.from_tables(truth, recs)
    with pytest.raises(ValueError, match=r"recs has neither a 'score' nor a 'rank' column, "
                                         r"so its order is unknown; its columns are "
                                         r"\[0, 1, 2\]"):
        io.from_tables(truth, recs, user=0, item=1, relevance=2)
    with pytest.raises(ValueError, match=r"truth has no column 7; its columns are \[0, 1, 2\]"):
        io.from_tables(truth, recs, user=7, item=1, relevance=2, score=2)
    data = io.from_tables(truth, recs, user=0, item=1, relevance=2, score=2)
    res = data.evaluate(["mrr"])
    for library in ("pyarrow", "polars"):  # their column names are text
        table = data.per_user(res, library=library)
        names = table.column_names if library == "pyarrow" else table.columns
        assert list(names) == ["0", "mrr"]


def test_an_exact_label_wins_and_two_texts_alike_are_ambiguous():
    truth = pd.DataFrame([[1, 5, 1, 1.0]], columns=[0, "0", "item", "relevance"])
    recs = pd.DataFrame([[1, 5, 1, 1.0]], columns=[0, "0", "item", "score"])
    assert io.from_tables(truth, recs, user="0").users.tolist() == [5]
    assert io.from_tables(truth, recs, user=0).users.tolist() == [1]
    with pytest.raises(ValueError, match=r"truth has columns \[0, '0'\], all written '0', so "
                                         r"user=PurePosixPath\('0'\) is ambiguous; pass "
                                         r"user= with the exact label"):
        io.from_tables(truth, recs, user=PurePath("0"))


@pytest.mark.parametrize("library", ["pandas", "pyarrow"])
def test_duplicated_column_names(library):
    if library == "pandas":
        truth = pd.DataFrame([[1, 1, 1.0, 2.0]], columns=["user", "item", "relevance",
                                                           "relevance"])
        recs = pd.DataFrame([[1, 1, 1.0, 2]], columns=["user", "item", "score", "item"])
    else:
        truth = pa.Table.from_arrays([pa.array([1]), pa.array([1]), pa.array([1.0]),
                                      pa.array([2.0])],
                                     names=["user", "item", "relevance", "relevance"])
        recs = pa.Table.from_arrays([pa.array([1]), pa.array([1]), pa.array([1.0]),
                                     pa.array([2])], names=["user", "item", "score", "item"])
    with pytest.raises(ValueError, match=r"truth has 2 columns named 'relevance' \(positions "
                                         r"2, 3\), so relevance= is ambiguous"):
        io.from_tables(truth, make(library, RECS))
    with pytest.raises(ValueError, match="recs has 2 columns named 'item'"):
        io.from_tables(make(library, TRUTH), recs)
    with pytest.raises(ValueError, match="recs has 2 columns named 'item'"):
        io.from_tables(make(library, TRUTH), recs, relevance=None)


@pytest.mark.parametrize("truth, message", [
    (pd.DataFrame({**TRUTH, "user": pd.array([1, None, 3], dtype="Int64")}),
     "truth column 'user' has 1 missing values"),
    (pd.DataFrame({**TRUTH, "item": pd.array([1.0, None, 3.0], dtype="Float64")}),
     "truth column 'item' has 1 missing values"),
    (pd.DataFrame({**TRUTH, "item": ["a", None, "b"]}),
     "truth column 'item' has 1 missing values"),
    (pd.DataFrame({**TRUTH, "relevance": pd.array([1, None, 3], dtype="Int64")}),
     "truth column 'relevance' has 1 missing values"),
    (pa.table({**TRUTH, "user": pa.array([1, None, 3], pa.int64())}),
     "truth column 'user' has 1 missing values"),
    (pa.table({**TRUTH, "relevance": [1.0, None, 2.0]}),
     "truth column 'relevance' has 1 missing values"),
    (pl.DataFrame({**TRUTH, "item": [1, None, 3]}), "truth column 'item' has 1 missing values"),
    (pl.DataFrame({**TRUTH, "relevance": [None, 1.0, 2.0]}),
     "truth column 'relevance' has 1 missing values"),
    ({**TRUTH, "user": np.array([1, None, 3], dtype=object)},
     "truth column 'user' has 1 missing values"),
    ({**TRUTH, "user": np.array([1, pd.NA, 3], dtype=object)},
     "truth column 'user' has 1 missing values"),
    ({**TRUTH, "item": np.array([1.0, np.nan, 3.0], dtype=object)},
     "truth column 'item' has NaN ids"),
    ({**TRUTH, "user": np.array(["2024-01-01", "NaT", "2024-01-02"], "datetime64[D]")},
     "truth column 'user' has NaT ids"),
])
def test_nulls_name_the_column(truth, message):
    with pytest.raises(ValueError, match=message):
        io.from_tables(truth, RECS)


@pytest.mark.parametrize("truth, error, message", [
    (pd.Series([1, 2]), TypeError, "truth must be a pandas, pyarrow or polars table, or a "
                                   "dict of columns; got Series"),
    (pa.array([1, 2]), TypeError, "truth must be a pandas, pyarrow or polars table"),
    (pl.DataFrame(TRUTH).lazy(), TypeError, "truth must be a pandas, pyarrow or polars "
                                            "table, or a dict of columns; got LazyFrame"),
    ({**TRUTH, "user": [[1], [1, 2], 3]}, ValueError, "truth column 'user' is ragged"),
    ({**TRUTH, "relevance": 1.0}, ValueError,
     r"truth column 'relevance' must be 1-D; got shape \(\)"),
])
def test_not_a_column_table(truth, error, message):
    with pytest.raises(error, match=message):
        io.from_tables(truth, RECS)


def test_a_record_batch_is_a_table():
    data = io.from_tables(pa.RecordBatch.from_pydict(TRUTH), pa.RecordBatch.from_pydict(RECS))
    assert data.topk.tolist() == [[0], [1], [2]]


def _result():
    return fr.evaluate(sp.csr_array(np.eye(3)), np.array([[0], [1], [2]]), ["mrr"])


@pytest.mark.parametrize("user_ids, kwargs, error, message", [
    (np.array([1]), {}, ValueError, "user_ids has 1 ids but the result has values for truth "
                                    "row 2, so it needs at least 3"),
    (np.array([[1], [2], [3]]), {}, ValueError,
     r"user_ids must be 1-D, one id per truth row; got shape \(3, 1\)"),
    (None, {}, ValueError, r"user_ids must be 1-D, one id per truth row; got shape \(\)"),
    ([[1], [2, 3]], {}, ValueError, "user_ids is ragged"),
    ([1, 2, 3], {"library": "dict", "user_column": "mrr"}, ValueError,
     "user_column 'mrr' is also the name of a metric of the result"),
])
def test_per_user_table_checks_the_ids(user_ids, kwargs, error, message):
    with pytest.raises(error, match=message):
        io.per_user_table(_result(), user_ids, **kwargs)


def test_per_user_table_needs_a_result_and_accepts_more_ids():
    with pytest.raises(TypeError, match="result must be a fastrank Result .*; got dict"):
        io.per_user_table({"mrr": 1.0}, [1, 2, 3])
    table = io.per_user_table(_result(), np.array([7, 8, 9, 10]), library="dict")
    assert table["user"].tolist() == [7, 8, 9]
    res = fr.evaluate(sp.csr_array(np.eye(3)), np.array([[2]]), ["mrr"], users=np.array([2]))
    assert io.per_user_table(res, ["a", "b", "c"], library="dict")["user"].tolist() == ["c"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(item="user"), "user= and item= both name the column 'user' of truth"),
    (dict(relevance="item"), "item= and relevance= both name the column 'item' of truth"),
    (dict(score="user"), r"user= and score= \(or rank=\) both name the column 'user' of recs"),
])
def test_one_column_named_for_two_roles_is_refused(kwargs, message):
    """item="user" read every user's own id as the item: a list that recommends the user
    itself, and a silent 1.0."""
    truth = {"user": [1, 1, 2], "item": [10, 11, 10], "relevance": [1.0, 2.0, 1.0]}
    recs = {"user": [1, 2], "item": [11, 10], "score": [0.9, 0.5]}
    with pytest.raises(ValueError, match=message):
        io.from_tables(truth, recs, **kwargs)
