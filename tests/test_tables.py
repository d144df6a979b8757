"""Data frames in and out: fastrank.io.from_tables and per-user tables keyed by the
original ids, through pandas, pyarrow, polars and plain dicts, checked against a
plain-Python conversion and the formula reference."""

import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import fastrank as fr
from fastrank import io

from .reference import user_metric
from .user_tables import RANKED_INTERACTIONS, RANKED_RECO

LIBRARIES = ["pandas", "pyarrow", "polars", "dict"]
METRICS = ["precision@3", "recall@3", "ndcg@3", "map", "mrr"]


def make(library, columns):
    if library == "pandas":
        return pd.DataFrame(columns)
    if library == "pyarrow":
        return pa.table(columns)
    if library == "polars":
        return pl.DataFrame(columns)
    return {name: np.asarray(values) for name, values in columns.items()}


def columns_of(table, library):
    """{column: list} of a per-user table, the user ids included."""
    if library == "pandas":
        return {"user": table.index.tolist(), **{c: table[c].tolist() for c in table.columns}}
    if library == "pyarrow":
        return table.to_pydict()
    if library == "polars":
        return table.to_dict(as_series=False)
    return {name: list(values) for name, values in table.items()}


def records(seed, ids, longest=8):
    """Judgments and scored recommendations with ties, users on one side only, and
    ids of the given kind ("int", "str": strings whose text order differs from numbers)."""
    rng = np.random.default_rng(seed)
    name = (lambda x: int(x) * 7 + 3) if ids == "int" else (lambda x: f"id{int(x)}")
    truth, recs = [], []
    for u in range(25):
        if u % 6 != 5:  # users 5, 11, 17, 23 have no judgments
            for i in rng.choice(40, size=rng.integers(1, 6), replace=False):
                truth.append((name(u), name(i), float(rng.integers(0, 4))))
        if u % 7 != 3:  # users 3, 10, 17, 24 have no recommendations
            for i in rng.choice(max(40, longest), size=rng.integers(1, longest),
                                replace=False):
                recs.append((name(u), name(i), float(rng.integers(0, 4)) / 2))  # ties
    rng.shuffle(truth)
    rng.shuffle(recs)
    return truth, recs


def expected(truth, recs, metrics, k=None):
    """{user id: {metric: value or None}}, by plain Python: rows and ranking from the
    records, metric values from the formula reference."""
    users = sorted({u for u, _, _ in truth} | {u for u, _, _ in recs})
    items = sorted({i for _, i, _ in truth} | {i for _, i, _ in recs})
    position = {item: j for j, item in enumerate(items)}
    rows = {u: {} for u in users}
    for u, i, r in truth:
        rows[u][position[i]] = rows[u].get(position[i], 0.0) + r
    lists = {u: [] for u in users}
    for u, i, s in recs:
        lists[u].append((s, position[i]))
    longest = max(len(v) for v in lists.values())
    width = longest if k is None else min(longest, k)
    out = {}
    for u in users:
        # score descending, ties by id descending compared as text (trec_eval's strcmp)
        by_text = sorted(lists[u], key=lambda p: str(items[p[1]]), reverse=True)
        ranked = [j for _, j in sorted(by_text, key=lambda p: -p[0])][:width]
        ids = ranked + [-1] * (width - len(ranked))
        counted = any(v > 0 for v in rows[u].values())
        out[u] = {}
        for label in metrics:
            name, _, cut = label.partition("@")
            value = user_metric(name, int(cut) if cut else width, rows[u], ids, len(items),
                                "recsys") if counted else None
            out[u][label] = value
    return out


