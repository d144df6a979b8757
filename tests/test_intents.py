"""Intent-aware measures (P-IA, MAP-IA, ERR-IA, nERR-IA, α-DCG, S-recall, NRBP, nNRBP): the
plain-Python reference, reductions to the one-intent metrics, edge cases, and TREC's ndeval
(pyndeval) as the oracle of the trec convention, also through ir-measures' names."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import fastrank as fr
from fastrank.synthetic import power_law

from .reference import truth_rows
from .reference_aspects import aspect_sets, intent_reference
from .test_diversity import aspect_cases

NAMES = ("p_ia", "map_ia", "err_ia", "nerr_ia", "alpha_dcg")
# the measures of the walk made with `novelty`: S-recall@k, and NRBP, nNRBP (no cutoff)
NOVELTY = ("st_recall", "nrbp", "nnrbp")


def reference_values(truth, topk, aspects, name, k, convention, alpha=0.5, max_grade=None,
                     rel=None, beta=0.5):
    """Per topk row: the reference value, NaN where the convention does not count it."""
    rows, sets = truth_rows(truth), aspect_sets(aspects)
    if max_grade is None:
        values = [v for row in rows for v in row.values()]
        max_grade = max(values) if values and max(values) > 0 else 1.0
    out = []
    for u, row in enumerate(rows):
        view = {i: (v if (v > 0 if rel is None else v >= rel) else 0.0) for i, v in row.items()}
        # trec: every judged user; recsys: a user with an item relevant at the threshold
        counted = bool(row) if convention == "trec" else any(v > 0 for v in view.values())
        if not counted:
            out.append(np.nan)
            continue
        value = intent_reference(name, [int(x) for x in topk[u]], k, view, sets, convention,
                                 alpha=alpha, max_grade=max_grade, beta=beta)
        out.append(np.nan if value is None else value)  # None: no ndeval topic
    return np.array(out)


@given(aspect_cases(), st.sampled_from(["recsys", "trec"]),
       st.sampled_from([0.5, 0.0, 0.3, 1.0]), st.sampled_from([None, 2]))
@pytest.mark.slow
def test_every_measure_matches_the_reference(case, convention, alpha, rel):
    truth, topk, aspects, _ = case
    k_max = topk.shape[1]
    cutoffs = sorted({1, min(2, k_max), k_max})
    params = [f"rel={rel}"] if rel else []
    labels = {}
    for name in NAMES:
        extra = [f"alpha={alpha}"] if name == "alpha_dcg" else []
        text = name + (f"({', '.join(params + extra)})" if params + extra else "")
        for k in cutoffs:
            labels[f"{text}@{k}"] = (name, k)
    res = fr.evaluate(truth, topk, list(labels), item_aspects=aspects, convention=convention)
    for label, (name, k) in labels.items():
        want = reference_values(truth, topk, aspects, name, k, convention, alpha=alpha,
                                rel=rel)
        np.testing.assert_allclose(res.per_user(label), want, rtol=1e-12, atol=1e-15,
                                   err_msg=label)


@given(aspect_cases(), st.sampled_from(["recsys", "trec"]),
       st.sampled_from([(0.5, 0.5), (0.0, 0.8), (0.3, 1.0), (1.0, 0.0), (0.0, 1.0)]),
       st.sampled_from([None, 2]))
@pytest.mark.slow
def test_s_recall_nrbp_and_nnrbp_match_the_reference(case, convention, alpha_beta, rel):
    """st_recall at cutoffs up to past the list, nrbp and nnrbp (the whole list), against
    the exact-arithmetic reference; (α, β) = (0, 1) has no NRBP scale (nnrbp: the ratio
    of the sums)."""
    truth, topk, aspects, _ = case
    alpha, beta = alpha_beta
    k_max = topk.shape[1]
    params = [f"rel={rel}"] if rel else []
    text = "st_recall" + (f"({params[0]})" if params else "")
    labels = {f"{text}@{k}": ("st_recall", k) for k in sorted({1, k_max, k_max + 2})}
    for name in ("nrbp", "nnrbp"):
        labels[f"{name}({', '.join(params + [f'alpha={alpha}', f'beta={beta}'])})"] = \
            (name, k_max + 2)
    res = fr.evaluate(truth, topk, list(labels), item_aspects=aspects, convention=convention,
                      k=k_max + 2)  # past the list: padding
    for label, (name, k) in labels.items():
        want = reference_values(truth, topk, aspects, name, k, convention, alpha=alpha,
                                rel=rel, beta=beta)
        np.testing.assert_allclose(res.per_user(label), want, rtol=1e-12, atol=1e-15,
                                   err_msg=label)


@given(aspect_cases(max_items=7), st.sampled_from([3.0, 5.0, 4.5]))
@pytest.mark.slow
def test_err_ia_with_a_given_max_grade_matches_the_reference(case, max_grade):
    truth, topk, aspects, _ = case
    k = topk.shape[1]
    res = fr.evaluate(truth, topk, [f"err_ia(max_grade={max_grade})@{k}",
                                    f"nerr_ia(max_grade={max_grade})@{k}"], item_aspects=aspects)
    for name in ("err_ia", "nerr_ia"):
        want = reference_values(truth, topk, aspects, name, k, "recsys", max_grade=max_grade)
        np.testing.assert_allclose(res.per_user(f"{name}(max_grade={max_grade})@{k}"), want,
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("convention", ["recsys", "trec"])
def test_one_shared_aspect_reduces_to_the_one_intent_metrics(convention):
    """Every item in one aspect: one intent, so P-IA is precision and MAP-IA is map."""
    truth, topk = power_law(400, 50, 10, seed=8)
    topk[::9, 6:] = -1
    aspects = sp.csr_array(np.ones((50, 1), np.int8))
    labels = ["p_ia@5", "map_ia@10", "map_ia@3", "nerr_ia@10"]
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects, convention=convention)
    plain = fr.evaluate(truth, topk, ["precision@5", "map@10", "map@3"], convention=convention)
    np.testing.assert_allclose(res.per_user("p_ia@5"), plain.per_user("precision@5"),
                               rtol=1e-12)
    np.testing.assert_allclose(res.per_user("map_ia@10"), plain.per_user("map@10"), rtol=1e-12)
    np.testing.assert_allclose(res.per_user("map_ia@3"), plain.per_user("map@3"), rtol=1e-12)
    assert np.nanmax(res.per_user("nerr_ia@10")) <= 1.0 + 1e-12


def test_each_item_its_own_aspect_with_alpha_zero_is_binary_dcg():
    truth, topk = power_law(300, 40, 8, seed=3)
    aspects = sp.csr_array(np.eye(40, dtype=np.int8))
    res = fr.evaluate(truth, topk, ["alpha_dcg(alpha=0)@8"], item_aspects=aspects)
    binary = truth.copy()
    binary.data = (binary.data > 0).astype(float)
    dcg = fr.evaluate(binary, topk, ["dcg@8"]).per_user("dcg@8")
    np.testing.assert_allclose(res.per_user("alpha_dcg(alpha=0)@8"), dcg, rtol=1e-12)


def test_the_ideal_list_scores_one_and_alpha_dcg_is_alpha_ndcgs_numerator():
    rng = np.random.default_rng(3)
    truth = sp.csr_array((rng.random((60, 25)) < 0.3) * rng.integers(1, 4, (60, 25)))
    aspects = sp.csr_array((rng.random((25, 5)) < 0.4).astype(np.int8))
    topk = np.argsort(rng.random((60, 25)), axis=1)[:, :10]
    res = fr.evaluate(truth, topk, ["alpha_dcg@10"], item_aspects=aspects)
    nd = fr.alpha_ndcg(truth, topk, aspects, k=10)
    dcg, ndcg = res.per_user("alpha_dcg@10"), nd.per_user("alpha_ndcg@10")
    keep = ndcg > 0
    ideal = dcg[keep] / ndcg[keep]  # the same ideal for every list of a user
    other = np.argsort(rng.random((60, 25)), axis=1)[:, :10]
    dcg2 = fr.evaluate(truth, other, ["alpha_dcg@10"], item_aspects=aspects)
    nd2 = fr.alpha_ndcg(truth, other, aspects, k=10).per_user("alpha_ndcg@10")
    both = keep & (nd2 > 0)
    np.testing.assert_allclose(dcg2.per_user("alpha_dcg@10")[both] / nd2[both],
                               (dcg / np.where(keep, ndcg, 1))[both], rtol=1e-12)
    assert ideal.size > 20
    # one relevant item per user, listed first: nERR-IA is 1
    one = sp.csr_array((np.ones(4), (np.arange(4), [1, 3, 5, 7])), shape=(4, 25))
    lists = np.array([[1, 0], [3, 2], [5, 4], [7, 6]])
    val = fr.evaluate(one, lists, ["nerr_ia@2"], item_aspects=aspects).per_user("nerr_ia@2")
    has = np.diff(aspects.indptr)[[1, 3, 5, 7]] > 0
    np.testing.assert_allclose(val, np.where(has, 1.0, 0.0), rtol=1e-12)


def test_edge_cases():
    # user 0: nothing stored; 1: only non-relevant; 2: relevant items without aspects
    # (and no other judged item);
    # 3: m < k with padding and a repeated id; 4: everything relevant
    dense = np.array([[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [2, 0, 0, 0, 0], [0, 1, 3, 0, 0],
                      [1, 1, 1, 1, 1]], float)
    rows, cols = np.nonzero(dense)
    rows, cols = np.append(rows, 1), np.append(cols, 3)  # a stored zero: judged, not relevant
    truth = sp.csr_array((dense[rows, cols], (rows, cols)), shape=dense.shape)
    aspects = sp.csr_array(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1]],
                                    np.int8))
    topk = np.array([[0, 1, 2, -1], [3, 1, -1, -1], [0, -1, -1, -1], [2, 2, -1, 1],
                     [4, 3, 2, 1]])
    labels = [f"{n}@{k}" for n in NAMES + ("st_recall",) for k in (1, 4, 6)]
    labels += ["nrbp", "nnrbp"]
    for convention in ("recsys", "trec"):
        res = fr.evaluate(truth, topk, labels, item_aspects=aspects, convention=convention,
                          k=6)  # cutoffs past the lists' 4 columns
        for label in labels:
            name, _, k = label.partition("@")
            want = reference_values(truth, topk, aspects, name, int(k or 6), convention)
            np.testing.assert_allclose(res.per_user(label), want, rtol=1e-12, err_msg=label)
            values = res.per_user(label)
            assert np.isnan(values[0]) and np.isnan(values[1]) == (convention == "recsys")
            # no judged item with an aspect: 0 under recsys, no ndeval topic under trec
            assert np.isnan(values[2]) if convention == "trec" else values[2] == 0.0
    # the repeated id of user 3 is a miss: as the list without it
    labels = ["map_ia@4", "err_ia@4", "st_recall@4", "nrbp", "nnrbp"]
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects)
    fixed = topk.copy()
    fixed[3] = [2, -1, -1, 1]
    again = fr.evaluate(truth, fixed, labels, item_aspects=aspects)
    for label in labels:
        assert res.per_user(label)[3] == again.per_user(label)[3]
    # user 4 lists every relevant item: its intents all covered at 4; user 3's first item
    # (2, aspects {0, 1}) covers both its intents
    assert res.per_user("st_recall@4")[4] == 1.0 == res.per_user("st_recall@4")[3]


def test_nrbp_by_hand_and_its_ideal_over_every_relevant_item():
    """One user, intents {0, 1, 2}: items 0 {0, 1}, 1 {0}, 2 {2}, 3 {1, 2}, all relevant;
    the list [1, 5, 0] (5 not relevant). α = β = 1/2: NRBP = (1 - 1/4)/3 · (1 + 0 +
    (1/2 + 1)/4) = 0.34375. The greedy ideal, not cut at the list's 3: 0 (gain 2), 3
    (1/2 + 1), 1 (1/2), 2 (1/2): 2 + 3/4 + 1/8 + 1/16 = 47/16, so nNRBP = (11/8)/(47/16) =
    22/47; cut at 3 it would be 22/46."""
    truth = sp.csr_array(np.array([[1.0, 2.0, 1.0, 3.0, 0, 0]]))
    aspects = sp.csr_array(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1],
                                     [1, 0, 0]], np.int8))
    topk = np.array([[1, 5, 0]])
    for convention in ("recsys", "trec"):
        res = fr.evaluate(truth, topk, ["nrbp", "nnrbp", "st_recall@1", "st_recall@3"],
                          item_aspects=aspects, convention=convention)
        assert res.per_user("nrbp")[0] == pytest.approx(0.34375, rel=1e-15)
        assert res.per_user("nnrbp")[0] == pytest.approx(22 / 47, rel=1e-15)
        assert res.per_user("st_recall@1")[0] == pytest.approx(1 / 3, rel=1e-15)
        assert res.per_user("st_recall@3")[0] == pytest.approx(2 / 3, rel=1e-15)
    with pytest.raises(ValueError, match="'nrbp' has no cutoff of its own"):
        fr.evaluate(truth, topk, ["nrbp@3"], item_aspects=aspects)
    with pytest.raises(ValueError, match="beta=2.*is not a number in"):
        fr.evaluate(truth, topk, ["nnrbp(beta=2)"], item_aspects=aspects)


def test_index_types_read_only_inputs_and_threads_change_no_bit():
    truth, topk = power_law(3000, 200, 10, seed=4)
    rng = np.random.default_rng(1)
    aspects = sp.csr_array((rng.random((200, 12)) < 0.15).astype(np.int8))
    labels = ["p_ia@5", "map_ia", "err_ia@10", "nerr_ia@10", "alpha_dcg@7", "st_recall@4",
              "nrbp", "nnrbp(alpha=0.3, beta=0.9)"]
    one = fr.evaluate(truth, topk, labels, item_aspects=aspects, n_threads=1)
    many = fr.evaluate(truth, topk, labels, item_aspects=aspects,
                       n_threads=min(2, numba.config.NUMBA_NUM_THREADS))
    big = sp.csr_array(truth, copy=True)
    big.indices = big.indices.astype(np.int64)
    big.indptr = big.indptr.astype(np.int64)
    frozen = topk.astype(np.int64)
    frozen.flags.writeable = False
    wide = sp.csr_array(aspects, copy=True)
    wide.indices = wide.indices.astype(np.int64)
    other = fr.evaluate(big, frozen, labels, item_aspects=wide)
    for label in labels:
        np.testing.assert_array_equal(one.per_user(label), many.per_user(label))
        np.testing.assert_array_equal(one.per_user(label), other.per_user(label))


def test_streaming_in_parts_equals_one_call():
    truth, topk = power_law(500, 60, 10, seed=2)
    rng = np.random.default_rng(5)
    aspects = sp.csr_array((rng.random((60, 6)) < 0.3).astype(np.int8))
    labels = ["err_ia@5", "nerr_ia@10", "p_ia@3", "map_ia@10", "alpha_dcg(alpha=0.3)@10",
              "st_recall@5", "nrbp(alpha=0.3)", "nnrbp"]
    whole = fr.evaluate(truth, topk, labels, item_aspects=aspects)
    ev = fr.Evaluator(truth, labels, item_aspects=aspects)
    for part in np.array_split(np.arange(500), 4):
        ev.update(part, topk[part])
    for label in labels:
        np.testing.assert_array_equal(ev.result().per_user(label), whole.per_user(label))


@pytest.mark.parametrize("labels, kw, match", [
    (["err_ia(max_grade=1)@3"], {}, "max_grade=1 is below the largest relevance"),
    (["err_ia(max_grade=4)@3"], {"convention": "trec"}, "ndeval's, with binary grades"),
    (["p_ia@3"], {"item_aspects": None}, "p_ia@3 needs item_aspects="),
    (["alpha_dcg(alpha=2)@3"], {}, "alpha=2.*is not a number in"),
])
def test_bad_input_says_what_to_do(labels, kw, match):
    truth = sp.csr_array(np.array([[3.0, 0, 1.0], [0, 2.0, 0]]))
    args = {"item_aspects": sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]]))}
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        fr.evaluate(truth, np.array([[0, 1, 2], [1, 2, 0]]), labels, **args)


# -- TREC's ndeval (pyndeval) -------------------------------------------------------------

def ndeval_inputs(truth, topk, aspects):
    """pyndeval qrels and run for the same data: one qrel (user, aspect, item, grade)
    per aspect of each judged item. ndeval breaks its ideal's ties by the larger document
    name, fastrank by the lower item id: names run backwards from the ids. Padding and
    repeated ids become documents of no qrels, so that every id keeps its rank."""
    n_items = truth.shape[1]
    rows, sets = truth_rows(truth), aspect_sets(aspects)

    def name(i):
        return f"d{n_items - i:05d}"

    qrels = [(f"q{u}", f"s{a:03d}", name(i), int(max(v, 0)))
             for a in range(aspects.shape[1]) for u, row in enumerate(rows)
             for i, v in row.items() if a in sets[i]]
    run = []
    for u in range(topk.shape[0]):
        seen = set()
        for r, i in enumerate(topk[u]):
            doc = name(int(i)) if i >= 0 and int(i) not in seen else f"pad{r}"
            seen.add(int(i))
            run.append((f"q{u}", doc, float(topk.shape[1] - r)))
    return qrels, run


NDEVAL = {"p_ia": "P-IA", "map_ia": "MAP-IA", "err_ia": "ERR-IA", "nerr_ia": "nERR-IA",
          "alpha_dcg": "alpha-DCG", "st_recall": "strec", "nrbp": "NRBP", "nnrbp": "nNRBP"}


def random_case(seed, n_users=80, n_items=40, n_aspects=7, k=20, bare=0.0):
    """A random case; every item has an aspect but a share `bare` of them."""
    rng = np.random.default_rng(seed)
    truth = sp.random_array((n_users, n_items), density=0.25, rng=rng, format="csr")
    truth.data = rng.integers(-1, 4, truth.nnz).astype(float)
    aspects = (rng.random((n_items, n_aspects)) < 0.3).astype(np.int8)
    aspects[np.arange(n_items), rng.integers(0, n_aspects, n_items)] = 1  # every item one
    aspects[rng.random(n_items) < bare] = 0
    topk = np.stack([rng.permutation(n_items)[:k] for _ in range(n_users)])
    topk[rng.random(topk.shape) < 0.1] = -1
    dup = rng.random(n_users) < 0.2
    topk[dup, 5] = topk[dup, 2]
    return truth, topk, sp.csr_array(aspects)


def largest_difference(res, oracle, name, cutoffs, alpha=None):
    """The largest |fastrank - ndeval| over users and cutoffs (and how many compared)."""
    worst, compared = 0.0, 0
    for k in cutoffs:
        label = name + (f"(alpha={alpha})" if alpha is not None else "") + \
            (f"@{k}" if k else "")
        key = NDEVAL[name] + (f"@{k}" if k else "")
        values = res.per_user(label)
        for u in range(values.shape[0]):
            if f"q{u}" not in oracle:
                continue
            assert not np.isnan(values[u]), (label, u)
            worst = max(worst, abs(values[u] - oracle[f"q{u}"][key]))
            compared += 1
    return worst, compared


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_trec_convention_is_ndeval(seed):
    pyndeval = pytest.importorskip("pyndeval")
    truth, topk, aspects = random_case(seed)
    cutoffs = [1, 2, 5, 10, 20]
    labels = [f"{n}@{k}" for n in ("p_ia", "err_ia", "nerr_ia", "alpha_dcg") for k in cutoffs]
    labels += ["map_ia", "alpha_dcg(alpha=0.3)@5", "alpha_dcg(alpha=0.3)@20"]
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects, convention="trec")
    qrels, run = ndeval_inputs(truth, topk, aspects)
    measures = [f"{NDEVAL[n]}@{k}" for n in ("p_ia", "err_ia", "nerr_ia", "alpha_dcg")
                for k in cutoffs] + ["MAP-IA"]
    oracle = pyndeval.RelevanceEvaluator(qrels, measures=measures).evaluate(run)
    other = pyndeval.RelevanceEvaluator(qrels, measures=["alpha-DCG@5", "alpha-DCG@20"],
                                        alpha=0.3).evaluate(run)
    report = {}
    for name in ("p_ia", "err_ia", "nerr_ia", "alpha_dcg"):
        report[name] = largest_difference(res, oracle, name, cutoffs)
    report["map_ia"] = largest_difference(res, oracle, "map_ia", [None])
    report["alpha_dcg(0.3)"] = largest_difference(res, other, "alpha_dcg", [5, 20], alpha=0.3)
    print(f"seed {seed}: largest |fastrank - ndeval| (users x cutoffs compared): "
          + ", ".join(f"{n} {w:.1e} ({c})" for n, (w, c) in report.items()))
    for name, (worst, compared) in report.items():
        assert compared > 60, name
        assert worst <= 1e-12, (name, worst)


@pytest.mark.parametrize("seed", [0, 1, 6])
def test_s_recall_nrbp_and_nnrbp_are_ndevals(seed):
    """strec@k, NRBP and nNRBP of pyndeval, at ndeval's α = β = 1/2 and others, on lists
    with padding, repeated ids, judged non-relevant items and items on several subtopics.
    Where ndeval's nNRBP is NaN (0/0: a topic whose judged items are none relevant), the
    user has no intent and fastrank's nnrbp is 0."""
    pyndeval = pytest.importorskip("pyndeval")
    truth, topk, aspects = random_case(seed, k=20)
    truth.data[truth.indptr[0]:truth.indptr[5]] = 0.0  # judged, none relevant: 0/0 in ndeval
    qrels, run = ndeval_inputs(truth, topk, aspects)
    cutoffs = [1, 2, 5, 10, 20]
    report = {}
    for alpha, beta in ((0.5, 0.5), (0.3, 0.8), (0.0, 0.95), (1.0, 0.2)):
        params = f"(alpha={alpha}, beta={beta})"
        labels = [f"st_recall@{k}" for k in cutoffs] + [f"nrbp{params}", f"nnrbp{params}"]
        res = fr.evaluate(truth, topk, labels, item_aspects=aspects, convention="trec")
        measures = [f"strec@{k}" for k in cutoffs] + ["NRBP", "nNRBP"]
        oracle = pyndeval.RelevanceEvaluator(qrels, measures=measures, alpha=alpha,
                                             beta=beta).evaluate(run)
        assert len(oracle) > 60
        for label, measure in zip(labels, measures):
            values = res.per_user(label)
            worst = 0.0
            for q, got in oracle.items():
                u = int(q[1:])
                if np.isnan(got[measure]):  # ndeval's nNRBP of a topic without intents
                    assert measure == "nNRBP" and values[u] == 0.0, (label, q)
                    assert got["NRBP"] == 0.0
                    continue
                worst = max(worst, abs(values[u] - got[measure]))
            key = label.split("(")[0].split("@")[0] + params
            report[key] = max(report.get(key, 0.0), worst)
            assert worst <= 1e-12, (label, worst)
        # the means: over ndeval's topics (a NaN of ndeval's nNRBP counts 0 here)
        for label, measure in zip(labels[:-1], measures[:-1]):
            assert res[label] == pytest.approx(np.mean([v[measure] for v in oracle.values()]),
                                               rel=1e-12)
    print(f"seed {seed}: largest |fastrank - ndeval|: "
          + ", ".join(f"{n} {w:.1e}" for n, w in report.items()))
    assert sum(np.isnan(v["nNRBP"]) for v in oracle.values()) >= 5


