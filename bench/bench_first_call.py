"""asv: the first call of each entry point in a fresh process: import, plus compile (the
first asv run) or numba cache load (later runs). Evaluate, topk and ab_ndcg have theirs
beside their benchmarks; these are the rest."""

_TRUTH = """
import numpy as np, scipy.sparse as sp
import fastrank as fr
truth = sp.csr_array(np.eye(8))
topk = (np.arange(24).reshape(8, 3) % 8).astype(np.int64)
"""


def timeraw_first_evaluator():
    return _TRUTH + """
ev = fr.Evaluator(truth, ["ndcg@3", "recall@2"])
ev.update(np.arange(4), topk[:4]).update(np.arange(4, 8), topk[4:]).result()
"""


def timeraw_first_from_tables():
    return """
from fastrank import io
data = io.from_tables({"user": ["a", "a", "b"], "item": [1, 2, 1], "relevance": [1.0, 2.0, 1.0]},
                      {"user": ["a", "b"], "item": [2, 1], "score": [0.5, 0.25]})
data.evaluate(["ndcg@1"])
"""


def timeraw_first_ci_and_compare():
    return _TRUTH + """
a = fr.evaluate(truth, topk, ["ndcg@3"])
b = fr.evaluate(truth, topk[:, ::-1].copy(), ["ndcg@3"])
a.ci("ndcg@3", seed=0)
fr.compare({"a": a, "b": b}, "ndcg@3", test="randomization", seed=0)
"""


def timeraw_first_rmse():
    return _TRUTH + """
fr.rmse(truth, truth.data * 0.9)
fr.mae(truth, user_factors=np.ones((8, 2)), item_factors=np.ones((8, 2)))
"""


def timeraw_first_trec_files():
    return """
import os, tempfile
from fastrank import trec
d = tempfile.mkdtemp()
with open(os.path.join(d, "q"), "w") as f:
    print("1 0 a 1", file=f)
    print("1 0 b 0", file=f)
with open(os.path.join(d, "r"), "w") as f:
    print("1 Q0 a 1 0.5 run", file=f)
    print("1 Q0 b 2 0.4 run", file=f)
trec.evaluate_files(os.path.join(d, "q"), os.path.join(d, "r"))
"""