def check_per_user(table, library, want):
    got = columns_of(table, library)
    assert got["user"] == list(want)
    for label in METRICS:
        for u, value in zip(got["user"], got[label]):
            if want[u][label] is None:
                assert math.isnan(value)
            else:
                assert value == pytest.approx(want[u][label], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("ids", ["int", "str"])
@pytest.mark.parametrize("order", ["score", "rank"])
def test_round_trip_through_every_table_type(library, ids, order):
    truth, recs = records(1, ids)
    want = expected(truth, recs, METRICS)
    t_cols = dict(zip(("user", "item", "relevance"), map(list, zip(*truth))))
    if order == "score":
        r_cols = dict(zip(("user", "item", "score"), map(list, zip(*recs))))
    else:  # (user, rank, item): the rank of each record in the expected order
        by_text = sorted(recs, key=lambda r: str(r[1]), reverse=True)  # ties: id as text
        ranked = sorted(by_text, key=lambda r: (r[0], -r[2]))
        rank, previous, rows = 0, None, []
        for u, i, _ in ranked:
            rank = rank + 1 if u == previous else 1
            previous = u
            rows.append((u, rank, i))  # a rank is a position: 1..n
        rows = rows[::-1]
        r_cols = dict(zip(("user", "rank", "item"), map(list, zip(*rows))))
    data = io.from_tables(make(library, t_cols), make(library, r_cols))
    assert data.users.tolist() == list(want)
    assert data.without_recommendations == 3 and data.without_truth == 3
    res = data.evaluate(METRICS)
    table = data.per_user(res)
    check_per_user(table, library, want)
    for label in METRICS:
        values = [w[label] for w in want.values() if w[label] is not None]
        assert res[label] == pytest.approx(sum(values) / len(values), rel=1e-12)


def test_long_lists_with_ties():
    """Rows longer than the kernel's insertion-sort limit take its merge-sort path."""
    truth, recs = records(5, "int", longest=120)
    want = expected(truth, recs, METRICS)
    data = io.from_tables(dict(zip(("user", "item", "relevance"), map(list, zip(*truth)))),
                          dict(zip(("user", "item", "score"), map(list, zip(*recs)))))
    assert data.topk.shape[1] > 32
    check_per_user(data.per_user(data.evaluate(METRICS), library="dict"), "dict", want)


@pytest.mark.parametrize("library", ["pandas", "pyarrow", "polars"])
def test_per_user_table_in_another_library_and_for_a_subset_of_rows(library):
    truth, recs = records(2, "str")
    data = io.from_tables(make("pandas", dict(zip(("user", "item", "relevance"),
                                                   map(list, zip(*truth))))),
                          make("polars", dict(zip(("user", "item", "score"),
                                                  map(list, zip(*recs))))))
    assert data.library == "pandas"
    rows = np.array([4, 0, 2])
    res = fr.evaluate(data.truth, data.topk[rows], METRICS, users=rows)
    table = data.per_user(res, library=library)
    got = columns_of(table, library)
    assert got["user"] == data.users[rows].tolist()
    np.testing.assert_array_equal(np.array(got["ndcg@3"], float), res.per_user("ndcg@3"))


def test_categorical_and_dictionary_ids_are_their_values():
    truth, recs = records(3, "str")
    t_cols = dict(zip(("user", "item", "relevance"), map(list, zip(*truth))))
    r_cols = dict(zip(("user", "item", "score"), map(list, zip(*recs))))
    plain = io.from_tables(t_cols, r_cols)
    frames = [
        (pd.DataFrame({**t_cols, "user": pd.Categorical(t_cols["user"])}),
         pd.DataFrame({**r_cols, "item": pd.Categorical(r_cols["item"])})),
        (pa.table({**t_cols, "user": pa.array(t_cols["user"]).dictionary_encode()}),
         pa.table(r_cols)),
        (pl.DataFrame(t_cols).with_columns(pl.col("user").cast(pl.Categorical)),
         pl.DataFrame(r_cols).with_columns(pl.col("item").cast(pl.Categorical))),
    ]
    for t, r in frames:
        data = io.from_tables(t, r)
        assert data.users.tolist() == plain.users.tolist()
        assert data.items.tolist() == plain.items.tolist()
        np.testing.assert_array_equal(data.topk, plain.topk)
        assert (data.truth != plain.truth).nnz == 0


@pytest.mark.parametrize("ids", ["str", "int"])
def test_same_lists_as_the_trec_reader(tmp_path, ids):
    """A table and a TREC run of the same records rank ties alike: document id descending,
    compared as text as trec_eval does ("9" before "10"), also for integer ids."""
    truth, recs = records(4, ids)
    (tmp_path / "q").write_text("".join(f"{u} 0 {i} {int(r)}\n" for u, i, r in truth))
    (tmp_path / "r").write_text("".join(f"{u} Q0 {i} 0 {s} run\n" for u, i, s in recs))
    q_truth, q_topk, queries, documents = io.trec_arrays(io.read_qrels(tmp_path / "q"),
                                                         io.read_run(tmp_path / "r"))
    data = io.from_tables(dict(zip(("user", "item", "relevance"), map(list, zip(*truth)))),
                          dict(zip(("user", "item", "score"), map(list, zip(*recs)))))
    text_users = data.users.astype(str)
    rows = np.array([np.flatnonzero(text_users == q)[0] for q in queries])
    width = q_topk.shape[1]
    ours = np.where(data.topk[rows, :width] >= 0,
                    data.items.astype(str)[data.topk[rows, :width]], "")
    theirs = np.where(q_topk >= 0, documents[q_topk], "")
    np.testing.assert_array_equal(ours, theirs)
    metrics = ["precision@1", "mrr", "ndcg@3", "map@5", "recall@2"]
    res = fr.evaluate(data.truth, data.topk, metrics, convention="trec")
    q_res = fr.evaluate(q_truth, q_topk, metrics, convention="trec")
    for label in metrics:
        np.testing.assert_array_equal(res.per_user(label)[rows], q_res.per_user(label))


def test_tied_integer_ids_rank_as_trec_eval_ranks_their_text():
    """User 1 judges items 9 and 3; items 9 and 10 tie at 0.5: trec_eval puts "9" first."""
    truth = {"user": [1, 1], "item": [9, 3], "relevance": [1, 1]}
    recs = {"user": [1, 1, 1], "item": [9, 10, 3], "score": [0.5, 0.5, 0.1]}
    for library in LIBRARIES:
        data = io.from_tables(make(library, truth), make(library, recs))
        assert data.items[data.topk[0]].tolist() == [9, 10, 3]
        res = data.evaluate(["precision@1", "mrr", "ndcg@3"], convention="trec")
        assert res["precision@1"] == 1.0 and res["mrr"] == 1.0
        assert res["ndcg@3"] == pytest.approx(0.9197207891481876, rel=1e-12)


def test_ids_of_different_types_are_never_merged():
    t = {"user": np.array([1, 1], np.int64), "item": np.array([2**62, 7], np.int64),
         "relevance": [1.0, 1.0]}
    # int64 with uint64 beyond 2**63: exact, not float64 (where 2**63 + 1 == 2**63)
    r = {"user": np.array([1, 1], np.uint64),
         "item": np.array([2**63 + 1, 2**63], np.uint64), "score": [1.0, 0.5]}
    data = io.from_tables(t, r)
    assert data.items.tolist() == [7, 2**62, 2**63, 2**63 + 1]
    assert data.topk.tolist() == [[3, 2]]
    # negative int64 with uint64 beyond 2**63: Python ints, still exact
    t["item"] = np.array([-5, 7], np.int64)
    assert io.from_tables(t, r).items.tolist() == [-5, 7, 2**63, 2**63 + 1]
    with pytest.raises(TypeError, match=r"'item' ids are integer in truth \(int64\) and "
                                        r"float in recs \(float64\)"):
        io.from_tables(t, {**r, "item": np.array([7.0, 1.5])})
    with pytest.raises(TypeError, match="'user' ids are integer in truth .* and text in recs"):
        io.from_tables(t, {**r, "user": np.array(["1", "1"])})
    with pytest.raises(TypeError, match="recs column 'item' mixes ids of kinds integer, text"):
        io.from_tables(t, {**r, "item": np.array([7, "7"], dtype=object)})
    with pytest.raises(TypeError, match="truth column 'item' mixes ids of kinds float, integer"):
        io.from_tables(make("pandas", {**t, "item": pd.Series([7, 1.5], dtype=object)}),
                       make("pandas", {**r, "user": np.array([1, 1])}))
    # dense uint64 ids above 2**63
    big = {"user": np.array([2**63, 2**63 + 1], np.uint64), "item": [1, 2],
           "relevance": [1.0, 1.0]}
    assert io.from_tables(big, {**big, "score": [1.0, 1.0]}).users.tolist() == \
        [2**63, 2**63 + 1]
    # one kind written in two numpy types is one id
    data = io.from_tables({**t, "item": np.array([7, 9], np.int32)},
                          {**r, "user": np.array([1, 1], np.int64),
                           "item": np.array([9, 7], np.int64)})
    assert data.items.tolist() == [7, 9] and data.items.dtype == np.int64


def test_cut_binary_relevance_and_other_column_names():
    t = pd.DataFrame({"uid": [1, 1, 2], "iid": ["a", "b", "a"]})
    r = pd.DataFrame({"uid": [1, 1, 1, 2], "iid": ["b", "c", "a", "a"],
                      "p": [0.1, 0.9, 0.5, 1.0]})
    data = io.from_tables(t, r, k=2, user="uid", item="iid", relevance=None, score="p")
    assert data.topk.tolist() == [[2, 0], [0, -1]]
    assert data.truth.toarray().tolist() == [[1, 1, 0], [1, 0, 0]]
    assert data.per_user(data.evaluate(["recall@2"])).index.name == "uid"


def test_cutoffs_past_the_longest_list_and_no_list_at_all_as_dask_reads_them():
    """Without k=, a table's lists end early at a cutoff past the longest one (as
    fastrank.dask takes K: the largest cutoff asked for), and a table with no
    recommendation at all scores its judged users 0: the same numbers whatever the
    longest list happens to be."""
    t = pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 12, 10],
                      "relevance": [1, 2, 1, 1]})
    r = pd.DataFrame({"user": [1, 1, 2], "item": [10, 12, 12], "score": [0.9, 0.8, 0.7]})
    labels = ["ndcg@5", "precision@5", "recall@3"]
    short = io.from_tables(t, r).evaluate(labels)
    assert short.k == 5 and short["precision@5"] == pytest.approx((1 / 5 + 1 / 5) / 3)
    padded = io.from_tables(t, r, k=5).evaluate(labels)
    assert short.to_dict() == padded.to_dict()
    assert io.from_tables(t, r).evaluate(labels, k=None).to_dict() == short.to_dict()
    # a bare name means the longest list (K = 2), and ndcg@5 is computed past it
    both = io.from_tables(t, r).evaluate(["ndcg", "ndcg@5"])
    assert both.k == 2 and both["ndcg@5"] == short["ndcg@5"]
    nothing = io.from_tables(t, r.iloc[:0]).evaluate(["ndcg@2", "recall@2"])
    assert nothing.to_dict() == {"ndcg@2": 0.0, "recall@2": 0.0} and nothing.n_users == 3


