"""The (truth, recs) pandas frames the cluster front ends' tests (Dask, Spark) evaluate."""

import numpy as np
import pandas as pd

from fastrank.synthetic import power_law


def user_tables(n_users, ids="int", seed=0, object_ids=False):
    """(truth, recs) pandas frames: power-law data, some users on one side only, ties.
    ids="str" names users "u<row>" (as Python objects with object_ids, as Spark takes
    them)."""
    truth, topk = power_law(n_users, 300, 12, seed=seed)
    coo = truth.tocoo()
    rows, cols = np.nonzero(topk >= 0)

    def name(x):
        if ids == "int":
            return x.astype(np.int64)
        text = np.char.add("u", x.astype(str))
        return text.astype(object) if object_ids else text

    t = pd.DataFrame({"user": name(coo.row), "item": coo.col.astype(np.int64),
                      "relevance": coo.data})
    keep = rows % 13 != 0  # some users without recommendations
    r = pd.DataFrame({"user": name(rows[keep] + 5), "item": topk[rows, cols][keep],
                      "score": np.floor((12 - cols[keep]) / 3)})  # ties, and users not judged
    return t, r
