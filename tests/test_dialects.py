"""Other tools' metric names. Every name of every dialect table either parses to a registered
metric or is refused with its reason; the names that parse give each tool's own numbers:
ir-measures and ranx run on the same judgments and lists, trec_eval 10 itself (built from
its source) on the same files, and RecBole's and RecTools' formulas as their code computes
them (neither is a test dependency: RecBole needs torch, RecTools a model stack;
tests/test_recbole_oracle.py runs RecBole itself where it is installed)."""

import json
import math
import re
import warnings

import shutil

import numpy as np
import pytest
import scipy.sparse as sp

import fastrank as fr
from fastrank import cli, dialects, grammar
from fastrank.grammar import parse

from .trec_files import read_trec_eval_output, write_trec_files


def judged_lists(seed, n_users=40, n_items=30, k=12):
    """Graded truth (0 is judged non-relevant; some users judged nothing, some judged
    only non-relevant items) and lists of distinct ids, some shorter than k, some empty."""
    rng = np.random.default_rng(seed)
    truth = np.zeros((n_users, n_items))
    stored = np.zeros((n_users, n_items), bool)
    for u in range(n_users):
        if rng.random() < 0.1:
            continue
        items = rng.choice(n_items, size=int(rng.integers(1, 12)), replace=False)
        stored[u, items] = True
        truth[u, items] = rng.choice([0, 0, 1, 1, 2, 3], size=items.size)
    rows, cols = np.nonzero(stored)
    matrix = sp.csr_array((truth[rows, cols], (rows, cols)), shape=(n_users, n_items))
    topk = np.full((n_users, k), -1, np.int64)
    for u in range(n_users):
        length = 0 if rng.random() < 0.08 else int(rng.integers(1, k + 1))
        topk[u, :length] = rng.choice(n_items, size=length, replace=False)
    return matrix, topk


def as_dicts(truth, topk):
    """(qrels, run) dicts with string ids: the judged users' judgments, the lists as
    scores falling with the rank (no ties)."""
    qrels, run = {}, {}
    for u in range(truth.shape[0]):
        lo, hi = truth.indptr[u], truth.indptr[u + 1]
        if hi > lo:
            qrels[f"q{u}"] = {f"d{i}": int(v) for i, v in zip(truth.indices[lo:hi],
                                                              truth.data[lo:hi])}
        ids = [int(i) for i in topk[u] if i >= 0]
        if ids:
            run[f"q{u}"] = {f"d{i}": float(len(ids) - r) for r, i in enumerate(ids)}
    return qrels, run


# -- every name of every table -------------------------------------------------------------

@pytest.mark.parametrize("dialect", sorted(dialects.TABLES))
def test_every_name_parses_to_a_registered_metric_or_is_refused_with_its_reason(dialect):
    for name, meaning in dialects.TABLES[dialect].items():
        written = {"trec_eval": {"required": f"{name}_5", "recall": f"{name}_0.30",
                                 "mult": f"{name}_0.50"},
                   "ir_measures": {"required": f"{name}@5", "recall": f"{name}@0.3"}}
        label = written.get(dialect, {}).get(getattr(meaning, "cutoff", ""), name)
        if dialect in ("recbole", "rectools", "ranx") and \
                getattr(meaning, "cutoff", "") == "required" or \
                getattr(meaning, "bare_refusal", ""):
            label = f"{name}@5"
        if dialect == "rectools" and name == "NDCG":
            label = "NDCG(divide_by_achievable=True)@5"
        if dialect == "ir_measures" and name == "RBP":  # ir-measures' only RBP
            label = "RBP(rel=1)"
        if isinstance(meaning, dialects.Refusal):
            with pytest.raises(ValueError, match="is refused: " + meaning.reason[:30]):
                parse(label, 10, dialect=dialect)
            continue
        request = parse(label, 10, dialect=dialect)
        assert request.metric is fr.METRICS[request.name]
        assert request.convention == meaning.convention and request.dialect == dialect
        assert request.label == label


def test_labels_carry_their_dialect_or_take_the_calls():
    truth, topk = judged_lists(0)
    res = fr.evaluate(truth, topk, ["nDCG@5", "P(rel=2)@5", "ndcg_cut_5", "P_5"],
                      convention="trec")
    assert res["nDCG@5"] == res["ndcg_cut_5"]
    assert res.canonical("nDCG@5") == "ndcg@5" and res.canonical("P(rel=2)@5") == \
        "precision(rel=2)@5"
    assert res.requests["P_5"].dialect == "trec_eval" and res.convention == "trec"
    assert "under the trec convention" in res.describe("nDCG@5")
    prefixed = fr.evaluate(truth, topk, ["recbole:NDCG@5", "rectools:MAP@5"])
    plain = fr.evaluate(truth, topk, ["ndcg@5", "mar@5"], convention="implicit")
    assert prefixed["recbole:NDCG@5"] == plain["ndcg@5"]
    assert prefixed["rectools:MAP@5"] == plain["mar@5"]
    call = fr.evaluate(truth, topk, ["NDCG@5", "MAP@5"], dialect="recbole")
    assert call["NDCG@5"] == plain["ndcg@5"] and call.convention == "mixed"
    assert call["MAP@5"] == fr.evaluate(truth, topk, ["map@5"])["map@5"]


