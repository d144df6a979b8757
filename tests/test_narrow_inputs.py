"""Narrow and memory-mapped inputs: float32 relevance and int32 indptr, indices, ids and
users reach the kernels where they are (no float64 / int64 copy) and give exactly the
values of float64 / int64 inputs; evaluate(per_user=False) keeps only the means, the same
to the bit."""

import importlib

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

import fastrank as fr
from fastrank.engine import SUM_ROWS
from fastrank.synthetic import power_law

from .conftest import ALL_METRICS

THREADS = sorted({1, numba.config.NUMBA_NUM_THREADS})
CONVENTIONS = ["recsys", "trec", "implicit"]


def narrow(truth):
    """truth with float32 values and int32 indices and indptr (float32 holds the grades
    1..5 exactly)."""
    return sp.csr_array((truth.data.astype(np.float32), truth.indices.astype(np.int32),
                         truth.indptr.astype(np.int32)), shape=truth.shape)


def wide(truth):
    return sp.csr_array((truth.data.astype(np.float64), truth.indices.astype(np.int64),
                         truth.indptr.astype(np.int64)), shape=truth.shape)


def mapped(tmp_path, **arrays):
    """The arrays saved as .npy files and memory-mapped read-only."""
    out = {}
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
        out[name] = np.load(tmp_path / f"{name}.npy", mmap_mode="r")
    return out


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    truth, topk = power_law(3000, 400, 10, seed=7)
    small = narrow(truth)
    maps = mapped(tmp_path_factory.mktemp("narrow"), indptr=small.indptr,
                  indices=small.indices, data=small.data, topk=topk.astype(np.int32))
    on_disk = sp.csr_array((maps["data"], maps["indices"], maps["indptr"]), shape=truth.shape)
    return wide(truth), topk.astype(np.int64), on_disk, maps


def assert_same(got, want):
    assert got.to_dict().keys() == want.to_dict().keys()
    for name in want.metrics:
        assert got[name] == want[name] or (np.isnan(got[name]) and np.isnan(want[name]))
        if name not in want.catalogue:
            assert_array_equal(got.per_user(name), want.per_user(name))
    assert_array_equal(got.counted, want.counted)
    assert_array_equal(got.n_relevant, want.n_relevant)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_narrow_mapped_inputs_give_the_values_of_wide_ones(workload, convention):
    truth, topk, on_disk, maps = workload
    assert maps["data"].dtype == np.float32 and maps["indptr"].dtype == np.int32
    want = fr.evaluate(truth, topk, ALL_METRICS, convention=convention)
    got = fr.evaluate(on_disk, maps["topk"], ALL_METRICS, convention=convention)
    assert_same(got, want)
    users = np.arange(2999, -1, -1, dtype=np.int32)
    assert_same(fr.evaluate(on_disk, maps["topk"][users], ALL_METRICS, convention=convention,
                            users=users),
                fr.evaluate(truth, topk[users], ALL_METRICS, convention=convention,
                            users=users.astype(np.int64)))


def test_the_streaming_evaluator_reads_narrow_maps_in_place(workload):
    truth, topk, on_disk, maps = workload
    ev = fr.Evaluator(on_disk, ["ndcg@10", "map@5", "auc@10"])
    for name in ("indptr", "indices", "data"):
        assert np.shares_memory(getattr(ev._data, name), maps[name])
    for lo in range(0, 3000, 1000):
        ev.update(np.arange(lo, lo + 1000, dtype=np.int32), maps["topk"][lo:lo + 1000])
    assert_same(ev.result(), fr.evaluate(truth, topk, ["ndcg@10", "map@5", "auc@10"]))


def test_evaluate_factors_on_narrow_mapped_inputs(workload, tmp_path):
    truth, _, on_disk, _ = workload
    rng = np.random.default_rng(8)
    factors = mapped(tmp_path, users=rng.standard_normal((3000, 8)).astype(np.float32),
                     items=rng.standard_normal((400, 8)).astype(np.float32))
    metrics = ["ndcg@10", "precision@5", "auc"]
    want = fr.evaluate_factors(np.array(factors["users"]), np.array(factors["items"]), truth,
                               metrics)
    assert_same(fr.evaluate_factors(factors["users"], factors["items"], on_disk, metrics),
                want)


