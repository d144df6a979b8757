"""Bad input to intervals, segments, comparisons, curves and plots (SPEC §5): every call
answers with a ValueError or TypeError naming the argument, never an AttributeError, a
bare KeyError, a numpy or matplotlib message, or an attempt at a giant allocation."""

import math

import numpy as np
import pytest

import fastrank as fr
import fastrank.stats as stats
import fastrank.validation as validation
from fastrank.result import UnknownMetric
from fastrank.synthetic import power_law

HUGE = 10**12


@pytest.fixture(scope="module")
def two():
    truth, topk = power_law(300, 50, 5, seed=1)
    metrics = ["ndcg@3", "mrr", "coverage@5"]
    a = fr.evaluate(truth, topk, metrics, curves=["ndcg"])
    b = fr.evaluate(truth, np.roll(topk, 1, axis=1), metrics, curves=["ndcg"])
    return truth, topk, a, b


@pytest.fixture
def labels():
    return np.arange(300) % 3


# -- 1. counts whose arrays cannot fit --------------------------------------------------


def test_giant_counts_are_refused_before_allocating(two, labels):
    _, _, a, b = two
    huge = (r"n_resamples=1000000000000 \(16 bytes each\) would need 14.6 TiB.* such as "
            r"n_resamples=1000")
    with pytest.raises(ValueError, match=huge):
        a.ci("ndcg@5", n_resamples=HUGE)
    with pytest.raises(ValueError, match=huge):
        a.by(labels, method="bootstrap", n_resamples=HUGE)
    with pytest.raises(ValueError, match=huge):
        a.curve("ndcg", method="bootstrap", n_resamples=HUGE)
    with pytest.raises(ValueError, match=r"n_permutations=1000000000000 .*would need "
                                         r".* such as n_permutations=10000"):
        fr.compare({"a": a, "b": b}, test="randomization", n_permutations=HUGE)
    # counts a method does not use allocate nothing
    assert a.ci("mrr", method="normal", n_resamples=HUGE) == a.ci("mrr", method="normal")
    a.by(labels, n_resamples=HUGE)
    a.curve("ndcg", level=None, method="bootstrap", n_resamples=HUGE)
    fr.compare({"a": a, "b": b}, "mrr", n_permutations=HUGE)


def test_the_limit_is_half_the_physical_memory(two, monkeypatch):
    _, _, a, b = two
    monkeypatch.setattr(validation, "physical_memory", lambda: 40_000)
    with pytest.raises(ValueError, match=r"n_resamples=2000 \(16 bytes each\) would need "
                                         r"31.2 KiB, more than half of this machine's "
                                         r"39.1 KiB"):
        a.ci("mrr", n_resamples=2000)
    assert a.ci("mrr", n_resamples=1000, seed=1) == a.ci("mrr", n_resamples=1000, seed=1)
    with pytest.raises(ValueError, match="n_permutations=2000 .*would need"):
        fr.compare({"a": a, "b": b}, "mrr", test="randomization", n_permutations=2000)


def test_a_lower_address_space_limit_is_the_one_named(monkeypatch):
    monkeypatch.setattr(validation, "physical_memory", lambda: 10**12)
    monkeypatch.setattr(validation, "address_space_limit", lambda: 40_000)
    with pytest.raises(ValueError, match=r"more than half of this process's address-space "
                                         r"limit of 39.1 KiB; fix"):
        validation.check_memory(30_000, "x", "fix")
    validation.check_memory(20_000, "x", "fix")  # within half: no error
    monkeypatch.setattr(validation, "address_space_limit", lambda: 10**13)  # the machine's
    with pytest.raises(ValueError, match=r"half of this machine's 931 GiB"):
        validation.check_memory(10**12, "x", "fix")
    monkeypatch.setattr(validation, "physical_memory", lambda: None)  # only the limit
    with pytest.raises(ValueError, match="address-space limit of 9.09 TiB"):
        validation.check_memory(10**13, "x", "fix")


def test_no_limit_where_the_system_does_not_say(monkeypatch):
    import os

    assert validation.physical_memory() > 0

    def unknown(name):
        raise ValueError(f"unrecognized configuration name {name}")

    monkeypatch.setattr(os, "sysconf", unknown)
    assert validation.physical_memory() is None
    assert stats.check_allocation(HUGE, "n_resamples", 16, 1000) == HUGE
    monkeypatch.setattr(os, "sysconf", lambda name: -1)
    assert validation.physical_memory() is None