@pytest.mark.parametrize("label, message", [
    ("rbp.8", "weighs each rank by the raw grade"),
    ("GAUC", "computed by fr.evaluate_factors"),
    ("rectools:NDCG@10", "ideal the user can reach"),
    ("ranx:bpref", "NaN for a query without a judged non-relevant"),
    ("ranx:precision", "divides by each query's own list length"),
    ("ranx:ndcg@5-l2", "keeps the raw grades"),
    ("ir_measures:nDCG(dcg=exp-log2)", "ideal over every"),
    ("ir_measures:nDCG(gains={0:0})@5", "gains"),
    ("AP(judged_only=True)", "judged_only=True"),
    ("rectools:Precision(r_precision=True)@5", "pools it"),
    ("recbole:ItemCoverage@10", "padding item 0"),
    ("P", "needs a cutoff"),
    ("map_cut", "needs a cutoff in trec_eval"),
    ("ndcg_cutt_10", "did you mean 'ndcg_cut'"),
    ("klingon:ndcg@5", "unknown metric"),
    ("ranx:nDCG@5", "is not a metric name of ranx; did you mean"),
    ("ir_measures:ndcg@5", "did you mean 'nDCG'"),
    ("precision(rel=2)", None),
    ("IPrec@0.3", "trec_eval 9"),
    ("ir_measures:NumRel", "without results 0"),
    # parameters and values ir-measures itself refuses
    ("ir_measures:RBP", "only with rel="),
    ("ir_measures:RBP(rel=1, p=1)", "strictly between 0 and 1"),
    ("ir_measures:RBP(rel=1, p=0)", "strictly between 0 and 1"),
    ("ir_measures:ERR(rel=2)@5", "ERR takes no rel="),
    ("ir_measures:ERR(max_grade=3)@5", "ERR takes no max_grade="),
    ("ir_measures:Bpref(judged_only=False)", "Bpref takes no judged_only="),
    ("ir_measures:Judged(rel=1)@5", "Judged takes no rel="),
    ("rectools:NDCG(divide_by_achievable=True, log_base=1)@5", "log_base must be"),
    ("rectools:NDCG(divide_by_achievable=True, log_base=-2)@5", "log_base must be"),
    # pytrec_eval's numbers that are not trec_eval 10's
    ("pytrec_eval:iprec_at_recall_0.30", "as trec_eval 9 did"),
    ("pytrec_eval:gm_map", "log(max(AP, 0.00001))"),
    ("pytrec_eval:gm_bpref", "log(max(bpref, 0.00001))"),
])
def test_refusals_say_why(label, message):
    truth, topk = judged_lists(1)
    if message is None:
        fr.evaluate(truth, topk, [label])
        return
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fr.evaluate(truth, topk, [label])


def test_one_set_of_counted_users_per_result():
    truth, topk = judged_lists(2)
    with pytest.raises(ValueError, match="one Result has one set of counted users"):
        fr.evaluate(truth, topk, ["P_5", "ndcg@5"])
    res = fr.evaluate(truth, topk, ["P_5", "ndcg@5"], convention="trec")
    assert res["P_5"] == res["ndcg@5"] * 0 + res["P_5"]


# -- the tools themselves --------------------------------------------------------------------

def assert_same_means(res, want):
    """Each label's mean equals the tool's (to the last few bits: sums in another order)."""
    for label, value in want.items():
        assert res[label] == pytest.approx(value, rel=1e-9, abs=1e-12), label


def table_labels(dialect, cut="@{}", cutoffs=(5, 12)):
    """Labels of every name a dialect table maps (not the refused ones): each with the
    cutoffs it takes, and without one where it may go without: a name is compared with
    its tool from the moment it is in the table."""
    labels = []
    for name, meaning in dialects.TABLES[dialect].items():
        if isinstance(meaning, dialects.Refusal) or \
                meaning.cutoff not in ("optional", "required", "none"):
            continue  # a parameter after the name: listed by hand
        if meaning.cutoff in ("optional", "none") and not meaning.bare_refusal:
            labels.append(name)
        if meaning.cutoff in ("optional", "required"):
            labels += [name + cut.format(k) for k in cutoffs]
    return labels


