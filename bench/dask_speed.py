"""fastrank.dask on one machine against a local run, both from the same parquet tables.

    python bench/dask_speed.py                   # 5,000,000 users, 2 worker processes
    python bench/dask_speed.py --users 1000000

Both runs read the tables and convert them, then evaluate 4 metrics at K (-k, default 10):
- local: pandas.read_parquet of both tables, fastrank.io.from_tables, fr.evaluate;
- Dask: a distributed.LocalCluster of 2 worker processes (1 thread each), read_parquet,
  fastrank.dask.evaluate with k= (shuffle by user, the kernel per partition, tree-summed
  means; without k= the longest list costs one more pass).
Each is run twice (alternating) and the better time kept. Also reports the bytes the
shuffle moves (the tables' in-memory size) and the workers' peak memory.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

METRICS = ["precision", "recall", "ndcg", "map"]  # at K


def local_run(truth_dir, recs_dir):
    import pandas as pd

    from fastrank import io

    start = time.perf_counter()
    truth, recs = pd.read_parquet(truth_dir), pd.read_parquet(recs_dir)
    res = io.from_tables(truth, recs).evaluate(METRICS)
    return time.perf_counter() - start, res.to_dict(), truth.memory_usage(deep=True).sum() \
        + recs.memory_usage(deep=True).sum()


def dask_run(truth_dir, recs_dir, k):
    import dask.dataframe as dd

    import fastrank.dask

    start = time.perf_counter()
    res = fastrank.dask.evaluate(dd.read_parquet(truth_dir), dd.read_parquet(recs_dir),
                                 METRICS, k=k, per_user=False)
    seconds = time.perf_counter() - start
    return seconds, res.to_dict()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=5_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-k", type=int, default=10, help="list length K (default 10)")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from bench.datasets import parquet_files

    truth_dir, recs_dir = parquet_files(args.users, args.k)
    _warm()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", memory_limit="8GiB") as cluster, \
            Client(cluster) as client:
        client.run(_warm)  # the workers load the kernels too
        local, distributed = [], []
        for _ in range(2):
            local.append(local_run(truth_dir, recs_dir))
            distributed.append(dask_run(truth_dir, recs_dir, args.k))
        peak = max(client.run(_peak_rss).values())
    best_local = min(local, key=lambda r: r[0])
    best_dask = min(distributed, key=lambda r: r[0])
    for name in METRICS:
        assert abs(best_dask[1][name] - best_local[1][name]) <= 1e-12 * abs(best_local[1][name])
    print(f"{args.users:,} users, K = {args.k}, {len(METRICS)} metrics; tables in memory "
          f"{best_local[2] / 2**20:,.0f} MiB (what the shuffle moves)")
    print(f"local (read + from_tables + evaluate): {best_local[0]:6.2f} s")
    print(f"dask, {args.workers} worker processes:      {best_dask[0]:6.2f} s  "
          f"({best_dask[0] / best_local[0]:.2f}x the local run; worker peak RSS "
          f"{peak / 2**20:,.0f} MiB)")
    print("means equal to 1e-12:", ", ".join(f"{k} {v:.6f}" for k, v in best_dask[1].items()))


def _warm():
    """Load (or compile) the kernels of both runs."""
    from fastrank import io

    io.from_tables({"user": [0], "item": [0], "relevance": [1.0]},
                   {"user": [0], "item": [0], "score": [1.0]}, k=10).evaluate(["ndcg@1"])
    io.from_tables({"user": np.arange(20), "item": np.arange(20), "relevance": np.ones(20)},
                   {"user": np.repeat(np.arange(2), 10), "item": np.arange(20),
                    "score": np.ones(20)}).evaluate(METRICS)


def _peak_rss():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


if __name__ == "__main__":
    main()
