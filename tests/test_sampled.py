"""Sampled metrics and Krichene & Rendle's corrections (fastrank.sampled) against a
plain-Python reference written from the formulas, edge cases, bad input, and a simulation
with known full-catalogue ranks."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import lsq_linear
from scipy.stats import binom, hypergeom

import fastrank as fr
from fastrank.sampled import correction_table

CORRECTIONS = ("none", "adjusted", "mes", "bv")
TAG = {"none": "sampled", "adjusted": "adjusted", "mes": "mes", "bv": "bv"}


# -- the reference: loops over the formulas ---------------------------------------------


def ref_value(name, k, x, length):
    """One relevant item at rank x of a list of `length` items."""
    inside = k is None or x <= k
    if name == "auc":
        return (length - x) / (length - 1)
    if not inside:
        return 0.0
    return {"recall": 1.0, "hit_rate": 1.0, "precision": 1.0 / k if k else 0.0,
            "ndcg": 1.0 / math.log2(x + 1), "map": 1.0 / x, "ap": 1.0 / x,
            "mrr": 1.0 / x}[name]


def parse(label):
    name, _, k = label.partition("@")
    return name, (int(k) if k else None)


def ref_pmf(n, m, sampling):
    """A[R - 1, r - 1] = P(r | R), from scipy.stats (not the kernel's lgamma tables)."""
    big_r = np.arange(1, n + 1)[:, None]
    j = np.arange(m + 1)[None, :]
    if sampling == "binomial":
        return binom.pmf(j, m, (big_r - 1) / (n - 1))
    return hypergeom.pmf(j, n - 1, big_r - 1, m)


def ref_table(n, m, label, correction, lam=0.01, sampling="binomial", prior=None):
    name, k = parse(label)
    if correction == "none":
        return np.array([ref_value(name, k, r, m + 1) for r in range(1, m + 2)])
    if correction == "adjusted":
        return np.array([ref_value(name, k, 1 + (r - 1) * (n - 1) / m, n)
                         for r in range(1, m + 2)])
    a = ref_pmf(n, m, sampling)
    b = np.array([ref_value(name, k, big_r, n) for big_r in range(1, n + 1)])
    w = np.full(n, 1.0 / n) if prior is None else np.asarray(prior, float) / np.sum(prior)
    if correction == "bv":  # the normal equations of the paper's objective, as written
        gram = (a * w[:, None]).T @ a
        c = w @ a
        return np.linalg.solve((1 - lam) * gram + lam * np.diag(c), (a * w[:, None]).T @ b)
    sw = np.sqrt(w)
    return lsq_linear(a * sw[:, None], b * sw, bounds=(b.min(), b.max()), method="bvls").x


def ref_bias(n, m, label, table, sampling="binomial"):
    """Σ_R w_R (Σ_r P(r|R) M̃(r) - M(R))², uniform w."""
    name, k = parse(label)
    a = ref_pmf(n, m, sampling)
    b = np.array([ref_value(name, k, big_r, n) for big_r in range(1, n + 1)])
    return float(np.mean((a @ table - b) ** 2))


def ref_cases(scores, mask):
    """[(user, above, equal, m)] per positive, by loops."""
    cases = []
    for u, (row, pos) in enumerate(zip(scores.tolist(), mask.tolist())):
        negatives = [s for s, p in zip(row, pos) if not p]
        for s, p in zip(row, pos):
            if p:
                cases.append((u, sum(v > s for v in negatives), sum(v == s for v in negatives),
                              len(negatives)))
    return cases


def ref_per_user(scores, mask, n, label, correction, ties, **kw):
    cases = ref_cases(scores, mask)
    tables = {}
    out = np.zeros(scores.shape[0])
    count = np.zeros(scores.shape[0])
    for u, above, equal, m in cases:
        if m not in tables:
            tables[m] = ref_table(n, m, label, correction, **kw)
        t = tables[m]
        if ties == "pessimistic":
            v = t[above + equal]
        elif ties == "optimistic":
            v = t[above]
        else:
            v = sum(t[above + i] for i in range(equal + 1)) / (equal + 1)
        out[u] += v
        count[u] += 1
    return out / count


# -- kernels against the reference ------------------------------------------------------


LABELS = ["recall@3", "hit_rate@1", "precision@5", "ndcg@4", "ndcg", "map@3", "ap@2", "mrr",
          "mrr@2", "auc"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "average"])
