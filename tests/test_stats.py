"""Intervals, paired tests, segments, curves and plots: coverage on synthetic data with a
known mean, p-values against scipy and exact enumeration, determinism, and files written."""

import itertools
import math
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats as st

import fastrank as fr
from fastrank.result import Result
from fastrank.stats import randomization_p
from fastrank.synthetic import power_law

THREADS = sorted({1, numba.config.NUMBA_NUM_THREADS})


def synthetic(values, convention="recsys", counted=None, n_relevant=None, pooled=None,
              name="m"):
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    counted = np.ones(n, bool) if counted is None else counted
    n_relevant = np.ones(n, np.int64) if n_relevant is None else n_relevant
    mean = float(values[counted].mean()) if counted.any() else math.nan
    return Result([name], [values], {name: mean}, convention=convention,
                  users=np.arange(n), counted=counted, n_relevant=n_relevant,
                  pooled=pooled)


@pytest.fixture(scope="module")
def pair():
    truth, topk = power_law(20000, 400, 10, seed=5)
    rng = np.random.default_rng(0)
    worse = topk.copy()
    swap = rng.random(topk.shape[0]) < 0.1
    worse[swap] = np.roll(topk[swap], 3, axis=1)  # same items, later ranks
    metrics = ["ndcg", "recall@5", "precision", "mrr"]
    a = fr.evaluate(truth, topk, metrics, curves=["ndcg", "recall"])
    b = fr.evaluate(truth, worse, metrics, curves=["ndcg", "recall"])
    return truth, topk, worse, a, b


@pytest.mark.parametrize("method", ["bootstrap", "normal"])
@pytest.mark.slow
def test_intervals_cover_a_known_mean(method):
    """Bernoulli(0.3) per-user values: about 95% of 95% intervals hold 0.3."""
    rng = np.random.default_rng(11)
    hits = 0
    trials = 200
    for t in range(trials):
        res = synthetic(rng.random(1500) < 0.3)
        low, high = res.ci("m", level=0.95, method=method, n_resamples=400, seed=t)
        assert low < res["m"] < high
        hits += low <= 0.3 <= high
    assert 0.90 <= hits / trials <= 0.99


def test_bootstrap_is_deterministic_for_a_seed_whatever_the_threads(pair):
    a = pair[3]
    got = {n: a.ci("ndcg@10", seed=7, n_threads=n) for n in THREADS}
    assert len(set(got.values())) == 1
    assert a.ci("ndcg@10", seed=7) == a.ci("ndcg@10", seed=7) != a.ci("ndcg@10", seed=8)
    low, high = a.ci("ndcg@10", level=0.99, seed=7)
    narrow = a.ci("ndcg@10", level=0.5, seed=7)
    assert low < narrow[0] < a["ndcg@10"] < narrow[1] < high


def test_normal_interval_by_hand_and_pooled_precision():
    values = np.array([0.0, 1.0, 0.5, 0.25, 1.0])
    res = synthetic(values)
    se = values.std(ddof=1) / math.sqrt(5)
    z = st.norm.ppf(0.975)
    assert res.ci("m", method="normal") == pytest.approx((values.mean() - z * se,
                                                          values.mean() + z * se))
    truth, topk = power_law(5000, 300, 10, seed=2)
    imp = fr.evaluate(truth, topk, ["precision"], convention="implicit")
    assert imp.pooled == {"precision": 10}
    low, high = imp.ci("precision", seed=1)
    assert low < imp["precision"] < high  # around the pooled mean, not the mean of users
    users = imp.per_user("precision")[imp.counted]
    assert not low < users.mean() < high or abs(users.mean() - imp["precision"]) < 1e-3
    n_low, n_high = imp.ci("precision", method="normal")
    assert n_low == pytest.approx(low, abs=2e-3) and n_high == pytest.approx(high, abs=2e-3)


