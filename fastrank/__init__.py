"""fastrank: one-pass evaluation of recommender and search rankings.

    import fastrank as fr
    res = fr.evaluate(truth, topk, ["precision@10", "ndcg@10", "map@10", "auc@10"])
    res["ndcg@10"], res.per_user("ndcg@10")

Nothing is compiled at import; numba kernels load (or compile) on first use.
"""

from .evaluate import evaluate
from .metrics import CONVENTIONS, METRIC_NAMES
from .result import Result

__version__ = "0.1.0"

__all__ = ["evaluate", "Result", "METRIC_NAMES", "CONVENTIONS", "__version__"]
