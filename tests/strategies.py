"""Hypothesis strategies: small random truth matrices and top-K lists with every quirk."""

import numpy as np
from hypothesis import strategies as st

import fastrank as fr

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


# the registered metrics each evaluation of lists and truth computes: a metric is drawn
# from the moment it is in fastrank.METRICS
LIST_METRICS = tuple(name for name in fr.METRICS.names()
                     if fr.METRICS[name].engine in ("ranking", "trec"))


@st.composite
def metric_lists(draw, k_max, convention="recsys", names=LIST_METRICS):
    """Labels of registered metrics: with or without a cutoff, each parameter from its
    registered examples (a required one always, the others sometimes; no relevance
    threshold on the implicit convention's pooled precision)."""
    labels = []
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=8, unique=True)):
        metric = fr.METRICS[name]
        params = []
        for param in metric.params:
            required = param.default is None and param.name != "rel"
            pooled = convention == "implicit" and name == "precision" and param.name == "rel"
            if required or (not pooled and param.examples and draw(st.booleans())):
                params.append(f"{param.name}={draw(st.sampled_from(param.examples))}")
        label = name + (f"({', '.join(params)})" if params else "")
        if metric.cutoff and draw(st.booleans()):
            label += f"@{draw(st.integers(1, k_max))}"
        labels.append(label)
    return labels