def test_the_kernel_gets_the_callers_arrays(workload, monkeypatch):
    """No copy of a big input: the ranking walk is handed the caller's own memory (its
    frame holds indptr, indices, data and topk first)."""
    frames = importlib.import_module("fastrank._kernels.frames")
    _, _, on_disk, maps = workload
    seen = []
    run = frames.run

    def spy(walk, frame, n_chunks):
        if len(frame.values) > 4 and getattr(frame.values[3], "ndim", 0) == 2:
            seen.append(frame.values[:4])
        return run(walk, frame, n_chunks)

    monkeypatch.setattr(frames, "run", spy)
    fr.evaluate(on_disk, maps["topk"], ["ndcg@10", "recall@5"])
    assert seen
    for indptr, indices, data, topk in seen:
        for got, name in ((indptr, "indptr"), (indices, "indices"), (data, "data"),
                          (topk, "topk")):
            assert np.shares_memory(got, maps[name]), name
            assert got.dtype == maps[name].dtype


def test_the_callers_arrays_are_untouched(workload):
    _, _, on_disk, maps = workload
    users = np.arange(3000, dtype=np.int32)
    topk = np.array(maps["topk"])
    before = [a.copy() for a in (users, topk)]
    res = fr.evaluate(on_disk, topk, ["ndcg@10"], users=users)
    assert users.flags.writeable and topk.flags.writeable  # the Result holds a view
    assert not res.users.flags.writeable
    assert np.shares_memory(res.users, users)
    for old, now in zip(before, (users, topk)):
        assert_array_equal(old, now)
        assert old.dtype == now.dtype


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_malformed_narrow_matrices_are_errors(dtype):
    indptr = np.array([0, 2, 1, 3], dtype)
    bad = sp.csr_array((np.ones(3, np.float32), np.array([0, 1, 2], dtype), indptr),
                       shape=(3, 4))
    with pytest.raises(ValueError, match="indptr must start at 0 and never decrease"):
        fr.evaluate(bad, np.zeros((3, 2), dtype), ["ndcg@2"])
    outside = sp.csr_array((np.ones(3, np.float32), np.array([0, 1, 4], dtype),
                            np.array([0, 2, 3, 3], dtype)), shape=(3, 4))
    with pytest.raises(ValueError, match=r"column indices must lie in \[0, 4\); found 4"):
        fr.evaluate(outside, np.zeros((3, 2), dtype), ["ndcg@2"])
    nan = sp.csr_array((np.array([1.0, np.nan, 2.0], np.float32), np.array([0, 1, 2], dtype),
                        np.array([0, 2, 3, 3], dtype)), shape=(3, 4))
    with pytest.raises(ValueError, match="truth contains NaN or infinite relevance"):
        fr.evaluate(nan, np.zeros((3, 2), dtype), ["ndcg@2"])
    with pytest.raises(ValueError, match="topk contains item id -2"):
        fr.evaluate(outside.copy()[:, :3], np.full((3, 2), -2, dtype), ["ndcg@2"])


def test_unsorted_narrow_rows_are_canonicalised_on_a_copy():
    data = np.array([2.0, 1.0, 3.0, 1.0], np.float32)
    indices = np.array([3, 0, 2, 3], np.int32)  # row 0 unsorted, row 1 repeats item 3
    indptr = np.array([0, 2, 4], np.int32)
    truth = sp.csr_array((data, indices, indptr), shape=(2, 5))
    copies = [a.copy() for a in (data, indices, indptr)]
    topk = np.array([[3, 0, 1], [3, 2, 4]], np.int32)
    clean = sp.csr_array(np.array([[1.0, 0, 0, 2.0, 0], [0, 0, 3.0, 1.0, 0]]))
    assert_same(fr.evaluate(truth, topk, ALL_METRICS), fr.evaluate(clean, topk, ALL_METRICS))
    for old, now in zip(copies, (data, indices, indptr)):
        assert_array_equal(old, now)


def test_unsigned_ids_past_int64_are_reported_not_wrapped():
    truth = sp.csr_array(np.eye(3))
    topk = np.array([[0], [1], [2 ** 64 - 1]], np.uint64)
    with pytest.raises(ValueError, match=f"topk contains item id {2 ** 64 - 1},"):
        fr.evaluate(truth, topk, ["ndcg@1"])


