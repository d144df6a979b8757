"""fastrank vs implicit's `ranking_metrics_at_k`: the metric loop, and end to end.

    python bench/vs_implicit.py [--users 1000000] [--items 50000] [-k 10] [--repeat 3]
    python bench/vs_implicit.py --end-to-end [--users 200000] [--factors 32] [-k 10]

Metric loop: implicit computes precision/map/ndcg/auc @K by asking a model for top-K ids
in batches of 1000 users; here the model is `FixedModel`, which hands back precomputed
ids, so both tools score exactly the same lists.

End to end: an ALS model (implicit, fitted once and cached) with training items
excluded; implicit's `ranking_metrics_at_k` against fastrank's drop-in and
`fr.evaluate_factors`, and both against the bare BLAS product of the evaluated users'
factors with the item factors (the floor of any exact method), all in this process.
Peak memory of `evaluate_factors` is measured in fresh processes at two user counts.

The script prints times, ratios and the largest value difference.
"""

import argparse
import platform
import sys
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.datasets import timed  # noqa: E402


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


def main(argv=None):
    import implicit
    import numba
    from implicit.evaluation import ranking_metrics_at_k

    import fastrank as fr
    from fastrank.synthetic import power_law

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--end-to-end", action="store_true",
                        help="ALS model -> metrics (default users: 200,000)")
    parser.add_argument("--factors", type=int, default=32)
    parser.add_argument("--memory-probe", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--probe-of", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe:
        return memory_probe(args.memory_probe, args.probe_of, args.items, args.factors, args.k)
    if args.end_to_end:
        return end_to_end(args)

    args.users = args.users or 1_000_000
    truth, topk = power_law(args.users, args.items, args.k, seed=0)
    test = _int32_csr(truth)
    train = _int32_csr(sp.csr_matrix(truth.shape, dtype=np.float32))
    model = FixedModel(topk)
    k = args.k
    labels = [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]

    fr.evaluate(truth[:1000], topk[:1000], labels, convention="implicit")  # JIT warm-up
    t_fast, res = timed(lambda: fr.evaluate(truth, topk, labels, convention="implicit"),
                        args.repeat)
    t_impl, expected = timed(lambda: ranking_metrics_at_k(
        model, train, test, K=k, show_progress=False), args.repeat)

    # the part of implicit's time spent outside its own loop: batching and the stub model
    def batches_only():
        users = np.flatnonzero(np.diff(test.indptr) > 0).astype(np.int32)
        for start in range(0, users.shape[0], 1000):
            batch = users[start:start + 1000]
            model.recommend(batch, train[batch], N=k)
    t_stub, _ = timed(batches_only, args.repeat)

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


def _versions():
    import implicit
    import numba

    import fastrank as fr

    return (f"machine: {platform.machine()}, {numba.config.NUMBA_NUM_THREADS} cores; "
            f"{date.today()}; python {platform.python_version()}, fastrank {fr.__version__}, "
            f"implicit {implicit.__version__}, numba {numba.__version__}, numpy {np.__version__}")


def blas_floor(user_factors, item_factors, repeat):
    """Best time of the bare product user_factors @ item_factors.T, in user blocks of
    the size that is fastest here (a users x items result does not fit in memory)."""
    best = float("inf")
    for block in (256, 1024, 4096):
        out = np.empty((block, item_factors.shape[0]), dtype=item_factors.dtype)

        def product():
            for start in range(0, user_factors.shape[0], block):
                part = user_factors[start:start + block]
                np.matmul(part, item_factors.T, out=out[:part.shape[0]])

        best = min(best, timed(product, repeat)[0])
    return best


def end_to_end(args):
    from implicit.als import AlternatingLeastSquares
    from implicit.evaluation import ranking_metrics_at_k

    import fastrank as fr
    import fastrank.implicit as fi
    from bench.datasets import als_workload

    n_users, k = args.users or 200_000, args.k
    train, test, user_factors, item_factors = als_workload(n_users, args.items, args.factors)
    model = AlternatingLeastSquares(factors=args.factors)
    model.user_factors, model.item_factors = user_factors, item_factors
    evaluated = np.flatnonzero(np.diff(test.indptr) > 0)
    labels = [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]
    names = ("precision", "map", "ndcg", "auc")

    fi.ranking_metrics_at_k(model, train[:2000], test[:2000], K=k, show_progress=False)
    fr.evaluate_factors(user_factors[:2000], item_factors, test[:2000], labels + ["auc"],
                        exclude=train[:2000])  # JIT warm-up
    t_drop, ours = timed(lambda: fi.ranking_metrics_at_k(
        model, train, test, K=k, show_progress=False), args.repeat)
    t_fused, res = timed(lambda: fr.evaluate_factors(
        user_factors, item_factors, test, labels, exclude=train, convention="implicit",
        ties="implicit"), args.repeat)
    t_auc, res_auc = timed(lambda: fr.evaluate_factors(
        user_factors, item_factors, test, labels + ["auc"], exclude=train,
        convention="implicit", ties="implicit"), 1)
    floor = blas_floor(np.ascontiguousarray(user_factors[evaluated]), item_factors,
                       args.repeat)
    t_impl, expected = timed(lambda: ranking_metrics_at_k(
        model, train, test, K=k, show_progress=False), 1)

    diff = max(abs(ours[n] - expected[n]) / abs(expected[n]) for n in names)
    diff_fused = max(abs(res[f"{n}@{k}"] - expected[n]) / abs(expected[n]) for n in names)
    print(f"ALS, {n_users:,} users ({evaluated.size:,} with test items) x {args.items:,} "
          f"items, {args.factors} factors {item_factors.dtype}, K = {k}, training items "
          f"excluded")
    print(f"{'':<52}{'seconds':>9}{'users/s':>11}{'vs implicit':>13}{'vs floor':>10}")
    rows = [("implicit ranking_metrics_at_k", t_impl),
            ("fastrank.implicit.ranking_metrics_at_k (drop-in)", t_drop),
            ("fr.evaluate_factors, the same 4 metrics", t_fused),
            ("fr.evaluate_factors, + full-ranking auc", t_auc),
            ("bare BLAS product of the evaluated users (floor)", floor)]
    for name, seconds in rows:
        print(f"{name:<52}{seconds:>9.2f}{evaluated.size / seconds:>11,.0f}"
              f"{t_impl / seconds:>12.1f}x{seconds / floor:>9.2f}x")
    print(f"largest relative difference from implicit: drop-in {diff:.1e}, "
          f"evaluate_factors {diff_fused:.1e}")
    print(f"full-ranking auc {res_auc['auc']:.6f} (implicit's auc@{k}: {expected['auc']:.6f})")
    print(_versions())
    probes = [max(n_users // 4, 1000), n_users]
    peaks = [_run_probe(n, n_users, args) for n in probes]
    print("peak memory of evaluate_factors beyond its inputs (fresh process each):")
    for n, (peak, outputs) in zip(probes, peaks):
        print(f"  {n:>10,} users: {peak / 2**20:8.1f} MB, of which per-user outputs "
              f"{outputs / 2**20:6.1f} MB")
    return 0 if max(diff, diff_fused) < 1e-9 else 1


def _run_probe(n_users, n_workload, args):
    import subprocess

    out = subprocess.run([sys.executable, __file__, "--memory-probe", str(n_users),
                          "--probe-of", str(n_workload),
                          "--items", str(args.items), "--factors", str(args.factors),
                          "-k", str(args.k)], check=True, capture_output=True, text=True)
    peak, outputs = out.stdout.split()
    return int(peak), int(outputs)


def memory_probe(n_users, n_workload, n_items, factors, k):
    """Print the RSS peak growth of one evaluate_factors call on the first n_users users
    of the cached end-to-end workload, and the bytes of its per-user outputs."""
    import resource

    import fastrank as fr
    from bench.datasets import als_workload

    train, test, user_factors, item_factors = als_workload(n_workload, n_items, factors)
    train, test, user_factors = train[:n_users], test[:n_users], user_factors[:n_users]
    labels = [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]
    fr.evaluate_factors(user_factors[:100], item_factors, test[:100], labels,
                        exclude=train[:100])
    import gc
    import threading

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    gc.collect()
    before = peak = rss()
    done = threading.Event()

    def sample():  # ru_maxrss would include the peaks of loading and compiling
        nonlocal peak
        while not done.wait(0.0005):
            peak = max(peak, rss())

    sampler = threading.Thread(target=sample)
    sampler.start()
    res = fr.evaluate_factors(user_factors, item_factors, test, labels, exclude=train)
    done.set()
    sampler.join()
    peak = max(peak, rss()) - before
    outputs = (len(labels) * 8 + 8 + 8 + 1) * res.users.shape[0]
    print(max(peak, 0), outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
