"""Hypothesis strategies: small random truth matrices and top-K lists with every quirk."""

import numpy as np
from hypothesis import strategies as st

from .conftest import csr

# stored values: relevant grades, judged non-relevant zeros and negatives
VALUES = st.sampled_from([1.0, 1.0, 2.0, 3.0, 0.5, 0.0, -1.0])


@st.composite
def cases(draw, max_users=8, max_items=12, max_k=6):
    """(truth, topk, users): truth CSR with graded values, topk with padding and repeats."""
    n_items = draw(st.integers(1, max_items))
    n_truth = draw(st.integers(1, max_users))
    rows = []
    for _ in range(n_truth):
        items = draw(st.lists(st.integers(0, n_items - 1), unique=True, max_size=n_items))
        rows.append({i: draw(VALUES) for i in items})
    k = draw(st.integers(1, max_k))
    use_users = draw(st.booleans())
    n_rows = draw(st.integers(0, max_users)) if use_users else n_truth
    topk = np.array(
        [[draw(st.integers(-1, n_items - 1)) for _ in range(k)] for _ in range(n_rows)],
        dtype=draw(st.sampled_from([np.int32, np.int64]))).reshape(n_rows, k)
    users = None
    if use_users:
        users = np.array([draw(st.integers(0, n_truth - 1)) for _ in range(n_rows)],
                         dtype=np.int64)
    truth = csr(rows, n_items, index_dtype=draw(st.sampled_from([np.int32, np.int64])))
    return truth, topk, users


@st.composite
def metric_lists(draw, k_max):
    names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "mar", "ndcg", "ndcg_exp",
             "dcg", "cg", "auc"]
    labels = []
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=8, unique=True)):
        labels.append(name if draw(st.booleans()) else f"{name}@{draw(st.integers(1, k_max))}")
    if draw(st.booleans()):
        labels.append("r_precision")
    return labels
