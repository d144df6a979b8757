"""fastrank vs implicit's `ranking_metrics_at_k` metric loop on the same top-K ids.

    python bench/vs_implicit.py [--users 1000000] [--items 50000] [-k 10] [--repeat 3]

implicit computes precision/map/ndcg/auc @K by asking a model for top-K ids in batches
of 1000 users; here the model is `FixedModel`, which hands back precomputed ids, so
both tools score exactly the same lists. Both run in this process, one after the
other, and the script prints their times, the ratio and the largest value difference.
"""

import argparse
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp


class FixedModel:
    """A stand-in for an implicit model whose recommendations are fixed ids."""

    def __init__(self, ids):
        self.ids = np.ascontiguousarray(ids, dtype=np.int32)

    def recommend(self, userid, user_items, N=10, **kwargs):
        ids = self.ids[np.asarray(userid)][:, :N]
        return np.ascontiguousarray(ids), np.zeros(ids.shape, dtype=np.float32)


def _int32_csr(matrix):
    """implicit 0.7 accepts only int32 CSR indices."""
    matrix = sp.csr_matrix(matrix)
    matrix.indptr = matrix.indptr.astype(np.int32)
    matrix.indices = matrix.indices.astype(np.int32)
    return matrix


def best_of(repeat, fn):
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main(argv=None):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import implicit
    import numba
    from implicit.evaluation import ranking_metrics_at_k

    import fastrank as fr
    from fastrank.synthetic import power_law

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    truth, topk = power_law(args.users, args.items, args.k, seed=0)
    test = _int32_csr(truth)
    train = _int32_csr(sp.csr_matrix(truth.shape, dtype=np.float32))
    model = FixedModel(topk)
    k = args.k
    labels = [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]

    fr.evaluate(truth[:1000], topk[:1000], labels, convention="implicit")  # JIT warm-up
    t_fast, res = best_of(args.repeat, lambda: fr.evaluate(truth, topk, labels,
                                                           convention="implicit"))
    t_impl, expected = best_of(args.repeat, lambda: ranking_metrics_at_k(
        model, train, test, K=k, show_progress=False))

    # the part of implicit's time spent outside its own loop: batching and the stub model
    def batches_only():
        users = np.flatnonzero(np.diff(test.indptr) > 0).astype(np.int32)
        for start in range(0, users.shape[0], 1000):
            batch = users[start:start + 1000]
            model.recommend(batch, train[batch], N=k)
    t_stub, _ = best_of(args.repeat, batches_only)

    diff = max(abs(res[f"{name}@{k}"] - expected[name]) / abs(expected[name])
               for name in ("precision", "map", "ndcg", "auc"))
    print(f"{args.users:,} users x {args.items:,} items, K = {k}, "
          f"precision/map/ndcg/auc, convention='implicit'")
    print(f"{'tool':<40}{'seconds':>10}{'users/s':>14}")
    rows = [("implicit ranking_metrics_at_k", t_impl),
            ("  of which batching + fixed-ids model", t_stub),
            (f"fastrank evaluate ({numba.get_num_threads()} threads)", t_fast)]
    for name, seconds in rows:
        print(f"{name:<40}{seconds:>10.3f}{args.users / seconds:>14,.0f}")
    print(f"ratio implicit / fastrank: {t_impl / t_fast:.1f}x "
          f"(implicit's loop alone: {(t_impl - t_stub) / t_fast:.1f}x)")
    print(f"largest relative difference of the means: {diff:.1e}")
    print(f"machine: {platform.machine()}, {numba.config.NUMBA_NUM_THREADS} cores; "
          f"{date.today()}; python {platform.python_version()}, fastrank {fr.__version__}, "
          f"implicit {implicit.__version__}, numba {numba.__version__}, numpy {np.__version__}")
    for name in ("precision", "map", "ndcg", "auc"):
        print(f"  {name:<10} implicit {expected[name]:.12f}  fastrank {res[f'{name}@{k}']:.12f}")
    return 0 if diff < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