def test_repeated_pairs_sum_in_truth_and_stay_in_lists():
    t = {"user": np.array([0, 0]), "item": np.array([5, 5]), "relevance": np.array([1.0, 2.0])}
    r = {"user": np.array([0, 0]), "item": np.array([5, 5]), "score": np.array([2.0, 1.0])}
    data = io.from_tables(t, r)
    assert data.truth.toarray().tolist() == [[3.0]]
    assert data.topk.tolist() == [[0, 0]]
    assert data.evaluate(["precision@2"])["precision@2"] == 0.5  # the copy is a miss


def test_dates_as_user_ids():
    days = pd.to_datetime(["2024-01-02", "2024-01-01", "2024-01-02"])
    t = pd.DataFrame({"user": days, "item": [1, 2, 3], "relevance": [1, 1, 1]})
    r = pd.DataFrame({"user": days[:2], "item": [1, 3], "score": [1.0, 1.0]})
    data = io.from_tables(t, r)
    table = data.per_user(data.evaluate(["hit_rate@1"]))
    assert table.index.tolist() == sorted(set(days))
    assert table["hit_rate@1"].tolist() == [0.0, 1.0]


@pytest.mark.parametrize("library", LIBRARIES)
def test_bad_tables_name_the_column(library):
    good_t = {"user": [1, 2], "item": [1, 2], "relevance": [1.0, 1.0]}
    good_r = {"user": [1, 2], "item": [1, 2], "score": [1.0, 0.5]}
    with pytest.raises(ValueError, match="truth has no column 'relevance'"):
        io.from_tables(make(library, {"user": [1], "item": [1]}), make(library, good_r))
    with pytest.raises(ValueError, match="neither a 'score' nor a 'rank' column"):
        io.from_tables(make(library, good_t), make(library, {"user": [1], "item": [1]}))
    with pytest.raises(ValueError,
                       match="recs column 'score' has 1 (NaN or infinite|missing) values"):
        io.from_tables(make(library, good_t), make(library, {**good_r, "score": [1.0, np.nan]}))
    with pytest.raises(TypeError, match="recs column 'score' must hold numbers"):
        io.from_tables(make(library, good_t), make(library, {**good_r, "score": ["a", "b"]}))
    for role in ("score", "rank"):  # a flag orders no list
        recs = {"user": [1, 2], "item": [1, 2], role: [True, False]}
        with pytest.raises(TypeError, match=f"recs column '{role}' \\({role}\\) holds "
                                            f"True/False, which orders no list"):
            io.from_tables(make(library, good_t), make(library, recs))
    with pytest.raises(TypeError, match="'user' ids are integer in truth .* and text in recs"):
        io.from_tables(make(library, good_t), make(library, {**good_r, "user": ["1", "2"]}))
    with pytest.raises(ValueError, match="gives rank 1 twice for user 1"):
        io.from_tables(make(library, good_t),
                       make(library, {"user": [1, 1], "item": [1, 2], "rank": [1, 1]}))
    if library != "dict":
        with pytest.raises(ValueError, match="truth column 'user' has 1 missing values"):
            io.from_tables(make(library, {**good_t, "user": [1, None]}), make(library, good_r))