def test_plain_and_adjusted_match_the_reference(seed, ties):
    rng = np.random.default_rng(seed)
    n_users, m = int(rng.integers(1, 30)), int(rng.integers(1, 12))
    n = int(rng.integers(m + 1, 60))
    scores = rng.integers(0, 4, size=(n_users, 1 + m)).astype(np.float64)  # many ties
    col = rng.integers(0, 1 + m, size=n_users)
    res = fr.evaluate_sampled(scores, n, LABELS, positive=col, ties=ties,
                              correction=["none", "adjusted"])
    mask = np.zeros(scores.shape, bool)
    mask[np.arange(n_users), col] = True
    for label in LABELS:
        for correction in ("none", "adjusted"):
            want = ref_per_user(scores, mask, n, label, correction, ties)
            got = res.per_user(f"{label}[{TAG[correction]}]")
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
            assert res[f"{label}[{TAG[correction]}]"] == pytest.approx(want.mean(), rel=1e-12)


@pytest.mark.parametrize("sampling", ["binomial", "hypergeometric"])
@pytest.mark.parametrize("label", ["recall@5", "ndcg@10", "map@5", "auc", "precision@3"])
def test_bv_matches_the_normal_equations(sampling, label):
    n, m = 300, 20
    for lam in (0.01, 0.3, 1.0):
        got = correction_table(n, m, label, "bv", bv_lambda=lam, sampling=sampling)
        want = ref_table(n, m, label, "bv", lam=lam, sampling=sampling)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_bv_with_lambda_one_is_the_posterior_mean():
    n, m = 200, 10
    a = ref_pmf(n, m, "binomial")
    b = np.array([ref_value("ndcg", 10, big_r, n) for big_r in range(1, n + 1)])
    posterior = (a.T @ b) / a.sum(axis=0)
    np.testing.assert_allclose(correction_table(n, m, "ndcg@10", "bv", bv_lambda=1.0),
                               posterior, rtol=1e-10)


def test_a_prior_weights_the_fit():
    n, m = 150, 8
    prior = np.linspace(3.0, 0.1, n)
    got = correction_table(n, m, "recall@10", "bv", bv_lambda=0.1, prior=prior)
    np.testing.assert_allclose(got, ref_table(n, m, "recall@10", "bv", lam=0.1, prior=prior),
                               rtol=1e-7, atol=1e-9)
    assert not np.allclose(got, correction_table(n, m, "recall@10", "bv", bv_lambda=0.1))


def test_a_prior_whose_sum_overflows_is_the_same_prior_scaled():
    """Finite weights near the float64 maximum sum to inf; only their ratios matter, so
    the fit must be the one of the scaled prior, not of all-zero weights."""
    n, m = 150, 8
    prior = np.linspace(3.0, 0.1, n)
    huge = prior * (1e308 / 3.0)
    with np.errstate(over="ignore"):
        assert np.isinf(huge.sum()) and np.isfinite(huge).all()
    for correction in ("mes", "bv"):
        got = correction_table(n, m, "ndcg@10", correction, prior=huge)
        want = correction_table(n, m, "ndcg@10", correction, prior=prior)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        assert np.abs(got).max() > 0


@pytest.mark.parametrize("sampling", ["binomial", "hypergeometric"])
@pytest.mark.parametrize("label", ["recall@10", "ndcg@10", "mrr"])
@pytest.mark.slow
def test_mes_is_the_bounded_least_squares_minimum(sampling, label):
    """The bounded problem is flat in some directions (the matrix is near singular), so
    solutions are compared by the bias they reach, and by the bounds."""
    n, m = 400, 30
    got = correction_table(n, m, label, "mes", sampling=sampling)
    want = ref_table(n, m, label, "mes", sampling=sampling)
    name, k = parse(label)
    values = [ref_value(name, k, big_r, n) for big_r in range(1, n + 1)]
    assert min(values) <= got.min() and got.max() <= max(values)
    assert ref_bias(n, m, label, got, sampling) <= ref_bias(n, m, label, want, sampling) \
        * (1 + 1e-6) + 1e-14
    # it removes almost all of the sampled metric's bias
    plain = correction_table(n, m, label, "none")
    assert ref_bias(n, m, label, got, sampling) < 0.2 * ref_bias(n, m, label, plain, sampling)