# ERR's provider (gdeval) reads numeric qids only: tested on its own below; RBP's (cwl_eval)
# computes binary RBP only, with rel= given; the diversity names need item_aspects= and
# subtopic qrels: tests/test_intents.py
IR_MEASURES = [label for label in table_labels("ir_measures")
               if not label.startswith(("ERR", "RBP"))
               and not parse(label, 12, dialect="ir_measures").metric.needs] + [
    "P(rel=2)@5", "R(rel=2)@5", "AP(rel=2)", "RR(rel=2)", "Rprec(rel=2)", "Bpref(rel=2)",
    "nDCG(dcg='log2')@5", "RBP(rel=1)", "RBP(p=0.5,rel=2)", "RBP(p=0.95,rel=3)",
    # ir-measures' NumRelRet is NumRet(rel=1), SetRelP SetP(relative=True)
    "NumRet(rel=1)", "NumRet(rel=2)", "SetP(relative=True)", "SetRelP(relative=False)",
    "SetP(rel=2,relative=True)"]


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_names_give_ir_measures_numbers(seed):
    ir_measures = pytest.importorskip("ir_measures")
    truth, topk = judged_lists(seed)
    qrels, run = as_dicts(truth, topk)
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in IR_MEASURES],
                                      qrels, run)
    want = {label: want[ir_measures.parse_measure(label)] for label in IR_MEASURES}
    assert_same_means(fr.evaluate(truth, topk, IR_MEASURES, dialect="ir_measures"), want)


def test_ir_measures_parameters_are_ir_measures_own():
    """Each mapped name takes the parameters ir-measures' measure takes (its
    SUPPORTED_PARAMS, less the cutoff and IPrec's recall point), no others."""
    ir_measures = pytest.importorskip("ir_measures")
    for name, meaning in dialects.IR_MEASURES.items():
        if isinstance(meaning, dialects.Refusal):
            continue
        supported = set(ir_measures.parse_measure(name).SUPPORTED_PARAMS) - {"cutoff"}
        assert set(dialects._IR_PARAMS[name]) == supported, name


def test_ir_measures_rbp_takes_no_cutoff_as_ir_measures_refuses_one():
    """ir-measures 0.4 computes RBP with cwl_eval only, which takes no cutoff: RBP(rel=1)@5
    is refused there ("Unsupported measures"), so it is not a name to compute here."""
    for label in ("RBP(rel=1)@5", "RBP(p=0.5,rel=2)@10"):
        with pytest.raises(ValueError, match="takes no cutoff"):
            parse(label, 10, dialect="ir_measures")
    assert parse("RBP(rel=1)", 10, dialect="ir_measures").k == 10
    ir_measures = pytest.importorskip("ir_measures")
    with pytest.raises(ValueError, match="Unsupported measures"):
        ir_measures.calc_aggregate([ir_measures.parse_measure("RBP(rel=1)@5")],
                                   {"q": {"d": 1}}, {"q": {"d": 1.0}})


# the metric classes of rectools.metrics.__all__ in RecTools 0.19
RECTOOLS_METRICS = ("Precision", "Recall", "F1Beta", "Accuracy", "MCC", "HitRate", "MAP",
                    "NDCG", "PartialAUC", "PAP", "MRR", "CatalogCoverage", "MeanInvUserFreq",
                    "IntraListDiversity", "AvgRecPopularity", "Serendipity", "Intersection",
                    "SufficientReco", "UnrepeatedReco", "CoveredUsers")


def test_every_rectools_metric_is_mapped_or_refused_with_a_reason():
    """A RecTools metric name is never "not a metric name of rectools": each is mapped or
    refused with the reason (RecTools 0.19's classes, and the installed RecTools')."""
    names = set(RECTOOLS_METRICS)
    try:
        import rectools.metrics as installed
        from rectools.metrics.base import MetricAtK
    except ImportError:
        pass
    else:
        names |= {n for n in installed.__all__ if isinstance(getattr(installed, n), type)
                  and issubclass(getattr(installed, n), MetricAtK)}
    truth = sp.csr_array(np.eye(4))
    topk = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    for name in sorted(names):
        assert name in dialects.RECTOOLS, name
        if isinstance(dialects.RECTOOLS[name], dialects.Refusal):
            with pytest.raises(dialects.Refused, match=f"rectools:{name}@2' .*is refused: "):
                fr.evaluate(truth, topk, [f"rectools:{name}@2"])


