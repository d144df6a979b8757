"""recall_ips, recall_snips, dcg_ips, dcg_snips, ap_ips and ap_snips in fr.evaluate and
fr.Evaluator: against the plain-Python reference, against the plain metrics where the
propensities are equal, on their edge cases and bad inputs, and on synthetic
missing-not-at-random data, where they must come closer to the full truth than the
naive metrics."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import fastrank as fr
from fastrank.synthetic import power_law

from . import reference_debiased as ref
from .reference import truth_rows
from .strategies import cases

NAMES = ref.NAMES
CONVENTIONS = ["recsys", "trec", "implicit"]


def check(res, expect, labels):
    for label in labels:
        got = res.per_user(label)
        want = expect[label]
        assert got.shape == (len(want),)
        for u, value in enumerate(want):
            if value is None:
                assert np.isnan(got[u]), (label, u)
            else:
                assert got[u] == pytest.approx(value, rel=1e-12, abs=1e-15), (label, u)
        counted = [v for v in want if v is not None]
        if counted:
            assert res[label] == pytest.approx(sum(counted) / len(counted), rel=1e-12,
                                               abs=1e-15)
        else:
            assert np.isnan(res[label])


@st.composite
def labels(draw, k_max, gammas=False):
    out = []
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True)):
        label = name
        if gammas and draw(st.booleans()):
            label += f"(gamma={draw(st.sampled_from(fr.METRICS[name].param('gamma').examples))})"
        if draw(st.booleans()):
            label += f"@{draw(st.integers(1, k_max))}"
        out.append(label)
    return out


@given(case=cases(), data=st.data(), convention=st.sampled_from(CONVENTIONS))
@pytest.mark.slow
def test_given_propensities_match_the_reference(case, data, convention):
    truth, topk, users = case
    n_items = truth.shape[1]
    k = topk.shape[1]
    chosen = data.draw(labels(k))
    p = np.array(data.draw(st.lists(st.sampled_from([1.0, 0.5, 0.3, 0.01, 2.0, 1e-6]),
                                    min_size=n_items, max_size=n_items)))
    res = fr.evaluate(truth, topk, chosen, users=users, convention=convention, propensity=p)
    rows = truth_rows(truth)
    rows_of = list(range(topk.shape[0])) if users is None else users.tolist()
    expect = ref.reference(rows, topk.tolist(), rows_of, chosen, lambda _: (1 / p).tolist(),
                           convention)
    check(res, expect, chosen)


@given(case=cases(), train_case=cases(max_users=10), data=st.data(),
       convention=st.sampled_from(CONVENTIONS))
@pytest.mark.slow
def test_popularity_propensities_match_the_reference(case, train_case, data, convention):
    truth, topk, users = case
    n_items = truth.shape[1]
    train = train_case[0]
    train = sp.csr_array(train[:, :n_items]) if train.shape[1] >= n_items else \
        sp.csr_array((train.data, train.indices, train.indptr),
                     shape=(train.shape[0], n_items))
    chosen = data.draw(labels(topk.shape[1], gammas=True))
    res = fr.evaluate(truth, topk, chosen, users=users, convention=convention, train=train)
    rows = truth_rows(truth)
    rows_of = list(range(topk.shape[0])) if users is None else users.tolist()
    expect = ref.reference(rows, topk.tolist(), rows_of, chosen,
                           lambda gamma: ref.popularity_weights(train, n_items, gamma),
                           convention)
    check(res, expect, chosen)


@pytest.fixture(scope="module")
def workload():
    truth, topk = power_law(600, 80, 10, seed=5)
    topk = topk.astype(np.int64)
    rng = np.random.default_rng(2)
    topk[rng.random(topk.shape) < 0.05] = -1                                  # padding
    topk[:, 9] = np.where(rng.random(600) < 0.2, topk[:, 0], topk[:, 9])      # repeats
    train, _ = power_law(900, 80, 8, seed=6)
    return truth, topk, train


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_equal_propensities_give_the_plain_metrics(workload, convention):
    truth, topk, _ = workload
    binary = truth.copy()
    binary.data = (binary.data > 0).astype(np.float64)
    plain = fr.evaluate(binary, topk, ["recall@10", "recall@3", "mar@5", "mar", "dcg@4"],
                        convention=convention)
    m = plain.n_relevant.astype(np.float64)
    for p in (np.ones(80), np.full(80, 0.3), np.full(80, 7.0)):
        res = fr.evaluate(truth, topk, ["recall_ips@10", "recall_snips@3", "ap_ips@5",
                                        "ap_snips", "dcg_ips@4", "dcg_snips@4"],
                          convention=convention, propensity=p)
        close = dict(rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(res.per_user("recall_ips@10"), plain.per_user("recall@10"),
                                   **close)
        np.testing.assert_allclose(res.per_user("recall_snips@3"), plain.per_user("recall@3"),
                                   **close)
        np.testing.assert_allclose(res.per_user("ap_ips@5"), plain.per_user("mar@5"), **close)
        np.testing.assert_allclose(res.per_user("ap_snips"), plain.per_user("mar"), **close)
        dcg = np.divide(plain.per_user("dcg@4"), m, out=np.zeros_like(m), where=m > 0)
        dcg[np.isnan(plain.per_user("dcg@4"))] = np.nan
        np.testing.assert_allclose(res.per_user("dcg_ips@4"), dcg, **close)
        np.testing.assert_allclose(res.per_user("dcg_snips@4"), dcg, **close)
        assert res["recall_ips@10"] == pytest.approx(plain["recall@10"], rel=1e-12)
    # propensities of 1 give the plain recall to the last bit
    ones = fr.evaluate(truth, topk, ["recall_ips@10"], convention=convention,
                       propensity=np.ones(80))
    np.testing.assert_array_equal(ones.per_user("recall_ips@10"), plain.per_user("recall@10"))
    # gamma = -1: p ∝ n^0, equal propensities from train
    _, _, train = workload
    flat = fr.evaluate(truth, topk, ["recall_snips(gamma=-1)@10", "recall_ips(gamma=-1)@10"],
                       convention=convention, train=train)
    np.testing.assert_array_equal(flat.per_user("recall_ips(gamma=-1)@10"),
                                  plain.per_user("recall@10"))
    np.testing.assert_allclose(flat.per_user("recall_snips(gamma=-1)@10"),
                               plain.per_user("recall@10"), rtol=1e-12)


def test_propensities_only_matter_up_to_a_constant(workload):
    truth, topk, _ = workload
    p = np.random.default_rng(4).uniform(0.05, 1.0, 80)
    names = [f"{n}@7" for n in NAMES]
    one = fr.evaluate(truth, topk, names, propensity=p)
    other = fr.evaluate(truth, topk, names, propensity=p * 37.0)
    for label in names:
        np.testing.assert_allclose(one.per_user(label), other.per_user(label), rtol=1e-12)


def test_edge_cases_empty_rows_short_lists_padding_duplicates():
    truth = sp.csr_array(np.array([[0, 0, 0, 0, 0],       # empty row
                                   [2, 0, 0, 1, 0],       # m = 2 < k
                                   [0, 0, 0, 0, 0.0],
                                   [1, 1, 1, 1, 1],       # everything relevant
                                   [0, -1, 0, 0, 3]]))    # a judged non-relevant entry
    truth.eliminate_zeros()
    topk = np.array([[0, 1, 2],
                     [3, 3, 0],        # a repeat: counted once, takes a slot
                     [-1, -1, -1],
                     [-1, 4, 4],       # padding first
                     [1, 4, -1]], dtype=np.int64)
    p = np.array([0.5, 1.0, 0.25, 0.5, 1.0])
    w = 1 / p
    res = fr.evaluate(truth, topk, ["recall_ips", "recall_snips", "dcg_snips@2", "ap_ips@3",
                                    "ap_snips@1"], propensity=p)
    w_mean = (w[0] + w[3] + w.sum() + w[4]) / 8
    d = 1 / np.log2(np.arange(2, 5))
    assert np.isnan(res.per_user("recall_ips")[[0, 2]]).all()
    np.testing.assert_allclose(res.per_user("recall_ips")[[1, 3, 4]],
                               [(w[3] + w[0]) / (2 * w_mean), w[4] / (5 * w_mean),
                                w[4] / w_mean], rtol=1e-12)
    np.testing.assert_allclose(res.per_user("recall_snips")[[1, 3, 4]],
                               [1.0, w[4] / w.sum(), 1.0], rtol=1e-12)
    np.testing.assert_allclose(res.per_user("dcg_snips@2")[[1, 3, 4]],
                               [w[3] * d[0] / (w[0] + w[3]), w[4] * d[1] / w.sum(),
                                d[1]], rtol=1e-12)
    np.testing.assert_allclose(res.per_user("ap_ips@3")[[1, 3, 4]],
                               [(w[3] + w[0] * 2 / 3) / (2 * w_mean),
                                w[4] / 2 / (5 * w_mean), w[4] / 2 / w_mean], rtol=1e-12)
    np.testing.assert_allclose(res.per_user("ap_snips@1")[[1, 3, 4]],
                               [w[3] / (w[0] + w[3]), 0.0, 0.0], rtol=1e-12)
    # trec counts judged rows: row 4 is judged with m = 1; empty rows stay out
    trec = fr.evaluate(truth, topk, ["recall_ips"], propensity=p, convention="trec")
    assert np.isnan(trec.per_user("recall_ips")[[0, 2]]).all()
    only_judged = sp.csr_array(np.array([[0, -1.0, 0, 0, 0]]))
    zero = fr.evaluate(only_judged, topk[:1], ["recall_snips", "dcg_ips"], propensity=p,
                       convention="trec")
    assert zero.per_user("recall_snips")[0] == 0.0 and zero.per_user("dcg_ips")[0] == 0.0
    none = fr.evaluate(only_judged, topk[:1], ["recall_snips"], propensity=p)
    assert np.isnan(none["recall_snips"])


def test_dtypes_read_only_inputs_and_users(workload):
    truth, topk, train = workload
    labels = [f"{n}@6" for n in NAMES] + ["recall_snips(gamma=2)"]
    want = fr.evaluate(truth, topk, labels, train=train)
    t64 = truth.copy()
    t64.indices, t64.indptr = t64.indices.astype(np.int64), t64.indptr.astype(np.int64)
    ids = topk.astype(np.int32)
    ids.setflags(write=False)
    t64.data.setflags(write=False)
    got = fr.evaluate(t64, ids, labels, train=train)
    for label in labels:
        np.testing.assert_array_equal(got.per_user(label), want.per_user(label))
    # users=: rows in another order, one twice
    users = np.array([5, 3, 5, 0])
    sub = fr.evaluate(truth, topk[users], labels, train=train, users=users)
    for label in labels:
        np.testing.assert_array_equal(sub.per_user(label), want.per_user(label)[users])
    # integer and read-only propensities, never modified
    p = np.arange(1, 81)
    p.setflags(write=False)
    before = p.copy()
    res = fr.evaluate(truth, topk, ["recall_snips@6"], propensity=p)
    np.testing.assert_array_equal(p, before)
    floats = fr.evaluate(truth, topk, ["recall_snips@6"], propensity=p.astype(float))
    np.testing.assert_array_equal(res.per_user("recall_snips@6"),
                                  floats.per_user("recall_snips@6"))


def test_bit_identical_for_any_threads_and_ranges(workload):
    from fastrank._kernels import frames
    from fastrank._kernels.debiased import debiased_rows
    from fastrank.validation import check_topk, check_truth

    truth, topk, train = workload
    labels = [f"{n}@{k}" for n in NAMES for k in (1, 5, 10)]
    one = fr.evaluate(truth, topk, labels, train=train, n_threads=1)
    many = fr.evaluate(truth, topk, labels, train=train,
                       n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    for label in labels:
        np.testing.assert_array_equal(one.per_user(label), many.per_user(label))
    # the kernel itself, on 1, 7 and one range per user
    data, ids = check_truth(truth), check_topk(topk, 80)
    rows = np.arange(600, dtype=np.int64)
    counted = np.ones(600, np.uint8)
    weights = np.random.default_rng(0).uniform(1, 20, 80)
    cutoffs = np.array([2, 10], np.int64)
    codes = np.arange(6, dtype=np.int64).repeat(2)
    cuts = np.tile([0, 1], 6).astype(np.int64)
    disc = 1 / np.log2(np.arange(2, 12))
    outs = []
    for n_chunks in (1, 7, 600):
        out = np.empty((12, 600))
        args = (data.indptr, data.indices, data.data, ids, rows, counted, weights, 3.0,
                cutoffs, codes, cuts, disc, 80, out)
        frame = frames.Frame(*args)
        assert frames.run(frames.walk(debiased_rows, frame.dtypes), frame, n_chunks).all()
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_evaluator_blocks_equal_one_evaluate(workload):
    truth, topk, train = workload
    labels = [f"{n}@5" for n in NAMES] + ["ap_ips(gamma=1)", "ndcg@5"]
    p = np.random.default_rng(9).uniform(0.1, 1, 80)
    for side in (dict(train=train), dict(propensity=p)):
        if "propensity" in side:
            labels = [label for label in labels if "gamma" not in label]
        want = fr.evaluate(truth, topk, labels, **side)
        ev = fr.Evaluator(truth, labels, **side)
        for lo in (400, 0, 200):
            ev.update(np.arange(lo, lo + 200), topk[lo:lo + 200])
        got = ev.result()
        order = np.r_[400:600, 0:400]
        for label in got.metrics:
            np.testing.assert_array_equal(got.per_user(label), want.per_user(label)[order])
            assert got[label] == pytest.approx(want[label], rel=1e-12)
    other = fr.Evaluator(truth, ["recall_ips@5"], propensity=p * 2)
    mine = fr.Evaluator(truth, ["recall_ips@5"], propensity=p)
    with pytest.raises(ValueError, match="different propensity="):
        mine.merge(other.update(np.arange(3), topk[:3]))


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, r"recall_ips@5 needs propensity= or train= \(each item's chance"),
    ({"propensity": np.ones(79)}, ValueError, r"propensity must be 1-D with one value per "
                                              r"item \(n_items = 80"),
    ({"propensity": np.ones((80, 1))}, ValueError, "propensity must be 1-D"),
    ({"propensity": np.r_[np.ones(79), np.nan]}, ValueError,
     "propensity contains nan at item 79"),
    ({"propensity": np.r_[np.ones(79), np.inf]}, ValueError, "finite number > 0"),
    ({"propensity": np.r_[0.0, np.ones(79)]}, ValueError,
     r"propensity contains 0.0 at item 0 .* never observed cannot be reweighted"),
    ({"propensity": np.r_[-0.5, np.ones(79)]}, ValueError, "propensity contains -0.5"),
    ({"propensity": np.r_[1e-300, np.ones(79)]}, ValueError, "below 1e-250"),
    ({"propensity": np.ones(80, bool)}, TypeError, "propensity must hold real numbers"),
    ({"propensity": np.array(["a"] * 80)}, TypeError, "propensity must hold real numbers"),
    ({"propensity": sp.csr_array(np.ones((1, 80)))}, TypeError, "dense 1-D array"),
    ({"train": sp.csr_array((3, 7))}, ValueError, "train has 7 columns"),
])
def test_bad_propensities(workload, kwargs, error, match):
    truth, topk, _ = workload
    with pytest.raises(error, match=match):
        fr.evaluate(truth, topk, ["recall_ips@5"], **kwargs)


def test_bad_labels_and_refusals(workload):
    truth, topk, train = workload
    with pytest.raises(ValueError, match=r"gamma= is the exponent .* drop gamma="):
        fr.evaluate(truth, topk, ["dcg_snips(gamma=1)@5"], propensity=np.ones(80))
    with pytest.raises(ValueError, match=r"gamma='10' is not a number in \[-1, 9\]"):
        fr.evaluate(truth, topk, ["dcg_snips(gamma=10)@5"], train=train)
    with pytest.raises(ValueError, match="not a ranking metric; curves"):
        fr.evaluate(truth, topk, ["recall_ips@5"], train=train, curves=["recall_ips"])
    with pytest.raises(ValueError, match="needs propensity= or train="):
        fr.Evaluator(truth, ["ap_snips@3"])


def test_ips_and_snips_are_closer_to_the_full_truth_than_the_naive_metrics():
    """Missing-not-at-random observations: each relevant (user, item) pair of a known full
    truth is observed with a propensity that grows with the item's popularity. Against
    the full-truth metric, the naive metric on the observations is biased (up for a
    recommender of popular items, down for one of unpopular items); IPS and SNIPS with the
    true propensities come closer. (For random lists the naive metric is unbiased: the
    estimates stay as close.) With under two observed items per user, SNIPS keeps much of
    the naive bias (one observed item: SNIPS recall is the naive recall); IPS, whose
    normaliser is pooled over the truth, removes most of it."""
    rng = np.random.default_rng(17)
    n_users, n_items = 4000, 300
    appeal = (np.arange(1, n_items + 1) ** -0.8)
    full = sp.csr_array(rng.random((n_users, n_items)) < 0.3 * appeal / appeal.max() + 0.02)
    full = sp.csr_array(full.astype(np.float64))
    p = 0.05 + 0.9 * (appeal / appeal.max()) ** 0.7          # popular items observed more
    seen = full.copy()
    seen.data = (rng.random(seen.nnz) < p[seen.indices]).astype(np.float64)
    seen.eliminate_zeros()
    counted = np.diff(seen.indptr) > 0
    popular = np.tile(np.arange(10), (n_users, 1))
    tail = np.tile(np.arange(n_items - 10, n_items), (n_users, 1))
    mixed = np.argsort(rng.random((n_users, n_items)), axis=1)[:, :10]
    pairs = [("recall", "recall"), ("dcg", "dcg"), ("ap", "mar")]
    for lists, biased in ((popular, True), (tail, True), (mixed, False)):
        truth_res = fr.evaluate(full, lists, ["recall@10", "dcg@10", "mar@10"])
        naive = fr.evaluate(seen, lists, ["recall@10", "dcg@10", "mar@10"])
        est = fr.evaluate(seen, lists, [f"{n}_{v}@10" for n, _ in pairs for v in ("ips",
                                                                                   "snips")],
                          propensity=p)
        m_full = np.diff(full.indptr)[counted].astype(np.float64)
        m_seen = naive.n_relevant[counted].astype(np.float64)
        for name, plain in pairs:
            target = truth_res.per_user(f"{plain}@10")[counted]
            observed = naive.per_user(f"{plain}@10")[counted]
            if name == "dcg":  # the debiased DCG is per relevant item: DCG / m
                target, observed = target / m_full, observed / m_seen
            naive_error = abs(observed.mean() - target.mean())
            for variant in ("ips", "snips"):
                error = abs(est[f"{name}_{variant}@10"] - target.mean())
                if biased:
                    assert error < naive_error, (name, variant, error, naive_error)
                    if variant == "ips":
                        assert error < naive_error / 4, (name, error, naive_error)
                else:
                    assert error < 0.003, (name, variant, error, naive_error)


def test_an_unused_propensity_is_checked_all_the_same():
    """A propensity given beside metrics that do not use it (the _ips suffix forgotten,
    say) is checked as the debiased metrics check it, not dropped unread."""
    truth = sp.csr_array(np.array([[1, 0, 1, 0], [0, 1, 0, 0.]]))
    topk = np.array([[0, 1, 2], [1, -1, -1]])
    with pytest.raises(ValueError, match="propensity"):
        fr.evaluate(truth, topk, ["recall@2"], propensity=np.array([np.nan, 1, 1, 1]))
    res = fr.evaluate(truth, topk, ["recall@2"], propensity=np.array([0.5, 1, 1, 1]))
    assert res["recall@2"] == 0.75