@pytest.mark.parametrize("bad, error", [(True, TypeError), (2.5, TypeError),
                                        ("100", TypeError), (None, TypeError),
                                        (0, ValueError), (-5, ValueError)])
def test_counts_are_ints_of_at_least_one(two, labels, bad, error):
    _, _, a, b = two
    with pytest.raises(error, match=rf"n_resamples must be an int of at least 2, such as "
                                    rf"1000; got {bad!r}"):
        a.ci("mrr", n_resamples=bad)
    with pytest.raises(error, match="n_resamples must be an int"):
        a.by(labels, method="bootstrap", n_resamples=bad)
    with pytest.raises(error, match="n_resamples must be an int"):
        a.curve("ndcg", n_resamples=bad)
    with pytest.raises(error, match=rf"n_permutations must be an int of at least 1, such as "
                                    rf"10000; got {bad!r}"):
        fr.compare({"a": a, "b": b}, "mrr", test="randomization", n_permutations=bad)


# -- 2. metric names and results of the wrong type --------------------------------------


def test_metric_names_must_be_strings(two):
    _, _, a, _ = two
    for bad in (5, None, ["ndcg"]):
        with pytest.raises(TypeError, match=r"metric must be a metric name \(a string\) "
                                            r"such as 'ndcg'; got"):
            a.curve(bad)
    with pytest.raises(TypeError, match=r"metrics must hold metric names \(strings\) such "
                                        r"as 'ndcg'; got 5 of type int"):
        a.plot([5])
    with pytest.raises(TypeError, match=r"metric must be a metric name \(a string\).*"
                                        r"got \['mrr'\] of type list"):
        a.ci(["mrr"])
    with pytest.raises(TypeError, match=r"name must be a metric name \(a string\)"):
        a.per_user(3)
    with pytest.raises(TypeError, match=r"the key must be a metric name \(a string\)"):
        a[["mrr"]]


def test_plot_compare_wants_results(two):
    pytest.importorskip("matplotlib")
    _, _, a, _ = two
    with pytest.raises(TypeError, match=r"results\['a'\] must be a fastrank Result .*got int"):
        fr.plot_compare({"a": 1}, ["ndcg"])
    with pytest.raises(TypeError, match=r"results\['b'\] must be a fastrank Result"):
        fr.plot_compare({"a": a, "b": "x"}, "ndcg")
    with pytest.raises(TypeError, match="results must be a non-empty dict .*got list"):
        fr.plot_compare([a], "ndcg")
    with pytest.raises(ValueError, match="results must be a non-empty dict .*got an empty"):
        fr.plot_compare({}, "ndcg")


# -- 3. unknown metrics: KeyError and ValueError ----------------------------------------


def test_unknown_metrics_are_key_and_value_errors(two, labels):
    _, _, a, b = two
    known = r"'bogus' is not in this result; it holds ndcg@3, mrr, coverage@5, ndcg@1"
    calls = [lambda: a.ci("bogus"), lambda: a.per_user("bogus"),
             lambda: a.by(labels, metrics=["bogus"]), lambda: a.by(labels, "bogus"),
             lambda: a["bogus"]]
    for call in calls:
        for error in (UnknownMetric, KeyError, ValueError):
            with pytest.raises(error, match=known):
                call()
    with pytest.raises(ValueError, match=r"metrics: metric 'bogus' is not in the result of "
                                         r"system 'a'; it holds ndcg@3, mrr"):
        fr.compare({"a": a, "b": b}, ["bogus"])
    with pytest.raises(KeyError):
        fr.compare({"a": a, "b": b}, "mrr@2")
    # a plain message (KeyError's str() would quote it), and the Mapping protocol holds
    with pytest.raises(KeyError) as info:
        a["bogus"]
    assert str(info.value).startswith("'bogus' is not in this result")
    assert "bogus" not in a and a.get("bogus") is None and a.get("mrr") == a["mrr"]


def test_a_metric_missing_from_one_system(two):
    truth, topk, a, _ = two
    short = fr.evaluate(truth, topk, ["mrr"])
    with pytest.raises(ValueError, match=r"metric 'ndcg@3' is not in the result of system "
                                         r"'s'; it holds mrr: compare metrics every system"):
        fr.compare({"a": a, "s": short}, ["mrr", "ndcg@3"])
    with pytest.raises(ValueError, match="metric 'ndcg@3' is not in the result of system 's'"):
        fr.compare({"a": a, "s": short})  # the baseline's metrics by default
    with pytest.raises(ValueError, match="'coverage@5' describes the catalogue"):
        fr.compare({"a": a, "b": a}, ["coverage@5"])
    with pytest.raises(ValueError, match="'coverage@5' describes the catalogue"):
        a.by(np.zeros(300), ["coverage@5"])