def test_ci_rejects_bad_input(pair):
    a = pair[3]
    for level in (0, 1, 1.5, -0.1, "0.9", True):
        with pytest.raises(ValueError, match="level must be a number strictly between 0 and 1"):
            a.ci("ndcg@10", level=level)
    with pytest.raises(ValueError, match="method must be one of 'bootstrap', 'normal'"):
        a.ci("ndcg@10", method="jackknife")
    with pytest.raises(KeyError, match="'map@10' is not in this result"):
        a.ci("map@10")
    with pytest.raises(ValueError, match="n_resamples must be an int of at least 2"):
        a.ci("ndcg@10", n_resamples=0)
    with pytest.raises(TypeError, match="seed must be an int or None"):
        a.ci("ndcg@10", seed="x")
    cov = fr.evaluate(*pair[:2], ["coverage@10"])
    with pytest.raises(ValueError, match="describes the catalogue"):
        cov.ci("coverage@10")
    empty = synthetic(np.array([np.nan]), counted=np.array([False]))
    assert all(math.isnan(x) for x in empty.ci("m"))


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_equal_scipys(pair, test):
    a, b = pair[3], pair[4]
    c = fr.compare({"a": a, "b": b}, ["ndcg@10", "mrr", "recall@5"], test=test,
                   correction=None)
    frame = c.to_frame()
    for metric in ["ndcg@10", "mrr", "recall@5"]:
        x, y = b.per_user(metric)[b.counted], a.per_user(metric)[a.counted]
        want = (st.ttest_rel(x, y) if test == "t" else st.wilcoxon(x, y)).pvalue
        row = frame[(frame.system == "b") & (frame.metric == metric)].iloc[0]
        assert row.p_value == want and row.p_adjusted == want
        assert row.delta == pytest.approx(b[metric] - a[metric], abs=1e-15)
        d = x - y
        assert row.effect == pytest.approx(d.mean() / d.std(ddof=1))
        half = st.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)
        assert (row.ci_low, row.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))
    base = frame[frame.system == "a"]
    assert base.delta.eq(0).all() and base.p_value.isna().all()
    assert list(frame.columns[:5]) == ["system", "metric", "mean", "delta", "ci_low"]
    assert {"p_value", "p_adjusted", "effect", "significant", "users"} <= set(frame.columns)


def test_randomization_p_against_exact_enumeration():
    diff = np.array([0.3, -0.1, 0.25, 0.4, 0.05, -0.2, 0.1, 0.15, 0.35, -0.05])
    observed = abs(diff.sum())
    sums = np.array([abs(np.dot(s, diff)) for s in itertools.product([-1, 1], repeat=10)])
    exact = np.mean(sums >= observed - 1e-12)
    p = randomization_p(diff, 40000, seed=3)
    assert p == pytest.approx(exact, abs=0.006)
    assert {randomization_p(diff, 5000, 9, n_threads=n) for n in THREADS} == \
        {randomization_p(diff, 5000, 9)}
    assert randomization_p(np.zeros(20), 999, 1) == 1.0


def test_randomization_compare_is_deterministic(pair):
    a, b = pair[3], pair[4]
    runs = [fr.compare({"a": a, "b": b}, "ndcg@10", test="randomization", seed=5,
                       n_permutations=2000, n_threads=n).to_frame() for n in THREADS]
    assert runs[0].equals(runs[-1])
    assert runs[0].p_value.iloc[1] == pytest.approx(1 / 2001)  # a real difference


def test_corrections():
    rng = np.random.default_rng(4)
    base = rng.random(300)
    results = {"base": synthetic(base, name="m")}
    for i, shift in enumerate([0.0, 0.01, 0.03, 0.2]):
        results[f"s{i}"] = synthetic(base + shift + rng.normal(0, 0.1, 300), name="m")
    raw = fr.compare(results, "m", correction=None).to_frame().p_value.to_numpy()[1:]
    holm = fr.compare(results, "m", correction="holm").to_frame().p_adjusted.to_numpy()[1:]
    bonf = fr.compare(results, "m", correction="bonferroni").to_frame()
    assert bonf.p_adjusted.to_numpy()[1:] == pytest.approx(np.minimum(raw * 4, 1.0))
    order = np.argsort(raw)
    want = np.maximum.accumulate(np.minimum(raw[order] * (4 - np.arange(4)), 1.0))
    assert holm[order] == pytest.approx(want)
    assert list(bonf.significant) == [False] + list(bonf.p_adjusted.to_numpy()[1:] < 0.05)


def test_tables_in_every_form(pair):
    a, b = pair[3], pair[4]
    c = fr.compare({"als_model": a, "noisy": b}, ["ndcg@10", "recall@5"], baseline="noisy")
    text, md, tex = c.to_text(), c.to_markdown(), c.to_latex()
    assert "als_model" in text and "noisy (baseline)" in text and "holm-corrected" in text
    assert md.splitlines()[0].startswith("| system | metric | mean | delta |")
    assert r"als\_model" in tex and r"\begin{tabular}" in tex and r"95\%" in tex
    assert str(c) == text
    assert c.to_frame().system.tolist() == ["als_model", "noisy"] * 2


def test_the_baselines_delta_is_0_also_over_no_counted_user():
    """The baseline row's delta is 0 by definition, NaN means (no counted user) too."""
    truth = sp.csr_array((3, 4))
    topk = np.array([[0, 1], [1, 2], [2, 3]])
    a = fr.evaluate(truth, topk, ["ndcg@2"])
    b = fr.evaluate(truth, topk[:, ::-1], ["ndcg@2"])
    frame = fr.compare({"a": a, "b": b}, "ndcg@2").to_frame()
    assert frame.delta.iloc[0] == 0.0 and np.isnan(frame["mean"].iloc[0])
    assert np.isnan(frame.delta.iloc[1])


