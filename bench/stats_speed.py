"""Speed of the resampling statistics at 1,000,000 users, against the issue's targets.

    python bench/stats_speed.py

Bootstrap: Result.ci with 1,000 resamples (target <= 2 s). Randomization: fr.compare with
test="randomization" and 10,000 permutations (target <= 10 s). Each is timed after a
warm-up call, best of 3, on all threads and on one; a pooled (implicit) precision interval
and the t and Wilcoxon tests are timed beside them.
"""

import sys
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fastrank as fr  # noqa: E402
from bench.datasets import best_of, workload  # noqa: E402


def best(fn, repeat=3):
    fn()  # warm-up: compile or load the kernels
    return best_of(fn, repeat)


def main():
    truth, topk = workload(1_000_000, 10)
    other = topk.copy()
    other[::7] = other[::7, ::-1]
    a = fr.evaluate(truth, topk, ["ndcg@10"])
    b = fr.evaluate(truth, other, ["ndcg@10"])
    pooled = fr.evaluate(truth, topk, ["precision@10"], convention="implicit")
    pair = {"a": a, "b": b}
    n = a.n_users
    print(f"{n:,} counted users; numba threads {numba.config.NUMBA_NUM_THREADS}")
    for threads in sorted({numba.config.NUMBA_NUM_THREADS, 1}, reverse=True):
        boot = best(lambda: a.ci("ndcg@10", n_resamples=1000, seed=1, n_threads=threads))
        ratio = best(lambda: pooled.ci("precision@10", n_resamples=1000, seed=1,
                                       n_threads=threads))
        perm = best(lambda: fr.compare(pair, "ndcg@10", test="randomization", seed=1,
                                       n_permutations=10_000, n_threads=threads), repeat=2)
        print(f"{threads} thread(s): bootstrap 1,000 x {n:,}: {boot:.3f} s (target 2 s); "
              f"pooled-ratio bootstrap {ratio:.3f} s; randomization 10,000 x {n:,}: "
              f"{perm:.3f} s (target 10 s)")
    t = best(lambda: fr.compare(pair, "ndcg@10", test="t"))
    w = best(lambda: fr.compare(pair, "ndcg@10", test="wilcoxon"))
    normal = best(lambda: a.ci("ndcg@10", method="normal"))
    print(f"t-test {t:.3f} s, Wilcoxon {w:.3f} s, normal interval {normal:.3f} s")


if __name__ == "__main__":
    main()