# -- 4. non-iterables and unhashables ---------------------------------------------------


def test_non_iterables_and_unhashables(two, labels):
    truth, topk, a, b = two
    with pytest.raises(TypeError, match=r"curves must be a metric name such as 'ndcg', a "
                                        r"list of them, True .*got 5 of type int"):
        fr.evaluate(truth, topk, ["ndcg@3"], curves=5)
    with pytest.raises(TypeError, match=r"metrics must be a metric name or a list of them, "
                                        r"such as \['ndcg'\]; got 5 of type int"):
        a.plot(5)
    with pytest.raises(TypeError, match=r"metrics must be a metric name or a list of them.*"
                                        r"got 5 of type int"):
        a.by(labels, metrics=5)
    with pytest.raises(TypeError, match=r"metrics must be a metric name or a list of them.*"
                                        r"got 5 of type int"):
        fr.compare({"a": a, "b": b}, 5)
    with pytest.raises(TypeError, match=r"metrics must hold metric names.*got 3"):
        fr.compare({"a": a, "b": b}, ["mrr", 3])
    with pytest.raises(TypeError, match=r"baseline must be the name \(a string\) of one of "
                                        r"the systems: 'a', 'b'; got \['a'\] of type list"):
        fr.compare({"a": a, "b": b}, baseline=["a"])
    with pytest.raises(ValueError, match="metrics is empty"):
        a.by(labels, [])
    with pytest.raises(ValueError, match="metrics is empty"):
        a.plot([])
    # numpy booleans are booleans
    assert fr.evaluate(truth, topk, ["mrr"], curves=np.False_).metrics == ("mrr",)
    assert "mrr@5" in fr.evaluate(truth, topk, ["mrr"], curves=np.True_).metrics


# -- 5. file formats --------------------------------------------------------------------


@pytest.mark.slow
def test_unsupported_formats_are_refused_before_drawing(two, tmp_path):
    pytest.importorskip("matplotlib")
    _, _, a, b = two
    bad = tmp_path / "x.xyz"
    supported = r"ends in \.xyz, a format that cannot be written; end it in \.png, \.svg or " \
                r"\.pdf \(also supported: .*\.eps"
    with pytest.raises(ValueError, match=r"path '.*x\.xyz' " + supported):
        a.plot("ndcg", path=bad)
    with pytest.raises(ValueError, match=r"path '.*x\.xyz' " + supported):
        fr.plot_compare({"a": a, "b": b}, "ndcg", path=str(bad))
    assert not bad.exists()
    with pytest.raises(TypeError, match=r"path must be a file name \(str or pathlib.Path\).*"
                                        r"got 5 of type int"):
        a.plot("ndcg", path=5)
    a.plot("ndcg", path=tmp_path / "upper.PDF", level=None)
    assert (tmp_path / "upper.PDF").read_bytes()[:5] == b"%PDF-"


# -- 6. labels, levels, seeds, choices, systems -----------------------------------------


