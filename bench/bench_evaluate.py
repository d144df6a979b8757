"""asv: fr.evaluate over users x K x metric set x convention, and first-call costs."""

import fastrank as fr

from .datasets import metric_labels, workload


class Evaluate:
    params = ([100_000, 1_000_000], [10, 100], ["core4", "all"], ["recsys", "trec", "implicit"])
    param_names = ["users", "K", "metrics", "convention"]
    timeout = 600

    def setup(self, users, k, metric_set, convention):
        self.truth, self.topk = workload(users, k)
        self.labels = metric_labels(metric_set, k)
        # JIT warm-up (compile or cache load) outside the timed region
        fr.evaluate(self.truth[:100], self.topk[:100], self.labels, convention=convention)

    def time_evaluate(self, users, k, metric_set, convention):
        fr.evaluate(self.truth, self.topk, self.labels, convention=convention)

    def peakmem_evaluate(self, users, k, metric_set, convention):
        fr.evaluate(self.truth, self.topk, self.labels, convention=convention)


class Threads:
    """Scaling with the thread count at 1,000,000 users, K = 10, every metric."""

    params = [1, 2]
    param_names = ["n_threads"]
    timeout = 600

    def setup(self, n_threads):
        self.truth, self.topk = workload(1_000_000, 10)
        self.labels = metric_labels("all", 10)
        fr.evaluate(self.truth[:100], self.topk[:100], self.labels, n_threads=n_threads)

    def time_evaluate(self, n_threads):
        fr.evaluate(self.truth, self.topk, self.labels, n_threads=n_threads)


_SMALL = """
import numpy as np, scipy.sparse as sp
truth = sp.csr_array(np.eye(8))
topk = (np.arange(24).reshape(8, 3) % 8).astype(np.int32)
"""


def timeraw_import():
    """`import fastrank` in a fresh interpreter (nothing compiles at import)."""
    return "import fastrank"


def timeraw_first_evaluate():
    """Import plus the first evaluate in a fresh process (numba cache warm after run 1)."""
    return _SMALL + """
import fastrank as fr
fr.evaluate(truth, topk, ["precision@3", "map@3", "ndcg@3", "auc@3"])
"""