def test_compare_rejects_what_cannot_be_paired(pair):
    truth, topk, worse, a, b = pair
    other_users = fr.evaluate(truth[:100], topk[:100], ["ndcg@10"])
    with pytest.raises(ValueError, match="not evaluated on the same users"):
        fr.compare({"a": a, "b": other_users}, "ndcg@10")
    trec = fr.evaluate(truth, worse, ["ndcg@10"], convention="trec")
    with pytest.raises(ValueError, match="different conventions"):
        fr.compare({"a": a, "b": trec}, "ndcg@10")
    with pytest.raises(KeyError, match="metric 'map@10' is not in the result of system 'a'"):
        fr.compare({"a": a, "b": b}, "map@10")
    with pytest.raises(TypeError, match="at least two"):
        fr.compare({"a": a}, "ndcg@10")
    with pytest.raises(TypeError, match="must be a fastrank Result"):
        fr.compare({"a": a, "b": 0.3}, "ndcg@10")
    with pytest.raises(ValueError, match="baseline 'c' is not one of the systems"):
        fr.compare({"a": a, "b": b}, "ndcg@10", baseline="c")
    with pytest.raises(ValueError, match="test must be one of"):
        fr.compare({"a": a, "b": b}, "ndcg@10", test="z")
    with pytest.raises(ValueError, match="correction must be"):
        fr.compare({"a": a, "b": b}, "ndcg@10", correction="fdr")
    with pytest.raises(ValueError, match="level must be a number"):
        fr.compare({"a": a, "b": b}, "ndcg@10", level=95)
    same = fr.compare({"a": a, "a2": a}, "ndcg@10", test="wilcoxon").to_frame()
    assert same.p_value.iloc[1] == 1.0 and not same.significant.any()  # scipy's wilcoxon


def test_segments_by_hand_and_against_a_second_evaluation(pair):
    truth, topk, _, a, _ = pair
    labels = np.where(a.n_relevant >= 4, "heavy", np.where(a.n_relevant >= 2, "mid", "light"))
    seg = a.by(labels, ["ndcg@10", "mrr"])
    frame = seg.to_frame()
    assert list(frame.index) == ["heavy", "light", "mid"] and frame.index.name == "segment"
    assert list(frame.columns) == ["ndcg@10", "mrr"]
    for name in frame.index:
        rows = np.flatnonzero(labels == name)
        alone = fr.evaluate(truth, topk[rows], ["ndcg@10", "mrr"], users=rows)
        assert frame.loc[name, "ndcg@10"] == pytest.approx(alone["ndcg@10"], rel=1e-12)
        assert seg.counts[list(frame.index).index(name)] == alone.n_users
        low, high = alone.ci("mrr", method="normal")
        s = list(frame.index).index(name)
        assert (seg.low["mrr"][s], seg.high["mrr"][s]) == pytest.approx((low, high))
    full = seg.to_frame(counts=True, intervals=True)
    assert {"users", "ndcg@10:low", "ndcg@10:high"} <= set(full.columns)
    boot = a.by(labels, "mrr", method="bootstrap", n_resamples=200, seed=1)
    assert np.all(boot.low["mrr"] < boot.means["mrr"]) and "heavy" in repr(boot)
    with pytest.raises(ValueError, match="labels must be 1-D with one segment label per row"):
        a.by(labels[:-1])


def test_segments_of_pooled_precision_are_pooled():
    truth, topk = power_law(4000, 300, 10, seed=8)
    res = fr.evaluate(truth, topk, ["precision@5"], convention="implicit")
    labels = np.arange(4000) % 3
    seg = res.by(labels)
    for s in range(3):
        rows = np.flatnonzero(labels == s)
        alone = fr.evaluate(truth, topk[rows], ["precision@5"], convention="implicit",
                            users=rows)
        assert seg.means["precision@5"][s] == pytest.approx(alone["precision@5"], rel=1e-12)


