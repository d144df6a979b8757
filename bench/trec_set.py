"""The whole trec_eval measure set: fastrank.trec against pytrec_eval, side by side.

    python bench/trec_set.py --queries 100000 --depth 1000

Random qrels (100 judged documents a query, levels -1..3) and runs (`depth` documents a
query, tied scores) as in-memory arrays. fastrank: `trec.evaluate_trec` from `io.Qrels` /
`io.Run` arrays (docno mapping, ranking and every measure of all_trec that pytrec_eval
also computes); pytrec_eval: `RelevanceEvaluator.evaluate` on dicts built beforehand (not
timed). Both compute the same measures; the script prints the largest per-query
difference (pytrec_eval's iprec_at_recall and 11pt_avg are trec_eval 9's, which counts
(long)(p·R + 0.9) relevant documents where trec_eval 10 rounds: iprec is computed by both
and left out of the difference, 11pt_avg is left out) and the ratio.
"""

import argparse
import time

import numpy as np

from fastrank import io, trec

# all_trec's measures that pytrec_eval computes with trec_eval 10's definitions
MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref",
            "Rprec_mult", "utility", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
            "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
            "set_map", "set_F", "num_nonrel_judged_ret"]


def build(n_queries, depth, seed=0):
    rng = np.random.default_rng(seed)
    n_docs = depth * 4
    docs = np.array([f"d{j}" for j in range(n_docs)])
    qids = np.array([f"q{i}" for i in range(n_queries)])
    n_judged = min(100, n_docs)
    judged = np.stack([rng.choice(n_docs, n_judged, replace=False) for _ in range(n_queries)])
    levels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=judged.shape).astype(np.float64)
    retrieved = np.stack([rng.choice(n_docs, depth, replace=False) for _ in range(n_queries)])
    scores = rng.integers(0, depth // 2, size=retrieved.shape).astype(np.float64)
    qrels = io.Qrels(np.repeat(qids, n_judged), docs[judged.ravel()], levels.ravel(), "qrels")
    run = io.Run(np.repeat(qids, depth), docs[retrieved.ravel()], scores.ravel(), "run",
                 "run")
    return qrels, run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    qrels, run = build(args.queries, args.depth)
    trec.evaluate_trec(*build(50, 20, seed=1), MEASURES)  # compile outside the timing
    start = time.perf_counter()
    report = trec.evaluate_trec(qrels, run, MEASURES, n_threads=args.threads)
    ours = time.perf_counter() - start
    # the same call with the arrays made beforehand: what computing the measures costs
    arrays = io.trec_arrays(qrels, run)
    made = io.trec_arrays
    io.trec_arrays = lambda *a, **kw: arrays
    try:
        start = time.perf_counter()
        trec.evaluate_trec(qrels, run, MEASURES, n_threads=args.threads)
        compute = time.perf_counter() - start
    finally:
        io.trec_arrays = made
    print(f"fastrank.trec: {ours:.2f} s for {args.queries:,} queries x {args.depth:,} docs, "
          f"{len(report.columns)} values a query ({args.queries / ours:,.0f} queries/s); "
          f"{compute:.2f} s of it computes, the rest turns docno strings into arrays")
    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval is not installed: pip install pytrec-eval-terrier")
        return
    start = time.perf_counter()
    qd, rd = {}, {}
    for q, d, v in zip(qrels.queries.tolist(), qrels.documents.tolist(),
                       qrels.relevance.tolist()):
        qd.setdefault(q, {})[d] = int(v)
    for q, d, s in zip(run.queries.tolist(), run.documents.tolist(), run.scores.tolist()):
        rd.setdefault(q, {})[d] = s
    evaluator = pytrec_eval.RelevanceEvaluator(qd, set(MEASURES))
    building = time.perf_counter() - start
    start = time.perf_counter()
    theirs = evaluator.evaluate(rd)
    peer = time.perf_counter() - start
    largest = 0.0
    for qid, values in report.per_query.items():
        for name, value in values.items():
            if name.startswith("iprec_at_recall"):
                continue
            largest = max(largest, abs(value - theirs[qid][name]))
    print(f"pytrec_eval:   {peer:.2f} s from its dicts, {building:.2f} s more to build them "
          f"from the same arrays of strings")
    print(f"fastrank is {peer / compute:.1f}x faster computing the measures and "
          f"{(peer + building) / ours:.1f}x faster from the strings; largest per-query "
          f"difference {largest:.1e}")


if __name__ == "__main__":
    main()
