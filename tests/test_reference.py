"""fastrank against the plain-Python reference on random small inputs, every convention."""

import math

import numpy as np
import scipy.sparse as sp
import pytest
from hypothesis import given, strategies as st
from numpy.testing import assert_allclose

import fastrank as fr

from .reference import reference
from .strategies import cases, metric_lists


def assert_matches_reference(truth, topk, metrics, convention, users=None):
    res = fr.evaluate(truth, topk, metrics, convention=convention, users=users)
    expected = reference(truth, topk, metrics, convention, users)
    for label in metrics:
        per_user, mean = expected[label]
        got = res.per_user(label)
        want = np.array([math.nan if v is None else v for v in per_user], dtype=np.float64)
        assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True, err_msg=label)
        if math.isnan(mean):
            assert math.isnan(res[label]), label
        else:
            assert res[label] == pytest.approx(mean, rel=1e-12, abs=0), label
    # the users some metric counts
    counted = [any(expected[label][0][i] is not None for label in metrics)
               for i in range(len(topk))]
    assert res.counted.tolist() == counted
    assert res.n_users == sum(counted)


@pytest.mark.parametrize("convention", fr.CONVENTIONS)
@given(data=st.data())
@pytest.mark.slow
def test_random_inputs_match_reference(convention, data):
    truth, topk, users = data.draw(cases())
    metrics = data.draw(metric_lists(topk.shape[1], convention))
    assert_matches_reference(truth, topk, metrics, convention, users)


@pytest.mark.parametrize("grades", [(1.0, 2.0, 2.5, 3.0, 7.0), (1.0, 2.0, 3.0, 4.0, 15.0),
                                    (1.0, 3.0, 16.0)])
@pytest.mark.parametrize("m, k", [(5, 3), (10, 10), (32, 5), (33, 4), (40, 40), (200, 30),
                                  (200, 3)])
def test_each_way_of_ranking_the_ideal_matches_the_reference(m, k, grades):
    """The graded ideal is ranked by counting the grades (rows of whole grades up to 15),
    by counting ranks (other rows of at most 32 relevant values) or by a heap of the ideal's
    values (longer rows, a short or a deep ideal): each against the reference, with ties
    and every kind of gain."""
    rng = np.random.default_rng(m * 100 + k)
    n_users, n_items = 30, 400
    dense = np.zeros((n_users, n_items))
    for u in range(n_users):
        items = rng.choice(n_items, m, replace=False)
        dense[u, items] = rng.choice(grades, m)  # many ties
    dense[0, :] = 0.0
    dense[0, :m] = 2.0  # all equal
    truth = sp.csr_array(dense)
    topk = np.argsort(-dense - rng.random(dense.shape), axis=1)[:, :k]
    topk[1::2] = rng.permutation(topk[1::2].T).T  # half of the lists out of order
    labels = [f"ndcg@{k}", f"ndcg_exp@{k}", f"ndcg@{max(k // 2, 1)}", "nerr@3", "ndcg"]
    for convention in fr.CONVENTIONS:
        assert_matches_reference(truth, topk, labels, convention)