def test_users_whose_judged_items_have_no_aspect_are_no_ndeval_topic():
    """A user whose judged items have no aspect has no line in ndeval's qrels, and ndeval
    does not score it: under the trec convention it is NaN and out of the means (ndeval's
    and ir-measures' means), while the recsys convention counts it 0."""
    pyndeval = pytest.importorskip("pyndeval")
    truth, topk, aspects = random_case(5, n_users=60, n_items=12, bare=0.5)
    labels = ["p_ia@5", "err_ia@5", "nerr_ia@5", "alpha_dcg@5", "map_ia", "alpha_ndcg@5",
              "st_recall@5", "nrbp"]
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects, convention="trec")
    qrels, run = ndeval_inputs(truth, topk, aspects)
    measures = ["P-IA@5", "ERR-IA@5", "nERR-IA@5", "alpha-DCG@5", "MAP-IA", "alpha-nDCG@5",
                "strec@5", "NRBP"]
    oracle = pyndeval.RelevanceEvaluator(qrels, measures=measures).evaluate(run)
    judged = [u for u, row in enumerate(truth_rows(truth)) if row]
    topics = [u for u in judged if f"q{u}" in oracle]
    assert 10 < len(topics) < len(judged)  # some judged users are no topic
    for label, measure in zip(labels, measures):
        values = res.per_user(label)
        assert np.isnan(values[[u for u in judged if u not in topics]]).all(), label
        want = [oracle[f"q{u}"][measure] for u in topics]
        np.testing.assert_allclose(values[topics], want, rtol=1e-12, atol=1e-15)
        assert res[label] == pytest.approx(np.mean(want), rel=1e-12), label
    recsys = fr.evaluate(truth, topk, ["p_ia@5"], item_aspects=aspects)
    relevant = [u for u, row in enumerate(truth_rows(truth)) if any(v > 0 for v in row.values())]
    assert not np.isnan(recsys.per_user("p_ia@5")[relevant]).any()


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.slow
def test_ir_measures_names_give_ir_measures_numbers(seed):
    """ir-measures' diversity names, through its pyndeval provider, on qrels whose
    iteration column is the subtopic: per query, and the means."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    truth, topk, aspects = random_case(seed, k=12)
    qrels, run = ndeval_inputs(truth, topk, aspects)
    qrels = [ir_measures.Qrel(q, d, rel, s) for q, s, d, rel in qrels]
    run = [ir_measures.ScoredDoc(q, d, score) for q, d, score in run]
    labels = ["ERR_IA@5", "ERR_IA@10", "P_IA@5", "P_IA@12", "AP_IA", "MAP_IA",
              "alpha_DCG@5", "alpha_DCG(alpha=0.3)@10", "α_DCG@3", "ERR_IA(rel=2)@10",
              "P_IA(rel=2)@5", "StRecall@5", "StRecall@12", "StRecall(rel=2)@3", "NRBP",
              "NRBP(alpha=0.3,beta=0.8)", "NRBP(rel=2,beta=0.2)"]
    per_query = {}
    for label in labels:  # one call each: ir-measures 0.4 scores 0 where one call needs
        # several pyndeval settings (rel, alpha), e.g. alpha_DCG@5 with alpha_DCG(alpha=0.3)@10
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(label)], qrels, run):
            per_query.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    res = fr.evaluate(truth, topk, labels, item_aspects=aspects, dialect="ir_measures")
    for label in labels:
        values = res.per_user(label)
        got = per_query[str(ir_measures.parse_measure(label))]
        assert len(got) > 40
        for q, value in got.items():
            assert values[int(q[1:])] == pytest.approx(value, rel=1e-12, abs=1e-15), (label, q)


def test_ndevals_ties_by_document_name_change_its_nnrbp():
    """Why ir-measures' nNRBP is refused: after item 3 (four intents), items 1, 2, 4 and 5
    gain 1 each in the greedy ideal; fastrank takes 1 (the lowest id), ndeval 5 (the
    largest name, with names in id order), and the ideals' NRBP differ by 0.6%. With
    names that run backwards from the ids, ndeval's ties are fastrank's and the values
    agree."""
    pyndeval = pytest.importorskip("pyndeval")
    aspects = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1], [1, 1, 1, 1], [0, 1, 0, 1],
                        [1, 0, 1, 0]], np.int8)
    truth, topk = sp.csr_array(np.ones((1, 6))), np.arange(6)[None, :]
    value = fr.evaluate(truth, topk, ["nnrbp"], item_aspects=sp.csr_array(aspects),
                        convention="trec").per_user("nnrbp")[0]
    for name, same in ((lambda i: f"d{i}", False), (lambda i: f"d{9 - i}", True)):
        qrels = [("q0", f"s{a}", name(i), 1) for a in range(4) for i in range(6)
                 if aspects[i, a]]
        run = [("q0", name(i), float(6 - i)) for i in range(6)]
        got = pyndeval.RelevanceEvaluator(qrels, measures=["nNRBP"]).evaluate(run)
        assert (got["q0"]["nNRBP"] == pytest.approx(value, rel=1e-12)) == same
    assert value == pytest.approx(0.547077922077922, rel=1e-12)


@pytest.mark.parametrize("label, match", [
    ("nNRBP", "breaks ties between equal gains by the larger document name"),
    ("nNRBP(alpha=0.3)", "fastrank's nnrbp with convention='trec'"),
    ("NRBP@5", "takes no cutoff"),
    ("StRecall", "needs a cutoff"),
    ("StRecall(judged_only=True)@2", "takes no judged_only= .*it takes rel="),
    ("NRBP(beta=1.5)", "beta='1.5' is not a number in"),
])
def test_ir_measures_novelty_names_refused_with_the_reason(label, match):
    """ir-measures' nNRBP is refused (ndeval's ideal breaks ties by document name); NRBP
    takes no cutoff and StRecall needs one (its provider asks pyndeval for strec@k)."""
    truth = sp.csr_array(np.array([[3.0, 0, 1.0], [0, 2.0, 0]]))
    aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1]]))
    with pytest.raises(ValueError, match=match):
        fr.evaluate(truth, np.array([[0, 1, 2], [1, 2, 0]]), [label], item_aspects=aspects,
                    dialect="ir_measures")


@given(aspect_cases(max_items=7))
@pytest.mark.slow
def test_given_intent_probabilities_match_the_reference(case):
    """The kernel's P(a | user) from weights (not public yet: fastrank.aspects)."""
    from fastrank.aspects import check_aspects, intent_values
    from fastrank.validation import check_topk, check_truth

    from .reference_aspects import err_ia, map_ia, nerr_ia, p_ia

    truth, topk, aspects, _ = case
    data = check_truth(truth)
    n_aspects = aspects.shape[1]
    weights = np.arange(1, n_aspects + 1, dtype=float)[None, :].repeat(truth.shape[0], 0)
    weights[:, ::2] = 0.0
    w = sp.csr_array(weights)
    k = topk.shape[1]
    values, _ = intent_values(data, check_topk(topk, data.n_items),
                              np.arange(truth.shape[0]), check_aspects(aspects, data.n_items),
                              np.array([k]), max_grade=3.0,
                              weights=(w.indptr.astype(np.int64), w.indices, w.data))
    rows, sets = truth_rows(truth), aspect_sets(aspects)
    for u, row in enumerate(rows):
        given = {a: weights[u, a] for a in range(n_aspects) if weights[u, a] > 0}
        view = {i: v for i, v in row.items()}
        ids = [int(x) for x in topk[u]]
        if not any(v > 0 for v in view.values()) or not given:
            continue
        want = [p_ia(ids, k, view, sets, given), map_ia(ids, k, view, sets, False, given),
                err_ia(ids, k, view, sets, 3.0, False, given),
                nerr_ia(ids, k, view, sets, 3.0, False, given)]
        np.testing.assert_allclose(values[[0, 1, 3, 4], 0, u], want, rtol=1e-12, atol=1e-15)


