"""Bad input (SPEC §5): a ValueError or TypeError that names the argument and the fix."""

import numpy as np
import pytest
import scipy.sparse as sp

import fastrank as fr

from .conftest import csr

TRUTH = csr([{0: 1.0}, {1: 2.0}], 3)
TOPK = np.array([[0, 1], [1, 2]])


def test_truth_must_be_sparse():
    with pytest.raises(TypeError, match="truth must be a scipy.sparse"):
        fr.evaluate(np.eye(2), TOPK, "ndcg")


def test_truth_values_must_be_numeric_and_finite():
    bad = TRUTH.astype(np.complex128)
    with pytest.raises(TypeError, match="truth values must be numeric"):
        fr.evaluate(bad, TOPK, "ndcg")
    nan = TRUTH.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="truth contains NaN"):
        fr.evaluate(nan, TOPK, "ndcg")


def test_malformed_csr_is_an_error_not_a_crash():
    def raw(indptr, indices, data, shape=(2, 3)):
        m = sp.csr_matrix(shape)
        m.indptr, m.indices, m.data = (np.asarray(indptr, np.int32),
                                       np.asarray(indices, np.int32), np.asarray(data, float))
        return m

    with pytest.raises(ValueError, match="never decrease"):
        fr.evaluate(raw([0, 2, 1], [0, 1], [1, 1]), TOPK, "ndcg")
    with pytest.raises(ValueError, match="indptr ends at 5"):
        fr.evaluate(raw([0, 1, 5], [0, 1], [1, 1]), TOPK, "ndcg")
    with pytest.raises(ValueError, match=r"column indices must lie in \[0, 3\)"):
        fr.evaluate(raw([0, 1, 2], [0, 7], [1, 1]), TOPK, "ndcg")
    with pytest.raises(ValueError, match=r"column indices must lie in \[0, 3\)"):
        fr.evaluate(raw([0, 1, 2], [-4, 1], [1, 1]), TOPK, "ndcg")
    with pytest.raises(ValueError, match="indptr has 2 entries"):
        fr.evaluate(raw([0, 1], [0], [1]), TOPK, "ndcg")
    with pytest.raises(ValueError, match="indptr ends at 1 but there are 2 stored entries"):
        fr.evaluate(raw([0, 1, 1], [0, 1], [1, 1]), TOPK, "ndcg")  # SPEC §5: not at nnz


def _coo(rows, cols, shape=(2, 3)):
    m = sp.coo_array(np.eye(*shape))
    m.row, m.col, m.data = (np.asarray(rows, np.int32), np.asarray(cols, np.int32),
                            np.ones(len(rows)))
    return m


def _csc(indptr, indices, shape=(2, 3)):
    m = sp.csc_array(np.ones(shape))
    m.indptr, m.indices = np.asarray(indptr, np.int32), np.asarray(indices, np.int32)
    m.data = np.ones(len(indices))
    return m


@pytest.mark.parametrize("matrix, match", [
    (lambda: _coo([0, 1, 5_000_000], [0, 1, 2]), r"malformed COO matrix: row indices must "
                                                 r"lie in \[0, 2\)"),
    (lambda: _coo([0, 1], [0, 7]), r"malformed COO matrix: col indices must lie in \[0, 3\)"),
    (lambda: _coo([0, -1], [0, 1]), "malformed COO matrix: row indices"),
    (lambda: _csc([0, 1, 2, 3], [0, 10_000_000, 1]), r"malformed CSC matrix: row indices must "
                                                     r"lie in \[0, 2\)"),
    (lambda: _csc([0, 1, 3, 2], [0, 1, 1]), "malformed CSC matrix: indptr must start at 0 "
                                            "and never decrease"),
    (lambda: _csc([0, 1, 2, 2], [0, 1, 1]), "indptr ends at 2 but there are 3"),
])
def test_malformed_coo_and_csc_are_checked_before_scipy_converts_them(matrix, match):
    """scipy's converters trust their input: a bad index there corrupts memory."""
    bad = matrix()
    before = [np.array(a, copy=True) for a in _arrays(bad)]
    for call in (lambda m: fr.evaluate(m, TOPK, "ndcg"),
                 lambda m: fr.Evaluator(m, ["ndcg@2"]),
                 lambda m: fr.topk(np.ones((2, 2)), np.ones((3, 2)), 2, exclude=m)):
        with pytest.raises(ValueError, match=match):
            call(bad)
    for a, b in zip(before, _arrays(bad)):
        np.testing.assert_array_equal(a, b)


def _arrays(m):
    return (m.row, m.col, m.data) if m.format == "coo" else (m.indptr, m.indices, m.data)


def test_topk_must_be_a_2d_integer_array_of_valid_ids():
    with pytest.raises(TypeError, match="topk must be an integer array"):
        fr.evaluate(TRUTH, TOPK.astype(float), "ndcg")
    with pytest.raises(TypeError, match="topk must be an integer array"):
        fr.evaluate(TRUTH, TOPK > 0, "ndcg")
    with pytest.raises(ValueError, match="topk must be 2-D"):
        fr.evaluate(TRUTH, TOPK[0], "ndcg")
    with pytest.raises(ValueError, match="topk has no columns"):
        fr.evaluate(TRUTH, np.zeros((2, 0), int), "ndcg")
    with pytest.raises(ValueError, match=r"item id 3, outside \[-1, 3\)"):
        fr.evaluate(TRUTH, np.array([[0, 3], [1, 2]]), "ndcg")
    with pytest.raises(ValueError, match=r"item id -2, outside"):
        fr.evaluate(TRUTH, np.array([[0, -2], [1, 2]]), "ndcg")