def test_not_a_table():
    with pytest.raises(TypeError, match="truth must be a pandas, pyarrow or polars table"):
        io.from_tables([[1, 2, 1.0]], {"user": [1], "item": [1], "score": [1.0]})
    with pytest.raises(ValueError, match="library must be one of"):
        io.per_user_table(fr.evaluate(*_tiny(), ["mrr"]), np.array([7]), library="excel")
    with pytest.raises(ValueError, match="k must be at least 1"):
        io.from_tables({"user": [1], "item": [1], "relevance": [1.0]},
                       {"user": [1], "item": [1], "score": [1.0]}, k=0)


def _tiny():
    import scipy.sparse as sp

    return sp.csr_array(np.array([[1.0, 0.0]])), np.array([[0, 1]])


def test_caller_tables_are_not_modified():
    t = pd.DataFrame({"user": [2, 1, 2], "item": [1, 1, 2], "relevance": [1.0, 2.0, 1.0]})
    r = pd.DataFrame({"user": [1, 2], "item": [2, 1], "score": [0.5, 0.25]})
    before = (t.copy(), r.copy())
    io.from_tables(t, r).evaluate(["ndcg@1"])
    pd.testing.assert_frame_equal(t, before[0])
    pd.testing.assert_frame_equal(r, before[1])


