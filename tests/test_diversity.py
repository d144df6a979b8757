"""αβ-nDCG (SPEC §4) and α-nDCG: worked example, reductions, references, oracles."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import fastrank as fr
from fastrank.synthetic import power_law

from .reference_aspects import (ab_ndcg_reference, alpha_dcg_reference,
                                alpha_idcg_reference, aspect_sets)
from .reference import truth_rows

# SPEC §4's worked example: aspects A, C, D; items 0 {A}, 1 {A, C}, 2 {C}, 3 {D}, 4 {A}
EXAMPLE_ASPECTS = sp.csr_array(np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]]))
EXAMPLE_TRUTH = sp.csr_array(np.array([[5.0, 4.0, 0.0, 3.0, 0.0]]))
EXAMPLE_GAMMA = np.array([[0.5, 0.3, 0.2]])
EXAMPLE_TOPK = np.array([[0, 4, 1, 2, 3]])


def test_worked_example():
    res = fr.ab_ndcg(EXAMPLE_TRUTH, EXAMPLE_TOPK, EXAMPLE_ASPECTS, k=[3, 5], alpha=0.1,
                     beta=0.5, user_aspects=EXAMPLE_GAMMA, r_max=5)
    assert res["ab_ndcg@5"] == pytest.approx(0.9128090091, abs=1e-10)
    assert res["ab_ndcg@3"] == pytest.approx(0.8686138034, abs=1e-10)
    scorer = fr.AlphaBetaNDCG(EXAMPLE_TRUTH, EXAMPLE_ASPECTS, k=5, alpha=0.1, beta=0.5,
                              user_aspects=EXAMPLE_GAMMA, r_max=5)
    assert scorer.idcg[0, 0] == pytest.approx(0.4341944332, abs=1e-10)
    d = 1.0 / np.log2(np.arange(2, 7))
    dcg = np.dot([0.25, 0.025, 0.1992, 0.018, 0.06], d)
    assert dcg == pytest.approx(0.3963365903, abs=1e-10)
    assert scorer.score(EXAMPLE_TOPK)["ab_ndcg@5"] == pytest.approx(dcg / scorer.idcg[0, 0])


@st.composite
def aspect_cases(draw, max_users=5, max_items=9):
    n_items = draw(st.integers(1, max_items))
    n_aspects = draw(st.sampled_from([1, 2, 3, 5, 70]))  # 70: past the 64-bit masks
    n_users = draw(st.integers(1, max_users))
    values = st.sampled_from([1.0, 2.0, 3.0, 0.0, -1.0])
    truth = np.zeros((n_users, n_items))
    stored = np.zeros((n_users, n_items), bool)
    for u in range(n_users):
        for i in draw(st.lists(st.integers(0, n_items - 1), unique=True, max_size=n_items)):
            truth[u, i] = draw(values)
            stored[u, i] = True
    rows, cols = np.nonzero(stored)
    truth = sp.csr_array((truth[rows, cols], (rows, cols)), shape=(n_users, n_items))
    aspects = np.zeros((n_items, n_aspects), np.int8)
    for i in range(n_items):
        for a in draw(st.lists(st.integers(0, n_aspects - 1), unique=True, max_size=3)):
            aspects[i, a] = 1
    profile = sp.csr_array(np.array(
        [[draw(st.sampled_from([0, 0, 1, 2])) for _ in range(n_items)] for _ in range(n_users)],
        dtype=float))
    k = draw(st.integers(1, 6))
    topk = np.array([[draw(st.integers(-1, n_items - 1)) for _ in range(k)]
                     for _ in range(n_users)], dtype=draw(st.sampled_from([np.int32, np.int64])))
    return truth, topk, sp.csr_array(aspects), profile


@given(aspect_cases(), st.sampled_from([0.0, 0.01, 0.3, 0.57, 1.0]),
       st.sampled_from([0.0, 0.5, 0.7, 1.0]), st.booleans(), st.booleans())
@pytest.mark.slow
def test_ab_ndcg_matches_reference(case, alpha, beta, use_profile, exclude_nothing):
    truth, topk, aspects, profile = case
    kw = {"profile": profile} if use_profile else {
        "user_aspects": np.arange(1, aspects.shape[1] + 1, dtype=float)[None, :].repeat(
            truth.shape[0], axis=0)}
    if exclude_nothing:
        kw["exclude"] = sp.csr_array(truth.shape)
    cutoffs = sorted({1, topk.shape[1]})
    res = fr.ab_ndcg(truth, topk, aspects, k=cutoffs, alpha=alpha, beta=beta, **kw)
    ref = ab_ndcg_reference(truth, topk, aspects, cutoffs, alpha, beta, **kw)
    for k in cutoffs:
        expected = np.array([np.nan if v is None else v for v in ref[k]])
        np.testing.assert_allclose(res.per_user(f"ab_ndcg@{k}"), expected, rtol=1e-12,
                                   atol=1e-15)


def test_each_item_its_own_aspect_with_alpha_zero_is_linear_ndcg():
    truth, topk = power_law(300, 40, 8, seed=3)
    aspects = sp.csr_array(np.eye(40, dtype=np.int8))
    gamma = np.ones((300, 40))
    for k in (1, 5, 8):
        res = fr.ab_ndcg(truth, topk, aspects, k=k, alpha=0.0, beta=0.7, user_aspects=gamma)
        ndcg = fr.evaluate(truth, topk, [f"ndcg@{k}"]).per_user(f"ndcg@{k}")
        np.testing.assert_allclose(res.per_user(f"ab_ndcg@{k}"), ndcg, rtol=1e-12)


def test_rescoring_reuses_the_ideal_and_matches_one_call():
    truth, topk = power_law(500, 60, 10, seed=1)
    train, other = power_law(500, 60, 10, seed=2)
    rng = np.random.default_rng(0)
    aspects = sp.csr_array((rng.random((60, 7)) < 0.3).astype(np.int8))
    scorer = fr.AlphaBetaNDCG(truth, aspects, k=[5, 10], profile=train)
    ideal = scorer.idcg.copy()
    for lists in (topk, other):
        once = fr.ab_ndcg(truth, lists, aspects, k=[5, 10], profile=train)
        again = scorer.score(lists)
        for label in ("ab_ndcg@5", "ab_ndcg@10"):
            np.testing.assert_array_equal(again.per_user(label), once.per_user(label))
    np.testing.assert_array_equal(scorer.idcg, ideal)


def test_float32_inputs_warn_nothing_and_give_the_float64_values():
    """float32 grades, aspects, profile and γ (the realistic shape): the scale checks
    compare them with 2**±1000, which float32 cannot hold; no overflow warning."""
    truth, topk = power_law(300, 80, 10, seed=6)
    train, _ = power_law(300, 80, 10, seed=7)
    rng = np.random.default_rng(2)
    aspects = sp.csr_array((rng.random((80, 6)) < 0.3).astype(np.float32))
    gamma = rng.random((300, 6)).astype(np.float32)
    narrow = {name: m.astype(np.float32) for name, m in (("truth", truth), ("train", train))}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [fr.ab_ndcg(narrow["truth"], topk, aspects, profile=narrow["train"]),
               fr.ab_ndcg(narrow["truth"], topk, aspects, user_aspects=gamma),
               fr.alpha_ndcg(narrow["truth"], topk, aspects)]
    want = [fr.ab_ndcg(truth, topk, aspects, profile=train),
            fr.ab_ndcg(truth, topk, aspects, user_aspects=gamma.astype(np.float64)),
            fr.alpha_ndcg(truth, topk, aspects)]
    for a, b in zip(got, want):
        for label in a.metrics:
            np.testing.assert_array_equal(a.per_user(label), b.per_user(label))


def test_thread_count_does_not_change_a_bit():
    truth, topk = power_law(3000, 200, 10, seed=4)
    train, _ = power_law(3000, 200, 10, seed=5)
    rng = np.random.default_rng(1)
    aspects = sp.csr_array((rng.random((200, 12)) < 0.15).astype(np.int8))
    one = fr.ab_ndcg(truth, topk, aspects, profile=train, n_threads=1)
    many = fr.ab_ndcg(truth, topk, aspects, profile=train, n_threads=2)
    np.testing.assert_array_equal(one.per_user("ab_ndcg@10"), many.per_user("ab_ndcg@10"))
    a1 = fr.alpha_ndcg(truth, topk, aspects, n_threads=1)
    a2 = fr.alpha_ndcg(truth, topk, aspects, n_threads=2)
    np.testing.assert_array_equal(a1.per_user("alpha_ndcg@10"), a2.per_user("alpha_ndcg@10"))


@pytest.mark.parametrize("n_aspects, width, binary, seed", [
    (6, 3, True, 0), (12, 5, False, 1), (40, 2, True, 2), (70, 4, False, 3), (200, 3, True, 4)])
def test_ideal_reaches_groups_through_their_aspects_like_the_plain_greedy(
        n_aspects, width, binary, seed):
    """The ideal finds unrated groups through the user's aspects by falling interest and
    stops early: on catalogues with many groups (many per aspect, wide ones, ties from
    0/1 profiles, more than 64 aspects) it equals the plain greedy over every item."""
    rng = np.random.default_rng(seed)
    n_users, n_items, k = 6, 80, 9
    aspects = sp.csr_array((rng.random((n_items, n_aspects)) < width / n_aspects)
                           .astype(np.int8))
    truth = sp.random(n_users, n_items, density=0.06, random_state=seed, format="csr")
    truth.data = np.ceil(truth.data * 5)
    profile = sp.random(n_users, n_items, density=0.2, random_state=seed + 9, format="csr")
    if binary:
        profile.data[:] = 1.0
    topk = rng.integers(-1, n_items, (n_users, k))
    # zeros; no small-integer weights: with them, items of 7-9 aspects reach gains that
    # differ by less than the 2**-40 tie tolerance without being equal (see _tie_floor)
    dense = rng.random((n_users, n_aspects)) * (rng.random((n_users, n_aspects)) < 0.7)
    dense[:, 0] += 1.0
    for kw in ({"profile": profile}, {"profile": profile, "exclude": sp.csr_array(truth.shape)},
               {"user_aspects": dense, "exclude": profile}, {"user_aspects": sp.csr_array(dense)}):
        res = fr.ab_ndcg(truth, topk, aspects, k=[3, k], alpha=0.3, beta=0.5, **kw)
        ref = ab_ndcg_reference(truth, topk, aspects, [3, k], 0.3, 0.5, **kw)
        for c in (3, k):
            expected = np.array([np.nan if v is None else v for v in ref[c]])
            np.testing.assert_allclose(res.per_user(f"ab_ndcg@{c}"), expected, rtol=1e-12,
                                       atol=1e-15)


@pytest.mark.parametrize("n_aspects, binary, seed", [
    (4, True, 0), (20, True, 1), (20, False, 2), (64, True, 3), (100, False, 4)])
def test_ideal_through_pairs_of_aspects_equals_the_ideal_through_single_aspects(
        monkeypatch, n_aspects, binary, seed):
    """Reaching an aspect's groups pair by pair (an index of groups by two aspects) gives
    the same ideal, to the bit, as reading each aspect's groups whole."""
    import fastrank.aspects

    rng = np.random.default_rng(seed)
    n_users, n_items = 400, 300
    per_item = rng.integers(1, 5, n_items)
    rows = np.repeat(np.arange(n_items), per_item)
    cols = np.concatenate([rng.choice(n_aspects, min(w, n_aspects), replace=False)
                           for w in per_item])
    aspects = sp.csr_array((np.ones(rows.shape[0], np.int8), (rows[:cols.shape[0]], cols)),
                           shape=(n_items, n_aspects))
    truth, _ = power_law(n_users, n_items, 10, seed=seed)
    profile, _ = power_law(n_users, n_items, 10, seed=seed + 1)
    if binary:
        profile.data[:] = 1.0
    kw = dict(k=[1, 5, 10], profile=profile, alpha=0.05)
    paired = fr.AlphaBetaNDCG(truth, aspects, **kw)
    groups = fastrank.aspects.aspect_groups
    assert groups(paired.aspects).pair_ptr.shape[0] == n_aspects * n_aspects + 1
    monkeypatch.setattr(fastrank.aspects, "_PAIR_ASPECTS", 0)
    single = fr.AlphaBetaNDCG(truth, aspects, **kw)
    assert groups(single.aspects).pair_ptr.shape[0] == 1
    np.testing.assert_array_equal(paired.idcg, single.idcg)
    np.testing.assert_array_equal(paired.status, single.status)
    assert np.count_nonzero(paired.idcg) > n_users  # not a vacuous comparison


