"""Synthetic workloads shared by the benchmarks, cached in memory and on disk.

asv runs every benchmark in a new process; building a 1,000,000 x 100 workload takes
far longer than loading it, so each workload is written once to a cache directory
(FASTRANK_BENCH_CACHE, default: fastrank-bench in the system temp directory).
"""

import os
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fastrank.synthetic import power_law

N_ITEMS = 50_000


def _cache_dir():
    default = Path(tempfile.gettempdir()) / "fastrank-bench"
    path = Path(os.environ.get("FASTRANK_BENCH_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


@lru_cache(maxsize=4)
def workload(n_users, k, seed=0):
    """(truth, topk) with power-law popularity, deterministic for the arguments."""
    stem = _cache_dir() / f"power_law_{n_users}_{N_ITEMS}_{k}_{seed}"
    truth_file, topk_file = stem.with_suffix(".truth.npz"), stem.with_suffix(".topk.npy")
    if truth_file.exists() and topk_file.exists():
        return sp.load_npz(truth_file).tocsr(), np.load(topk_file)
    truth, topk = power_law(n_users, N_ITEMS, k, seed=seed)
    sp.save_npz(truth_file, truth, compressed=False)
    np.save(topk_file, topk)
    return truth, topk


def metric_labels(metric_set, k):
    """The metric lists the benchmarks time."""
    if metric_set == "core4":  # what implicit's ranking_metrics_at_k reports
        return [f"precision@{k}", f"map@{k}", f"ndcg@{k}", f"auc@{k}"]
    if metric_set == "all":  # every metric at two cutoffs
        names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "mar", "ndcg",
                 "ndcg_exp", "dcg", "cg", "auc"]
        cutoffs = sorted({max(1, k // 2), k})
        return [f"{name}@{c}" for name in names for c in cutoffs] + ["r_precision"]
    raise ValueError(f"unknown metric set {metric_set!r}")