@pytest.mark.parametrize("scale", [1, 10**12])
def test_negative_and_far_apart_integer_ids(scale):
    """Dense ids are mapped without a sort, far-apart ones through np.unique: same result."""
    truth, recs = records(6, "int")
    truth = [(u * scale - 50, i * scale - 7, r) for u, i, r in truth]
    recs = [(u * scale - 50, i * scale - 7, s) for u, i, s in recs]
    want = expected(truth, recs, METRICS)
    data = io.from_tables(dict(zip(("user", "item", "relevance"), map(list, zip(*truth)))),
                          dict(zip(("user", "item", "score"), map(list, zip(*recs)))))
    assert data.users.tolist() == list(want) and data.users.dtype == np.int64
    check_per_user(data.per_user(data.evaluate(METRICS), library="dict"), "dict", want)


@pytest.mark.parametrize("dtype, lo, hi, n", [
    (np.int8, -100, 100, 400), (np.int16, -30000, 30000, 16000), (np.int32, -3000, 3000, 400),
    (np.uint8, 20, 230, 400), (np.uint16, 100, 60000, 16000),
    (np.uint64, 2**63 - 1000, 2**63 + 1000, 400)])
def test_narrow_integer_ids_whose_span_exceeds_their_dtype(dtype, lo, hi, n):
    """Dense ids (a span of at most about 4 per row) of int8 or int16 whose span does not
    fit their dtype keep their values and stay distinct (their offsets are taken in
    int64): the same users, items and values as the ids in int64. (A span short of the
    dtype's whole range: numpy's wrap-around hides a full one.)"""
    rng = np.random.default_rng(3)
    span = np.array([lo, hi], dtype=np.uint64 if lo > 2**62 else np.int64)
    users = np.concatenate([span, span[0] + rng.integers(0, hi - lo, n - 2).astype(
        span.dtype)]).astype(dtype)
    items = np.concatenate([span[::-1], span[0] + rng.integers(0, hi - lo, n - 2).astype(
        span.dtype)]).astype(dtype)
    grades = rng.integers(1, 4, n)
    truth = pd.DataFrame({"user": users, "item": items, "relevance": grades})
    recs = pd.DataFrame({"user": users[::-1], "item": items, "score": rng.random(n)})
    data = io.from_tables(truth, recs)
    assert data.users.tolist() == sorted(set(users.tolist()))
    assert data.items.tolist() == sorted(set(items.tolist()))
    assert data.users.dtype == dtype
    if dtype != np.uint64:
        wide = io.from_tables(truth.astype({"user": np.int64, "item": np.int64}),
                              recs.astype({"user": np.int64, "item": np.int64}))
        assert wide.users.tolist() == data.users.tolist()
        metrics = ["ndcg@1", "recall@1"]
        np.testing.assert_array_equal(data.evaluate(metrics).per_user("ndcg@1"),
                                      wide.evaluate(metrics).per_user("ndcg@1"))


