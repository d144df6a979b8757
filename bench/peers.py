"""fastrank against the tools people would otherwise use, on the same synthetic workloads.

    python -m pip install '.[bench]'
    python bench/peers.py              # every workload (about 20 minutes here)
    python bench/peers.py --quick      # the smallest ones, under five minutes
    python bench/peers.py --markdown   # also print the table as markdown (docs/benchmarks.md)

Workloads: power-law users x 50,000 items (as `fastrank demo`) at 100k and 1M users with
K = 10 and 100, graded and binary truth; users with exactly 1 and exactly 100 test items;
and the IR shape, queries x 1,000 retrieved documents with graded judgments.

Tools, each on the same lists (scores strictly decreasing down each list, so no tool's
tie-breaking matters):
- implicit: `ranking_metrics_at_k` with a model that returns the fixed lists (its metric
  loop), and end to end from an ALS model against `fr.evaluate_model`;
- ranx: `evaluate` from its typed `Qrels`/`Run` (built beforehand) and from dicts;
- pytrec_eval: `RelevanceEvaluator` from dicts (built beforehand);
- scikit-learn: `ndcg_score` on the IR shape, where every relevant document is retrieved
  (its ideal sees only the retrieved documents);
- ir-measures: `calc_aggregate` from the same dicts (it builds pytrec_eval's evaluator
  inside the call), nDCG@k, P@k, R@k, AP@k, RR and Success@k against
  `fr.evaluate(..., dialect="ir_measures")` on the same names;
- RecTools: `rectools.metrics.calc_metrics` on pandas interactions/recommendations frames
  (built beforehand) on the recommender workloads, Precision, Recall,
  NDCG(divide_by_achievable=True), MAP, MRR and HitRate at K against
  `fr.evaluate(..., dialect="rectools")` on the same names;
- recometrics: `calc_reco_metrics` from user/item factors (Gaussian, 50,000 items, 32
  factors, K = 10, training items of a disjoint 80/20 split excluded) against
  `fr.evaluate_factors`, in float32 and in float64, eight metrics (its AP@K is fastrank's
  mar@10, its TAP@K map@10, ROC-AUC the full-ranking auc). recometrics has no entry point
  for ready-made lists.
Every tool's means are checked against fastrank's where the definitions match (implicit
convention against implicit, trec convention against ranx, pytrec_eval and sklearn, the
tools' own names through fastrank's dialects); a mismatch above 1e-9 relative stops the
script (recometrics in float32 returns float32 per-user values: 1e-6 there). Dict- and
frame-based tools are skipped where their inputs would exceed --dict-limit entries
(memory), and a tool that is not installed is skipped; the table says so.
"""

import argparse
import gc
import importlib.util
import platform
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fastrank as fr  # noqa: E402
from bench.datasets import timed  # noqa: E402
from bench.datasets import workload as power_law_workload  # noqa: E402

N_ITEMS = 50_000


@dataclass(frozen=True)
class Workload:
    name: str
    users: int
    k: int
    kind: str  # "power", "binary", "fixed", "ir"
    m: int = 0  # test items per user (fixed) / judged documents per query (ir)


FULL = [
    Workload("100k users, K=10, graded", 100_000, 10, "power"),
    Workload("100k users, K=10, binary", 100_000, 10, "binary"),
    Workload("100k users, K=100, graded", 100_000, 100, "power"),
    Workload("1M users, K=10, graded", 1_000_000, 10, "power"),
    Workload("1M users, K=10, binary", 1_000_000, 10, "binary"),
    Workload("1M users, K=100, graded", 1_000_000, 100, "power"),
    Workload("100k users with 1 test item, K=10", 100_000, 10, "fixed", 1),
    Workload("100k users with 100 test items, K=100", 100_000, 100, "fixed", 100),
    Workload("IR: 100k queries x 1,000 docs", 100_000, 1000, "ir", 50),
]
QUICK = [
    Workload("100k users, K=10, graded", 100_000, 10, "power"),
    Workload("100k users, K=10, binary", 100_000, 10, "binary"),
    Workload("10k users with 1 test item, K=10", 10_000, 10, "fixed", 1),
    Workload("10k users with 100 test items, K=100", 10_000, 100, "fixed", 100),
    Workload("IR: 2k queries x 1,000 docs", 2_000, 1000, "ir", 50),
]


