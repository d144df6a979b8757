"""asv: αβ-nDCG (with the ideal, and re-scoring with it reused), α-nDCG, the
beyond-accuracy set in fr.evaluate, and the first-call cost of the aspect kernels."""

import fastrank as fr
from fastrank.synthetic import power_law

from .datasets import aspect_workload, dense_preferences, random_aspects

BEYOND = ["coverage@10", "gini@10", "novelty@10", "arp@10", "ild@10", "serendipity@10"]


class ABNDCG:
    """Users x 27,000 items with 1-3 of 20 aspects, k = 10, γ from a training profile."""

    params = [100_000, 1_000_000]
    param_names = ["users"]
    timeout = 900

    def setup(self, users):
        self.test, self.train, self.topk, self.other, self.aspects = aspect_workload(users)
        self.scorer = fr.AlphaBetaNDCG(self.test, self.aspects, k=10, profile=self.train)
        fr.evaluate(self.test[:100], self.topk[:100], ["ndcg@10"])
        fr.alpha_ndcg(self.test[:100], self.topk[:100], self.aspects)

    def time_ab_ndcg_with_ideal(self, users):
        fr.ab_ndcg(self.test, self.topk, self.aspects, profile=self.train)

    def peakmem_ab_ndcg_with_ideal(self, users):
        fr.ab_ndcg(self.test, self.topk, self.aspects, profile=self.train)

    def time_rescore(self, users):
        self.scorer.score(self.other)

    def time_ndcg_same_lists(self, users):
        """The yardstick of the re-scoring target (≤ 2x this)."""
        fr.evaluate(self.test, self.other, ["ndcg@10"])

    def time_alpha_ndcg(self, users):
        fr.alpha_ndcg(self.test, self.topk, self.aspects)


class ManyAspects:
    """200 users x 5,000 aspects, dense γ: does a second thread still help?"""

    params = [1, 2]
    param_names = ["n_threads"]

    def setup(self, n_threads):
        self.test, self.topk = power_law(200, 27_000, 10, seed=5)
        self.aspects = random_aspects(27_000, 5_000, seed=6)
        self.gamma = dense_preferences(200, 5_000, seed=7)
        fr.ab_ndcg(self.test[:4], self.topk[:4], self.aspects, user_aspects=self.gamma[:4])

    def time_ab_ndcg_with_ideal(self, n_threads):
        fr.ab_ndcg(self.test, self.topk, self.aspects, user_aspects=self.gamma,
                   n_threads=n_threads)


class Beyond:
    """coverage, gini, novelty, arp, ild (Jaccard) and serendipity (vs most popular)."""

    params = [100_000, 1_000_000]
    param_names = ["users"]
    timeout = 600

    def setup(self, users):
        self.test, self.train, self.topk, _, self.aspects = aspect_workload(users)
        self.kw = dict(train=self.train, item_aspects=self.aspects, baseline="popular")
        fr.evaluate(self.test[:100], self.topk[:100], BEYOND, **self.kw)

    def time_beyond_set(self, users):
        fr.evaluate(self.test, self.topk, BEYOND, **self.kw)

    def peakmem_beyond_set(self, users):
        fr.evaluate(self.test, self.topk, BEYOND, **self.kw)


def timeraw_first_ab_ndcg():
    """Import plus the first ab_ndcg and alpha_ndcg in a fresh process (compile or load)."""
    return """
import numpy as np, scipy.sparse as sp
import fastrank as fr
truth = sp.csr_array(np.eye(30, 20))
aspects = sp.csr_array((np.arange(60).reshape(20, 3) % 4 == 0).astype(np.int8))
topk = np.tile(np.arange(10), (30, 1))
fr.ab_ndcg(truth, topk, aspects, profile=truth)
fr.alpha_ndcg(truth, topk, aspects)
"""