def test_pytrec_eval_names_give_pytrec_evals_numbers():
    """pytrec_eval's names are trec_eval's (as pytrec_eval asks them, P.5, or prints them,
    P_5), with the measures it reports differently refused (test_refusals_say_why)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    truth, topk = judged_lists(4)
    qrels, run = as_dicts(truth, topk)
    measures = {"P.5": "P_5", "ndcg_cut.5": "ndcg_cut_5", "map": "map",
                "recip_rank": "recip_rank", "bpref": "bpref", "Rprec": "Rprec",
                "recall.10": "recall_10", "success.1": "success_1"}
    res = fr.evaluate(truth, topk, list(measures) + list(measures.values()),
                      dialect="pytrec_eval")
    oracle = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
    judged = [u for u in range(truth.shape[0]) if f"q{u}" in qrels]
    for asked, key in measures.items():
        expected = [oracle.get(f"q{u}", {}).get(key, 0.0) for u in judged]
        np.testing.assert_allclose(res.per_user(asked)[judged], expected, atol=1e-12)
        np.testing.assert_array_equal(res.per_user(asked), res.per_user(key))
    assert res.requests["P.5"].dialect == "pytrec_eval"


def test_spellings_of_one_measure_agree():
    """ir-measures reads NDCG as nDCG (dcg= too); trec_eval prints set_F.0.5 as set_F_0.5."""
    truth, topk = judged_lists(5)
    res = fr.evaluate(truth, topk, ["NDCG(dcg=exp-log2)@5", "nDCG(dcg=exp-log2)@5",
                                    "NDCG(dcg=log2)@5", "nDCG@5"], dialect="ir_measures")
    assert res["NDCG(dcg=exp-log2)@5"] == res["nDCG(dcg=exp-log2)@5"]
    assert res["NDCG(dcg=log2)@5"] == res["nDCG@5"]
    trec = fr.evaluate(truth, topk, ["set_F_0.5", "set_F.0.5", "set_F_2", "set_F"],
                       dialect="trec_eval")
    own = fr.evaluate(truth, topk, ["set_f(beta=0.5)", "set_f(beta=2)", "set_f"],
                      convention="trec")
    assert trec["set_F_0.5"] == trec["set_F.0.5"] == own["set_f(beta=0.5)"]
    assert trec["set_F_2"] == own["set_f(beta=2)"] and trec["set_F"] == own["set_f"]


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_err_is_gdevals(seed):
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("no perl: ir-measures runs gdeval, a perl script")
    truth, topk = judged_lists(seed)
    qrels, run = as_dicts(truth, topk)
    number = {q: q[1:] for q in qrels}  # gdeval reads numeric qids only
    qrels = {number[q]: docs for q, docs in qrels.items()}
    run = {number[q]: docs for q, docs in run.items() if q in number}
    labels = ["ERR@1", "ERR@5", "ERR@12"]
    got = ir_measures.iter_calc([ir_measures.parse_measure(m) for m in labels], qrels, run)
    want = {(str(m.measure), m.query_id): m.value for m in got}
    res = fr.evaluate(truth, topk, labels, dialect="ir_measures")
    compared = 0
    for label in labels:
        for u, value in enumerate(res.per_user(label).tolist()):
            if (label, str(u)) in want:
                assert value == pytest.approx(want[label, str(u)], abs=1e-5), (label, u)
                compared += 1
    assert compared > 60


RANX = table_labels("ranx") + ["precision@5-l2", "recall@5-l2", "map@5-l2", "mrr@3-l3",
                               "hits@4-l2", "f1@6-l2"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.slow
def test_ranx_names_give_ranx_numbers(seed):
    ranx = pytest.importorskip("ranx")
    truth, topk = judged_lists(seed)
    qrels, run = as_dicts(truth, topk)
    for q in qrels:  # ranx scores a query of the qrels without results 0
        run.setdefault(q, {})
    run = {q: docs for q, docs in run.items() if q in qrels}
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX, make_comparable=True)
    assert_same_means(fr.evaluate(truth, topk, RANX, dialect="ranx"), want)


TREC_EVAL = table_labels("trec_eval", cut="_{}", cutoffs=(5, 10)) + [
    "P.5", "success_1", "iprec_at_recall_0.00", "iprec_at_recall_0.30", "iprec_at_recall_1.00",
    "Rprec_mult_0.20", "Rprec_mult_0.50", "Rprec_mult_2.00"]


@pytest.mark.parametrize("seed, level", [(0, 1), (1, 1), (2, 1), (3, 2), (4, 3)])
@pytest.mark.slow
def test_trec_eval_names_give_trec_eval_10s_numbers(trec_eval, tmp_path, seed, level):
    """Per query and `all`, to the 4 decimals trec_eval prints (-c: a judged query
    without results scores 0, as a judged user with an empty list does here). trec_eval's
    -l N is rel=N on every measure that takes a relevance threshold (nDCG takes the
    grades as gains and ignores it, in trec_eval as here)."""
    truth, topk = judged_lists(seed)
    qrels, run = write_trec_files(tmp_path, *as_dicts(truth, topk))
    per_query, totals = read_trec_eval_output(
        trec_eval, ["-c", "-q", "-l", str(level), "-m", "all_trec", "-m", "yaap",
                    "-m", "Rprec_mult.0.2,0.5,2"], qrels, run)
    labels = TREC_EVAL
    if level != 1:
        labels = [label if parse(label, 12, dialect="trec_eval").metric.param("rel") is None
                  else f"{label}(rel={level})" for label in TREC_EVAL]
    res = fr.evaluate(truth, topk, labels, dialect="trec_eval")
    counted = np.flatnonzero(res.counted)
    assert sorted(f"q{u}" for u in counted) == sorted(per_query)
    for label in labels:
        printed = label.replace(".", "_") if label.startswith("P.") else label
        printed = printed.split("(")[0]
        if not (printed == "num_rel" and level != 1):
            # (trec_eval -c sums num_rel over the raw qrels, every level > 0, whatever -l)
            assert res[label] == pytest.approx(totals[printed], abs=6e-5), label
        if printed in ("gm_map", "gm_bpref"):
            continue  # printed for `all` only
        values = res.per_user(label)
        for u in counted:
            assert values[u] == pytest.approx(per_query[f"q{u}"][printed], abs=6e-5), \
                (label, u)


# -- RecBole's and RecTools' formulas, written as their code computes them ----------------

def hit_rows(truth, topk, k):
    """(hits, m, ranks) of each user with a relevant item, as both tools see them: a 0/1
    row of the top k, binary relevance, only users with a test item."""
    for u in range(truth.shape[0]):
        lo, hi = truth.indptr[u], truth.indptr[u + 1]
        pos = {int(i) for i, v in zip(truth.indices[lo:hi], truth.data[lo:hi]) if v > 0}
        if pos:
            yield (np.array([int(i) in pos for i in topk[u, :k]], float), len(pos),
                   np.arange(1, k + 1))


def recbole_like(truth, topk, k):
    """RecBole 1.2's metric_info functions on a boolean hit matrix: users with a test item,
    binary relevance, lists of exactly k items (recbole/evaluator/metrics.py)."""
    out = {"ndcg": [], "map": [], "hit": [], "mrr": [], "precision": [], "recall": []}
    for hits, m, ranks in hit_rows(truth, topk, k):
        dcg = (hits / np.log2(ranks + 1)).sum()
        idcg = (1 / np.log2(np.arange(1, min(m, k) + 1) + 1)).sum()
        out["ndcg"].append(dcg / idcg)
        out["map"].append((np.cumsum(hits) / ranks * hits).sum() / min(m, k))
        out["hit"].append(float(hits.any()))
        out["mrr"].append(1 / (np.argmax(hits) + 1) if hits.any() else 0.0)
        out["precision"].append(hits.sum() / k)
        out["recall"].append(hits.sum() / m)
    return {name: float(np.mean(values)) for name, values in out.items()}


def rectools_like(truth, topk, k):
    """RecTools 0.19's ranking metrics: MAP over m (divide_by_k=False), NDCG with the
    achievable ideal, HitRate, MRR, Precision over k, Recall, F1Beta (beta 1 and 2)."""
    out = {"MAP": [], "NDCG": [], "HitRate": [], "MRR": [], "Precision": [], "Recall": [],
           "F1Beta": [], "F1Beta(beta=2)": []}
    for hits, m, ranks in hit_rows(truth, topk, k):
        out["MAP"].append((np.cumsum(hits) / ranks * hits).sum() / m)
        ideal = (1 / np.log(np.arange(1, min(m, k) + 1) + 1)).sum()
        out["NDCG"].append((hits / np.log(ranks + 1)).sum() / ideal)
        out["HitRate"].append(float(hits.any()))
        out["MRR"].append(1 / (np.argmax(hits) + 1) if hits.any() else 0.0)
        p, r = hits.sum() / k, hits.sum() / m
        out["Precision"].append(p)
        out["Recall"].append(r)
        out["F1Beta"].append(2 * p * r / (p + r) if p + r else 0.0)
        out["F1Beta(beta=2)"].append(5 * p * r / (4 * p + r) if p + r else 0.0)
    return {name: float(np.mean(values)) for name, values in out.items()}


@pytest.mark.parametrize("seed", range(3))
def test_recbole_and_rectools_names_give_their_numbers(seed):
    rng = np.random.default_rng(seed)
    truth, _ = judged_lists(seed)
    topk = np.argsort(rng.random((truth.shape[0], truth.shape[1])), axis=1)[:, :10]
    recbole = recbole_like(truth, topk, 10)
    res = fr.evaluate(truth, topk, ["NDCG@10", "MAP@10", "Hit@10", "MRR@10", "Precision@10",
                                    "Recall@10"], dialect="recbole")
    for name, value in recbole.items():
        label = {"hit": "Hit"}.get(name, "MRR" if name == "mrr" else name.upper()
                                   if name in ("ndcg", "map") else name.capitalize()) + "@10"
        assert res[label] == pytest.approx(value, rel=1e-12), label
    rectools = rectools_like(truth, topk, 10)
    labels = {"NDCG": "NDCG(divide_by_achievable=True, log_base=10)@10"}
    res = fr.evaluate(truth, topk, [labels.get(n, f"{n}@10") for n in rectools],
                      dialect="rectools")
    for name, value in rectools.items():
        assert res[labels.get(name, f"{name}@10")] == pytest.approx(value, rel=1e-12), name
    assert not math.isnan(res["HitRate@10"])


# -- the grammar at every entry point ------------------------------------------------------

def test_curves_take_the_convention_of_the_labels_they_extend():
    truth, topk = judged_lists(5)
    res = fr.evaluate(truth, topk, ["nDCG@5"], dialect="ir_measures", curves=True)
    assert res.metrics[:2] == ("nDCG@5", "ndcg@1") and res.convention == "trec"
    assert res["ndcg@5"] == res["nDCG@5"]
    assert len(res.curve("ndcg", level=None).mean) == 12
    summed = fr.evaluate(truth, topk, ["gm_map@2", "num_ret@2", "mrr@2"], curves=True)
    assert "mrr@1" in summed.metrics and "gm_map@1" not in summed.metrics
    with pytest.raises(ValueError, match="'num_ret' is a sum over users"):
        fr.evaluate(truth, topk, ["mrr@2"], curves="num_ret")


def test_merged_evaluators_compare_what_their_labels_compute():
    truth, topk = judged_lists(6)
    a = fr.Evaluator(truth, ["nDCG@2"], dialect="ir-measures").update(np.arange(20), topk[:20])
    b = fr.Evaluator(truth, ["nDCG@2"], dialect="IR_measures").update(np.arange(20, 40),
                                                                      topk[20:])
    assert a.merge(b).result()["nDCG@2"] == pytest.approx(
        fr.evaluate(truth, topk, ["nDCG@2"], dialect="ir_measures")["nDCG@2"], rel=1e-12)
    same = fr.Evaluator(truth, ["nDCG@2"], convention="trec")  # the same meaning
    assert a.merge(same) is a
    grammar._parse.cache_clear()  # the warning comes once per label and process
    with pytest.warns(grammar.AmbiguousName):  # fastrank's ndcg@2, recsys: another meaning
        other = fr.Evaluator(truth, ["nDCG@2"])
    with pytest.raises(ValueError, match="dialect 'ir_measures' here; .* dialect 'fastrank'"):
        a.merge(other)


def test_names_a_tool_does_not_have_are_refused():
    truth, topk = judged_lists(7)
    for label, message in (("ir_measures:NumRet@5", "takes no cutoff"),
                           ("recbole:Precision(rel=2)@2", "recbole has no rel="),
                           ("ranx:precision(rel=2)@2", "writes a relevance level as -lN"),
                           ("ranx:hits@3-l0", "rel > 0")):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            fr.evaluate(truth, topk, [label])


def test_a_bad_value_of_fastranks_own_parameter_is_named_not_refused_as_another_tools():
    """rbp(p=1.5) is fastrank's rbp with p out of range: the error says so, instead of
    trec_eval's refusal of its own rbp (which fr.evaluate does not compute)."""
    truth, topk = judged_lists(9)
    for label, message in (("rbp(p=1.5)", "p='1.5' is not a number in [0, 1]"),
                           ("rbp_resid(p=-0.1)", "p='-0.1' is not a number in [0, 1]")):
        with pytest.raises(ValueError, match=re.escape(message)) as info:
            fr.evaluate(truth, topk, [label])
        assert not isinstance(info.value, dialects.Refused)
    # another tool's parameters on a fastrank name still go to that tool
    fr.evaluate(truth, topk, ["nDCG(dcg=exp-log2)@3"])


