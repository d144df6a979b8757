"""The read floor: fr.evaluate's classic metrics against a Numba pass that only reads.

    python bench/read_floor.py --users 1000000 --k 10

Both run in one process on the same arrays (a CSR truth of graded relevance, 10 stored
entries a user, and a top-K int32 array): `fr.evaluate` with precision, map, ndcg and auc
at k, and a parallel Numba pass that reads every truth entry and every list id once (the
least any evaluation must do). The script prints both times, their ratio (issue 18's
target is at most 4x) and where fastrank's time goes: the input checks, then fr.evaluate
on growing metric sets (membership, the graded ideal, MAP, AUC), on one thread in CPU
seconds, which a shared machine disturbs far less than wall time.
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

import fastrank as fr
from fastrank.threads import numba_threads
from fastrank.validation import check_topk, check_truth

METRICS = ["precision@{k}", "map@{k}", "ndcg@{k}", "auc@{k}"]


@njit(parallel=True, cache=True)
def read_all(indptr, indices, data, topk):
    """Σ of every truth value and index and every list id: a pass that reads it all."""
    n = topk.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        total = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            total += data[j] + indices[j]
        for p in range(topk.shape[1]):
            total += topk[i, p]
        out[i] = total
    return out.sum()


def best_of(repeats, call, clock=time.perf_counter):
    times = []
    for _ in range(repeats):
        start = clock()
        call()
        times.append(clock() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(args.users), 10)
    cols = rng.integers(0, args.items, rows.size)
    truth = sp.csr_array((rng.integers(1, 4, rows.size).astype(np.float64), (rows, cols)),
                         shape=(args.users, args.items))
    truth.sum_duplicates()
    topk = rng.integers(0, args.items, (args.users, args.k)).astype(np.int32)
    metrics = [m.format(k=args.k) for m in METRICS]
    fr.evaluate(truth[:100], topk[:100], metrics)  # compile outside the timing
    with numba_threads(None):
        read_all(truth.indptr, truth.indices, truth.data, topk)
        floor = best_of(args.repeats, lambda: read_all(truth.indptr, truth.indices,
                                                       truth.data, topk))
    ours = best_of(args.repeats, lambda: fr.evaluate(truth, topk, metrics))
    print(f"{args.users:,} users, K={args.k}, {', '.join(metrics)}")
    print(f"read floor (Numba, every entry once): {floor * 1e3:8.1f} ms")
    print(f"fr.evaluate:                          {ours * 1e3:8.1f} ms  "
          f"({ours / floor:.1f}x the floor)")
    print(f"\nwhere the time goes: one thread, CPU seconds (steady on a shared machine), best of "
          f"{args.repeats}; each line adds to the one above")
    with numba_threads(1):
        read_all(truth.indptr, truth.indices, truth.data, topk)
        floor_1 = best_of(args.repeats, lambda: read_all(truth.indptr, truth.indices,
                                                         truth.data, topk), clock=time.process_time)

        def checks():
            n_items = check_truth(truth).n_items
            check_topk(topk, n_items)

        steps = [("read floor (every entry once)", None, floor_1),
                 ("input checks (validation scans)", None,
                  best_of(args.repeats, checks, clock=time.process_time))]
        for label, names in ABLATION:
            asked = [m.format(k=args.k) for m in names]
            fr.evaluate(truth[:100], topk[:100], asked)
            took = best_of(args.repeats, lambda: fr.evaluate(truth, topk, asked, n_threads=1),
                           clock=time.process_time)
            steps.append((label, asked, took))
    for label, asked, took in steps:
        print(f"  {took * 1e3:8.1f} ms  {took / floor_1:5.1f}x  {label}"
              + (f" ({', '.join(asked)})" if asked else ""))


# fr.evaluate on growing metric sets: what each part of the walk costs (the first line
# includes the checks and the means, which every line shares)
ABLATION = [
    ("fr.evaluate, membership only: stamp the truth row, look up each list id",
     ["precision@{k}"]),
    ("+ the graded ideal (the row's top k values, sorted) and the DCG", ["precision@{k}",
                                                                          "ndcg@{k}"]),
    ("+ MAP's running precision", ["precision@{k}", "ndcg@{k}", "map@{k}"]),
    ("+ AUC's count of misses (the classic four)", ["precision@{k}", "ndcg@{k}", "map@{k}",
                                                    "auc@{k}"]),
]


if __name__ == "__main__":
    main()