def test_the_pmf_rows_sum_to_one_and_match_scipy_for_large_n():
    from fastrank._kernels.sampled import rank_rows
    from scipy.special import gammaln

    n, m = 1_000_000, 100
    rows = np.empty((5, m + 1))
    starts = [1, 2, 500_000, 999_999]
    for hyper in (False, True):
        log_fact = gammaln(np.arange((n if hyper else m) + 1) + 1.0)
        for lo in starts:
            cnt = min(5, n - lo + 1)
            rank_rows(lo, n, m, hyper, log_fact, np.ones(cnt), rows[:cnt])
            big_r = np.arange(lo, lo + cnt)[:, None]
            j = np.arange(m + 1)[None, :]
            want = hypergeom.pmf(j, n - 1, big_r - 1, m) if hyper else \
                binom.pmf(j, m, (big_r - 1) / (n - 1))
            np.testing.assert_allclose(rows[:cnt], want, rtol=1e-9, atol=1e-300)
            np.testing.assert_allclose(rows[:cnt].sum(axis=1), 1.0, rtol=1e-14)


def test_several_positives_per_row_are_cases_of_their_own():
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 5, size=(12, 9)).astype(np.int32)
    mask = rng.random((12, 9)) < 0.3
    mask[:, 0] = True
    mask[:, 1] = False
    res = fr.evaluate_sampled(scores, 40, ["ndcg@3", "auc"], positive=mask, ties="average")
    for label in ("ndcg@3", "auc"):
        for c in CORRECTIONS:
            want = ref_per_user(scores, mask, 40, label, c, "average")
            np.testing.assert_allclose(res.per_user(f"{label}[{TAG[c]}]"), want, rtol=1e-7,
                                       atol=1e-9)
    np.testing.assert_array_equal(res.n_relevant, mask.sum(axis=1))


def test_ranks_give_what_scores_give():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(50, 21))
    ranks = 1 + (scores[:, 1:] > scores[:, :1]).sum(axis=1)
    a = fr.evaluate_sampled(scores, 500, ["ndcg@10", "recall@5", "auc"])
    b = fr.evaluate_sampled_ranks(ranks, 500, ["ndcg@10", "recall@5", "auc"], n_negatives=20)
    for label in a:
        np.testing.assert_array_equal(a.per_user(label), b.per_user(label))


# -- edge cases -------------------------------------------------------------------------


def test_ties_count_pessimistically_by_default():
    scores = np.array([[1.0, 1.0, 1.0, 0.0]])  # the positive ties with two negatives
    res = {t: fr.evaluate_sampled(scores, 10, ["mrr"], correction="none", ties=t)
           for t in ("pessimistic", "optimistic", "average")}
    assert res["pessimistic"]["mrr[sampled]"] == pytest.approx(1 / 3)
    assert res["optimistic"]["mrr[sampled]"] == 1.0
    assert res["average"]["mrr[sampled]"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    default = fr.evaluate_sampled(scores, 10, ["mrr"], correction="none")
    assert default["mrr[sampled]"] == res["pessimistic"]["mrr[sampled]"]


def test_k_one_and_k_past_the_sampled_list():
    scores = np.array([[0.5, 0.9, 0.1], [0.9, 0.5, 0.1]])
    res = fr.evaluate_sampled(scores, 50, ["recall@1", "recall@10", "ndcg@10"],
                              correction=["none", "bv"])
    np.testing.assert_array_equal(res.per_user("recall@1[sampled]"), [0.0, 1.0])
    np.testing.assert_array_equal(res.per_user("recall@10[sampled]"), [1.0, 1.0])  # 10 > m + 1
    assert res["recall@10[bv]"] < 1.0  # the catalogue has 50 items: not every hit is in the top 10


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float16,
                                   np.float32, np.float64])
def test_dtypes_and_read_only_inputs(dtype):
    rng = np.random.default_rng(1)
    base = rng.integers(0, 50, size=(20, 11))
    scores = base.astype(dtype)
    scores.flags.writeable = False
    mask = np.zeros(scores.shape, bool)
    mask[:, 3] = True
    mask.flags.writeable = False
    before = scores.copy()
    res = fr.evaluate_sampled(scores, 100, ["ndcg@5"], positive=mask)
    ref = fr.evaluate_sampled(base.astype(np.float64), 100, ["ndcg@5"], positive=3)
    for label in res:
        np.testing.assert_array_equal(res.per_user(label), ref.per_user(label))
    np.testing.assert_array_equal(scores, before)
    ranks = np.arange(1, 12, dtype=np.int32)
    ranks.flags.writeable = False
    fr.evaluate_sampled_ranks(ranks, 100, ["mrr"], n_negatives=10)