def test_a_tools_spelling_read_as_fastranks_name_warns_once():
    truth, topk = judged_lists(8)
    grammar._parse.cache_clear()
    with pytest.warns(grammar.AmbiguousName, match="'MAP@3' is read as fastrank's map@3 .* "
                                                   "ir_measures: map \\(trec\\)"):
        fr.evaluate(truth, topk, ["MAP@3"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fr.evaluate(truth, topk, ["map@3", "ndcg@3", "hit_rate@3"])  # fastrank's spelling


def test_the_command_line_splits_labels_and_reports_the_convention_computed(tmp_path, capsys):
    assert grammar.split_labels("ndcg@10,P(rel=2, x=1)@5,P.5,10, map") == [
        "ndcg@10", "P(rel=2, x=1)@5", "P.5", "P.10", "map"]
    truth, topk = judged_lists(9)
    sp.save_npz(tmp_path / "t.npz", truth)
    np.save(tmp_path / "k.npy", topk)
    assert cli.main(["evaluate", "--truth", str(tmp_path / "t.npz"), "--topk",
                     str(tmp_path / "k.npy"), "-m", "P.5,10", "ndcg_cut_5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["convention"] == "trec" and set(out) >= {"P.5", "P.10", "ndcg_cut_5"}
    res = fr.evaluate(truth, topk, ["P_5", "P_10"])
    assert out["P.5"] == pytest.approx(res["P_5"]) and out["P.10"] == pytest.approx(res["P_10"])


@pytest.mark.parametrize("seed", range(2))
def test_tied_runs_give_each_tools_number_with_its_order_of_ties(tmp_path, seed):
    """ir-measures' providers order equal scores differently: pytrec_eval by document id
    descending (trec_arrays' default), its RR@k and Judged by id ascending, its RBP (from
    cwl_eval) in the run's order; trec_arrays' ties= reproduces each."""
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines, records = [], [], []
    for q in range(12):
        docs = [f"d{j}" for j in rng.choice(40, size=15, replace=False)]
        for d in docs[:8]:
            qrels_lines.append(f"q{q} 0 {d} {int(rng.integers(0, 3))}")
        for rank, d in enumerate(docs[2:]):
            score = float(rng.integers(0, 3))  # many ties
            run_lines.append(f"q{q} Q0 {d} {rank + 1} {score} r")
            records.append(ir_measures.ScoredDoc(f"q{q}", d, score))
    (tmp_path / "q").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "r").write_text("\n".join(run_lines) + "\n")
    qrels_file = fr.io.read_qrels(tmp_path / "q")
    run_file = fr.io.read_run(tmp_path / "r")
    qrels = [ir_measures.Qrel(query, doc, int(rel)) for query, _, doc, rel in
             (line.split() for line in qrels_lines)]
    for ties, labels in (("trec_eval", ["P@5", "AP", "RR", "nDCG@5"]),
                         ("docno", ["RR@5", "Judged@3"]), ("file", ["RBP(rel=1)"])):
        truth, topk, queries, _ = fr.io.trec_arrays(qrels_file, run_file, ties=ties)
        res = fr.evaluate(truth, topk, labels, dialect="ir_measures")
        for label in labels:
            measure = ir_measures.parse_measure(label)
            want = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels,
                                                                        records)}
            got = res.per_user(label)
            for row, qid in enumerate(queries):
                assert got[row] == pytest.approx(want.get(qid, 0.0), abs=1e-12), (ties, label)
    with pytest.raises(ValueError, match="ties must be one of"):
        fr.io.trec_arrays(qrels_file, run_file, ties="random")


# -- hostile labels: each either means what it says or is refused, naming the fix --------

LABEL_TRUTH = sp.csr_array(np.array([[3, 0, 1, 0, 0], [0, 0, 0, 2, 1], [0, 1, 2, 0, 1]], float))
LABEL_TOPK = np.array([[2, 0, 4], [1, 3, -1], [4, 1, 0]])


@pytest.mark.parametrize("label, match", [
    ("precision(rel=2, rel=3)@2", "gives the parameter rel twice"),
    ("ranx:ndcg.5@3", "ranx writes a number after a dot only for rbp"),
    ("ranx:map.99", "ranx writes a number after a dot only for rbp"),
    ("ranx:precision@2-l2-l3", "relevance level \\(-lN\\) twice"),
    ("precision(rel=1_0)@2", "rel='1_0' is not a number"),
    ("precision(rel=\uff12)@2", "is not a number"),  # a full-width 2
    ("precision(rel=nan)@2", "is not a number"),
    ("precision(rel='2)@2", "opens a quote \\('2\\) it does not close"),
    # a fastrank name's own error, not another tool's refusal of the name
    ("auc@0", "cutoff in 'auc@0' must be at least 1"),
    ("rbp@0", "cutoff in 'rbp@0' must be at least 1"),
    ("dcg@2.5", "cutoff in 'dcg@2.5' must be a positive integer"),
    ("serendipity@0", "must be at least 1"),
    ("rbp(P=0.8)@3", "rbp has no parameter 'P'; did you mean 'p'"),
    ("precision(rel=2, foo=1)@2", "precision has no parameter 'foo'"),
    ("precision(rell=2)@2", "did you mean 'rel'"),
    # an unknown label's form
    ("ndcg3", "a cutoff follows '@', as in 'ndcg@3'"),
    ("foo:ndcg@3", "'foo' is not a dialect"),
    ("precision(rel=2@2", "its parentheses do not match"),
    (f"ndcg@{2**62}", "not below 2\\*\\*62"),
])
def test_hostile_labels_are_refused_naming_the_fix(label, match):
    with pytest.raises(ValueError, match=match):
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, [label])