def test_curves_are_every_cutoff_of_one_pass(pair):
    truth, topk, _, a, _ = pair
    curve = a.curve("ndcg")
    assert curve.k.tolist() == list(range(1, 11))
    for k in (1, 4, 10):
        assert curve.mean[k - 1] == fr.evaluate(truth, topk, [f"ndcg@{k}"])[f"ndcg@{k}"]
    assert np.all(curve.low < curve.mean) and np.all(curve.mean < curve.high)
    assert np.isnan(a.curve("recall", level=None).low).all()
    all_of = fr.evaluate(truth, topk, ["mrr", "map@3", "coverage@5"], curves=True)
    assert "mrr@10" in all_of.metrics and "map@1" in all_of.metrics
    with pytest.raises(ValueError, match="'precision' has no curve in this result"):
        a.curve("precision")
    with pytest.raises(ValueError, match="'r_precision' has no cutoff"):
        fr.evaluate(truth, topk, ["ndcg"], curves=["r_precision"])
    with pytest.raises(ValueError, match="'coverage' is not a ranking metric"):
        fr.evaluate(truth, topk, ["ndcg"], curves="coverage")


def test_plots_are_written(pair, tmp_path):
    a, b = pair[3], pair[4]
    fig = a.plot(["ndcg", "recall"], path=tmp_path / "curves.png", title="one system")
    assert (tmp_path / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "curves.png").stat().st_size > 10_000 and fig.axes
    fr.plot_compare({"a": a, "b": b}, ["ndcg", "recall"], path=tmp_path / "compare.svg")
    svg = (tmp_path / "compare.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and len(svg) > 10_000
    assert fr.plot_compare({"a": a}, "ndcg", level=None).axes
    with pytest.raises(ValueError, match="has no curve"):
        a.plot("mrr")
    with pytest.raises(TypeError, match="non-empty dict"):
        fr.plot_compare([a], "ndcg")


def test_plots_say_what_they_show(pair):
    """A default title with the counted users, the interval method in the legend, and one
    legend for a figure of several panels."""
    truth, topk, _, a, b = pair
    fig = a.plot(["ndcg", "recall"])
    assert fig._suptitle.get_text() == f"{a.n_users:,} users counted (recsys)"
    legend = fig.axes[0].get_legend()
    assert legend.get_title().get_text() == "bands: 95% intervals (mean ± z·s.e.)"
    fig = a.plot("ndcg", level=0.9, method="bootstrap", n_resamples=200, seed=1, title="")
    assert fig._suptitle is None
    assert fig.axes[0].get_legend().get_title().get_text() == (
        "bands: 90% intervals (percentile bootstrap of 200 resamples)")
    curve = a.curve("ndcg", level=0.9, method="bootstrap", n_resamples=200, seed=1)
    band = fig.axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert np.allclose(np.sort(band)[[0, -1]], [curve.low.min(), curve.high.max()])
    fig = fr.plot_compare({"a": a, "b": b}, ["ndcg", "recall"])
    assert [ax.get_legend() for ax in fig.axes] == [None, None] and len(fig.legends) == 1
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]
    assert fig._suptitle.get_text() == f"a vs b: {a.n_users:,} users counted (recsys)"
    fewer = fr.evaluate(truth[:100], topk[:100], ["ndcg"], curves=["ndcg"])
    title = fr.plot_compare({"a": a, "few": fewer}, "ndcg", level=None)._suptitle.get_text()
    assert title == f"a ({a.n_users:,} users counted) vs few (100 users counted) (recsys)"
    assert fr.plot_compare({"a": a}, "ndcg", level=None).legends[0].get_title().get_text() \
        == ""


def test_p_values_below_floats_are_printed_as_a_bound():
    truth, topk = power_law(20000, 500, 10, seed=0)
    good = fr.evaluate(truth, topk, ["ndcg@10"])
    none = fr.evaluate(truth, np.full_like(topk, -1), ["ndcg@10"])
    table = fr.compare({"good": good, "none": none}, "ndcg@10")
    assert table.to_frame()["p_value"].iloc[1] == 0.0  # scipy's t-test underflows
    row = table.to_markdown().splitlines()[3]
    assert "| < 1e-300 | < 1e-300 | * |" in row and "0.0e+00" not in table.to_text()
    assert "$<$ 1e-300" in table.to_latex()


