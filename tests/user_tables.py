"""The (truth, recs) pandas frames the cluster front ends' tests (Dask, Spark) evaluate,
and the checks both front ends share."""

import warnings

import numpy as np
import pandas as pd
import pytest

import fastrank
from fastrank import io

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


def check_tie_orders(evaluate, frame):
    """A front end's `evaluate(truth, recs, labels, dialect=)` on tables with tied scores
    (`frame(pandas_frame, npartitions)` makes its tables): ir-measures' RR@2 alone ranks
    equal scores by id ascending, as ir-measures does (= from_tables(ties="docno")); with
    P@2 (trec_eval's order) the lists follow trec_eval's and the call warns; RBP's row
    order no shuffle keeps: a warning."""
    t = pd.DataFrame({"user": ["u", "u", "v"], "item": ["a", "c", "b"],
                      "relevance": [1.0, 1.0, 1.0]})
    r = pd.DataFrame({"user": ["u", "u", "u", "v", "v"], "item": ["a", "b", "c", "a", "b"],
                      "score": [1.0, 1.0, 0.5, 2.0, 1.0]})
    T, R = frame(t, 1), frame(r, 2)
    local = io.from_tables(t, r, ties="docno").evaluate(["RR@2"], dialect="ir_measures")
    with warnings.catch_warnings():
        warnings.simplefilter("error", fastrank.dialects.TieOrder)
        res = evaluate(T, R, ["RR@2"], dialect="ir_measures")
    assert res["RR@2"] == local["RR@2"] == 0.75
    with pytest.warns(fastrank.dialects.TieOrder, match="'RR@2': ir-measures 0.4 orders "
                                                        "them by item id ascending"):
        res = evaluate(T, R, ["RR@2", "P@2"], dialect="ir_measures")
    assert res["RR@2"] == 0.5
    with pytest.warns(fastrank.dialects.TieOrder, match="'RBP\\(rel=1\\)': ir-measures 0.4 "
                                                        "orders them in the order of their"):
        evaluate(T, R, ["RBP(rel=1)"], dialect="ir_measures")
