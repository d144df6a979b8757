"""fastrank against the plain-Python reference on random small inputs, every convention."""

import math

import numpy as np
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
    counted = [v is not None for v in expected[metrics[0]][0]]
    assert res.counted.tolist() == counted
    assert res.n_users == sum(counted)


@pytest.mark.parametrize("convention", fr.CONVENTIONS)
@given(data=st.data())
@pytest.mark.slow
def test_random_inputs_match_reference(convention, data):
    truth, topk, users = data.draw(cases())
    metrics = data.draw(metric_lists(topk.shape[1], convention))
    assert_matches_reference(truth, topk, metrics, convention, users)