def test_review_fixes_pooled_means_seeds_and_pairing(pair):
    truth, topk, worse, a, b = pair
    # implicit's pooled precision: the tests compare hits, the delta lies in its interval
    ia = fr.evaluate(truth, topk, ["precision@5"], convention="implicit")
    ib = fr.evaluate(truth, worse, ["precision@5"], convention="implicit")
    row = fr.compare({"a": ia, "b": ib}, "precision@5").to_frame().iloc[1]
    assert row.ci_low <= row.delta <= row.ci_high
    den = np.minimum(ia.n_relevant[ia.counted], 5)
    hits = [np.rint(r.per_user("precision@5")[r.counted] * den) for r in (ib, ia)]
    assert row.p_value == st.ttest_rel(*hits).pvalue
    # seeds in [0, 2**63), derived from the names: other pairs are left as they were;
    # seeds outside would repeat another seed's draws (-1 was 2**63 - 1's)
    for seed in (2**63 - 1, 0):
        fr.compare({"a": a, "b": b}, "mrr", test="randomization", seed=seed,
                   n_permutations=200)
    for seed in (-1, 2**63, 2**64):
        with pytest.raises(ValueError, match="seed must be an int in \\[0, 2\\*\\*63\\)"):
            fr.compare({"a": a, "b": b}, "mrr", test="randomization", seed=seed)
    one = fr.compare({"a": a, "b": b}, ["mrr"], test="randomization", seed=4,
                     n_permutations=500).to_frame()
    two = fr.compare({"a": a, "b": b}, ["ndcg@3", "mrr"], test="randomization", seed=4,
                     n_permutations=500).to_frame()
    assert one.p_value.iloc[1] == two.p_value.iloc[3]
    # lists of another length: "ndcg" would mean another cutoff
    short = fr.evaluate(truth, topk[:, :5], ["ndcg"])
    with pytest.raises(ValueError, match="ranked lists of different lengths"):
        fr.compare({"a": fr.evaluate(truth, topk, ["ndcg"]), "b": short}, "ndcg")
    with pytest.raises(ValueError, match="metrics is empty"):
        fr.compare({"a": a, "b": b}, [])
    with pytest.raises(TypeError, match="system names must be strings"):
        fr.compare({1: a, 2: b}, "mrr")
    same = fr.compare({"a": a, "a2": a}, "mrr", test="randomization").to_frame()
    assert same.p_value.iloc[1] == 1.0  # every sign flip is as extreme as no difference
    upper = fr.evaluate(truth, topk, ["ndcg"], curves="NDCG")
    assert upper.curve("Ndcg").mean[2] == upper["ndcg@3"]


def test_rating_errors_have_intervals_segments_and_tests_of_the_pooled_value():
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    truth = sp.random_array((400, 50), density=0.2, format="csr", rng=rng)
    truth.data = np.round(truth.data * 4 + 1)
    noisy = truth.data + rng.normal(0, 0.8, truth.nnz)
    worse = truth.data + rng.normal(0, 1.0, truth.nnz)
    for metric in (fr.rmse, fr.mae):
        res = metric(truth, noisy)
        name = res.metrics[0]
        for method in ("bootstrap", "normal"):
            low, high = res.ci(name, method=method, seed=2)
            assert low < res[name] < high
        labels = np.arange(400) % 2
        seg = res.by(labels)
        for s in range(2):
            rows = np.flatnonzero(labels == s)
            sub = truth[rows]
            alone = metric(sub, noisy.reshape(-1)[_entry_rows(truth, rows)])
            assert seg.means[name][s] == pytest.approx(alone[name], rel=1e-12)
        row = fr.compare({"noisy": res, "worse": metric(truth, worse)}, name).to_frame()
        assert row.delta.iloc[1] > 0 and row.p_value.iloc[1] < 0.05


