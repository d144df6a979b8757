import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings

import fastrank as fr

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("FASTRANK_HYPOTHESIS_PROFILE", "default"))

ALL_METRICS = ["precision@2", "recall@2", "f1@2", "hit_rate@1", "mrr@3", "map@2", "mar@3",
               "ndcg@2", "ndcg", "ndcg_exp@3", "dcg@3", "cg@2", "r_precision", "auc@3", "auc"]


@pytest.fixture(scope="session", autouse=True)
def warm_kernels():
    """Compile (or load from cache) the kernel specialisations the suite uses, once."""
    truth = sp.csr_array(np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 0.0, 1.0]]))
    for index_dtype in (np.int32, np.int64):
        t = truth.copy()
        t.indices = t.indices.astype(index_dtype)
        t.indptr = t.indptr.astype(index_dtype)
        for id_dtype in (np.int32, np.int64):
            topk = np.array([[0, 1, 2], [3, -1, 1]], dtype=id_dtype)
            fr.evaluate(t, topk, ALL_METRICS)


def csr(rows, n_items, index_dtype=np.int32):
    """A CSR matrix from a list of {item: value} dicts."""
    indptr, indices, data = [0], [], []
    for row in rows:
        for item, value in row.items():
            indices.append(item)
            data.append(value)
        indptr.append(len(indices))
    return sp.csr_array((np.array(data, dtype=np.float64), np.array(indices, dtype=index_dtype),
                         np.array(indptr, dtype=index_dtype)), shape=(len(rows), n_items))