@pytest.fixture(scope="module")
def tall(workload):
    """More rows than one part of the means (SUM_ROWS), with users= and a catalogue
    metric: several parts, and per_user=False runs several spans."""
    truth, topk, _, _ = workload
    users = np.tile(np.arange(3000), SUM_ROWS // 3000 + 2)[::-1].copy()
    assert users.shape[0] > SUM_ROWS
    return truth, topk[users], users


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_means_only_equal_the_means_to_the_bit(tall, convention, monkeypatch):
    truth, topk, users = tall
    metrics = ["ndcg@10", "precision@5", "map", "recall@3", "auc@10", "coverage@10",
               "bpref"]
    want = fr.evaluate(truth, topk, metrics, convention=convention, users=users)
    evaluate_module = importlib.import_module("fastrank.evaluate_topk")
    for span_ids in (1, 1 << 22):  # spans of one part, and of several
        monkeypatch.setattr(evaluate_module, "_MEANS_SPAN_IDS", span_ids)
        for n in THREADS:
            got = fr.evaluate(truth, topk, metrics, convention=convention, users=users,
                              per_user=False, n_threads=n)
            assert got.to_dict() == want.to_dict()
            assert (got.n_users, got.n_rows) == (want.n_users, users.shape[0])
            assert not got.has_per_user and want.has_per_user


def test_means_only_of_every_row_in_order(workload):
    truth, topk, on_disk, maps = workload
    got = fr.evaluate(on_disk, maps["topk"], ALL_METRICS, per_user=False)
    want = fr.evaluate(truth, topk, ALL_METRICS)
    assert got.to_dict() == want.to_dict() and got.n_users == want.n_users
    assert got.users is None and got.counted is None and got.n_relevant is None
    assert f"{want.n_users} of 3000 users counted" in repr(got)
    empty = fr.evaluate(truth[:0], topk[:0], ["ndcg@10"], per_user=False)
    assert np.isnan(empty["ndcg@10"]) and empty.n_users == 0 and empty.n_rows == 0


def test_means_only_results_refuse_what_needs_per_user_values(workload):
    truth, topk, _, _ = workload
    res = fr.evaluate(truth, topk, ["ndcg@10"], per_user=False)
    message = "holds means only .evaluated with per_user=False.; evaluate again"
    for call in (lambda: res.per_user("ndcg@10"), lambda: res.ci("ndcg@10"),
                 lambda: res.by(np.zeros(3000)), lambda: res.to_frame(),
                 lambda: fr.compare({"a": res, "b": res}, "ndcg@10")):
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(TypeError, match="per_user must be True or False"):
        fr.evaluate(truth, topk, ["ndcg@10"], per_user="no")


def _tables_means_only():
    """(Tables, a means-only Result of it with curves, its Dask result of means only)."""
    inter = {"user": ["a", "a", "b", "b", "c"], "item": [1, 2, 1, 3, 2]}
    recs = {"user": ["a", "a", "b", "b", "c", "c"], "item": [1, 3, 2, 3, 2, 1],
            "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]}
    data = fr.io.from_tables(inter, recs, relevance=None)
    return data, data.evaluate(["ndcg@2", "ndcg@1"], per_user=False, curves=["ndcg"])


def _dask_means_only(data, res):
    import pandas as pd

    dd = pytest.importorskip("dask.dataframe")
    import fastrank.dask

    inter = pd.DataFrame({"user": ["a", "b"], "item": [1, 2]})
    recs = pd.DataFrame({"user": ["a", "b"], "item": [1, 3], "score": [1.0, 1.0]})
    got = fastrank.dask.evaluate(dd.from_pandas(inter, npartitions=1),
                                 dd.from_pandas(recs, npartitions=1), ["ndcg@2"],
                                 relevance=None, per_user=False)
    assert not got.has_per_user and got["ndcg@2"] == 0.5
    return got.per_user


# every way a Result's per-user values are read, called with a result of means only
MEANS_ONLY_READERS = {
    "Tables.per_user pandas": lambda data, res: data.per_user(res),
    "Tables.per_user pyarrow": lambda data, res: data.per_user(res, library="pyarrow"),
    "Tables.per_user polars": lambda data, res: data.per_user(res, library="polars"),
    "per_user_table dict (the CLI's --per-user)":
        lambda data, res: fr.io.per_user_table(res, data.users, library="dict"),
    "Result.per_user": lambda data, res: res.per_user("ndcg@2"),
    "Result.to_frame": lambda data, res: res.to_frame(),
    "Result.ci normal": lambda data, res: res.ci("ndcg@2", method="normal"),
    "stats.result_ci": lambda data, res: fr.stats.result_ci(res, "ndcg@2"),
    "Result.by": lambda data, res: res.by(["x", "y", "x"]),
    "stats.segments": lambda data, res: fr.stats.segments(res, ["x", "y", "x"]),
    "fr.compare": lambda data, res: fr.compare({"a": res, "b": res}, "ndcg@2"),
    "Result.curve": lambda data, res: res.curve("ndcg"),
    "plots.result_curve": lambda data, res: fr.plots.result_curve(res, "ndcg"),
    "Result.plot": lambda data, res: res.plot("ndcg"),
    "fr.plot_compare": lambda data, res: fr.plot_compare({"a": res}, "ndcg"),
    "fastrank.dask per_user": _dask_means_only,
}


@pytest.mark.parametrize("read", MEANS_ONLY_READERS.values(), ids=MEANS_ONLY_READERS)
def test_every_reader_of_per_user_values_refuses_means_only_by_name(read):
    """Whatever reads per-user values says a means-only result has none (a ValueError
    with the fix), not a TypeError from deep inside (int() of None, None[...])."""
    data, res = _tables_means_only()
    with pytest.raises(ValueError, match="needs per-user values, and this result holds "
                                         "means only .evaluated with per_user=False.; "
                                         "evaluate again with per_user=True"):
        read(data, res)


def test_a_curve_without_intervals_needs_only_the_means():
    data, res = _tables_means_only()
    curve = fr.plots.result_curve(res, "ndcg", level=None)
    assert_array_equal(curve.mean, [res["ndcg@1"], res["ndcg@2"]])


def test_strided_and_fortran_ordered_inputs_give_the_values_of_contiguous_ones():
    """Every walk reads C-contiguous arrays; a caller's strided or Fortran-ordered input
    that a facade would read in place (ids, a dense γ, item vectors, a baseline,
    propensities, factors) is read from a copy, with the same values."""
    rng = np.random.default_rng(4)
    n_users, n_items, n_aspects = 300, 60, 7
    rows, cols = np.nonzero(rng.random((n_users, n_items)) < 0.1)
    truth = sp.csr_array((rng.integers(1, 4, rows.size).astype(float), (rows, cols)),
                         shape=(n_users, n_items))
    train = sp.csr_array((rng.random((n_users, n_items)) < 0.1).astype(float))
    aspects = sp.csr_array((rng.random((n_items, n_aspects)) < 0.3).astype(np.int8))
    topk = rng.integers(-1, n_items, (n_users, 8))
    gamma = rng.random((n_users, n_aspects)) + 0.01
    vectors = rng.standard_normal((n_items, 5))
    propensity = rng.uniform(0.1, 1, n_items)
    factors = rng.standard_normal((n_users + n_items, 6))

    def wide(a):  # the same values, every other column of a larger array
        out = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        out[..., ::2] = a
        return out[..., ::2]

    metrics = ["ndcg@5", "ild@5", "serendipity@5", "recall_ips@5"]
    for odd in (np.asfortranarray, wide):
        want = fr.evaluate(truth, topk, metrics, train=train, item_vectors=vectors,
                           baseline=topk[::-1], propensity=propensity)
        got = fr.evaluate(truth, odd(topk), metrics, train=train, item_vectors=odd(vectors),
                          baseline=odd(topk[::-1].copy()),
                          propensity=wide(propensity[None, :])[0])
        for m in metrics:
            assert_array_equal(got.per_user(m), want.per_user(m), err_msg=m)
        labels = ["err_ia@5", "ild@5", "miscalibration@5"]
        want = fr.evaluate(truth, topk, labels, train=train, item_aspects=aspects)
        got = fr.evaluate(truth, odd(topk), labels, train=train, item_aspects=aspects)
        for m in labels:
            assert_array_equal(got.per_user(m), want.per_user(m), err_msg=m)
        for a, b in ((fr.ab_ndcg(truth, odd(topk), aspects, user_aspects=odd(gamma)),
                      fr.ab_ndcg(truth, topk, aspects, user_aspects=gamma)),
                     (fr.evaluate_factors(odd(factors[:n_users]), odd(factors[n_users:]),
                                          truth, ["ndcg@5", "auc"]),
                      fr.evaluate_factors(factors[:n_users], factors[n_users:], truth,
                                          ["ndcg@5", "auc"]))):
            for m in b.metrics:
                assert_array_equal(a.per_user(m), b.per_user(m), err_msg=m)
