"""fr.evaluate leaves the input scans to the ranking walk where the walk alone reads every
truth entry and list id (`Plan.checks_in_walk`): the same errors and the same values as
the scans give, for every kind of input they refuse or repair."""

import importlib

import numpy as np
import pytest
import scipy.sparse as sp

import fastrank as fr

facade = importlib.import_module("fastrank.evaluate_topk")
ranking_pass = importlib.import_module("fastrank.ranking_pass")

N_ITEMS = 8
METRICS = ["precision@4", "recall@4", "ndcg@4", "map@4", "auc@4", "mrr@4", "ndcg@2"]


def _base(index_dtype, value_dtype):
    """6 users: rows of several lengths, one empty, one of zeros only (not counted)."""
    rows = [{0: 2.0, 3: 1.0, 5: 3.0}, {}, {1: 0.0, 6: 0.0}, {2: 1.0, 4: 1.0, 7: 2.0, 0: 1.0},
            {5: 4.0}, {1: 1.0, 2: 0.0, 3: 2.0, 6: 1.0, 7: 1.0}]
    indptr, indices, data = [0], [], []
    for row in rows:
        for item in sorted(row):
            indices.append(item)
            data.append(row[item])
        indptr.append(len(indices))
    truth = sp.csr_array((np.array(data, value_dtype), np.array(indices, index_dtype),
                          np.array(indptr, index_dtype)), shape=(len(rows), N_ITEMS))
    topk = np.array([[5, 0, 1, -1], [0, 1, 2, 3], [1, 6, 6, 2], [7, 4, 4, 0], [5, -1, -1, -1],
                     [3, 6, 2, 0]])
    return truth, topk


def _spoiled(truth, where, value):
    """truth with one of its arrays changed in place of a copy (scipy is not asked)."""
    spoiled = truth.copy()
    getattr(spoiled, where)[_AT[where]] = value
    return spoiled


_AT = {"indptr": 3, "indices": 5, "data": 5}

# (array, new value at _AT, what the scans say): each kind of entry the scans refuse
REFUSED = [
    ("indptr", 1, "never decrease"),
    ("indptr", 40, "never decrease"),
    ("indices", N_ITEMS, r"column indices must lie in \[0, 8\)"),
    ("indices", -1, r"column indices must lie in \[0, 8\)"),
    ("data", np.nan, "NaN or infinite"),
    ("data", np.inf, "NaN or infinite"),
    ("data", -np.inf, "NaN or infinite"),
]


def _scanned(truth, topk, metrics, **kwargs):
    """fr.evaluate with the scans first: users= given, the walk does not see every row."""
    return fr.evaluate(truth, topk, metrics, users=np.arange(truth.shape[0]), **kwargs)


@pytest.fixture
def scans(monkeypatch):
    """The calls of the facade's scans, and "flagged" where the ranking walk stopped at
    what they refuse."""
    calls = []

    def rank_into(*args, _real=ranking_pass.rank_into):
        try:
            return _real(*args)
        except ranking_pass.InputFlagged:
            calls.append("flagged")
            raise
    monkeypatch.setattr(ranking_pass, "rank_into", rank_into)
    for name in ("scan_truth", "check_ids"):
        real = getattr(facade, name)

        def spy(*args, _real=real, _name=name):
            calls.append(_name)
            return _real(*args)
        monkeypatch.setattr(facade, name, spy)
    return calls


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("value_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where,value,message", REFUSED)
@pytest.mark.parametrize("convention", ["recsys", "trec"])
def test_a_truth_the_scans_refuse_is_refused_by_the_walk(scans, index_dtype, value_dtype, where,
                                                         value, message, convention):
    truth, topk = _base(index_dtype, value_dtype)
    spoiled = _spoiled(truth, where, value)
    with pytest.raises(ValueError, match=message) as scanned:
        _scanned(spoiled, topk.astype(index_dtype), METRICS, convention=convention)
    scans.clear()
    with pytest.raises(ValueError, match=message) as walked:
        fr.evaluate(spoiled, topk.astype(index_dtype), METRICS, convention=convention)
    assert str(walked.value) == str(scanned.value)
    assert scans[:2] == ["flagged", "scan_truth"]  # the walk stopped, the scans named it


@pytest.mark.parametrize("row,column,bad", [(0, 3, N_ITEMS), (0, 3, -2), (2, 0, 99),
                                            (1, 2, -5), (5, 3, N_ITEMS + 1)])
