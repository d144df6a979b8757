"""Cached synthetic workloads shared by the benchmarks."""

from functools import lru_cache

from fastrank.synthetic import power_law

N_ITEMS = 50_000


@lru_cache(maxsize=4)
def workload(n_users, k, seed=0):
    """(truth, topk) with power-law popularity; cached per process."""
    return power_law(n_users, N_ITEMS, k, seed=seed)


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