def test_big_integer_scores_keep_their_order():
    big = 2 ** 60
    scores = np.array([[big + 1, big, big + 2]], dtype=np.int64)  # float64 would tie them
    res = fr.evaluate_sampled(scores, 10, ["mrr"], correction="none")
    assert res["mrr[sampled]"] == 0.5


def test_result_has_intervals_and_compares():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(300, 51))
    scores[:, 0] += 1
    a = fr.evaluate_sampled(scores, 1000, ["ndcg@10"])
    b = fr.evaluate_sampled(scores + rng.normal(size=scores.shape), 1000, ["ndcg@10"])
    low, high = a.ci("ndcg@10[bv]", method="normal")
    assert low < a["ndcg@10[bv]"] < high
    table = fr.compare({"a": a, "b": b}, ["ndcg@10[bv]", "ndcg@10[sampled]"]).to_frame()
    assert len(table) == 4


def test_same_values_for_any_thread_count():
    import numba

    rng = np.random.default_rng(5)
    scores = rng.normal(size=(500, 31))
    one = fr.evaluate_sampled(scores, 5000, ["ndcg@10", "auc"], n_threads=1)
    many = fr.evaluate_sampled(scores, 5000, ["ndcg@10", "auc"],
                               n_threads=numba.config.NUMBA_NUM_THREADS)
    for label in one:
        np.testing.assert_array_equal(one.per_user(label), many.per_user(label))


# -- the point of it all: corrected estimates near the full-catalogue metric ------------


