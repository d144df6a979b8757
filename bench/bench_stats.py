"""asv: intervals and paired tests over 1,000,000 users (bootstrap 1,000 resamples,
randomization 10,000 permutations, t and Wilcoxon), and segment means."""

import numpy as np

import fastrank as fr

from .datasets import workload


class Statistics:
    timeout = 600

    def setup(self):
        truth, topk = workload(1_000_000, 10)
        other = topk.copy()
        other[::7] = other[::7, ::-1]
        self.a = fr.evaluate(truth, topk, ["ndcg@10"])
        self.pair = {"a": self.a, "b": fr.evaluate(truth, other, ["ndcg@10"])}
        self.labels = np.minimum(self.a.n_relevant, 5)
        self.a.ci("ndcg@10", n_resamples=10, seed=0)  # compile or load the kernels
        fr.compare(self.pair, "ndcg@10", test="randomization", n_permutations=10, seed=0)

    def time_bootstrap_1000(self):
        self.a.ci("ndcg@10", n_resamples=1000, seed=1)

    def peakmem_bootstrap_1000(self):
        self.a.ci("ndcg@10", n_resamples=1000, seed=1)

    def time_randomization_10000(self):
        fr.compare(self.pair, "ndcg@10", test="randomization", n_permutations=10_000, seed=1)

    def time_t_test(self):
        fr.compare(self.pair, "ndcg@10", test="t")

    def time_wilcoxon(self):
        fr.compare(self.pair, "ndcg@10", test="wilcoxon")

    def time_segments(self):
        self.a.by(self.labels)

    def peakmem_segments(self):
        self.a.by(self.labels)
