"""The read floor: fr.evaluate's classic metrics against a Numba pass that only reads.

    python bench/read_floor.py --users 1000000 --k 10

Both run in one process on the same arrays (a CSR truth of graded relevance, 10 stored
entries a user, and a top-K int32 array): `fr.evaluate` with precision, map, ndcg and auc
at k, and a parallel Numba pass that reads every truth entry and every list id once (the
least any evaluation must do). The script prints both times, their ratio (issue 18's
target is at most 4x) and where fastrank's time goes: the input scans (which fr.evaluate
leaves to its walk here: it checks each entry as it reads it), then fr.evaluate on
growing metric sets (membership, the graded ideal, MAP, AUC), on one thread in CPU
seconds, which a shared machine disturbs far less than wall time.

It also times a bound: the least membership walk (`membership_bound`), a Numba pass that
stamps each truth row into a per-thread array (an int64 per item) and looks each list id
up, keeping only
the sums of precision, MAP, DCG and AUC, with no input checks, no ideal and no per-user
outputs. What it takes over the floor, any evaluation that looks ids up in the truth
rows takes too.
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
import numba
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


@njit(cache=True)
def _bound_range(indptr, indices, data, topk, disc, mark, lo, hi):
    total = 0.0
    for i in range(lo, hi):
        tag = 2 * (i - lo + 1)
        start = indptr[i]
        for j in range(start, indptr[i + 1]):
            if data[j] > 0:
                mark[indices[j]] = (tag << 32) | (j - start)
        hits = 0
        sum_prec = 0.0
        dcg = 0.0
        auc = 0.0
        for p in range(topk.shape[1]):
            item = topk[i, p]
            if item >= 0:
                stamp = mark[item]
                if stamp >> 32 == tag:
                    mark[item] = (tag + 1) << 32
                    hits += 1
                    sum_prec += hits / (p + 1.0)
                    dcg += data[start + (stamp & 0xFFFFFFFF)] * disc[p]
                elif stamp >> 32 != tag + 1:
                    mark[item] = (tag + 1) << 32
                    auc += hits
        total += hits + sum_prec + dcg + auc
    return total


@njit(parallel=True, cache=True)
def membership_bound(indptr, indices, data, topk, n_items, n_chunks):
    """Σ over users of hits + precision sums + DCG + AUC counts, by stamps (as fastrank's
    walk): per range an int64 per item (a tag for the row in the high 32 bits, the
    entry's offset in the row in the low 32), written for each truth row, then read for
    each list id, repeated ids counted once, a hit's value read from the row."""
    n = topk.shape[0]
    disc = 1.0 / np.log2(np.arange(2.0, topk.shape[1] + 2.0))
    parts = np.zeros(n_chunks)
    for chunk in prange(n_chunks):
        parts[chunk] = _bound_range(indptr, indices, data, topk, disc,
                                    np.zeros(n_items, np.int64),
                                    chunk * n // n_chunks, (chunk + 1) * n // n_chunks)
    return parts.sum()


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
    fr.evaluate(truth, topk, metrics)  # compile (a large call's walk) outside the timing
    with numba_threads(None):
        read_all(truth.indptr, truth.indices, truth.data, topk)
        floor = best_of(args.repeats, lambda: read_all(truth.indptr, truth.indices,
                                                       truth.data, topk))
        n_chunks = numba.get_num_threads()
        bound_args = (truth.indptr, truth.indices, truth.data, topk, args.items, n_chunks)
        membership_bound(*bound_args)
        bound = best_of(args.repeats, lambda: membership_bound(*bound_args))
    ours = best_of(args.repeats, lambda: fr.evaluate(truth, topk, metrics))
    print(f"{args.users:,} users, K={args.k}, {', '.join(metrics)}")
    print(f"read floor (Numba, every entry once): {floor * 1e3:8.1f} ms")
    print(f"membership bound (stamps and sums):   {bound * 1e3:8.1f} ms  "
          f"({bound / floor:.1f}x the floor)")
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

        bound_1 = best_of(args.repeats, lambda: membership_bound(*bound_args[:-1], 1),
                          clock=time.process_time)
        steps = [("read floor (every entry once)", None, floor_1),
                 ("membership bound (stamps and sums only; not part of fr.evaluate's lines)",
                  None, bound_1),
                 ("input scans (not part of fr.evaluate's lines: its walk checks what "
                  "it reads)", None,
                  best_of(args.repeats, checks, clock=time.process_time))]
        for label, names in ABLATION:
            asked = [m.format(k=args.k) for m in names]
            fr.evaluate(truth, topk, asked, n_threads=1)
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