def test_another_tool_s_spelling_keeps_that_tool_s_refusal():
    with pytest.raises(dialects.Refused, match="ir-measures computes IPrec with pytrec_eval"):
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["IPrec@0.3"])


def test_suggestions_are_names_fastrank_computes():
    with pytest.raises(ValueError) as error:
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["ndgc@3"])
    hint = str(error.value).split("?")[0]
    assert "'ndcg'" in hint and "ndcg_p" not in hint and "Rndcg" not in hint
    with pytest.raises(dialects.Refused) as error:
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["ndcg_p"])
    assert "issue" not in str(error.value)


def test_quoted_and_exponent_parameters_mean_their_number():
    same = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["precision(rel=2)@2", "precision(rel='2')@2",
                                                 "precision(rel=2e0)@2"])
    assert len({same[m] for m in same.metrics}) == 1


def test_canonical_labels_name_the_metric_exactly():
    """A parameter shortened for display would name another metric: rel=1.00000001 on
    whole grades is rel=2, rel=1 is not."""
    labels = ["precision(rel=1.00000001)@2", "rbp(p=0.123456789)@3", "precision(rel=2)@2",
              "rbp(p=0.5)@3"]
    res = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, labels)
    canonical = [res.canonical(m) for m in labels]
    assert canonical == labels
    again = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, canonical)
    assert [again[m] for m in canonical] == [res[m] for m in labels]
    assert res["precision(rel=1.00000001)@2"] == res["precision(rel=2)@2"]