def build(w, seed=0):
    """(truth CSR, topk int64) of a workload."""
    if w.kind in ("power", "binary"):
        truth, topk = power_law_workload(w.users, w.k, seed)
        truth = sp.csr_array(truth)
        if w.kind == "binary":
            truth = sp.csr_array((np.ones(truth.nnz), truth.indices, truth.indptr),
                                 shape=truth.shape)
        return truth, np.asarray(topk, dtype=np.int64)
    rng = np.random.default_rng(seed)
    if w.kind == "fixed":
        return _fixed(rng, w.users, w.m, w.k)
    return _ir(rng, w.users, w.k, w.m)


def _distinct_rows(rng, n_rows, width, n_items):
    """n_rows rows of `width` distinct ids in [0, n_items), popularity-skewed."""
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.8
    cdf = np.cumsum(weights / weights.sum())
    out = np.empty((n_rows, width), np.int64)
    for lo in range(0, n_rows, 10_000):
        hi = min(lo + 10_000, n_rows)
        draw = np.searchsorted(cdf, rng.random((hi - lo, width * 3)))
        draw = np.minimum(draw, n_items - 1)
        for r in range(hi - lo):
            row = list(dict.fromkeys(draw[r].tolist()))
            while len(row) < width:
                row += [x for x in rng.integers(0, n_items, width).tolist() if x not in row]
                row = list(dict.fromkeys(row))
            out[lo + r] = row[:width]
    return out


def _fixed(rng, n_users, m, k):
    """Every user has exactly m relevant items (grades 1-3); lists mix some of them with
    popular items."""
    relevant = _distinct_rows(rng, n_users, m, N_ITEMS)
    grades = rng.integers(1, 4, size=(n_users, m)).astype(np.float64)
    truth = sp.csr_array((grades.ravel(), (np.repeat(np.arange(n_users), m),
                                           relevant.ravel())), shape=(n_users, N_ITEMS))
    truth.sum_duplicates()
    others = _distinct_rows(rng, n_users, k, N_ITEMS)
    topk = others.copy()
    hits = rng.random((n_users, k)) < 0.15
    take = np.minimum(np.cumsum(hits, axis=1) - 1, m - 1)
    topk[hits] = relevant[np.nonzero(hits)[0], take[hits]]
    return truth, _first_distinct(topk)


def _first_distinct(topk):
    """Replace later repeats in each row with ids not in the row (lists hold distinct ids,
    as implicit's comparison needs)."""
    out = topk.copy()
    for r in range(out.shape[0]):
        row = out[r]
        _, first = np.unique(row, return_index=True)
        if first.size < row.size:
            repeat = np.setdiff1d(np.arange(row.size), first)
            free = np.setdiff1d(np.arange(N_ITEMS), row)[:repeat.size]
            row[repeat] = free
    return out