@pytest.mark.parametrize("topk_dtype", [np.int32, np.int64])
def test_list_ids_the_scans_refuse_are_refused_by_the_walk(scans, row, column, bad,
                                                           topk_dtype):
    """In a counted row, in row 2 (zeros only: not counted, its ids not walked for sums)
    and row 1 (empty), in the last column."""
    truth, topk = _base(np.int32, np.float64)
    topk = topk.astype(topk_dtype)
    topk[row, column] = bad
    match = f"topk contains item id {bad}, outside"
    for convention in ("recsys", "trec"):
        with pytest.raises(ValueError, match=match):
            _scanned(truth, topk, METRICS, convention=convention)
        scans.clear()
        with pytest.raises(ValueError, match=match):
            fr.evaluate(truth, topk, METRICS, convention=convention)
        assert scans == ["flagged", "scan_truth", "check_ids"]


@pytest.mark.parametrize("row", [0, 1, 2])
def test_columns_past_the_cutoffs_are_scanned_first(scans, row):
    """Cutoffs short of the lists' last column: the walk does not read it, so the ids are
    scanned before the walk (in counted, empty and uncounted rows) and the truth is not;
    a bad truth is named before bad ids, as the scans name them."""
    truth, topk = _base(np.int32, np.float64)
    metrics = ["ndcg@3", "precision@1"]
    assert np.array_equal(fr.evaluate(truth, topk, metrics).per_user("ndcg@3"),
                          _scanned(truth, topk, metrics).per_user("ndcg@3"), equal_nan=True)
    scans.clear()
    fr.evaluate(truth, topk, metrics)
    assert scans == ["check_ids"]
    topk[row, 3] = N_ITEMS
    with pytest.raises(ValueError, match="topk contains item id 8"):
        fr.evaluate(truth, topk, metrics)
    topk[row, 3] = -3
    with pytest.raises(ValueError, match="topk contains item id -3"):
        fr.evaluate(truth, topk, ["ndcg@2"], k=2)
    with pytest.raises(ValueError, match="never decrease"):
        fr.evaluate(_spoiled(truth, "indptr", 1), topk, metrics)


@pytest.mark.parametrize("metrics,kwargs", [
    (METRICS + ["dcg@4", "hits@4", "f1@4", "ndcg_exp@4", "err@4", "r_precision"], {}),
    (METRICS, {"per_user": False}),
    (METRICS, {"show_progress": True, "convention": "trec"}),
    (METRICS, {"curves": True}),
])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_inputs_the_scans_accept_give_the_same_values_without_them(scans, metrics, kwargs,
                                                                   index_dtype):
    truth, topk = _base(index_dtype, np.float64)
    walked = fr.evaluate(truth, topk, metrics, **kwargs)
    assert scans == []
    scanned = _scanned(truth, topk, metrics, **kwargs)
    assert scans == ["scan_truth", "check_ids"]
    for label in metrics:
        assert np.array_equal(walked[label], scanned[label], equal_nan=True), label
        if walked.has_per_user:
            assert np.array_equal(walked.per_user(label), scanned.per_user(label),
                                  equal_nan=True), label


@pytest.mark.parametrize("repair", ["unsorted", "duplicates"])
def test_rows_out_of_order_or_repeated_are_repaired_as_the_scans_repair_them(scans, repair):
    """A non-canonical truth is no error: the walk stops at the row, the scans make a
    canonical copy, and the walk runs again; the caller's matrix is untouched."""
    truth, topk = _base(np.int32, np.float64)
    spoiled = truth.copy()
    row = slice(int(spoiled.indptr[3]), int(spoiled.indptr[4]))
    if repair == "unsorted":
        spoiled.indices[row] = spoiled.indices[row][::-1].copy()
        spoiled.data[row] = spoiled.data[row][::-1].copy()
    else:
        spoiled.indices[row.start + 1] = spoiled.indices[row.start]
    spoiled.has_canonical_format = False
    before = (spoiled.indptr.copy(), spoiled.indices.copy(), spoiled.data.copy())
    walked = fr.evaluate(spoiled, topk, METRICS)
    assert scans == ["flagged", "scan_truth", "check_ids"]
    scanned = _scanned(spoiled, topk, METRICS)
    for label in METRICS:
        assert np.array_equal(walked.per_user(label), scanned.per_user(label),
                              equal_nan=True), label
    if repair == "unsorted":  # the same matrix: the same values as the canonical one
        for label in METRICS:
            assert np.array_equal(walked.per_user(label),
                                  fr.evaluate(truth, topk, METRICS).per_user(label),
                                  equal_nan=True), label
    for got, was in zip((spoiled.indptr, spoiled.indices, spoiled.data), before):
        assert np.array_equal(got, was)