@pytest.mark.parametrize("alpha, seed", [(0.05, 0), (0.5, 1), (0.9, 2)])
def test_groups_of_one_aspect_of_interest_are_one_candidate_to_the_bit(alpha, seed):
    """The groups whose only aspect of the user's interest is φ all gain 1 - q[φ] and are
    taken as one candidate, their lowest available item found by walking φ's groups in
    the order of their first items: with exclusions emptying groups and long ideals
    taking from such candidates again and again, the ideal equals, to the bit, the one
    that reads every group (no pair index), and the plain greedy."""
    import fastrank.aspects

    rng = np.random.default_rng(seed)
    n_users, n_items, n_aspects = 60, 240, 12
    per_item = rng.integers(1, 4, n_items)
    rows = np.repeat(np.arange(n_items), per_item)
    cols = np.concatenate([rng.choice(n_aspects, w, replace=False) for w in per_item])
    aspects = sp.csr_array((np.ones(rows.shape[0], np.int8), (rows, cols)),
                           shape=(n_items, n_aspects))
    # γ on one to three aspects: most groups of an aspect of interest have no other
    gamma = np.zeros((n_users, n_aspects))
    for u in range(n_users):
        liked = rng.choice(n_aspects, int(rng.integers(1, 4)), replace=False)
        gamma[u, liked] = rng.random(liked.shape[0]) + 0.1
    truth = sp.random(n_users, n_items, density=0.03, random_state=seed, format="csr")
    truth.data = np.ceil(truth.data * 3)
    exclude = sp.random(n_users, n_items, density=0.4, random_state=seed + 5, format="csr")
    kw = dict(k=[1, 4, 30, 200], user_aspects=gamma, exclude=exclude, alpha=alpha)
    one = fr.AlphaBetaNDCG(truth, aspects, **kw)
    groups = fastrank.aspects.aspect_groups(one.aspects)
    assert groups.pair_ptr.shape[0] > 1  # the pair index, so the walk of φ's groups
    for phi in range(n_aspects):  # φ's groups, each once, by first item
        listed = groups.links[groups.by_ptr[phi]:groups.by_ptr[phi + 1]]
        firsts = groups.items[groups.ptr[listed]]
        assert np.all(np.diff(firsts) > 0)
        holders = [g for g in range(groups.ptr.shape[0] - 1)
                   if phi in groups.aspects[groups.aspect_ptr[g]:groups.aspect_ptr[g + 1]]]
        assert sorted(listed.tolist()) == holders
    import unittest.mock
    with unittest.mock.patch.object(fastrank.aspects, "_PAIR_ASPECTS", 0):
        every = fr.AlphaBetaNDCG(truth, aspects, **kw)
    np.testing.assert_array_equal(one.idcg, every.idcg)
    topk = rng.integers(-1, n_items, (n_users, 200))
    ref = ab_ndcg_reference(truth, topk, aspects, [1, 4, 30, 200], alpha, 0.5,
                            user_aspects=gamma, exclude=exclude)
    res = one.score(topk)
    for c in (1, 4, 30, 200):
        expected = np.array([np.nan if v is None else v for v in ref[c]])
        np.testing.assert_allclose(res.per_user(f"ab_ndcg@{c}"), expected, rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize("n_items, n_aspects, equal_weights", [
    (0, 3, False), (1, 1, False), (50, 3, False), (400, 12, False), (400, 12, True),
    (300, 200, True)])
def test_items_grouped_by_aspect_set_as_a_plain_dictionary_groups_them(
        n_items, n_aspects, equal_weights):
    """group_sets (one hash-table pass) against a dictionary of aspect tuples: the same
    groups, ordered by size then lowest item, items ascending; equal weights make every
    set of one size collide, which the member-by-member check must keep apart."""
    from fastrank._kernels.aspects import group_scratch, group_sets

    rng = np.random.default_rng(n_items + n_aspects)
    aspects = sp.csr_array((rng.random((n_items, n_aspects)) < 3 / n_aspects).astype(np.int8))
    indptr = aspects.indptr.astype(np.int64)
    weights = (np.ones(n_aspects, np.int64) if equal_weights
               else rng.integers(1, 2**63 - 1, n_aspects, dtype=np.int64))
    item_group = np.empty(n_items, np.int64)
    ptr = np.empty(n_items + 1, np.int64)
    items = np.empty(n_items, np.int64)
    n_groups = group_sets(indptr, aspects.indices, weights, item_group, ptr, items,
                          np.full(group_scratch(n_items), 7, np.int64))  # not zeroed
    sets: dict[tuple, list] = {}
    for i in range(n_items):
        key = tuple(aspects.indices[indptr[i]:indptr[i + 1]])
        if key:
            sets.setdefault(key, []).append(i)
    expected = sorted(sets.values(), key=lambda members: (len(aspects[[members[0]]].indices),
                                                           members[0]))
    assert n_groups == len(expected)
    got = [list(items[ptr[g]:ptr[g + 1]]) for g in range(n_groups)]
    assert got == expected
    for g, members in enumerate(expected):
        assert (item_group[members] == g).all()
    assert (item_group[np.diff(indptr) == 0] == -1).all()


def test_greedy_ideal_can_be_beaten_and_the_report_says_so():
    aspects = sp.csr_array(np.array([[1, 1, 1, 1], [1, 0, 0, 1], [1, 0, 0, 1], [0, 1, 0, 0]]))
    truth = sp.csr_array(np.array([[2.0, 0.0, 2.0, 0.0]]))
    gamma = np.array([[3.0, 2.0, 1.0, 3.0]])
    topk = np.array([[2, 0, 1]])
    kw = dict(k=3, alpha=0.3, beta=1.0, user_aspects=gamma)
    res = fr.ab_ndcg(truth, topk, aspects, **kw)
    ref = ab_ndcg_reference(truth, topk, aspects, [3], 0.3, 1.0, user_aspects=gamma)[3][0]
    assert res["ab_ndcg@3"] == pytest.approx(ref, rel=1e-12)
    assert res["ab_ndcg@3"] > 1.0
    assert res.report["above_one"] == {"ab_ndcg@3": 1}
    clipped = fr.ab_ndcg(truth, topk, aspects, clip=True, **kw)
    assert clipped["ab_ndcg@3"] == 1.0 and clipped.report["above_one"] == {"ab_ndcg@3": 1}


def test_users_without_profile_or_truth_are_nan_and_reported():
    truth = sp.csr_array(np.array([[1.0, 0, 0], [0, 0, 0], [0, 2.0, 0]]))
    profile = sp.csr_array(np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 0, 0]]))
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]]))
    res = fr.ab_ndcg(truth, np.array([[0, 1], [1, 2], [2, 1]]), aspects, profile=profile)
    values = res.per_user("ab_ndcg@2")
    assert not np.isnan(values[0]) and np.isnan(values[1]) and np.isnan(values[2])
    assert res.report["no_truth"] == 1 and res.report["no_profile"] == 1
    assert res.n_users == 1 and res["ab_ndcg@2"] == values[0]


