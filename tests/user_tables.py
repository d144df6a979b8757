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


def ranked(recs, spacing=1):
    """recs with a rank column for its score (ties: item id descending), and the score
    dropped, rows shuffled: ranks 1, 1 + spacing, 1 + 2*spacing, ... (spacing - 1 empty
    slots between two items, since a rank is a position)."""
    r = recs.sort_values(["user", "score", "item"], ascending=[True, False, False])
    r = r.assign(rank=spacing * r.groupby("user").cumcount() + 1)
    return r.drop(columns="score").sample(frac=1.0, random_state=0)


# RecTools' reading of ranks: item 3 (not relevant) at rank 1, item 1 (relevant) at rank 9,
# ranks 2..8 empty; user 1 has m = 2 relevant items (1 and 2). AP@9 = (1/9) / 2 = 1/18
# (RecTools 0.19.0, MAP(k=9).calc(reco, interactions): 0.05555555555555555)
RANKED_INTERACTIONS = {"user": [1, 1], "item": [1, 2]}
RANKED_RECO = {"user": [1, 1], "item": [3, 1], "rank": [1, 9]}