def _ir(rng, n_queries, depth, judged):
    """Queries retrieve `depth` documents of a 2,000,000-document collection; `judged` of
    them per query are judged (grades 0-2, at least one relevant); every judged document is
    retrieved, so sklearn's ideal (over retrieved documents) is trec_eval's."""
    n_docs = 2_000_000
    topk = np.empty((n_queries, depth), np.int64)
    for lo in range(0, n_queries, 2_000):
        hi = min(lo + 2_000, n_queries)
        block = rng.integers(0, n_docs, size=(hi - lo, depth * 2))
        for r in range(hi - lo):
            row = np.unique(block[r])
            rng.shuffle(row)
            topk[lo + r] = row[:depth]
    where = np.sort(rng.random((n_queries, depth)).argsort(axis=1)[:, :judged], axis=1)
    docs = np.take_along_axis(topk, where, axis=1)
    grades = rng.choice([0.0, 1.0, 2.0], p=[0.5, 0.35, 0.15], size=(n_queries, judged))
    grades[:, 0] = np.maximum(grades[:, 0], 1.0)  # at least one relevant
    truth = sp.csr_array((grades.ravel(), (np.repeat(np.arange(n_queries), judged),
                                           docs.ravel())), shape=(n_queries, n_docs))
    truth.sum_duplicates()
    return truth, topk


def trec_labels(k):
    return {f"precision@{k}": ("P_%d" % k, f"precision@{k}"),
            f"recall@{k}": ("recall_%d" % k, f"recall@{k}"),
            f"ndcg@{k}": ("ndcg_cut_%d" % k, f"ndcg@{k}"),
            f"map@{k}": ("map_cut_%d" % k, f"map@{k}"),
            "mrr": ("recip_rank", "mrr"),
            f"hit_rate@{k}": ("success_%d" % k, f"hit_rate@{k}")}


def to_dicts(truth, topk):
    """pytrec_eval / ranx dicts: {qid: {docid: grade}}, {qid: {docid: score}}; scores fall
    strictly down each list."""
    qrels, run = {}, {}
    indptr, indices, data = truth.indptr, truth.indices, truth.data
    k = topk.shape[1]
    scores = [float(k - j) for j in range(k)]
    for u in range(truth.shape[0]):
        lo, hi = indptr[u], indptr[u + 1]
        if hi > lo:
            qrels[str(u)] = {str(i): int(v) for i, v in zip(indices[lo:hi].tolist(),
                                                            data[lo:hi].tolist())}
        ids = topk[u]
        run[str(u)] = {str(i): s for i, s in zip(ids[ids >= 0].tolist(), scores)}
    return qrels, run


def installed(module):
    return importlib.util.find_spec(module) is not None


def agree(name, ours, theirs, tol=1e-9):
    worst = 0.0
    for label, value in theirs.items():
        ref = ours[label]
        diff = abs(value - ref) / max(abs(ref), 1e-300)
        worst = max(worst, diff)
    if worst > tol:
        raise SystemExit(f"{name} disagrees with fastrank by {worst:.2e}: {theirs} vs "
                         f"{ {label: ours[label] for label in theirs} }")
    return worst


def run_workload(w, args, rows):
    truth, topk = build(w)
    n = truth.shape[0]
    k = w.k if w.kind != "ir" else 10
    print(f"\n{w.name}: {n:,} rows, {truth.nnz:,} judgments, K = {topk.shape[1]}", flush=True)
    lists = topk  # in the IR shape all 1,000 documents are ranked; metrics cut at 10

    def add(tool, seconds, note="", diff=None):
        rows.append({"workload": w.name, "tool": tool, "seconds": seconds, "users": n,
                     "note": note, "diff": diff})
        shown = "" if seconds is None else f"{seconds:8.3f} s {n / seconds:>14,.0f} users/s"
        print(f"  {tool:<44} {shown} {note}", flush=True)

    # trec convention: fastrank vs ranx, pytrec_eval, ir-measures, sklearn
    labels = trec_labels(k)
    fr.evaluate(truth[:100], lists[:100], list(labels), convention="trec")
    t_fr, res = timed(lambda: fr.evaluate(truth, lists, list(labels), convention="trec"),
                        args.repeat)
    ours = res.to_dict()
    add("fastrank evaluate (trec)", t_fr)
    entries = truth.nnz + int((lists >= 0).sum())
    if entries > args.dict_limit:
        for tool in ("ranx (typed Qrels/Run)", "ranx (from dicts)", "pytrec_eval (dicts)",
                     "ir-measures calc_aggregate (dicts)"):
            add(tool, None, f"skipped: {entries:,} dict entries > --dict-limit")
    else:
        qrels, run = to_dicts(truth, lists)
        peer_ranx(qrels, run, labels, ours, add, args)
        peer_pytrec(qrels, run, labels, ours, add, args)
        peer_ir_measures(qrels, run, truth, lists, k, add, args)
        del qrels, run
    if w.kind == "ir":
        peer_sklearn(truth, topk, k, ours, add, args)
    if w.kind != "ir":
        peer_implicit(truth, lists, w.k, add, args)
        if entries > args.dict_limit:
            add("RecTools calc_metrics (frames)", None,
                f"skipped: {entries:,} frame rows > --dict-limit")
        else:
            peer_rectools(truth, lists, w.k, add, args)