def test_exclude_defaults_to_the_profile():
    truth = sp.csr_array(np.array([[0, 0, 3.0]]))
    profile = sp.csr_array(np.array([[1.0, 0, 0]]))
    aspects = sp.csr_array(np.array([[1], [1], [1]]))
    topk = np.array([[2, 1]])
    default = fr.AlphaBetaNDCG(truth, aspects, k=2, alpha=0.2, profile=profile)
    none = fr.AlphaBetaNDCG(truth, aspects, k=2, alpha=0.2, profile=profile,
                            exclude=sp.csr_array((1, 3)))
    assert default.idcg[0, 0] == none.idcg[0, 0]  # item 1 and 0 tie; 1 stays available
    only_two = fr.AlphaBetaNDCG(truth, aspects, k=2, alpha=0.2, profile=profile,
                                exclude=sp.csr_array(np.array([[1.0, 1.0, 0]])))
    assert only_two.idcg[0, 0] < default.idcg[0, 0]  # no unrated candidate is left
    assert default.score(topk)["ab_ndcg@2"] == pytest.approx(1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 1.5}, "alpha must lie in"),
    ({"beta": -0.1}, "beta must lie in"),
    ({"k": 0}, "k must be at least 1"),
    ({"r_max": 2.0}, "r_max=2.0 is below the largest relevance"),
    ({"user_aspects": np.array([[1.0, -1.0], [1.0, 0.0]])}, "user_aspects must hold finite, non"),
    ({"user_aspects": np.array([[1.0, 1.0], [0.0, 0.0]])}, "user_aspects row 1 is all zero"),
    ({"user_aspects": sp.csr_array(np.array([[1.0, 1.0], [0.0, 0.0]]))},
     "user_aspects row 1 is all zero"),
    ({"user_aspects": np.array([[1.0, np.nan], [1.0, 0.0]])}, "user_aspects must hold finite"),
    ({"user_aspects": np.array([[1.0, 1.0], [np.inf, 0.0]])}, "user_aspects must hold finite"),
    ({"user_aspects": np.ones((2, 3))}, "user_aspects has shape"),
    ({"profile": sp.csr_array(np.array([[-1.0, 0, 0], [0, 0, 0]]))}, "profile must hold"),
])
def test_bad_input_names_the_argument(kwargs, match):
    truth = sp.csr_array(np.array([[3.0, 0, 1.0], [0, 2.0, 0]]))
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]]))
    kw = {"user_aspects": np.ones((2, 2))}
    if "profile" in kwargs:
        kw = {}
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fr.ab_ndcg(truth, np.array([[0, 1], [1, 2]]), aspects, **kw)