def test_a_string_of_labels_joined_by_commas_is_split_as_the_command_line_splits_it():
    joined = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, "ndcg@3, f_beta(beta=2, rel=1)@2,map@3")
    apart = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["ndcg@3", "f_beta(beta=2, rel=1)@2", "map@3"])
    assert joined.metrics == apart.metrics and joined.to_dict() == apart.to_dict()
    # a list of trec_eval cutoffs after its option's or its printed spelling
    assert grammar.split_labels("P.5,10") == ["P.5", "P.10"]
    assert grammar.split_labels("ndcg_cut_5,10,ndcg@3") == ["ndcg_cut_5", "ndcg_cut_10",
                                                             "ndcg@3"]


@pytest.mark.parametrize("metrics", [b"ndcg@3", bytearray(b"ndcg@3")])
def test_bytes_labels_are_a_type_error(metrics):
    with pytest.raises(TypeError, match="got (bytes|bytearray): decode it first"):
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, metrics)


@pytest.mark.parametrize("key", [None, 5, b"ndcg@3", ("ndcg@3",)])
def test_a_result_indexed_by_a_non_string_is_a_type_error(key):
    res = fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["ndcg@3"])
    with pytest.raises(TypeError, match="the key must be a metric name"):
        res[key]


def test_the_ambiguous_name_warning_names_the_caller_s_line():
    grammar._parse.cache_clear()  # the warning comes once per label: parse it again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["MAP@3"])
    ambiguous = [w for w in caught if issubclass(w.category, grammar.AmbiguousName)]
    assert ambiguous and all(w.filename == __file__ for w in ambiguous)