def test_segment_labels(two, labels):
    _, _, a, _ = two
    shape = r"labels must be 1-D with one segment label per row of the result \(300\); got "
    with pytest.raises(ValueError, match=shape + r"shape \(299,\): pass a list or array of "
                                                 r"300 labels"):
        a.by(labels[:-1])
    with pytest.raises(ValueError, match=shape + r"shape \(300, 1\)"):
        a.by(labels.reshape(-1, 1))
    with pytest.raises(ValueError, match=shape + r"shape \(\)"):
        a.by(5)
    with pytest.raises(ValueError, match=shape + "a list that is not an array"):
        a.by([[1], [1, 2]] * 150)
    missing = r"labels holds a missing label \(NaN, NaT or None\) at {} row\(s\), the first " \
              r"row {}: give every row a label"
    with pytest.raises(ValueError, match=missing.format(100, 1)):
        a.by(np.where(labels == 1, np.nan, labels))
    objects = np.array(["x"] * 300, dtype=object)
    objects[7] = None
    with pytest.raises(ValueError, match=missing.format(1, 7)):
        a.by(objects)
    objects[7] = float("nan")
    with pytest.raises(ValueError, match=missing.format(1, 7)):
        a.by(objects)
    days = np.arange(300).astype("datetime64[D]")
    days[3] = np.datetime64("NaT")
    with pytest.raises(ValueError, match=missing.format(1, 3)):
        a.by(days)
    objects[7] = 1
    with pytest.raises(TypeError, match=r"labels must be of one sortable type .*astype\(str\)"):
        a.by(objects)
    # a list of text and numbers, which numpy would make all text (1 and "1" one segment)
    with pytest.raises(TypeError, match="labels mixes labels of kinds int, str"):
        a.by(["x"] * 299 + [1])
    with pytest.raises(TypeError, match="labels mixes labels of kinds bytes, str"):
        a.by([b"x"] * 299 + ["x"])
    with pytest.raises(ValueError, match=missing.format(1, 4)):  # not the label "nan"
        a.by(["x"] * 4 + [float("nan")] + ["x"] * 295)
    assert list(a.by(["x", "y"] * 150).labels) == ["x", "y"]
    assert list(a.by([b"x", b"y"] * 150).labels) == [b"x", b"y"]


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, math.nan, math.inf, "0.9", True])
def test_levels_strictly_between_0_and_1(two, labels, level):
    _, _, a, b = two
    message = "level must be a number strictly between 0 and 1, such as 0.95; got"
    for call in (lambda: a.ci("mrr", level=level), lambda: a.by(labels, level=level),
                 lambda: a.curve("ndcg", level=level),
                 lambda: fr.compare({"a": a, "b": b}, "mrr", level=level)):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("seed", [1.5, "7", True, [1], np.float64(2.0)])
def test_seeds_are_ints_or_none(two, labels, seed):
    _, _, a, b = two
    message = r"seed must be an int or None, such as 0 .*; got .* of type"
    for call in (lambda: a.ci("mrr", seed=seed), lambda: a.ci("mrr", method="normal", seed=seed),
                 lambda: a.by(labels, seed=seed), lambda: a.curve("ndcg", seed=seed),
                 lambda: fr.compare({"a": a, "b": b}, "mrr", seed=seed)):
        with pytest.raises(TypeError, match=message):
            call()
    assert a.ci("mrr", seed=np.int32(3)) == a.ci("mrr", seed=3)


def test_choices_list_the_accepted_values(two, labels):
    _, _, a, b = two
    methods = "method must be one of 'bootstrap', 'normal'; got"
    for call in (lambda m: a.ci("mrr", method=m), lambda m: a.by(labels, method=m),
                 lambda m: a.curve("ndcg", method=m)):
        with pytest.raises(ValueError, match=methods + " 'jackknife'"):
            call("jackknife")
        with pytest.raises(TypeError, match=methods + r" array\(\['a', 'b'\].* of type ndarray"):
            call(np.array(["a", "b"]))
    pair = {"a": a, "b": b}
    with pytest.raises(ValueError, match="test must be one of 't', 'wilcoxon', "
                                         "'randomization'; got 'z'"):
        fr.compare(pair, "mrr", test="z")
    with pytest.raises(TypeError, match="test must be one of .*; got None of type NoneType"):
        fr.compare(pair, "mrr", test=None)
    with pytest.raises(ValueError, match="correction must be one of 'holm', 'bonferroni', "
                                         "None; got 'fdr'"):
        fr.compare(pair, "mrr", correction="fdr")
    with pytest.raises(TypeError, match=r"correction must be one of .*; got \['holm'\]"):
        fr.compare(pair, "mrr", correction=["holm"])


def test_compare_needs_two_systems_on_the_same_users(two):
    truth, topk, a, b = two
    with pytest.raises(TypeError, match=r"results must be a dict of at least two "
                                        r"\{name: Result\}.*got a dict of 1 system"):
        fr.compare({"a": a}, "mrr")
    with pytest.raises(TypeError, match="results must be a dict of at least two .*got list"):
        fr.compare([a, b], "mrr")
    other = fr.evaluate(truth[:100], topk[:100], ["mrr"])
    with pytest.raises(ValueError, match="systems 'a' and 'o' were not evaluated on the same "
                                         "users"):
        fr.compare({"a": a, "o": other}, "mrr")
    with pytest.raises(ValueError, match="baseline 'c' is not one of the systems: 'a', 'b'"):
        fr.compare({"a": a, "b": b}, "mrr", baseline="c")