def test_bad_aspects_and_missing_preferences():
    truth = sp.csr_array(np.array([[3.0, 0, 1.0]]))
    with pytest.raises(ValueError, match="item_aspects has 2 rows but the catalogue has 3"):
        fr.ab_ndcg(truth, np.array([[0]]), sp.csr_array(np.ones((2, 2))), user_aspects=[[1, 1]])
    with pytest.raises(ValueError, match="0/1"):
        fr.ab_ndcg(truth, np.array([[0]]), sp.csr_array(np.full((3, 2), 2.0)),
                   user_aspects=[[1, 1]])
    with pytest.raises(TypeError, match="exactly one of profile= .* and user_aspects="):
        fr.ab_ndcg(truth, np.array([[0]]), sp.csr_array(np.ones((3, 2))))
    scorer = fr.AlphaBetaNDCG(truth, sp.csr_array(np.ones((3, 2))), k=2, user_aspects=[[1, 1]])
    with pytest.raises(ValueError, match="scorer was built for 1 users"):
        scorer.score(np.zeros((2, 2), np.int64))


# α-nDCG ------------------------------------------------------------------------------

@given(aspect_cases(), st.sampled_from([0.0, 0.25, 0.5, 0.57, 0.3, 1.0]))
@pytest.mark.slow
def test_alpha_ndcg_matches_reference(case, alpha):
    truth, topk, aspects, _ = case
    cutoffs = list(range(1, topk.shape[1] + 1))
    res = fr.alpha_ndcg(truth, topk, aspects, k=cutoffs, alpha=alpha)
    rows, sets = truth_rows(truth), aspect_sets(aspects)
    for k in cutoffs:
        expected = []
        for u, row in enumerate(rows):
            relevant = {i for i, v in row.items() if v > 0}
            if not relevant:
                expected.append(np.nan)
                continue
            ideal = alpha_idcg_reference(k, relevant, sets, alpha)
            dcg = alpha_dcg_reference([int(x) for x in topk[u]], k, relevant, sets, alpha)
            expected.append(dcg / ideal if ideal > 0 else 0.0)
        np.testing.assert_allclose(res.per_user(f"alpha_ndcg@{k}"), expected, rtol=1e-12)


def _ndeval_inputs(truth, topk, aspects):
    """pyndeval qrels and run for the same data. ndeval breaks ideal ties by the larger
    document name, fastrank by the lower item id: names run backwards from the ids.
    Subtopics are listed in ascending aspect order, the order both sum gains in."""
    n_items = truth.shape[1]
    rows, sets = truth_rows(truth), aspect_sets(aspects)

    def name(i):
        return f"d{n_items - i:05d}"

    qrels = [(f"q{u}", f"s{a:03d}", name(i), int(v > 0))
             for a in range(aspects.shape[1]) for u, row in enumerate(rows)
             for i, v in row.items() if a in sets[i]]
    run = [(f"q{u}", name(int(i)) if i >= 0 else f"pad{r}", float(topk.shape[1] - r))
           for u in range(topk.shape[0]) for r, i in enumerate(topk[u])]
    return qrels, run


