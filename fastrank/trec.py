"""trec_eval's measures and output, from TREC files: what `fastrank trec` prints.

    report = fastrank.trec.evaluate_files("qrels", "run", ["map", "P.5,10", "ndcg_cut"])
    print("\\n".join(report.lines(per_query=True)))

Semantics are trec_eval 10.0's: relevance levels are integers (a value is truncated as
C's atol does), a document is relevant at level >= relevance_level, negative levels are
pooled but unjudged; queries are the judged ones that have results (all judged ones with
complete=True, the missing ones scoring 0); measures print in trec_eval's table order.
"""

from dataclasses import dataclass

import numpy as np

from . import io
from .evaluate import evaluate, n_ranges, numba_threads
from .validation import check_truth

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)
RECALL_POINTS = tuple(round(0.1 * j, 2) for j in range(11))
# trec_eval's measure table order (measures.c), restricted to what fastrank computes
ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
         "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut",
         "map_cut", "success")
OFFICIAL = ORDER[:12]  # trec_eval's default set: runid .. P
_CUT = {"P": CUTOFFS, "recall": CUTOFFS, "ndcg_cut": CUTOFFS, "map_cut": CUTOFFS,
        "success": SUCCESS_CUTOFFS, "iprec_at_recall": RECALL_POINTS}
_SUMMED = {"num_ret", "num_rel", "num_rel_ret"}
_COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret"}
_SUMMARY_ONLY = {"runid", "num_q", "gm_map"}
# trec_eval measures that fr.evaluate's trec convention computes, and its names for them
_EVALUATE = {"map": "map", "Rprec": "r_precision", "recip_rank": "mrr", "ndcg": "ndcg",
             "P": "precision", "recall": "recall", "map_cut": "map", "success": "hit_rate",
             "ndcg_cut": "ndcg"}
MIN_GEO_MEAN = 0.00001


def parse_measures(measures):
    """{name: parameters} in trec_eval's order from `-m` arguments such as "P.5,10",
    "ndcg_cut", "official" or "all_trec" (what fastrank supports of it)."""
    chosen = {}
    for text in measures or ["official"]:
        name, _, params = text.partition(".")
        if name in ("official", "all_trec"):
            for base in (OFFICIAL if name == "official" else ORDER):
                chosen.setdefault(base, _CUT.get(base))
            continue
        if name not in ORDER:
            raise ValueError(
                f"unknown measure {text!r}; fastrank's trec_eval measures are "
                f"{', '.join(ORDER)} (and the sets official, all_trec)")
        if not params:
            chosen[name] = _CUT.get(name)
            continue
        if name not in _CUT:
            raise ValueError(f"measure {name!r} takes no parameters; got {text!r}")
        chosen[name] = _parse_params(name, params, text)
    return {name: chosen[name] for name in ORDER if name in chosen}


def _parse_params(name, params, text):
    kind = float if name == "iprec_at_recall" else int
    try:
        values = [kind(v) for v in params.split(",") if v]
    except ValueError:
        raise ValueError(f"parameters of {text!r} must be comma-separated numbers") from None
    if not values or min(values) < 0 or (kind is int and min(values) < 1) \
            or len(set(values)) != len(values):
        raise ValueError(f"parameters of {text!r} must be distinct and positive")
    return tuple(sorted(values))


def _label(name, param):
    if name == "iprec_at_recall":
        return f"iprec_at_recall_{param:3.2f}"
    return f"{name}_{param}"


@dataclass
class TrecReport:
    """Per-query values ({qid: {measure: value}}) and the `all` summary, in order."""

    queries: list
    per_query: dict
    summary: dict
    runid: str

    def lines(self, per_query=False):
        """trec_eval's output: `measure<TAB>qid|all<TAB>value`, values to 4 decimals."""
        out = []
        if per_query:
            for qid in self.queries:
                for name, value in self.per_query[qid].items():
                    out.append(self._line(name, qid, value))
        for name, value in self.summary.items():
            out.append(self._line(name, "all", value))
        return out

    def _line(self, name, qid, value):
        if name == "runid":
            return f"{name:<22}\t{qid}\t{value}"
        if name in _COUNTS:
            return f"{name:<22}\t{qid}\t{int(value)}"
        return f"{name:<22}\t{qid}\t{value:6.4f}"