def test_hostile_tables_of_python_values():
    """A dict's list of ids of several types is refused as a pandas object column is
    (numpy made [1, "1"] one text id and [1, 1.0], [True, 1] one number); relevance=None
    gives a pair listed twice relevance 1; an empty pandas frame (object columns) has no
    user; a polars lazy frame is told to collect; pyarrow per-user tables keep ids past
    int64 beside negative ones."""
    for ids in ([1, "1"], [1, 1.0], [True, 1]):
        with pytest.raises(TypeError, match="truth column 'user' mixes ids of kinds"):
            io.from_tables({"user": ids, "item": ["a", "b"], "relevance": [1, 1]},
                           {"user": ids, "item": ["a", "b"], "score": [1.0, 1.0]})
    data = io.from_tables({"user": [1, 1, 1], "item": [1, 1, 2]},
                          {"user": [1, 1], "item": [2, 1], "score": [2.0, 1.0]}, relevance=None)
    assert data.truth.toarray().tolist() == [[1.0, 1.0]]
    assert data.evaluate(["ndcg@2"])["ndcg@2"] == 1.0
    empty = io.from_tables(pd.DataFrame(columns=["user", "item", "relevance"]),
                           pd.DataFrame(columns=["user", "item", "score"]))
    assert empty.truth.shape[0] == 0
    import polars as pl

    with pytest.raises(TypeError, match=r"got LazyFrame; call \.collect\(\) on it first"):
        io.from_tables(pl.DataFrame({"user": [1], "item": [1], "relevance": [1]}).lazy(),
                       {"user": [1], "item": [1], "score": [1.0]})
    data = io.from_tables(
        pd.DataFrame({"user": np.array([2**64 - 1, 5], np.uint64), "item": [1, 2],
                      "relevance": [1, 1]}),
        pd.DataFrame({"user": np.array([-1, 5]), "item": [2, 2], "score": [1.0, 1.0]}))
    table = data.per_user(data.evaluate(["ndcg@1"]), library="pyarrow")
    assert [int(v) for v in table.column("user").to_pylist()] == [-1, 5, 2**64 - 1]