@pytest.mark.parametrize("alpha", [0.5, 0.3])
def test_alpha_ndcg_matches_trec_ndeval(alpha):
    pyndeval = pytest.importorskip("pyndeval")
    rng = np.random.default_rng(7)
    truth = sp.random_array((60, 30), density=0.2, rng=rng, format="csr")
    truth.data = rng.integers(-1, 3, truth.nnz).astype(float)
    aspects = sp.csr_array((rng.random((30, 6)) < 0.35).astype(np.int8))
    topk = np.stack([rng.permutation(30)[:10] for _ in range(60)])
    topk[rng.random(topk.shape) < 0.1] = -1
    cutoffs = [1, 5, 10, 20]
    topk = np.concatenate([topk, np.full((60, 10), -1)], axis=1)
    res = fr.alpha_ndcg(truth, topk, aspects, k=cutoffs, alpha=alpha)
    qrels, run = _ndeval_inputs(truth, topk, aspects)
    evaluator = pyndeval.RelevanceEvaluator(qrels, measures=[f"alpha-nDCG@{k}" for k in cutoffs],
                                            alpha=alpha)
    oracle = evaluator.evaluate(run)
    compared = 0
    for u in range(60):
        if res.n_relevant[u] == 0 or f"q{u}" not in oracle:
            continue
        for k in cutoffs:
            assert res.per_user(f"alpha_ndcg@{k}")[u] == pytest.approx(
                oracle[f"q{u}"][f"alpha-nDCG@{k}"], rel=1e-12, abs=1e-15)
            compared += 1
    assert compared > 100


def test_alpha_ndcg_above_one_example():
    # X = {s1, s2}, Y = {s3, s4}, Z = {s1, s3}; the greedy ideal takes Z (lowest id) first
    aspects = sp.csr_array(np.array([[1, 0, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]]))
    truth = sp.csr_array(np.ones((1, 3)))
    res = fr.alpha_ndcg(truth, np.array([[1, 2, 0]]), aspects, alpha=0.5)
    assert res["alpha_ndcg@3"] == pytest.approx(1.0177104674506583, rel=1e-12)
    assert res.report["above_one"] == {"alpha_ndcg@3": 1}


def test_alpha_ndcg_ideal_ties_are_ties_whatever_the_summation_order():
    """After item 0, items 1, 2 and 3 all gain 2(1 - α) + 1 exactly, but summed over their
    aspects in ascending order the floats differ in the last bit: the ideal takes the
    lowest id (1), as the exact greedy does, not the largest float."""
    truth = sp.csr_array(np.array([[1.0, 1.0, 1.0, 1.0, 0.0]]))
    sets = {0: [0, 2, 3], 1: [0, 2, 4], 2: [0, 1, 2], 3: [2, 3, 4]}
    dense = np.zeros((5, 5), np.int8)
    for item, aspects in sets.items():
        dense[item, aspects] = 1
    res = fr.alpha_ndcg(truth, np.array([[0, -1, -1]]), sp.csr_array(dense), k=3, alpha=0.57)
    ideal = alpha_idcg_reference(3, {0, 1, 2, 3}, aspect_sets(sp.csr_array(dense)), 0.57)
    assert res["alpha_ndcg@3"] == pytest.approx(3.0 / ideal, rel=1e-12)
    assert res["alpha_ndcg@3"] == pytest.approx(0.6174835093897917, rel=1e-12)


@given(aspect_cases(max_items=8), st.sampled_from([0.57, 0.3, 0.1, 0.43]),
       st.sampled_from([0.5, 0.7]), st.randoms(use_true_random=False))
@pytest.mark.slow
def test_relabelled_aspects_change_no_value(case, alpha, beta, rnd):
    """The metrics see aspect sets, not their numbering; renumbering the aspects changes
    the order floats are added and multiplied in, and must not change a tie's winner."""
    truth, topk, aspects, profile = case
    order = list(range(aspects.shape[1]))
    rnd.shuffle(order)
    moved = sp.csr_array(aspects.toarray()[:, order])
    gamma = np.arange(1, aspects.shape[1] + 1, dtype=float)[None, :] % 3 + 1.0
    gamma = gamma.repeat(truth.shape[0], axis=0)
    cutoffs = list(range(1, topk.shape[1] + 1))
    for kw, kw_moved in (({"profile": profile}, {"profile": profile}),
                         ({"user_aspects": gamma}, {"user_aspects": gamma[:, order]})):
        one = fr.ab_ndcg(truth, topk, aspects, k=cutoffs, alpha=alpha, beta=beta, **kw)
        two = fr.ab_ndcg(truth, topk, moved, k=cutoffs, alpha=alpha, beta=beta, **kw_moved)
        for k in cutoffs:
            np.testing.assert_allclose(two.per_user(f"ab_ndcg@{k}"),
                                       one.per_user(f"ab_ndcg@{k}"), rtol=1e-12, atol=1e-15)
    one = fr.alpha_ndcg(truth, topk, aspects, k=cutoffs, alpha=alpha)
    two = fr.alpha_ndcg(truth, topk, moved, k=cutoffs, alpha=alpha)
    for k in cutoffs:
        np.testing.assert_allclose(two.per_user(f"alpha_ndcg@{k}"),
                                   one.per_user(f"alpha_ndcg@{k}"), rtol=1e-12, atol=1e-15)


