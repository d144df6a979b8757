"""αβ-nDCG speed on the issue's three shapes, each figure measured side by side in one run.

    python bench/diversity_speed.py            # 1,000,000 users (about 5 min with building)
    python bench/diversity_speed.py --users 100000 --split-users 100000

Shape A: users x 27,000 items with 1-3 of 20 aspects each, k = 10, γ from a training
profile (power-law activity, about 5 items per user; so is the test set).
Shape R (realistic): 200,000 users x the same items, a training profile of 20 power-law
items per user (γ and the exclusion set) and 5 test items per user, k = 10.
For A and R: ab_ndcg users/s including the ideal, the re-scoring time of a second model
with the ideal reused, and that time over fr.evaluate's ndcg@10 on the same lists.
Shape B: 200 users x 27,000 items with 1-3 of 5,000 aspects each, dense γ, end to end
(input conversion included). Every shape is timed at 1 and 2 threads.
"""

import argparse
import sys
import time
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fastrank as fr  # noqa: E402
from bench.datasets import (aspect_workload, best_of, dense_preferences,  # noqa: E402
                            random_aspects, split_aspect_workload)
from fastrank.synthetic import power_law  # noqa: E402


def shape_with_profile(label, workload, n_users, threads):
    """Time a shape whose γ comes from a training profile (also the exclusion set)."""
    test, train, topk_a, topk_b, aspects = workload(n_users)
    fr.ab_ndcg(test[:500], topk_a[:500], aspects, profile=train[:500])  # warm the JIT
    fr.evaluate(test[:500], topk_a[:500], ["ndcg@10"])
    out = {}
    for n in threads:
        holder = {}

        def full():
            holder["scorer"] = fr.AlphaBetaNDCG(test, aspects, k=10, profile=train, n_threads=n)
            holder["scorer"].score(topk_a, n_threads=n)

        t_full = best_of(full, 2)
        scorer = holder["scorer"]
        t_rescore = best_of(lambda: scorer.score(topk_b, n_threads=n))
        t_ndcg = best_of(lambda: fr.evaluate(test, topk_b, ["ndcg@10"], n_threads=n))
        out[n] = (t_full, t_rescore, t_ndcg)
        print(f"{label}  {n} thread(s): ab_ndcg with ideal {t_full:7.2f} s = "
              f"{n_users / t_full:9,.0f} users/s | re-score {t_rescore:6.3f} s | ndcg@10 "
              f"{t_ndcg:6.3f} s | re-score / ndcg@10 = {t_rescore / t_ndcg:4.2f}", flush=True)
    return out


def shape_b(threads, n_users=200, n_items=27_000, n_aspects=5_000):
    test, topk = power_law(n_users, n_items, 10, seed=5)
    aspects = random_aspects(n_items, n_aspects, seed=6)
    gamma = dense_preferences(n_users, n_aspects, seed=7)
    fr.ab_ndcg(test[:4], topk[:4], aspects, user_aspects=gamma[:4])
    # best of 25 per thread count, the counts alternating call by call: a call takes 15-30
    # ms, and a shared machine's noise is of that order and comes in spells, which would
    # fall on one thread count if each ran its 25 calls in a row
    times = {n: [] for n in threads}
    for _ in range(25):
        for n in threads:
            start = time.perf_counter()
            fr.ab_ndcg(test, topk, aspects, user_aspects=gamma, n_threads=n)
            times[n].append(time.perf_counter() - start)
    out = {n: min(times[n]) for n in threads}
    for n, t in out.items():
        print(f"B  {n} thread(s): ab_ndcg with ideal {t:7.3f} s = {n_users / t:9,.0f} users/s",
              flush=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=1_000_000, help="users of shape A")
    parser.add_argument("--split-users", type=int, default=200_000, help="users of shape R")
    args = parser.parse_args()
    threads = sorted({1, numba.config.NUMBA_NUM_THREADS})
    print(f"fastrank {fr.__version__}, numba {numba.__version__}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads, {time.strftime('%Y-%m-%d')}")
    a = shape_with_profile("A", aspect_workload, args.users, threads)
    r = shape_with_profile("R", split_aspect_workload, args.split_users, threads)
    b = shape_b(threads)
    top = threads[-1]
    print(f"with the ideal, {top} thread(s): shape A {args.users / a[top][0]:,.0f} users/s, "
          f"shape R {args.split_users / r[top][0]:,.0f} users/s")
    print(f"re-score / ndcg@10, {top} thread(s): shape A {a[top][1] / a[top][2]:.2f}, "
          f"shape R {r[top][1] / r[top][2]:.2f}")
    if top > 1:
        print(f"speed-up with {top} threads: shape A {a[1][0] / a[top][0]:.2f}x, "
              f"shape R {r[1][0] / r[top][0]:.2f}x, shape B {b[1] / b[top]:.2f}x")


if __name__ == "__main__":
    main()
