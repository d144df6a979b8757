"""fastrank: one-pass evaluation of recommender and search rankings.

    import fastrank as fr
    res = fr.evaluate(truth, topk, ["precision@10", "ndcg@10", "map@10", "auc@10"])
    res["ndcg@10"], res.per_user("ndcg@10")
    fr.evaluate(truth, topk, ["nDCG@10", "P(rel=2)@5"], dialect="ir_measures")
    fr.METRICS.to_frame()                                       # every metric, browsable

    ids, scores = fr.topk(user_factors, item_factors, 10, exclude=train)
    fr.evaluate_factors(user_factors, item_factors, test, ["ndcg@10", "auc"], exclude=train)
    fr.evaluate_model(model, test, ["ndcg@10"], train=train)   # any implicit-style model

    fr.ab_ndcg(test, ids, item_aspects, profile=train)          # αβ-nDCG (Parapar & Radlinski)
    fr.alpha_ndcg(test, ids, item_aspects)                      # α-nDCG, as TREC's ndeval
    fr.evaluate(test, ids, ["coverage@10", "novelty@10"], train=train)

    ev = fr.Evaluator(test, ["ndcg@10"]); ev.update(rows, lists); ev.result()  # streaming
    res.ci("ndcg@10"); res.by(segment_labels); fr.compare({"a": res_a, "b": res_b})
    fr.evaluate(test, ids, ["ndcg"], curves=True).plot("ndcg", path="ndcg.png")
    fr.rmse(test, predictions), fr.mae(test, user_factors=U, item_factors=V)
    fr.overlap(ids_a, ids_b, ["jaccard@10", "rbo(p=0.9)@10"])    # two systems' lists
    fr.evaluate_sampled(scores, n_items, ["ndcg@10"])            # 1 + m sampled candidates,
                                                                 # corrected (Krichene & Rendle)
    data = fr.io.from_tables(truth_df, recs_df)                 # pandas / pyarrow / polars
    warming = fr.warm_up(["ndcg@10"]); ...; warming.wait()      # compile beside data loading

Nothing is imported or compiled at import: each name loads its module on first use, and
numba kernels load (or compile) on first use.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # the names below load on first use at run time (see __getattr__)
    from . import io
    from .dialects import DIALECTS
    from .diversity import AlphaBetaNDCG, ab_ndcg, alpha_ndcg
    from .evaluate_topk import evaluate
    from .factors import evaluate_factors, topk
    from .model import evaluate_model
    from .list_overlap import overlap
    from .plots import plot_compare
    from .ratings import mae, rmse
    from .registry import CONVENTIONS, METRIC_NAMES, METRICS
    from .result import Result
    from .sampled import evaluate_sampled, evaluate_sampled_ranks
    from .stats import compare
    from .streaming import Evaluator
    from .warm import WarmUp, warm_up

# Where each public name lives: `import fastrank` loads none of them (nor numpy, scipy or
# numba); the first use of a name imports its module, and what that module needs.
_HOMES = {
    "evaluate": "evaluate_topk", "Evaluator": "streaming", "evaluate_factors": "factors",
    "topk": "factors", "evaluate_model": "model", "ab_ndcg": "diversity",
    "alpha_ndcg": "diversity", "AlphaBetaNDCG": "diversity", "rmse": "ratings",
    "mae": "ratings", "evaluate_sampled": "sampled", "evaluate_sampled_ranks": "sampled",
    "compare": "stats", "overlap": "list_overlap", "plot_compare": "plots", "Result": "result",
    "METRICS": "registry", "METRIC_NAMES": "registry", "CONVENTIONS": "registry",
    "DIALECTS": "dialects", "warm_up": "warm", "WarmUp": "warm",
}

__all__ = ["evaluate", "Evaluator", "evaluate_factors", "evaluate_model", "topk", "ab_ndcg",
           "alpha_ndcg", "AlphaBetaNDCG", "rmse", "mae", "evaluate_sampled",
           "evaluate_sampled_ranks", "compare", "overlap", "plot_compare", "Result",
           "METRICS", "METRIC_NAMES", "CONVENTIONS", "DIALECTS", "io", "warm_up", "WarmUp",
           "__version__"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept here); `fr.io`
    (tables, files, TREC files) is a subpackage, loaded the same way."""
    if name == "io":
        return importlib.import_module(".io", __name__)
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'fastrank' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