def _tied_cases(seed, n_cases):
    """Small users whose items have 4 of 6 aspects and equal grades: many gains tie in
    exact arithmetic while their floats, summed or multiplied in aspect order, differ in
    the last bit (about one user in 50 then has another greedy ideal by float order)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n_items = int(rng.integers(6, 11))
        dense = np.zeros((n_items, 6), np.int8)
        for i in range(n_items):
            dense[i, rng.choice(6, size=4, replace=False)] = 1
        truth = np.zeros((1, n_items))
        truth[0, rng.choice(n_items, size=int(rng.integers(n_items - 2, n_items + 1)),
                            replace=False)] = 1
        k = int(rng.integers(4, 9))
        topk = rng.integers(-1, n_items, (1, k))
        yield sp.csr_array(truth), topk, sp.csr_array(dense)


@pytest.mark.parametrize("alpha", [0.57, 0.9, 0.1])
@pytest.mark.slow
def test_alpha_ndcg_equals_the_exact_greedy_on_tie_heavy_users(alpha):
    for truth, topk, aspects in _tied_cases(int(alpha * 100), 300):
        k = topk.shape[1]
        res = fr.alpha_ndcg(truth, topk, aspects, k=k, alpha=alpha)
        sets, relevant = aspect_sets(aspects), set(np.flatnonzero(truth.toarray()[0]).tolist())
        ideal = alpha_idcg_reference(k, relevant, sets, alpha)
        dcg = alpha_dcg_reference(topk[0].tolist(), k, relevant, sets, alpha)
        assert res[f"alpha_ndcg@{k}"] == pytest.approx(dcg / ideal, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("alpha, beta", [(0.57, 0.5), (0.3, 0.7)])
@pytest.mark.slow
def test_ab_ndcg_equals_the_exact_greedy_on_tie_heavy_users(alpha, beta):
    gamma = np.ones((1, 6))
    for truth, topk, aspects in _tied_cases(int(alpha * 100) + 1, 200):
        k = topk.shape[1]
        res = fr.ab_ndcg(truth, topk, aspects, k=k, alpha=alpha, beta=beta, user_aspects=gamma)
        ref = ab_ndcg_reference(truth, topk, aspects, [k], alpha, beta, user_aspects=gamma)
        assert res[f"ab_ndcg@{k}"] == pytest.approx(ref[k][0], rel=1e-12, abs=1e-15)


def test_alpha_ndcg_through_evaluate_and_the_evaluator_equals_fr_alpha_ndcg():
    rng = np.random.default_rng(11)
    truth = sp.csr_array((rng.random((80, 30)) < 0.2) * rng.integers(0, 3, (80, 30)))
    topk = np.argsort(rng.random((80, 30)), axis=1)[:, :8]
    topk[::7, 5:] = -1
    aspects = sp.csr_array((rng.random((30, 6)) < 0.4) * 1)
    labels = ["alpha_ndcg@3", "alpha_ndcg(alpha=0.2)@8", "alpha_ndcg", "ndcg@3"]
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects)
    one = fr.alpha_ndcg(truth, topk, aspects, k=[3, 8])
    other = fr.alpha_ndcg(truth, topk, aspects, k=8, alpha=0.2)
    for label, want in (("alpha_ndcg@3", one.per_user("alpha_ndcg@3")),
                        ("alpha_ndcg", one.per_user("alpha_ndcg@8")),
                        ("alpha_ndcg(alpha=0.2)@8", other.per_user("alpha_ndcg@8"))):
        np.testing.assert_array_equal(res.per_user(label), want)
    ev = fr.Evaluator(truth, labels, item_aspects=aspects)
    for part in np.array_split(np.arange(80), 3):
        ev.update(part, topk[part])
    for label in labels:
        np.testing.assert_array_equal(ev.result().per_user(label), res.per_user(label))
    with pytest.raises(ValueError, match="alpha_ndcg@3 needs item_aspects="):
        fr.evaluate(truth, topk, ["alpha_ndcg@3"])
    with pytest.raises(ValueError, match="alpha=2.*is not a number in"):
        fr.evaluate(truth, topk, ["alpha_ndcg(alpha=2)@3"], item_aspects=aspects)


def test_a_dense_gamma_read_in_place_equals_its_sparse_form_and_the_scorer_keeps_it():
    """A dense users x aspects γ is read where it lies (not copied to CSR): the same values
    as the same weights given sparse, at 1 and 2 threads, for scattered users and zero
    weights; the scorer object copies a γ the caller owns, so later scores ignore the
    caller's later changes."""
    rng = np.random.default_rng(12)
    truth = sp.csr_array((rng.random((60, 90)) < 0.08) * rng.integers(1, 4, (60, 90)))
    aspects = sp.csr_array((rng.random((90, 30)) < 0.1).astype(np.int8))
    topk = rng.integers(-1, 90, (60, 8))
    gamma = rng.random((60, 30)) * (rng.random((60, 30)) < 0.5)
    gamma[:, 3] += 0.5  # no all-zero row
    users = np.array([5, 1, 40, 7])
    for threads in (1, 2):
        for rows in (None, users):
            lists = topk if rows is None else topk[rows]
            dense = fr.ab_ndcg(truth, lists, aspects, k=[2, 8], user_aspects=gamma,
                               users=rows, n_threads=threads)
            sparse = fr.ab_ndcg(truth, lists, aspects, k=[2, 8], users=rows,
                                user_aspects=sp.csr_array(gamma), n_threads=threads)
            for label in ("ab_ndcg@2", "ab_ndcg@8"):
                np.testing.assert_array_equal(dense.per_user(label), sparse.per_user(label))
    scorer = fr.AlphaBetaNDCG(truth, aspects, k=8, user_aspects=gamma)
    before = scorer.score(topk).per_user("ab_ndcg@8")
    gamma[:, :] = 1.0
    np.testing.assert_array_equal(scorer.score(topk).per_user("ab_ndcg@8"), before)


def test_grouping_beside_the_check_of_a_dense_gamma_changes_nothing(monkeypatch):
    """Where grouping the items by aspect set costs about a thread's share of checking a
    dense γ, it runs as one range of the check's parallel run: the groups equal the serial
    grouping's, field by field, the check's outputs those of the check alone, for 1 to 3
    ranges of the check; and αβ-nDCG, with and without it, equals the reference."""
    import dataclasses

    from fastrank import diversity
    from fastrank._kernels import frames
    from fastrank.aspects import Grouping, aspect_groups, check_aspects

    rng = np.random.default_rng(21)
    n_users, n_items, n_aspects = 7, 400, 150
    truth = sp.csr_array((rng.random((n_users, n_items)) < 0.05)
                         * rng.integers(1, 4, (n_users, n_items)))
    members = (rng.random((n_items, n_aspects)) < 0.015).astype(np.int8)
    members[::3, 0] = 1  # many items share the set {0}
    item_aspects = sp.csr_array(members)
    topk = rng.integers(-1, n_items, (n_users, 6))
    gamma = rng.random((n_users, n_aspects)) * (rng.random((n_users, n_aspects)) < 0.7)
    gamma[:, 1] += 0.25
    aspects = check_aspects(item_aspects, n_items)
    serial = aspect_groups(aspects)
    users = np.arange(n_users)
    alone = diversity._dense_gamma(gamma, users, 1)
    # a weight's cost that gives the grouping's range the first row or two of the check
    # (at 2 threads: the grouping between half the check and all of it)
    links = aspects.indices.shape[0] * diversity._COST_PER_LINK
    for weight_cost in (diversity._COST_PER_WEIGHT, 1.5 * links / gamma.size):
        monkeypatch.setattr(diversity, "_COST_PER_WEIGHT", weight_cost)
        for threads in (2, 3, 4):
            grouping = Grouping(aspects)
            beside = diversity._dense_gamma(gamma, users, threads, grouping)
            assert grouping.n_groups is not None  # it ran in the check's run
            for got, want in zip(beside, alone):
                np.testing.assert_array_equal(got, want)
            groups = grouping.groups()
            for field in dataclasses.fields(serial):
                np.testing.assert_array_equal(getattr(groups, field.name),
                                              getattr(serial, field.name), err_msg=field.name)
    monkeypatch.undo()

    built = []
    walk = frames.walk

    def spy(factory, *constants):
        built.append(factory.__name__)
        return walk(factory, *constants)

    monkeypatch.setattr(frames, "walk", spy)
    kw = dict(k=[3, 6], alpha=0.2, beta=0.8, user_aspects=gamma, n_threads=2)
    res = fr.ab_ndcg(truth, topk, item_aspects, **kw)
    assert "dense_weight_rows_and_groups" in built
    monkeypatch.setattr(diversity, "_COST_PER_LINK", 0.0)  # grouping costs nothing: alone
    built.clear()
    apart = fr.ab_ndcg(truth, topk, item_aspects, **kw)
    assert "dense_weight_rows_and_groups" not in built and "dense_weight_rows" in built
    ref = ab_ndcg_reference(truth, topk, item_aspects, [3, 6], 0.2, 0.8, user_aspects=gamma)
    for k in (3, 6):
        np.testing.assert_array_equal(res.per_user(f"ab_ndcg@{k}"),
                                      apart.per_user(f"ab_ndcg@{k}"))
        want = np.array([np.nan if v is None else v for v in ref[k]])
        assert np.isfinite(want).sum() >= 3  # counted users to compare
        np.testing.assert_allclose(res.per_user(f"ab_ndcg@{k}"), want, rtol=1e-12)