def test_nerr_ia_ideal_takes_the_lower_id_of_gains_that_tie_under_a_fractional_max_grade():
    """R(2) = 3·R(1) under max_grade=4.5: an item of grade 1 on three of four intents and one
    of grade 2 on one intent gain the same; the greedy ideal takes the lower id (found by
    hypothesis: the reference once rounded each R on its own and took the other)."""
    truth = np.zeros((4, 6))
    truth[2] = [1, 1, 1, 2, 1, 1]
    aspects = np.zeros((6, 5), np.int8)
    for item, intents in enumerate([[], [0], [0, 1, 2], [0], [], [0, 1, 3]]):
        aspects[item, intents] = 1
    truth, aspects = sp.csr_array(truth), sp.csr_array(aspects)
    topk = np.array([[0, 0], [0, 0], [0, 1], [0, 0]], dtype=np.int32)
    res = fr.evaluate(truth, topk, ["err_ia(max_grade=4.5)@2", "nerr_ia(max_grade=4.5)@2"],
                      item_aspects=aspects)
    for name in ("err_ia", "nerr_ia"):
        want = reference_values(truth, topk, aspects, name, 2, "recsys", max_grade=4.5)
        np.testing.assert_allclose(res.per_user(f"{name}(max_grade=4.5)@2"), want,
                                   rtol=1e-12, atol=1e-15)