def simulate(n_users, n, m, signal, seed):
    """Full scores of n items per user (the held-out item shifted by `signal`), its full
    rank R, and the sampled candidates: the held-out item and m negatives drawn without
    replacement from its n - 1 others."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=n_users) + signal
    others = rng.normal(size=(n_users, n - 1))
    full_rank = 1 + (others > pos[:, None]).sum(axis=1)
    pick = np.argpartition(rng.random((n_users, n - 1)), m, axis=1)[:, :m]
    return np.hstack([pos[:, None], np.take_along_axis(others, pick, axis=1)]), full_rank


@pytest.mark.slow
def test_corrections_recover_the_full_catalogue_metric():
    n, m = 2000, 100
    scores, full_rank = simulate(3000, n, m, 1.5, seed=1)
    true = {"recall@10": np.mean(full_rank <= 10),
            "ndcg@10": np.mean(np.where(full_rank <= 10, 1 / np.log2(full_rank + 1), 0))}
    for sampling in ("binomial", "hypergeometric"):
        res = fr.evaluate_sampled(scores, n, list(true), sampling=sampling)
        for label, value in true.items():
            assert abs(res[f"{label}[sampled]"] - value) > 0.2  # the sampled metric is far off
            assert abs(res[f"{label}[mes]"] - value) < 0.03  # the corrections are not
            assert abs(res[f"{label}[bv]"] - value) < 0.03


# -- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    ({"scores": np.array([[1.0, np.nan]])}, ValueError, r"scores contains NaN \(row 0, column 1\)"),
    ({"scores": np.zeros((3, 1))}, ValueError, "at least one sampled negative"),
    ({"scores": np.zeros(4)}, ValueError, "scores must be 2-D"),
    ({"scores": np.zeros((2, 3), bool)}, TypeError, "scores must be a numeric array"),
    ({"scores": [[1, 2], [3]]}, ValueError, "ragged"),
    ({"n_items": 2}, ValueError, "n_items is 2 but must be at least 4"),
    ({"n_items": 10.0}, TypeError, "n_items must be an int"),
    ({"metrics": ["ndcg@0"]}, ValueError, r"cutoff must lie in \[1, n_items"),
    ({"metrics": ["ndcg@1000"]}, ValueError, r"cutoff must lie in \[1, n_items = 100\]"),
    ({"metrics": ["recall"]}, ValueError, "needs a cutoff"),
    ({"metrics": ["auc@5"]}, ValueError, "auc takes no cutoff"),
    ({"metrics": ["bpref"]}, ValueError, "unknown sampled metric 'bpref'"),
    ({"metrics": ["mrr", "mrr"]}, ValueError, "twice"),
    ({"metrics": []}, ValueError, "metrics is empty"),
    ({"positive": 4}, ValueError, r"positive is column 4, outside \[0, 4\)"),
    ({"positive": np.array([0, 1])}, ValueError, "one column per row"),
    ({"positive": np.zeros((3, 4), bool)}, ValueError, "marks no held-out item in row 0"),
    ({"positive": np.ones((3, 4), bool)}, ValueError, "every column of row 0"),
    ({"positive": np.zeros((3, 3), bool)}, ValueError, "mask must have scores' shape"),
    ({"positive": 0.5}, TypeError, "positive must be"),
    ({"correction": "bias"}, ValueError, "correction must be one of"),
    ({"bv_lambda": 0.0}, ValueError, r"bv_lambda must lie in \(0, 1\]"),
    ({"bv_lambda": 1.5}, ValueError, r"bv_lambda must lie in \(0, 1\]"),
    ({"ties": "random"}, ValueError, "ties must be one of"),
    ({"sampling": "poisson"}, ValueError, "sampling must be one of"),
    ({"prior": np.ones(5)}, ValueError, "one weight per full rank"),
    ({"prior": -np.ones(100)}, ValueError, "finite weights >= 0"),
])
def test_bad_input_says_what_and_how(kwargs, error, match):
    args = {"scores": np.arange(12.0).reshape(3, 4), "n_items": 100, "metrics": ["ndcg@10"]}
    args.update(kwargs)
    scores, n_items, metrics = args.pop("scores"), args.pop("n_items"), args.pop("metrics")
    with pytest.raises(error, match=match):
        fr.evaluate_sampled(scores, n_items, metrics, **args)


@pytest.mark.parametrize("ranks, kwargs, error, match", [
    (np.array([1.0, 2.0]), {}, TypeError, "ranks must be an integer array"),
    (np.array([0, 2]), {}, ValueError, r"ranks contains 0, outside \[1, 11\]"),
    (np.array([1, 12]), {}, ValueError, r"ranks contains 12, outside \[1, 11\]"),
    (np.array([[1, 2]]), {}, ValueError, "ranks must be 1-D"),
    (np.array([1, 2]), {"n_negatives": 0}, ValueError, "n_negatives must be at least 1"),
    (np.array([1, 2]), {"n_items": 10}, ValueError, "n_items is 10 but must be at least 11"),
])
def test_bad_ranks(ranks, kwargs, error, match):
    args = {"n_items": 100, "n_negatives": 10}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        fr.evaluate_sampled_ranks(ranks, args["n_items"], ["mrr"], n_negatives=args["n_negatives"])


def test_a_fit_that_cannot_fit_in_memory_is_refused_by_name():
    scores = np.random.default_rng(0).random((4, 11))
    with pytest.raises(ValueError, match="fit for n_items=1,000,000,000,000"):
        fr.evaluate_sampled(scores, 10**12, ["ndcg@10"], sampling="hypergeometric",
                            correction="bv")
    with pytest.raises(ValueError, match="fewer sampled negatives"):
        fr.evaluate_sampled_ranks(np.array([1, 5]), 10**6, ["ndcg@10"], n_negatives=60000,
                                  correction="bv")


@pytest.mark.parametrize("correction", ["mes", "bv"])
def test_a_fit_over_an_absurd_catalogue_is_refused_not_run_for_hours(correction):
    scores = np.random.default_rng(0).random((3, 101))
    with pytest.raises(ValueError, match=r"n_items: the .* fit walks every full rank.*"
                                         r"correction=\('none', 'adjusted'\)"):
        fr.evaluate_sampled(scores, 10**12, "ndcg@10", correction=correction)
    with pytest.raises(ValueError, match="n_items: the"):
        fr.sampled.correction_table(10**12, 100, "ndcg@10", correction)
    # the corrections without a fit take any catalogue
    res = fr.evaluate_sampled(scores, 10**12, "ndcg@10", correction=("none", "adjusted"))
    assert np.isfinite(res["ndcg@10[adjusted]"])


def test_a_metric_constant_over_the_catalogue_and_other_edges():
    """recall, hit_rate and precision at k >= n_items have one value at every rank: mes
    gives it (scipy's fit refused equal bounds); long double scores are refused by name;
    ranks given as an empty list are no users."""
    for name, value in (("recall@50", 1.0), ("hit_rate@50", 1.0), ("precision@50", 0.02)):
        for correction in ("mes", "bv"):
            np.testing.assert_allclose(correction_table(50, 5, name, correction), value,
                                       rtol=1e-12)
    res = fr.evaluate_sampled(np.random.default_rng(0).normal(size=(3, 6)), 50, ["recall@50"])
    assert res["recall@50[mes]"] == 1.0
    with pytest.raises(TypeError, match=r"scores of dtype float\d+ are past what the kernels "
                                        r"rank"):
        fr.evaluate_sampled(np.ones((1, 2), np.longdouble), 50, ["recall@1"],
                            correction=["none"])
    assert math.isnan(fr.evaluate_sampled_ranks([], 50, ["mrr"], n_negatives=5)["mrr[sampled]"])


# -- labels: fastrank's grammar ------------------------------------------------------------


@pytest.mark.parametrize("cut", ["１０", "٣", "²", "+10", "1_0", "10.0", "1e1", "-1", "0x10",
                                 "", "1 0", "10\n1", "ten", "1" * 5000])
def test_a_cutoff_is_read_as_fr_evaluate_reads_it(cut):
    """A sampled label's cutoff follows the registry's grammar: ASCII digits only (int()
    takes other scripts' digits: recall@１０ was k = 10 here while fr.evaluate refused
    ndcg@１０), refused with fr.evaluate's own message."""
    label = f"ndcg@{cut}"
    with pytest.raises(ValueError) as own:
        fr.evaluate(sp.csr_array(np.eye(3)), np.array([[0], [1], [2]]), [label])
    scores = np.arange(12.0).reshape(3, 4)
    for call in (lambda: fr.evaluate_sampled(scores, 100, [label]),
                 lambda: fr.evaluate_sampled_ranks([1, 2], 100, [label], n_negatives=3),
                 lambda: correction_table(100, 3, label)):
        with pytest.raises(ValueError) as sampled:
            call()
        assert str(sampled.value) == str(own.value)
    with pytest.raises(ValueError, match=r"cutoff in 'recall@１０' must be a positive integer"):
        fr.evaluate_sampled(scores, 100, ["recall@１０"])


def test_blanks_and_case_are_read_as_fr_evaluate_reads_them():
    """' NDCG @ 10 ' is ndcg@10 in fr.evaluate, and so here; parameters are refused by
    name, as no sampled metric takes one (an empty pair of parentheses is none); a string
    of labels joined by commas is split as fr.evaluate splits it."""
    scores = np.random.default_rng(0).normal(size=(5, 8))
    want = fr.evaluate_sampled(scores, 100, ["ndcg@10", "mrr", "recall@3"])
    got = fr.evaluate_sampled(scores, 100, [" NDCG @ 10 ", "Mrr()", "recall@\t3\n"])
    for tag in ("sampled", "adjusted", "mes", "bv"):
        np.testing.assert_array_equal(got.per_user(f" NDCG @ 10 [{tag}]"),
                                      want.per_user(f"ndcg@10[{tag}]"))
        np.testing.assert_array_equal(got.per_user(f"Mrr()[{tag}]"), want.per_user(f"mrr[{tag}]"))
        np.testing.assert_array_equal(got.per_user(f"recall@\t3\n[{tag}]"),
                                      want.per_user(f"recall@3[{tag}]"))
    with pytest.raises(ValueError, match=r"'ndcg\(rel=2\)@10': the sampled metrics take no "
                                         r"parameters"):
        fr.evaluate_sampled(scores, 100, ["ndcg(rel=2)@10"])
    with pytest.raises(ValueError, match=r"metrics: 'ndcg\(rel\)@10': parameters are written "
                                         r"name=value"):
        fr.evaluate_sampled(scores, 100, ["ndcg(rel)@10"])
    with pytest.raises(ValueError, match="unknown sampled metric 'recbole:ndcg@10'"):
        fr.evaluate_sampled(scores, 100, ["recbole:ndcg@10"])
    # one string of labels joined by commas, as fr.evaluate and the command line take it
    assert fr.evaluate_sampled(scores, 100, "recall@3, ndcg@10", correction="none").metrics \
        == ("recall@3[sampled]", "ndcg@10[sampled]")