def test_aspect_table_holds_each_items_aspects_in_one_width():
    """Aspects.table: row i is item i's aspects ascending, padded with n_aspects; the width
    covers 99% of the items, an item past it has -1 first (read from CSR); past a width of
    8 the table has no columns; `table_for` skips building it for fewer lookups than items."""
    from fastrank.aspects import check_aspects

    rng = np.random.default_rng(30)
    members = (rng.random((1000, 40)) < 0.04).astype(np.int8)
    members[:5] = 1  # five items with all 40 aspects: 0.5% of the items
    members[5:10] = 0  # and five with none
    aspects = check_aspects(sp.csr_array(members), 1000)
    table = aspects.table
    counts = members[10:].sum(axis=1)
    assert table.dtype == np.int32
    assert table.shape == (1000, int(np.quantile(counts, 0.99, method="higher")))
    for item, row in enumerate(members):
        own = np.flatnonzero(row)
        if own.size > table.shape[1]:
            assert table[item, 0] == -1
        else:
            pad = np.full(table.shape[1] - own.size, 40)
            np.testing.assert_array_equal(table[item], np.concatenate([own, pad]))
    wide = check_aspects(sp.csr_array((rng.random((50, 40)) < 0.5).astype(np.int8)), 50)
    assert wide.table.shape == (50, 0)
    fresh = check_aspects(sp.csr_array(members), 1000)
    assert fresh.table_for(999).shape == (0, 0) and "table" not in fresh.__dict__
    assert fresh.table_for(1000) is fresh.table and fresh.table_for(3) is fresh.table


def test_item_aspects_in_any_form_give_the_same_memberships():
    """check_aspects keeps an item's aspects once, whatever the form: all 1s (the usual
    matrix, one pass), bool, stored zeros (dropped), COO duplicates, unsorted indices,
    CSC; a value other than 0 or 1 is refused and named."""
    from fastrank.aspects import check_aspects

    rng = np.random.default_rng(31)
    members = (rng.random((40, 9)) < 0.3).astype(np.int8)
    want = check_aspects(sp.csr_array(members), 40)
    with_zeros = sp.csr_array(members)
    with_zeros.data[::3] = 0  # stored zeros: no membership
    rows, cols = np.nonzero(members)
    twice = sp.coo_array((np.ones(2 * rows.size, np.int8), (np.r_[rows, rows], np.r_[cols, cols])),
                         shape=members.shape)
    shuffled = sp.csr_array(members)
    for r in range(40):  # each row's indices reversed: not canonical
        lo, hi = shuffled.indptr[r], shuffled.indptr[r + 1]
        shuffled.indices[lo:hi] = shuffled.indices[lo:hi][::-1].copy()
    forms = [sp.csr_array(members.astype(bool)), twice, shuffled, sp.csc_array(members)]
    for form in forms:
        got = check_aspects(form, 40)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
    dropped = check_aspects(with_zeros, 40)
    kept = with_zeros.toarray() != 0
    assert dropped.indices.shape[0] == kept.sum()
    np.testing.assert_array_equal(np.diff(dropped.indptr), kept.sum(axis=1))
    bad = sp.csr_array(members.astype(np.float64))
    bad.data[4] = 0.5
    with pytest.raises(ValueError, match="found the value 0.5"):
        check_aspects(bad, 40)