def test_curves_take_the_name_without_a_cutoff():
    with pytest.raises(ValueError, match="takes the name without @k: 'ndcg'"):
        fr.evaluate(LABEL_TRUTH, LABEL_TOPK, ["ndcg@3"], curves="ndcg@3")


def test_every_name_in_the_dialect_table_is_accepted_as_written():
    """The docs' table (dialects.markdown) shows each name as the tool writes it, with
    the option a tool needs to compute what fastrank computes."""
    for dialect, label, meaning in dialects.written_names():
        text = label.replace("[@k]", "").replace("@k", "@3").replace("_k", "_3")
        request = parse(f"{dialect}:{text}", 3)
        assert request.metric.name == meaning.metric, (dialect, label)


NDCG = "rectools:NDCG(divide_by_achievable=True, log_base={})@5"
RBP = "ir_measures:RBP(rel=1, p={})"


@pytest.mark.parametrize("label, accepted", [
    *((NDCG.format(v), True) for v in ("10", "2.5", "1e1", " 10 ")),
    *((NDCG.format(v), False) for v in ("１０", "٣", "1_0", "0x10")),
    *((RBP.format(v), True) for v in ("0.5", ".5", "5e-1")),
    *((RBP.format(v), False) for v in ("０.５", "٠.٥")),
])
def test_a_dialects_number_is_written_as_every_label_number_is(label, accepted):
    """A number in a dialect's parameter (RecTools' log_base, ir-measures' RBP p) is read
    as fastrank's own parameters are: ASCII decimal digits only, where float() also took
    other scripts' digits and '1_0'."""
    truth, topk = judged_lists(1)
    if accepted:
        fr.evaluate(truth, topk, [label])
    else:
        with pytest.raises(ValueError, match="RecTools' log_base must be a number|RBP takes "
                                             "a persistence p strictly between 0 and 1"):
            fr.evaluate(truth, topk, [label])