def test_other_passes_and_subsets_of_rows_are_scanned_first(scans):
    """A second pass (a threshold), or users= mapping the rows: the scans run first."""
    truth, topk = _base(np.int32, np.float64)
    fr.evaluate(truth, topk, ["ndcg@4", "precision(rel=2)@4"])
    assert scans == ["scan_truth", "check_ids"]
    scans.clear()
    fr.evaluate(truth, topk[:3], ["ndcg@4"], users=[5, 0, 2])
    assert scans == ["scan_truth", "check_ids"]


@pytest.mark.parametrize("kwargs", [{"per_user": False}, {"show_progress": True}])
def test_spans_stopped_by_the_walk_give_the_scans_error_or_values(scans, kwargs):
    """Means only and progress run the users in spans: a flag in one of them restarts the
    whole evaluation after the scans."""
    truth, topk = _base(np.int32, np.float64)
    with pytest.raises(ValueError, match="NaN or infinite"):
        fr.evaluate(_spoiled(truth, "data", np.nan), topk, METRICS, **kwargs)
    unsorted = truth.copy()
    row = slice(int(unsorted.indptr[3]), int(unsorted.indptr[4]))
    unsorted.indices[row] = unsorted.indices[row][::-1].copy()
    unsorted.data[row] = unsorted.data[row][::-1].copy()
    unsorted.has_canonical_format = False
    scans.clear()
    walked = fr.evaluate(unsorted, topk, METRICS, **kwargs)
    assert scans == ["flagged", "scan_truth", "check_ids"]
    expected = fr.evaluate(truth, topk, METRICS, **kwargs)
    for label in METRICS:
        assert walked[label] == expected[label], label


def test_an_indptr_that_decreases_within_the_entries_allocates_nothing_for_it(scans):
    """Steps that stay within the entries but go back (the longest row would size the
    walk's scratch): refused before the walk."""
    truth, topk = _base(np.int64, np.float64)
    nnz = truth.nnz
    spoiled = truth.copy()
    spoiled.indptr[:] = [0, nnz, 0, nnz, 0, nnz, nnz]
    with pytest.raises(ValueError, match="never decrease"):
        fr.evaluate(spoiled, topk, METRICS)
    assert scans[:2] == ["flagged", "scan_truth"]


@pytest.mark.parametrize("dtype,value", [(np.float64, 1e308), (np.float32, 3e38),
                                         (np.float64, -1e308)])
def test_duplicates_that_sum_past_the_dtype_are_refused_on_every_path(dtype, value):
    truth = sp.csr_array((np.array([value, value, 1.0], dtype), np.array([0, 0, 1]),
                          np.array([0, 2, 3])), shape=(2, 3))
    topk = np.array([[0, 1], [1, 2]])
    for users in (None, [0, 1]):
        with pytest.raises(ValueError, match="duplicate .* sum past the range"):
            fr.evaluate(truth, topk, ["ndcg@2"], users=users)


@pytest.mark.parametrize("call,match", [
    (lambda t: fr.evaluate(t, np.array([[0, 1], [1, 0], [0, 1]]), "ndcg"), "NaN or infinite"),
    (lambda t: fr.evaluate(t, np.array([[0.5, 1.0]]), "ndcg"), "NaN or infinite"),
    (lambda t: fr.evaluate(t, np.array([[0, 1]]), "no_such_metric@2"), "NaN or infinite"),
    (lambda t: fr.evaluate(t, np.array([[0, 1]]), "ndcg", k=0), "NaN or infinite"),
    (lambda t: fr.evaluate(t, np.array([[0, 7]]), "ndcg@1"), "NaN or infinite"),
])
def test_the_truth_is_named_before_the_other_arguments(call, match):
    """As when the truth was scanned first: its error before topk's, users', k's or the
    metrics'."""
    with pytest.raises(ValueError, match=match):
        call(sp.csr_array(np.array([[np.nan, 1.0]])))