def test_rescoring_reads_gamma_and_aspects_in_every_form_alike(monkeypatch):
    """score() reads γ as dense rows of shares (few aspects), in place from a dense weight
    matrix, or as CSR, and an item's aspects from the fixed-width table or from CSR (items
    past the table's width, or no table): every combination gives the same bits, equal to
    the reference, for padded and repeated ids, a subset of users, and 1 or 2 threads."""
    from fastrank import aspects as aspects_module
    from fastrank import diversity

    rng = np.random.default_rng(31)
    n_users, n_items, n_aspects = 40, 120, 9
    truth = sp.csr_array((rng.random((n_users, n_items)) < 0.05)
                         * rng.integers(1, 5, (n_users, n_items)))
    members = np.zeros((n_items, n_aspects), np.int8)
    for item in range(2, n_items):  # one or two aspects: a table of width 2
        members[item, rng.choice(n_aspects, 1 + item % 2, replace=False)] = 1
    members[0] = 1  # one item past the table's width
    item_aspects = sp.csr_array(members)
    profile = sp.csr_array((rng.random((n_users, n_items)) < 0.3).astype(float))
    gamma = rng.random((n_users, n_aspects)) * (rng.random((n_users, n_aspects)) < 0.6)
    gamma[:, 2] += 0.1
    topk = rng.integers(-1, n_items, (n_users, 7))
    topk[::4, 3] = topk[::4, 1]  # repeats
    topk[:, 0][::5] = 0  # the wide item, listed
    users = rng.permutation(n_users)[:20]  # 20 lists of 7: at least one lookup an item
    kw = dict(k=[1, 4, 7], alpha=0.15, beta=0.6)
    forms = {"shares and table": {}, "no shares": {"_COPY_ASPECTS": 0},
             "no table": {"_TABLE_WIDTH": 0}}
    for weights in ({"profile": profile}, {"user_aspects": gamma},
                    {"user_aspects": sp.csr_array(gamma)}):
        for rows in (None, users):
            lists = topk if rows is None else topk[rows]
            ref = ab_ndcg_reference(truth, lists, item_aspects, kw["k"], kw["alpha"],
                                    kw["beta"], users=rows, **weights)
            got = {}
            for form, patch in forms.items():
                with monkeypatch.context() as m:
                    for name, value in patch.items():
                        m.setattr(diversity if name == "_COPY_ASPECTS" else aspects_module,
                                  name, value)
                    for threads in (1, 2):
                        scorer = fr.AlphaBetaNDCG(truth, item_aspects, users=rows,
                                                  n_threads=threads, **kw, **weights)
                        assert (scorer._gam[5].shape[0] > 0) == (form != "no shares")
                        table = scorer.aspects.table_for(lists.size)
                        assert table.shape[1] == (0 if form == "no table" else 2)
                        if form != "no table":
                            assert table[0, 0] == -1
                        got[form, threads] = scorer.score(lists, n_threads=threads)
            first = got["shares and table", 1]
            for res in got.values():
                for label in first.metrics:
                    np.testing.assert_array_equal(res.per_user(label), first.per_user(label))
            for c in kw["k"]:
                expected = np.array([np.nan if v is None else v for v in ref[c]])
                np.testing.assert_allclose(first.per_user(f"ab_ndcg@{c}"), expected,
                                           rtol=1e-12, atol=1e-15)


def test_a_call_that_fails_gives_its_lent_scratch_back():
    """A γ that fails its check, after the grouping lent its scratch, leaves no buffer out
    on loan."""
    from fastrank import scratch

    rng = np.random.default_rng(41)
    truth = sp.csr_array((rng.random((50, 40)) < 0.2) * rng.integers(1, 4, (50, 40)))
    topk = rng.integers(-1, 40, (50, 8))
    aspects = sp.csr_array((rng.random((40, 5)) < 0.3).astype(np.int8))
    lent = set(scratch._lent)
    for gamma in (np.full((50, 5), np.nan), -np.ones((50, 5)),
                  sp.csr_array(np.full((50, 5), np.nan))):
        for threads in (1, 2):
            with pytest.raises(ValueError, match="finite, non-negative aspect weights"):
                fr.ab_ndcg(truth, topk, aspects, user_aspects=gamma, n_threads=threads)
            assert scratch._lent == lent


def test_scratch_lent_from_the_pool_is_initialised_by_its_walk(monkeypatch):
    """The ideal's, the grouping's and the re-score's scratch come from
    `fastrank.scratch`'s pool, as the last call left them: neither another call's
    leftovers (stamps of the same user slots on other items) nor poisoned buffers (every
    byte 0xFF: NaN floats, -1 ints) change a value, and the buffers go back to the pool
    when the call ends. The re-score's scratch beyond what the pool keeps is each range's
    own (zero pages), to the same values."""
    from fastrank import scratch

    rng = np.random.default_rng(40)
    truth, other = (sp.csr_array((rng.random((300, 500)) < 0.006)
                                 * rng.integers(1, 4, (300, 500))) for _ in range(2))
    profile = sp.csr_array((rng.random((300, 500)) < 0.03).astype(float))
    aspects = sp.csr_array((rng.random((500, 70)) < 0.03).astype(np.int8))
    topk = rng.integers(-1, 500, (300, 10))
    gamma = rng.random((300, 70)) + 0.01
    for kw in ({"profile": profile}, {"user_aspects": gamma}):
        for threads in (1, 2):
            scratch._free.clear()  # fresh buffers
            first = fr.ab_ndcg(truth, topk, aspects, n_threads=threads, **kw)
            assert scratch._free  # given back
            fr.ab_ndcg(other, topk, aspects, n_threads=threads, **kw)
            leftovers = fr.ab_ndcg(truth, topk, aspects, n_threads=threads, **kw)
            for buf in scratch._free:
                buf.fill(0xFF)
            poisoned = fr.ab_ndcg(truth, topk, aspects, n_threads=threads, **kw)
            with monkeypatch.context() as patch:
                patch.setattr(scratch, "_LIMIT", 0)  # nothing lent to the re-score
                own = fr.ab_ndcg(truth, topk, aspects, n_threads=threads, **kw)
            for again in (leftovers, poisoned, own):
                np.testing.assert_array_equal(again.per_user("ab_ndcg@10"),
                                              first.per_user("ab_ndcg@10"))


def test_alpha_ndcg_is_fr_evaluates_and_compares_with_it():
    """fr.alpha_ndcg is fr.evaluate's α-nDCG under its own labels: the same values, a
    Result with k, so that fr.compare pairs the two."""
    rng = np.random.default_rng(3)
    truth = sp.csr_array((rng.random((50, 20)) < 0.3) * 1.0)
    topk = np.argsort(rng.random((50, 20)), axis=1)[:, :5]
    aspects = sp.csr_array((rng.random((20, 4)) < 0.4) * 1.0)
    own = fr.alpha_ndcg(truth, topk, aspects, k=[2, 5], alpha=0.3)
    general = fr.evaluate(truth, topk, ["alpha_ndcg(alpha=0.3)@2", "alpha_ndcg(alpha=0.3)@5"],
                          item_aspects=aspects)
    assert own.metrics == ("alpha_ndcg@2", "alpha_ndcg@5") and own.k == general.k == 5
    for k in (2, 5):
        np.testing.assert_array_equal(own.per_user(f"alpha_ndcg@{k}"),
                                      general.per_user(f"alpha_ndcg(alpha=0.3)@{k}"))
        assert own[f"alpha_ndcg@{k}"] == general[f"alpha_ndcg(alpha=0.3)@{k}"]
    other = fr.evaluate(truth, topk[:, ::-1].copy(), ["alpha_ndcg@5"], item_aspects=aspects)
    table = fr.compare({"own": fr.alpha_ndcg(truth, topk, aspects), "other": other},
                       ["alpha_ndcg@5"]).to_frame()
    assert list(table["system"]) == ["own", "other"] and np.isfinite(table["p_value"][1])