def test_row_count_mismatch_suggests_users():
    with pytest.raises(ValueError, match="topk has 1 rows but truth has 2; pass users="):
        fr.evaluate(TRUTH, TOPK[:1], "ndcg")


def test_users_must_be_valid_rows():
    with pytest.raises(ValueError, match="users must be 1-D with one truth row per topk row"):
        fr.evaluate(TRUTH, TOPK, "ndcg", users=[0])
    with pytest.raises(ValueError, match=r"users contains 2, outside \[0, 2\)"):
        fr.evaluate(TRUTH, TOPK, "ndcg", users=[0, 2])
    with pytest.raises(TypeError, match="users must be an integer array"):
        fr.evaluate(TRUTH, TOPK, "ndcg", users=[0.0, 1.0])


@pytest.mark.parametrize("label, pattern", [
    ("ndgc@2", "unknown metric 'ndgc@2'; did you mean 'ndcg'.* known names are precision, "
               "recall"),
    ("ndcg@0", "must be at least 1"),
    ("ndcg@-1", "must be a positive integer"),
    ("ndcg@x", "must be a positive integer"),
    ("r_precision@2", "has no cutoff of its own"),
])
def test_bad_metric_names(label, pattern):
    with pytest.raises(ValueError, match=pattern):
        fr.evaluate(TRUTH, TOPK, [label])


def test_metrics_type_and_emptiness():
    with pytest.raises(ValueError, match="metrics is empty"):
        fr.evaluate(TRUTH, TOPK, [])
    with pytest.raises(TypeError, match="metrics must be strings"):
        fr.evaluate(TRUTH, TOPK, [10])
    with pytest.raises(TypeError, match="metrics must be a string or a list"):
        fr.evaluate(TRUTH, TOPK, 10)


def test_convention_and_threads():
    with pytest.raises(ValueError, match="convention must be one of 'recsys', 'trec', 'implicit'"):
        fr.evaluate(TRUTH, TOPK, "ndcg", convention="ir")
    with pytest.raises(ValueError, match="n_threads must be between 1 and"):
        fr.evaluate(TRUTH, TOPK, "ndcg", n_threads=0)
    with pytest.raises(TypeError, match="n_threads must be an int"):
        fr.evaluate(TRUTH, TOPK, "ndcg", n_threads=1.5)


def test_result_is_a_read_only_mapping():
    res = fr.evaluate(TRUTH, TOPK, ["ndcg@2", "map", "ndcg@2"])
    assert list(res) == ["ndcg@2", "map"]  # repeated labels kept once, order kept
    assert len(res) == 2 and res.metrics == ("ndcg@2", "map")
    with pytest.raises(TypeError):
        res["ndcg@2"] = 0.0
    with pytest.raises(KeyError, match="'mrr' is not in this result; it holds ndcg@2, map"):
        res["mrr"]
    with pytest.raises(KeyError, match="not in this result"):
        res.per_user("mrr")
    with pytest.raises(ValueError):
        res.per_user("map")[0] = 1.0
    assert res.to_dict() == {"ndcg@2": res["ndcg@2"], "map": res["map"]}
    assert "2 of 2 users counted" in repr(res)
    assert "over" not in repr(res)  # every mean is over the counted users


def test_repr_says_what_a_mean_is_over_where_not_the_counted_users():
    # under trec, the aspect metrics count ndeval's topics: user 2's judged item has no
    # aspect, so it is counted by ndcg but no topic of err_ia
    truth = sp.csr_array(np.array([[1.0, 0, 1, 0], [0, 1, 0, 1], [0, 0, 0, 1]]))
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.int8))
    lists = np.array([[0, 1], [1, 2], [3, 0]])
    res = fr.evaluate(truth, lists, ["ndcg@2", "err_ia@2", "coverage@2"],
                      item_aspects=aspects, convention="trec")
    lines = repr(res).splitlines()
    assert lines[0] == "Result(trec, 3 of 3 users counted)"
    assert lines[1].split() == ["ndcg@2", f"{res['ndcg@2']:.6f}"]
    assert lines[2].split()[2:] == ["(over", "2", "users)"]
    assert np.isnan(res.per_user("err_ia@2")[2])
    assert lines[3].endswith("(catalogue)")
    means_only = fr.evaluate(truth, lists, ["err_ia@2"], item_aspects=aspects,
                             convention="trec", per_user=False)
    # without per-user values, the sums count the users each mean is over
    assert repr(means_only).splitlines()[1].split()[2:] == ["(over", "2", "users)"]
    assert means_only.n_users_of("err_ia@2") == res.n_users_of("err_ia@2") == 2


def test_to_frame_has_one_row_per_user():
    pd = pytest.importorskip("pandas")
    res = fr.evaluate(TRUTH, TOPK[::-1], ["ndcg@2", "map"], users=[1, 0])
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["ndcg@2", "map"]
    assert frame.index.tolist() == [1, 0]
    np.testing.assert_array_equal(frame["map"].to_numpy(), res.per_user("map"))
