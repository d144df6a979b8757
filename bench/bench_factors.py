"""asv: fr.topk and fr.evaluate_factors beside the bare BLAS product they cannot beat.

50,000 items, 32 factors, the training items of a power-law data set excluded. The
`Floor` benchmark times user_factors @ item_factors.T alone, in user blocks, so that
`asv compare` shows the fused paths against it.
"""

import numpy as np

import fastrank as fr

from .datasets import metric_labels, random_factors, workload

USERS = [20_000, 200_000]


class _Factors:
    timeout = 900

    def _load(self, users, dtype="float32"):
        self.user_factors, self.item_factors = random_factors(users, dtype=dtype)
        self.train = workload(users, 10, seed=1)[0]
        self.test = workload(users, 10, seed=0)[0]


class TopK(_Factors):
    params = (USERS, [10, 100], ["float32", "float64"])
    param_names = ["users", "k", "dtype"]

    def setup(self, users, k, dtype):
        self._load(users, dtype)
        fr.topk(self.user_factors[:100], self.item_factors, k, exclude=self.train[:100])

    def time_topk(self, users, k, dtype):
        fr.topk(self.user_factors, self.item_factors, k, exclude=self.train)

    def peakmem_topk(self, users, k, dtype):
        fr.topk(self.user_factors, self.item_factors, k, exclude=self.train)


class EvaluateFactors(_Factors):
    params = (USERS, ["core4", "core4+auc"])
    param_names = ["users", "metrics"]

    def setup(self, users, metric_set):
        self._load(users)
        self.labels = metric_labels("core4", 10) + (["auc"] if metric_set.endswith("auc")
                                                    else [])
        fr.evaluate_factors(self.user_factors[:100], self.item_factors, self.test[:100],
                            self.labels, exclude=self.train[:100])

    def time_evaluate_factors(self, users, metric_set):
        fr.evaluate_factors(self.user_factors, self.item_factors, self.test, self.labels,
                            exclude=self.train)

    def peakmem_evaluate_factors(self, users, metric_set):
        fr.evaluate_factors(self.user_factors, self.item_factors, self.test, self.labels,
                            exclude=self.train)


class Floor(_Factors):
    """The bare BLAS product of every user with every item, 1,024 users per call."""

    params = [USERS]
    param_names = ["users"]

    def setup(self, users):
        self._load(users)
        self.out = np.empty((1024, self.item_factors.shape[0]), dtype=np.float32)

    def time_blas_product(self, users):
        for start in range(0, self.user_factors.shape[0], 1024):
            part = self.user_factors[start:start + 1024]
            np.matmul(part, self.item_factors.T, out=self.out[:part.shape[0]])


def timeraw_first_evaluate_factors():
    """Import plus the first evaluate_factors in a fresh process (compile or cache load)."""
    return """
import numpy as np, scipy.sparse as sp
import fastrank as fr
rng = np.random.default_rng(0)
U = rng.standard_normal((50, 8)).astype(np.float32)
V = rng.standard_normal((40, 8)).astype(np.float32)
test = sp.csr_array(np.eye(50, 40))
fr.evaluate_factors(U, V, test, ["ndcg@10", "auc"], exclude=test)
"""