def missing(add, tools, module):
    """True (and a skipped row per tool) if `module` is not installed."""
    if installed(module):
        return False
    for tool in tools:
        add(tool, None, f"skipped: {module} not installed")
    return True


def peer_ranx(qrels, run, labels, ours, add, args):
    if missing(add, ("ranx (typed Qrels/Run)", "ranx (from dicts)"), "ranx"):
        return
    import ranx

    metrics = [names[1] for names in labels.values()]
    ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)  # numba compile, once
    t_dicts, _ = timed(lambda: ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics,
                                               save_results_in_run=False), 1)
    q, r = ranx.Qrels(qrels), ranx.Run(run)
    t_typed, values = timed(lambda: ranx.evaluate(q, r, metrics, save_results_in_run=False),
                              args.repeat)
    theirs = {ours_label: values[names[1]] for ours_label, names in labels.items()}
    diff = agree("ranx", ours, theirs)
    add("ranx (typed Qrels/Run)", t_typed, f"max diff {diff:.0e}", diff)
    add("ranx (from dicts)", t_dicts, "Qrels(dict) + Run(dict) + evaluate", diff)


def peer_pytrec(qrels, run, labels, ours, add, args):
    if missing(add, ("pytrec_eval (dicts)",), "pytrec_eval"):
        return
    import pytrec_eval

    measures = {names[0] for names in labels.values()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    t, per_query = timed(lambda: evaluator.evaluate(run), 1)
    theirs = {}
    for label, names in labels.items():
        values = [q[names[0]] for q in per_query.values()]
        theirs[label] = float(np.mean(values))
    diff = agree("pytrec_eval", ours, theirs)
    add("pytrec_eval (dicts)", t, f"max diff {diff:.0e}", diff)


def peer_sklearn(truth, topk, k, ours, add, args):
    if missing(add, ("scikit-learn ndcg_score",), "sklearn"):
        return
    from sklearn.metrics import ndcg_score

    n, depth = topk.shape
    if n * depth > 10 * args.dict_limit:
        add("scikit-learn ndcg_score", None,
            f"skipped: {n * depth:,} dense cells > 10 x --dict-limit")
        return
    y_true = np.zeros((n, depth))
    for r in range(n):
        idx = truth.indices[truth.indptr[r]:truth.indptr[r + 1]]
        pos = np.minimum(np.searchsorted(idx, topk[r]), max(idx.size - 1, 0))
        found = idx[pos] == topk[r] if idx.size else np.zeros(depth, bool)
        y_true[r, found] = truth.data[truth.indptr[r] + pos[found]]
    y_score = np.broadcast_to(np.arange(depth, 0, -1, dtype=np.float64), (n, depth))
    t, value = timed(lambda: ndcg_score(y_true, y_score, k=k), 1)
    diff = agree("scikit-learn", ours, {f"ndcg@{k}": value})
    add("scikit-learn ndcg_score", t, f"ndcg@{k} only; max diff {diff:.0e}", diff)


def peer_implicit(truth, topk, k, add, args):
    if missing(add, ("implicit ranking_metrics_at_k",), "implicit"):
        return
    from implicit.evaluation import ranking_metrics_at_k

    from bench.vs_implicit import FixedModel, _int32_csr

    labels = [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]
    fr.evaluate(truth[:100], topk[:100], labels, convention="implicit")
    t_fr, res = timed(lambda: fr.evaluate(truth, topk, labels, convention="implicit"),
                        args.repeat)
    add("fastrank evaluate (implicit)", t_fr)
    test = _int32_csr(truth)
    train = _int32_csr(sp.csr_matrix(truth.shape, dtype=np.float32))
    model = FixedModel(topk)
    t, expected = timed(lambda: ranking_metrics_at_k(model, train, test, K=k,
                                                       show_progress=False), 1)
    theirs = {f"{name}@{k}": expected[name] for name in ("precision", "map", "ndcg", "auc")}
    diff = agree("implicit", res.to_dict(), theirs)
    add("implicit ranking_metrics_at_k", t, f"fixed-ids model; max diff {diff:.0e}", diff)


def peer_ir_measures(qrels, run, truth, lists, k, add, args):
    """ir-measures' calc_aggregate from dicts, against fastrank on the same names read in
    its dialect (the trec measures fastrank's trec row times)."""
    tool = "ir-measures calc_aggregate (dicts)"
    if missing(add, (tool,), "ir_measures"):
        return
    import ir_measures

    names = [f"nDCG@{k}", f"P@{k}", f"R@{k}", f"AP@{k}", "RR", f"Success@{k}"]
    measures = [ir_measures.parse_measure(name) for name in names]
    ours = fr.evaluate(truth, lists, names, dialect="ir_measures").to_dict()
    t, values = timed(lambda: ir_measures.calc_aggregate(measures, qrels, run), 1)
    theirs = {name: values[m] for name, m in zip(names, measures)}
    diff = agree("ir-measures", ours, theirs)
    add(tool, t, f"pytrec_eval inside; max diff {diff:.0e}", diff)


def rectools_frames(truth, topk):
    """RecTools' inputs: interactions (the relevant truth entries: RecTools reads every
    interaction as relevant, whatever its weight) and recommendations with 1-based ranks."""
    import pandas as pd
    from rectools import Columns

    coo = truth.tocoo()
    keep = coo.data > 0
    interactions = pd.DataFrame({Columns.User: coo.row[keep].astype(np.int64),
                                 Columns.Item: coo.col[keep].astype(np.int64)})
    rows, cols = np.nonzero(topk >= 0)
    reco = pd.DataFrame({Columns.User: rows.astype(np.int64),
                         Columns.Item: topk[rows, cols].astype(np.int64),
                         Columns.Rank: (cols + 1).astype(np.int64)})
    return interactions, reco


def peer_rectools(truth, topk, k, add, args):
    """RecTools' calc_metrics on pandas frames, against fastrank's rectools dialect: the
    users with a relevant item, MAP over m (fastrank's mar), binary NDCG over the ideal the
    user can reach (RecTools' default NDCG divides by k items for everyone, which fastrank
    refuses)."""
    tool = "RecTools calc_metrics (frames)"
    if missing(add, (tool,), "rectools"):
        return
    from rectools import metrics as rm

    classes = {f"Precision@{k}": rm.Precision(k), f"Recall@{k}": rm.Recall(k),
               f"NDCG(divide_by_achievable=True)@{k}": rm.NDCG(k, divide_by_achievable=True),
               f"MAP@{k}": rm.MAP(k), f"MRR@{k}": rm.MRR(k), f"HitRate@{k}": rm.HitRate(k)}
    names = list(classes)
    fr.evaluate(truth[:100], topk[:100], names, dialect="rectools")
    t_fr, res = timed(lambda: fr.evaluate(truth, topk, names, dialect="rectools"),
                        args.repeat)
    add("fastrank evaluate (rectools dialect)", t_fr)
    interactions, reco = rectools_frames(truth, topk)
    t, theirs = timed(lambda: rm.calc_metrics(classes, reco, interactions), 1)
    diff = agree("RecTools", res.to_dict(), {name: theirs[name] for name in names})
    add(tool, t, f"frames built beforehand; max diff {diff:.0e}", diff)


RECOMETRICS = {"P@K": "precision@10", "R@K": "recall@10", "AP@K": "mar@10",
               "TAP@K": "map@10", "NDCG@K": "ndcg@10", "Hit@K": "hit_rate@10",
               "RR@K": "mrr@10", "ROC_AUC": "auc"}


def split(n_users, seed=0):
    """(train, test): a disjoint 80/20 split of the power-law data set (recometrics wants
    the two apart)."""
    truth = sp.csr_array(power_law_workload(n_users, 10, seed)[0])
    in_test = np.random.default_rng(seed + 1).random(truth.nnz) < 0.2
    coo = truth.tocoo()
    return [sp.csr_array((coo.data[mask], (coo.row[mask], coo.col[mask])), shape=truth.shape)
            for mask in (~in_test, in_test)]


def factors_vs_recometrics(args, rows):
    """recometrics' calc_reco_metrics (C++, OpenMP) against fr.evaluate_factors, from
    Gaussian factors (no two items score the same: recometrics' ROC-AUC does not count ties
    as one half, and it gives NaN to a user whose items all tie, as an ALS model's zero
    factors do), training items excluded, in float32 and float64."""
    n_users = 5_000 if args.quick else 20_000
    name = f"factors: {n_users // 1000}k users, K=10"
    tool = "recometrics calc_reco_metrics"
    print(f"\n{name}", flush=True)
    if not installed("recometrics"):
        print("  skipped: recometrics not installed")
        for dtype in ("float32", "float64"):
            rows.append({"workload": f"{name}, {dtype}", "tool": tool, "seconds": None,
                         "users": 0, "note": "skipped: recometrics not installed",
                         "diff": None})
        return
    import recometrics

    from bench.datasets import random_factors

    train, test = split(n_users)
    user_factors, item_factors = random_factors(n_users, dtype="float64")
    evaluated = int((np.diff(test.indptr) > 0).sum())
    labels = list(RECOMETRICS.values())
    flags = dict(precision=True, recall=True, average_precision=True,
                 trunc_average_precision=True, ndcg=True, hit=True, rr=True, roc_auc=True,
                 break_ties_with_noise=False, as_df=False)
    for dtype, tol in (("float32", 1e-6), ("float64", 1e-9)):
        workload = f"{name}, {dtype}"
        U, V = user_factors.astype(dtype), item_factors.astype(dtype)
        fr.evaluate_factors(U[:100], V, test[:100], labels, exclude=train[:100])
        t_fr, res = timed(lambda: fr.evaluate_factors(U, V, test, labels, exclude=train),
                            args.repeat)
        t_rm, out = timed(lambda: recometrics.calc_reco_metrics(train, test, U, V, k=10,
                                                                  **flags), 1)
        theirs = {label: float(np.nanmean(out[key].astype(np.float64)))
                  for key, label in RECOMETRICS.items()}
        counted = int((~np.isnan(out["P@K"])).sum())
        if counted != evaluated:
            raise SystemExit(f"recometrics counts {counted:,} users, fastrank {evaluated:,}")
        diff = agree(f"recometrics ({dtype})", res.to_dict(), theirs, tol)
        for tool_name, seconds, note in (
                ("fastrank evaluate_factors", t_fr, ""),
                (tool, t_rm, f"{len(labels)} metrics; max diff {diff:.0e}")):
            rows.append({"workload": workload, "tool": tool_name, "seconds": seconds,
                         "users": evaluated, "note": note, "diff": None})
            print(f"  {dtype} {tool_name:<36} {seconds:8.3f} s "
                  f"{evaluated / seconds:>14,.0f} users/s {note}", flush=True)


def als_end_to_end(args, rows):
    """implicit's ranking_metrics_at_k on an ALS model against fr.evaluate_model."""
    if not installed("implicit"):
        print("\nALS end to end: skipped, implicit not installed")
        return
    from implicit.als import AlternatingLeastSquares
    from implicit.evaluation import ranking_metrics_at_k

    from bench.datasets import als_workload

    n_users = 20_000 if args.quick else 200_000
    train, test, user_factors, item_factors = als_workload(n_users)
    model = AlternatingLeastSquares(factors=user_factors.shape[1])
    model.user_factors, model.item_factors = user_factors, item_factors
    labels = ["precision@10", "map@10", "ndcg@10", "auc@10"]
    name = f"ALS end to end: {n_users // 1000}k users, K=10"
    evaluated = int((np.diff(test.indptr) > 0).sum())
    print(f"\n{name}: {evaluated:,} users with test items", flush=True)
    fr.evaluate_model(model, test[:500], labels, train=train[:500], convention="implicit",
                      ties="implicit", show_progress=False)
    t_fr, res = timed(lambda: fr.evaluate_model(model, test, labels, train=train,
                                                  convention="implicit", ties="implicit",
                                                  show_progress=False), args.repeat)
    t_im, expected = timed(lambda: ranking_metrics_at_k(model, train, test, K=10,
                                                          show_progress=False), 1)
    theirs = {f"{m}@10": expected[m] for m in ("precision", "map", "ndcg", "auc")}
    diff = agree("implicit (ALS)", res.to_dict(), theirs)
    for tool, seconds, note in (("fastrank evaluate_model", t_fr, ""),
                                ("implicit ranking_metrics_at_k", t_im,
                                 f"max diff {diff:.0e}")):
        rows.append({"workload": name, "tool": tool, "seconds": seconds, "users": evaluated,
                     "note": note, "diff": None})
        print(f"  {tool:<44} {seconds:8.3f} s {evaluated / seconds:>14,.0f} users/s {note}")


def versions():
    import numba

    from importlib.metadata import PackageNotFoundError, version

    found = {"fastrank": fr.__version__, "numba": numba.__version__, "numpy": np.__version__}
    for dist in ("implicit", "ranx", "pytrec-eval-terrier", "scikit-learn", "ir-measures",
                 "rectools", "recometrics", "pandas"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "missing"
    return found


# every tool: (its column in the summary, the fastrank column it is compared with)
PEERS = {"fastrank evaluate (trec)": ("fastrank trec", None),
         "ranx (typed Qrels/Run)": ("ranx typed", "fastrank trec"),
         "ranx (from dicts)": ("ranx dicts", "fastrank trec"),
         "pytrec_eval (dicts)": ("pytrec_eval", "fastrank trec"),
         "ir-measures calc_aggregate (dicts)": ("ir-measures", "fastrank trec"),
         "scikit-learn ndcg_score": ("sklearn ndcg", "fastrank trec"),
         "fastrank evaluate (implicit)": ("fastrank implicit", None),
         "fastrank evaluate_model": ("fastrank implicit", None),
         "implicit ranking_metrics_at_k": ("implicit", "fastrank implicit"),
         "fastrank evaluate (rectools dialect)": ("fastrank rectools", None),
         "RecTools calc_metrics (frames)": ("RecTools", "fastrank rectools"),
         "fastrank evaluate_factors": ("fastrank factors", None),
         "recometrics calc_reco_metrics": ("recometrics", "fastrank factors")}


def base_seconds(rows):
    """{(workload, fastrank column): seconds}."""
    return {(r["workload"], PEERS[r["tool"]][0]): r["seconds"] for r in rows
            if PEERS[r["tool"]][1] is None and r["seconds"]}


def table(rows, markdown):
    """Rows grouped by workload, with each tool's time over fastrank's on that workload."""
    out = []
    if markdown:
        out += ["| workload | tool | seconds | users/s | time / fastrank | note |",
                "|---|---|---:|---:|---:|---|"]
    fastest = base_seconds(rows)
    for r in rows:
        base = fastest.get((r["workload"], PEERS[r["tool"]][1]))
        if r["seconds"] is None:
            cells = ["", "", ""]
        else:
            ratio = f"{r['seconds'] / base:.1f}x" if base else "1.0x"
            cells = [f"{r['seconds']:.3f}", f"{r['users'] / r['seconds']:,.0f}", ratio]
        if markdown:
            out.append(f"| {r['workload']} | {r['tool']} | " + " | ".join(cells)
                       + f" | {r['note']} |")
        else:
            out.append(f"{r['workload'][:38]:<38} {r['tool']:<38} " + " ".join(
                c.rjust(12) for c in cells) + f"  {r['note']}")
    return "\n".join(out)


def summary(rows):
    """The table of docs/benchmarks.md: one row per workload; fastrank's seconds, and every peer's
    time as a multiple of fastrank's on the same definitions ("-": not run, with why in
    the full table). Columns no workload has are left out."""
    columns = list(dict.fromkeys(short for short, _ in PEERS.values()))
    base_of = {short: base for short, base in PEERS.values()}
    by_workload = {}
    for r in rows:
        by_workload.setdefault(r["workload"], {})[PEERS[r["tool"]][0]] = r["seconds"]
    columns = [c for c in columns if any(t.get(c) for t in by_workload.values())]
    out = ["| workload | " + " | ".join(columns) + " |",
           "|---|" + "---:|" * len(columns)]
    for workload, times in by_workload.items():
        cells = []
        for c in columns:
            t, base = times.get(c), times.get(base_of[c])
            if t is None:
                cells.append("-")
            elif base_of[c] is None:
                cells.append(f"{t:.3f} s")
            else:
                cells.append(f"{t / base:.1f}x" if base else f"{t:.3f} s")
        out.append(f"| {workload} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest workloads only")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for fastrank")
    parser.add_argument("--dict-limit", type=int, default=20_000_000,
                        help="largest number of dict entries built for ranx/pytrec_eval")
    parser.add_argument("--only", default=None, help="run workloads whose name contains this")
    parser.add_argument("--save", default=None, help="also write the rows as JSON here")
    parser.add_argument("--from-json", default=None, help="only print the tables of a saved run")
    args = parser.parse_args()
    import json

    import numba

    if args.from_json:
        saved = json.load(open(args.from_json))
        print(saved["header"])
        print(f"\n{table(saved['rows'], args.markdown)}\n\n{summary(saved['rows'])}")
        return

    found = versions()
    header = (f"{date.today()}; {platform.machine()} {platform.processor() or ''}, "
              f"{numba.config.NUMBA_NUM_THREADS} threads; python {platform.python_version()}; "
              + ", ".join(f"{k} {v}" for k, v in found.items()))
    print(header)
    rows = []
    started = time.perf_counter()
    for w in (QUICK if args.quick else FULL):
        if args.only and args.only not in w.name:
            continue
        run_workload(w, args, rows)
        gc.collect()
    if not args.only or args.only in ("factors", "recometrics"):
        factors_vs_recometrics(args, rows)
    if not args.only:
        als_end_to_end(args, rows)
    print(f"\n{table(rows, False)}")
    if args.markdown:
        print(f"\n{table(rows, True)}\n\n{summary(rows)}")
    if args.save:
        json.dump({"header": header, "rows": rows}, open(args.save, "w"), indent=1)
    print(f"\nall tools agree with fastrank where the definitions match (<= 1e-9 relative; "
          f"recometrics in float32 <= 1e-6); "
          f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