def _entry_rows(truth, rows):
    """Positions in truth.data of the entries of the given rows, in order."""
    return np.concatenate([np.arange(truth.indptr[r], truth.indptr[r + 1]) for r in rows])


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_a_metric_that_leaves_users_out_is_paired_on_the_users_both_keep(test):
    """partial_auc with insufficient="exclude" is NaN for users whose list is too short
    to judge, which differs between systems: the test pairs user with user, over the
    counted users both systems keep, whether the two keep as many users or not."""
    label = "partial_auc(insufficient=exclude)@2"
    tested = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        truth = sp.csr_array((rng.random((12, 12)) < 0.25).astype(float))
        a = np.array([rng.permutation(12)[:4] for _ in range(12)])
        b = np.array([rng.permutation(12)[:4] for _ in range(12)])
        ra, rb = fr.evaluate(truth, a, [label]), fr.evaluate(truth, b, [label])
        pa, pb = ra.per_user(label)[ra.counted], rb.per_user(label)[rb.counted]
        both = ~np.isnan(pa) & ~np.isnan(pb)
        if np.array_equal(np.isnan(pa), np.isnan(pb)) or both.sum() < 3 \
                or not np.any(pa[both] != pb[both]):
            continue
        row = fr.compare({"a": ra, "b": rb}, [label], test=test).to_frame().iloc[1]
        expected = (st.ttest_rel(pb[both], pa[both]) if test == "t"
                    else st.wilcoxon(pb[both], pa[both])).pvalue
        assert row["users"] == both.sum()
        assert row["p_value"] == pytest.approx(expected, rel=1e-12)
        d = pb[both] - pa[both]
        assert row["effect"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert row["delta"] == pytest.approx(rb[label] - ra[label])
        fr.compare({"a": ra, "b": rb}, [label], test="randomization", n_permutations=99)
        tested += 1
    assert tested >= 5


@pytest.mark.parametrize("method", ["normal", "bootstrap"])
def test_segments_of_metrics_that_leave_users_out(method):
    """gauc (weighted by m) and partial_auc(insufficient=exclude) are NaN for some counted
    users: each segment's mean is over its users with a value, as the overall mean."""
    rng = np.random.default_rng(5)
    dense = (rng.random((40, 9)) < 0.3) * rng.integers(1, 3, (40, 9))
    dense[[0, 4, 7]] = 1  # every item relevant: no negative to rank, no gauc
    truth = sp.csr_array(dense)
    factors = rng.random((49, 4))
    res = fr.evaluate_factors(factors[:40], factors[40:], truth, ["gauc", "ndcg@3"])
    labels = np.arange(40) % 3
    gauc = res.per_user("gauc")
    assert np.isnan(gauc[res.counted]).any()  # the case under test
    seg = res.by(labels, method=method, seed=0)
    m = res.n_relevant.astype(float)
    for s in range(3):
        keep = res.counted & (labels == s) & ~np.isnan(gauc)
        assert seg.means["gauc"][s] == pytest.approx((gauc[keep] * m[keep]).sum()
                                                     / m[keep].sum(), rel=1e-12)
        assert np.isfinite(seg.low["gauc"][s]) and seg.low["gauc"][s] <= seg.high["gauc"][s]
    label = "partial_auc(insufficient=exclude)@2"
    lists = np.array([(rng.permutation(9)[:n].tolist() + [-1] * 4)[:4]
                      for n in rng.integers(1, 5, 40)])
    res = fr.evaluate(truth, lists, [label])
    values = res.per_user(label)
    seg = res.by(labels, method=method, seed=0)
    for s in range(3):
        keep = res.counted & (labels == s) & ~np.isnan(values)
        assert seg.means[label][s] == pytest.approx(values[keep].mean(), rel=1e-12)


def test_segments_by_default_leave_out_sums_and_geometric_means():
    truth = sp.csr_array(np.array([[1.0, 0, 2], [0, 1, 0], [1, 1, 0]]))
    topk = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    res = fr.evaluate(truth, topk, ["map", "num_rel_ret", "gm_map", "ndcg@2"],
                      convention="trec")
    seg = res.by(["a", "b", "a"])
    assert seg.metrics == ("map", "ndcg@2")


@pytest.mark.parametrize("n_users, shift", [(1, 0.5), (2, 0.0), (3, 0.0), (3, -0.5)])
def test_no_difference_one_user_and_a_constant_difference_as_scipy_gives_them(n_users, shift):
    """One user, or no user that differs: scipy's t-test has no p-value (NaN), its
    wilcoxon gives 1, and so does the sign-flip test when nothing differs; every user
    moved by the same amount: the interval is that amount, as scipy's
    ttest_rel(...).confidence_interval() gives it."""
    truth = sp.csr_array(np.tile([1.0, 0.0], (n_users, 1)))  # item 0 relevant
    first, second = np.tile([0, 1], (n_users, 1)), np.tile([1, 0], (n_users, 1))  # mrr 1, 0.5
    lists = {0.5: (second, first), 0.0: (first, first), -0.5: (first, second)}[shift]
    a, b = (fr.evaluate(truth, topk, ["mrr"]) for topk in lists)
    assert np.all(b.per_user("mrr") - a.per_user("mrr") == shift)
    pair = (b.per_user("mrr"), a.per_user("mrr"))
    for test in ("t", "wilcoxon", "randomization"):
        row = fr.compare({"a": a, "b": b}, "mrr", test=test, seed=0,
                         n_permutations=99).to_frame().iloc[1]
        if test == "t":
            want = scipy_quietly(st.ttest_rel, *pair).pvalue \
                if n_users >= 2 and shift else math.nan
            assert row.p_value == want or (math.isnan(want) and math.isnan(row.p_value))
        elif test == "wilcoxon":
            assert row.p_value == scipy_quietly(st.wilcoxon, *pair).pvalue
        elif not shift:
            assert row.p_value == 1.0
        if n_users >= 2:
            ci = scipy_quietly(lambda: st.ttest_rel(*pair).confidence_interval())
            assert (row.ci_low, row.ci_high) == (ci.low, ci.high) == (shift, shift)


def scipy_quietly(function, *args):
    """scipy's answer on the degenerate cases compared here, without its warnings about
    them (a precision loss on equal differences, 0 / 0 on none): fastrank answers them
    without a warning, since nothing is wrong with the data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args)


def test_equal_differences_whose_mean_rounds_are_a_point_with_p_0_and_no_warning():
    """Every user 0.1 better: the spread of the differences is 0, though numpy's std says
    1.6e-17 (their mean rounds to 0.10000000000000002): no effect size of 6e15, no
    interval of that width, and the t-test's p-value is 0 (t is infinite), not scipy's
    1e-32 with a warning of precision loss."""
    a, b = synthetic(np.zeros(3)), synthetic(np.full(3, 0.1))
    assert float(np.std(np.full(3, 0.1), ddof=1)) > 0  # what numpy says
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = [fr.compare({"a": a, "b": b}, "m", test=test, n_permutations=99,
                           seed=0).rows[1] for test in ("t", "wilcoxon", "randomization")]
    for row in rows:
        assert (row["ci_low"], row["ci_high"]) == (0.1, 0.1) and math.isnan(row["effect"])
    assert [row["p_value"] for row in rows] == [0.0, 0.25, 0.25]


# -- infinite values and values past float64's squares ---------------------------------


def curve_result(per_user):
    """A Result of dcg@1 and dcg@2 with the given per-user values (a curve of dcg)."""
    values = [np.asarray(v, np.float64) for v in per_user]
    n = values[0].shape[0]
    with np.errstate(invalid="ignore"):  # inf - inf: a NaN mean
        means = {"dcg@1": float(np.mean(values[0])), "dcg@2": float(np.mean(values[1]))}
    return Result(["dcg@1", "dcg@2"], values, means,
                  convention="recsys", users=np.arange(n), counted=np.ones(n, bool),
                  n_relevant=np.ones(n, np.int64))


# every statistic, called on `res` (a Result whose "dcg@2" is infinite for some users)
# beside `other` (the same users, finite values)
STATISTICS = {
    "ci normal": lambda res, other: res.ci("dcg@2", method="normal"),
    "ci bootstrap": lambda res, other: res.ci("dcg@2", seed=0),
    "compare t": lambda res, other: fr.compare({"a": other, "b": res}, "dcg@2"),
    "compare wilcoxon":
        lambda res, other: fr.compare({"a": other, "b": res}, "dcg@2", test="wilcoxon"),
    "compare randomization": lambda res, other: fr.compare(
        {"a": res, "b": other}, "dcg@2", test="randomization", n_permutations=99),
    "by normal": lambda res, other: res.by([0, 1, 0, 1], "dcg@2"),
    "by bootstrap": lambda res, other: res.by([0, 1, 0, 1], "dcg@2", method="bootstrap"),
    "curve": lambda res, other: res.curve("dcg"),
    "plot": lambda res, other: res.plot("dcg"),
    "plot_compare": lambda res, other: fr.plot_compare({"a": other, "b": res}, "dcg"),
}


@pytest.mark.parametrize("statistic", STATISTICS.values(), ids=STATISTICS)
@pytest.mark.parametrize("infinite, found, mean", [
    ([np.inf, 1.0, 2.0, np.inf], r"2 users \+inf of the 4", r"\+inf"),
    ([-np.inf, 1.0, 2.0, 3.0], "1 user -inf of the 4", "-inf"),
    ([np.inf, -np.inf, 2.0, 3.0], r"1 user \+inf and 1 user -inf of the 4",
     r"NaN \(inf - inf\)")], ids=["+inf", "-inf", "both"])
def test_every_statistic_refuses_infinite_values_by_name(statistic, infinite, found, mean):
    """An infinite value makes the mean infinite (or NaN): no interval, test or segment
    mean is defined, so each says so instead of answering NaN ("not significant")."""
    res = curve_result([[1.0, 0.0, 2.0, 1.0], infinite])
    other = curve_result([[1.0, 0.0, 2.0, 1.0], [1.0, 0.5, 2.0, 3.0]])
    with pytest.raises(ValueError, match=f"'dcg@2' is infinite for some users \\({found} "
                                         f"it is taken over\\), so its mean is {mean} and it "
                                         f"has no interval, test or segment mean"):
        statistic(res, other)


def test_infinite_miscalibration_names_alpha_as_the_fix():
    item_aspects = sp.csr_array(np.array([[1, 0], [1, 1], [0, 1], [1, 0]]))
    train = sp.csr_array(np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [1, 0, 0, 1]],
                                  float))
    truth = sp.csr_array(np.ones((4, 4)))
    topk = np.array([[2, 3], [0, 3], [1, 2], [0, 1]])
    label = "miscalibration(alpha=0)@1"
    res = fr.evaluate(truth, topk, [label, "ndcg@2"], train=train, item_aspects=item_aspects)
    assert np.isinf(res.per_user(label)).sum() == 1 and res[label] == np.inf
    fix = r"evaluate it with alpha > 0 \(e.g. the default 0.01\)"
    with pytest.raises(ValueError, match=rf"'miscalibration\(alpha=0\)@1' is infinite for "
                                         rf"some users \(1 user \+inf of the 4 .*{fix}"):
        res.ci(label)
    other = fr.evaluate(truth, topk[:, ::-1], [label], train=train, item_aspects=item_aspects)
    with pytest.raises(ValueError, match=rf"results\['a'\]: 'miscalibration.*{fix}"):
        fr.compare({"a": res, "b": other}, label)
    assert np.isfinite(res.ci("ndcg@2", seed=0)).all()  # the other metrics are unaffected


def test_plots_without_intervals_refuse_an_infinite_mean():
    res = curve_result([[1.0, 0.0, 2.0, 1.0], [np.inf, 1.0, 2.0, 1.0]])
    assert res.curve("dcg", level=None).mean[1] == np.inf  # the mean is what it is
    for plot in (lambda: res.plot("dcg", level=None),
                 lambda: fr.plot_compare({"a": res}, "dcg", level=None)):
        with pytest.raises(ValueError, match="the mean of dcg@2 is inf, which a plot cannot "
                                             "draw"):
            plot()


def test_huge_finite_values_give_the_statistics_of_small_ones_scaled_exactly():
    """Values past 2**400 (relevance grades of 2**1000 here) square past float64: the
    statistics are taken of the values scaled down by a power of two, which is exact, so
    they are those of the small values times 2**1000, to the bit."""
    truth, topk = power_law(400, 60, 5, seed=3)
    huge = truth * 2.0**1000
    other = np.roll(topk, 1, axis=1)
    small = {name: fr.evaluate(truth, t, ["dcg@5"], curves=["dcg"])
             for name, t in (("a", topk), ("b", other))}
    big = {name: fr.evaluate(huge, t, ["dcg@5"], curves=["dcg"])
           for name, t in (("a", topk), ("b", other))}
    scale = 2.0**1000
    assert big["a"]["dcg@5"] == small["a"]["dcg@5"] * scale
    for method in ("normal", "bootstrap"):
        got = big["a"].ci("dcg@5", method=method, seed=1)
        want = small["a"].ci("dcg@5", method=method, seed=1)
        assert np.isfinite(got).all() and got == (want[0] * scale, want[1] * scale)
        seg_big = big["a"].by(np.arange(400) % 3, method=method, seed=1)
        seg_small = small["a"].by(np.arange(400) % 3, method=method, seed=1)
        assert np.array_equal(seg_big.low["dcg@5"], seg_small.low["dcg@5"] * scale)
        assert np.array_equal(seg_big.high["dcg@5"], seg_small.high["dcg@5"] * scale)
    curve = big["a"].curve("dcg")
    assert np.array_equal(curve.high, small["a"].curve("dcg").high * scale)
    for test in ("t", "wilcoxon", "randomization"):
        got = fr.compare(big, "dcg@5", test=test, seed=2).rows[1]
        want = fr.compare(small, "dcg@5", test=test, seed=2).rows[1]
        assert (got["p_value"], got["effect"]) == (want["p_value"], want["effect"])
        assert (got["ci_low"], got["ci_high"]) == (want["ci_low"] * scale,
                                                   want["ci_high"] * scale)


def test_finite_values_whose_sum_or_interval_overflows_are_refused_by_name():
    # three users at 1e308: their mean is 1e308, their sum (and the Result's mean) inf
    with np.errstate(over="ignore"):  # the Result's mean overflows: not what is tested
        res = fr.evaluate(sp.csr_array(np.eye(3) * 1e308), np.arange(3)[:, None], ["cg@1"])
    assert np.isfinite(res.per_user("cg@1")).all()
    overflow = (r"'cg@1': its per-user values are finite \(up to 1[.0-9]*e\+308 in magnitude\), "
                r"but {} overflows float64 .* divide the relevance values by a power of 2")
    for call in (lambda: res.ci("cg@1"), lambda: res.by([0, 0, 1]),
                 lambda: fr.compare({"a": res, "b": res}, "cg@1")):
        with pytest.raises(ValueError, match=overflow.format("their sum over the users")):
            call()
    # a mean of 8.5e307 whose interval reaches past 1.8e308
    res = fr.evaluate(sp.csr_array(np.diag([1.7e308, 1.0])), np.arange(2)[:, None], ["cg@1"])
    with pytest.raises(ValueError, match=overflow.format("a bound of its interval")):
        res.ci("cg@1", method="normal")
    with pytest.raises(ValueError, match=overflow.format("a bound of a segment's interval")):
        res.by([0, 0])