def test_a_truth_without_its_relevance_column_names_relevance_none():
    """A RecTools interactions table (user_id, item_id, weight): RecTools takes every row
    as relevant, whatever its weight; the error says how to read it so."""
    truth = {"user": ["a", "a", "b"], "item": ["x", "y", "x"], "weight": [0.0, 1.0, 3.0]}
    recs = {"user": ["a", "b"], "item": ["x", "z"], "rank": [1, 1]}
    with pytest.raises(ValueError, match="relevance=None: every listed pair is relevant"):
        fr.io.from_tables(truth, recs)
    data = fr.io.from_tables(truth, recs, relevance=None)
    assert data.evaluate(["rectools:Precision@1"])["rectools:Precision@1"] == 0.5


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "float64"])
def test_a_rank_is_a_position_as_rectools_reads_it(library, dtype):
    """Rank r is slot r of the list and a skipped rank an empty slot. The one hit is at
    position 9: AP@9 = P@9 / m = (1/9) / 2 = 1/18 (RecTools 0.19.0,
    MAP(k=9).calc(reco, interactions): 0.05555555555555555), P@9 = 1/9, MRR = 1/9, recall
    1/2, achievable nDCG@9 = (1/log2 10) / (1 + 1/log2 3) (RecTools: 0.18457569677956817);
    at k=5 the item at rank 9 is cut and every value is 0."""
    reco = make(library, {**RANKED_RECO, "rank": np.array(RANKED_RECO["rank"], dtype)})
    data = io.from_tables(make(library, RANKED_INTERACTIONS), reco, relevance=None)
    assert data.items.tolist() == [1, 2, 3]
    assert data.topk.tolist() == [[2, -1, -1, -1, -1, -1, -1, -1, 0]]
    res = data.evaluate(["rectools:MAP@9", "rectools:Precision@9", "rectools:MRR@9",
                         "rectools:Recall@9", "rectools:NDCG(divide_by_achievable=True)@9"])
    assert res["rectools:MAP@9"] == pytest.approx(1 / 18, rel=1e-12)
    assert res["rectools:Precision@9"] == pytest.approx(1 / 9, rel=1e-12)
    assert res["rectools:MRR@9"] == pytest.approx(1 / 9, rel=1e-12)
    assert res["rectools:Recall@9"] == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert res["rectools:NDCG(divide_by_achievable=True)@9"] == \
        pytest.approx(1 / math.log2(10) / ideal, rel=1e-12)
    cut = io.from_tables(make(library, RANKED_INTERACTIONS), reco, relevance=None, k=5)
    assert cut.topk.tolist() == [[2]]  # the rank past k is cut, the lists end early
    assert cut.evaluate(["rectools:MAP@5", "mrr"]).to_dict() == {"rectools:MAP@5": 0.0,
                                                                  "mrr": 0.0}


@pytest.mark.parametrize("library", LIBRARIES)
def test_ranks_that_are_no_position_are_refused_naming_the_column(library):
    """A rank is a whole number from 1: 1.5, 0, -1, NaN and text are errors naming the
    column (and the user); a rank given twice to a user is ambiguous (RecTools counts both
    items at that position: Precision@1 = 2.0); a rank that would pad every list to
    millions of slots is refused unless k cuts it."""
    truth = make(library, RANKED_INTERACTIONS)

    def ranked(ranks, **options):
        recs = make(library, {"user": [1, 1], "item": [3, 1], "pos": ranks})
        return io.from_tables(truth, recs, relevance=None, rank="pos", **options)

    with pytest.raises(ValueError, match=r"recs column 'pos' holds 1\.5 for user 1, which is "
                                         r"not a whole number"):
        ranked([1.0, 1.5])
    for low in ([0, 1], [1, -1], [0.0, 2.0]):
        with pytest.raises(ValueError, match=r"recs column 'pos' holds rank (0|-1) for user "
                                             r"1; ranks are positions counted from 1"):
            ranked(low)
    with pytest.raises(ValueError, match=r"recs column 'pos' has 1 (NaN or infinite|missing) "
                                         r"values"):
        ranked([1.0, float("nan")])
    with pytest.raises(TypeError, match="recs column 'pos' must hold numbers"):
        ranked(["1", "2"])
    with pytest.raises(ValueError, match="recs column 'pos' gives rank 2 twice for user 1"):
        ranked([2, 2])
    with pytest.raises(ValueError, match=r"recs column 'pos' gives user 1 rank 1000000000: "
                                         r"a rank is a position, .* pass k"):
        ranked([1, 10**9])
    assert ranked([1, 10**9], k=3).topk.tolist() == [[2]]
    assert ranked(np.array([1, 2**64 - 1], np.uint64), k=3).topk.tolist() == [[2]]