def evaluate_files(qrels_path, run_path, measures=None, *, relevance_level=1, depth=None,
                   complete=False, n_threads=None):
    """trec_eval's measures of a run against qrels, from file paths (plain or gzip)."""
    return evaluate_trec(io.read_qrels(qrels_path), io.read_run(run_path), measures,
                         relevance_level=relevance_level, depth=depth, complete=complete,
                         n_threads=n_threads)


def evaluate_trec(qrels, run, measures=None, *, relevance_level=1, depth=None, complete=False,
                  n_threads=None):
    """The TrecReport of `io.Qrels` and `io.Run` (see evaluate_files)."""
    chosen = parse_measures(measures)
    levels = io.Qrels(qrels.queries, qrels.documents, np.trunc(qrels.relevance), qrels.path)
    truth, topk, queries, _ = io.trec_arrays(levels, run, depth=depth, complete=complete)
    values = _per_query(chosen, truth, topk, relevance_level, n_threads)
    qids = [str(q) for q in queries]
    shown = [label for name, params in chosen.items() if name not in _SUMMARY_ONLY
             for label in _labels(name, params)]
    per_query = {qid: {label: float(values[label][row]) for label in shown}
                 for row, qid in enumerate(qids)}
    summary = {}
    n_q = len(qids)
    for name, params in chosen.items():
        if name == "runid":
            summary["runid"] = run.runid
        elif name == "num_q":
            summary["num_q"] = n_q
        elif name == "gm_map":
            logs = np.log(np.maximum(values["map"], MIN_GEO_MEAN)) if n_q else np.zeros(0)
            summary["gm_map"] = float(np.exp(logs.mean())) if n_q else 0.0
        else:
            for label in _labels(name, params):
                v = values[label]
                summary[label] = float(v.sum()) if name in _SUMMED else (
                    float(v.mean()) if n_q else 0.0)
    return TrecReport(qids, per_query, summary, run.runid)


def _labels(name, params):
    return [name] if params is None else [_label(name, p) for p in params]


def _per_query(chosen, truth, topk, level, n_threads):
    """{label: float64 per query} for every chosen measure (and map, for gm_map)."""
    from ._kernels.trec import trec_extras

    largest = max([max(p) for n, p in chosen.items() if n != "iprec_at_recall" and p] + [1])
    if topk.shape[1] < largest:  # cutoffs past the list: the missing documents are misses
        topk = np.concatenate([topk, np.full((topk.shape[0], largest - topk.shape[1]), -1,
                                             topk.dtype)], axis=1)
    binary = truth.copy()  # relevant at the level; stored zeros keep "judged"
    binary.data = (binary.data >= level).astype(np.float64)
    labels = {}  # trec_eval label -> fr.evaluate label
    for name, params in chosen.items():
        if name in _EVALUATE:
            ours = _EVALUATE[name]
            labels.update({name: ours} if params is None else
                          {_label(name, p): f"{ours}@{p}" for p in params})
    if "gm_map" in chosen:
        labels["map"] = "map"
    graded = {k: v for k, v in labels.items() if k.startswith("ndcg")}
    binary_labels = {k: v for k, v in labels.items() if not k.startswith("ndcg")}
    out = {}
    for source, group in ((binary, binary_labels), (truth, graded)):
        if group:
            res = evaluate(source, topk, list(dict.fromkeys(group.values())),
                           convention="trec", n_threads=n_threads)
            out.update({label: res.per_user(ours) for label, ours in group.items()})
    extras = {"num_ret", "num_rel", "num_rel_ret", "bpref", "iprec_at_recall"} & set(chosen)
    if extras:
        data = check_truth(truth)
        n = topk.shape[0]
        points = np.array(chosen.get("iprec_at_recall") or (0.0,), np.float64)
        counts = [np.empty(n, np.int64) for _ in range(3)]
        bpref = np.empty(n, np.float64)
        iprec = np.empty((points.shape[0], n), np.float64)
        with numba_threads(n_threads) as threads:
            trec_extras(data.indptr, data.indices, data.data, topk, np.arange(n, dtype=np.int64),
                        data.n_items, float(level), points,
                        max(n_ranges(n, threads, topk.size, data.n_items), 1), *counts,
                        bpref, iprec)
        for name, arr in zip(("num_ret", "num_rel", "num_rel_ret"), counts):
            out[name] = arr.astype(np.float64)
        out["bpref"] = bpref
        for p, row in zip(points, iprec):
            out[_label("iprec_at_recall", p)] = row
    return out