def test_sparse_ranks_within_the_padding_bound_are_kept():
    """Up to 16 slots per recommendation (or 2**26 slots in all) the lists are padded:
    100 users with items at ranks 1 and 20 give a (100, 20) array."""
    users = np.repeat(np.arange(100), 2)
    data = io.from_tables({"user": users, "item": np.tile([5, 6], 100)},
                          {"user": users, "item": np.tile([5, 6], 100),
                           "rank": np.tile([1, 20], 100)}, relevance=None)
    assert data.topk.shape == (100, 20)
    assert data.evaluate(["map@20"])["map@20"] == pytest.approx((1 + 2 / 20) / 2, rel=1e-12)


def test_a_score_column_orders_the_lists_before_a_rank_column():
    """RecTools' recommendations carry both a score and a rank: the score orders the lists
    (its ties broken by item id as trec_eval does) and the ranks are not read; score=None
    orders them by rank, as positions."""
    recs = {"user": [1, 1], "item": [3, 1], "score": [0.2, 0.9], "rank": [1, 9]}
    by_score = io.from_tables(RANKED_INTERACTIONS, recs, relevance=None)
    assert by_score.topk.tolist() == [[0, 2]]
    by_rank = io.from_tables(RANKED_INTERACTIONS, recs, relevance=None, score=None)
    assert by_rank.topk.tolist() == [[2, -1, -1, -1, -1, -1, -1, -1, 0]]


def test_a_repeated_test_pair_counts_once_where_rectools_counts_it_twice():
    """RecTools' own test (tests/metrics/test_ranking.py::TestMAP::
    test_when_duplicates_in_interactions, RecTools 0.19) lists user 1's test item 1 twice
    and expects AP@3 = 3.5/3 > 1: two relevant items of one pair, two hits at rank 1.
    fastrank counts the pair once (m = 2): AP@3 = (1/1 + 2/2) / 2 = 1, precision@3 = 2/3
    (RecTools 0.19: 1.0, three hits in three). The dialect table says so for each name."""
    reco = {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3, 1, 2, 3], "rank": [1, 2, 3, 1, 2, 3]}
    interactions = {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 1, 1, 2, 3]}
    data = io.from_tables(interactions, reco, relevance=None)
    assert data.truth.toarray().tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    labels = ["rectools:MAP@3", "rectools:Precision@3", "rectools:Recall@3",
              "rectools:NDCG(divide_by_achievable=True)@3", "rectools:F1Beta@3"]
    res = data.evaluate(labels)
    assert res.per_user("rectools:MAP@3").tolist() == [1.0, 1.0]  # RecTools: [3.5/3, 1]
    assert res.per_user("rectools:Precision@3").tolist() == [2 / 3, 1.0]
    assert res.per_user("rectools:NDCG(divide_by_achievable=True)@3").tolist() == [1.0, 1.0]
    table = fr.dialects.markdown().splitlines()
    for name in ("MAP@k", "Precision@k", "Recall@k", "NDCG(divide_by_achievable=True)@k",
                 "F1Beta@k"):
        row = next(line for line in table if f"| RecTools 0.19 | `{name}` |" in line)
        assert "test pair listed twice counts once; RecTools counts it twice" in row
        assert "(AP = 3.5/3 in its own test)" in row
    for name in ("HitRate@k", "MRR@k", "PartialAUC@k", "PAP@k"):  # a repeat changes none
        row = next(line for line in table if f"| RecTools 0.19 | `{name}` |" in line)
        assert "twice" not in row
