"""trec_eval's measures and output, from TREC files: what `fastrank trec` prints.

    report = fastrank.trec.evaluate_files("qrels", "run", ["map", "P.5,10", "ndcg_cut"])
    print("\\n".join(report.lines(per_query=True)))

Semantics are trec_eval 10.0's, read from its source: relevance levels are integers
(read as C's atol reads them), a document is relevant at level >= relevance_level,
negative levels are pooled but unjudged; every judged query is evaluated (trec_eval 10
stops on a judged query without results unless complete=True, its -c, where such a
query scores 0); measures print in trec_eval's table order, each query's values from
trec_eval's own arithmetic (`fastrank._kernels.trec`), the `all` line summed query by
query in qid order and then divided, as trec_eval sums them.
"""

import math
import re
from dataclasses import dataclass

import numpy as np

from . import dialects, io
from ._kernels import codes
from .threads import n_ranges, numba_threads
from .validation import check_int, check_truth

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
MIN_GEO_MEAN = 0.00001
# the largest cutoff a measure may take: trec_eval reads cutoffs as C longs
_LARGEST_CUTOFF = 2 ** 62


# trec_eval's kernel code of each measure
_CODES = {"num_ret": codes.TREC_NUM_RET, "num_rel": codes.TREC_NUM_REL,
          "num_rel_ret": codes.TREC_NUM_REL_RET, "map": codes.TREC_MAP,
          "Rprec": codes.TREC_RPREC, "bpref": codes.TREC_BPREF,
          "recip_rank": codes.TREC_RECIP_RANK, "ndcg": codes.TREC_NDCG,
          "iprec_at_recall": codes.TREC_IPREC, "P": codes.TREC_P, "recall": codes.TREC_RECALL,
          "ndcg_cut": codes.TREC_NDCG_CUT, "map_cut": codes.TREC_MAP_CUT,
          "success": codes.TREC_SUCCESS}


def parse_measures(measures):
    """{name: parameters} in trec_eval's order from `-m` arguments such as "P.5,10",
    "ndcg_cut", "official" or "all_trec" (what fastrank supports of it).

    As trec_eval 10: a measure's parameters come from the first `-m` that gives them;
    cutoffs are read as C's atol reads them ("23.4" is 23) and recall points as atof;
    cutoffs must be positive and, like recall points, distinct."""
    if isinstance(measures, str):
        measures = [measures]
    chosen, given = {}, set()
    for text in measures or ["official"]:
        if not isinstance(text, str):
            raise TypeError(f"measures must be strings such as 'P.5,10'; got {text!r}")
        name, dot, params = text.partition(".")
        if name in ("official", "all_trec") and not dot:
            for base in (OFFICIAL if name == "official" else ORDER):
                chosen.setdefault(base, _CUT.get(base))
            continue
        if name not in ORDER:
            meaning = dialects.lookup("trec_eval", name)
            if isinstance(meaning, dialects.Refusal):
                raise ValueError(f"measures: {text!r}: {meaning.reason}; fastrank's trec_eval "
                                 f"measures are {', '.join(ORDER)} (and the sets official, "
                                 f"all_trec)")
            raise ValueError(
                f"measures: unknown measure {text!r}; fastrank's trec_eval measures are "
                f"{', '.join(ORDER)} (and the sets official, all_trec)")
        chosen.setdefault(name, _CUT.get(name))
        if not dot or name in given:
            continue
        if name not in _CUT:
            raise ValueError(f"measures: {name!r} takes no parameters; got {text!r}")
        chosen[name] = _parse_params(name, params, text)
        given.add(name)
    return {name: chosen[name] for name in ORDER if name in chosen}


# C's atol and atof: the longest number at the start of the text (after blanks)
_ATOL = re.compile(r"\s*([+-]?[0-9]+)")
_ATOF = re.compile(r"\s*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                   r"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                   r"|inf(?:inity)?|nan))", re.IGNORECASE)


def _atof(text):
    """C's atof: the number at the start of the text (hex, inf and nan included), else 0."""
    match = _ATOF.match(text)
    if match is None:
        return 0.0
    number = match.group(1)
    if "x" in number.lower():
        sign = -1.0 if number.startswith("-") else 1.0
        return sign * float.fromhex(number.lstrip("+-"))
    return float(number)


def _parse_params(name, params, text):
    if not params:
        raise ValueError(f"measures: {text!r} has an empty parameter list; write "
                         f"{name}.5,10 or drop the dot")
    values = []
    for part in params.split(","):
        if name == "iprec_at_recall":
            value = _atof(part)
            if not math.isfinite(value):
                raise ValueError(f"measures: recall point {part!r} in {text!r} is not a "
                                 f"finite number")
        else:
            match = _ATOL.match(part)
            value = int(match.group(1)) if match else 0
            if value < 1:
                raise ValueError(
                    f"measures: cutoff {part!r} in {text!r} is not a positive integer "
                    f"(trec_eval stops with 'Negative cutoff detected')")
            if value > _LARGEST_CUTOFF:
                raise ValueError(f"measures: cutoff {part!r} in {text!r} is beyond 2**62")
        values.append(value)
    if len(set(values)) != len(values):
        raise ValueError(f"measures: {text!r} gives a parameter twice (after reading "
                         f"cutoffs as whole numbers); trec_eval stops on duplicate cutoffs")
    if name != "iprec_at_recall" and max(values) - min(values) >= 2 ** 31:
        raise ValueError(
            f"measures: the cutoffs of {text!r} lie more than 2**31 apart; trec_eval sorts "
            f"cutoffs by their difference cast to a C int, so it prints them in a scrambled "
            f"order: give such cutoffs in separate runs")
    return tuple(sorted(values))


def _label(name, param):
    """The name trec_eval prints for a measure and one of its parameters (or None)."""
    if param is None:
        return name
    if name == "iprec_at_recall":
        return f"iprec_at_recall_{param:3.2f}"
    return f"{name}_{param}"


@dataclass
class TrecReport:
    """trec_eval's per-query values and `all` line, in its print order.

    `columns` are the printed names of the per-query measures and `values[row]` the
    values of `queries[row]`; `totals` the (name, value) pairs of the `all` line. A name
    may repeat: trec_eval prints two recall points that round to the same two decimals
    as two lines of one name. `per_query` ({qid: {name: value}}) and `summary`
    ({name: value}) are the same as dicts, where a repeated name keeps its last value.
    """

    queries: list
    columns: list
    values: np.ndarray
    totals: list
    runid: str

    @property
    def per_query(self):
        return {qid: dict(zip(self.columns, row.tolist()))
                for qid, row in zip(self.queries, self.values)}

    @property
    def summary(self):
        return dict(self.totals)

    def lines(self, per_query=False):
        """trec_eval's output: `measure<TAB>qid|all<TAB>value`, values to 4 decimals."""
        out = []
        if per_query:
            for qid, row in zip(self.queries, self.values.tolist()):
                out += [self._line(name, qid, value) for name, value in zip(self.columns, row)]
        out += [self._line(name, "all", value) for name, value in self.totals]
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
    level = check_int(relevance_level, "relevance_level", 0,
                      " (trec_eval counts unjudged documents as relevant below 0)")
    if not complete:
        missing = np.setdiff1d(np.unique(qrels.queries), np.unique(run.queries))
        if missing.size:
            raise ValueError(
                f"{qrels.path}: query {str(missing[0])!r} is judged but {run.path} has no "
                f"results for it ({missing.size} such queries); trec_eval 10 stops here "
                f"too. Pass complete=True (-c) to score such queries 0, or drop them from "
                f"the qrels")
    truth, topk, queries, _ = io.trec_arrays(qrels, run, depth=depth, complete=complete)
    if not queries.size:
        raise ValueError(f"{run.path}: no query has both judgments and results")
    _check_levels(truth, queries, qrels.path)
    slots = [(name, p) for name, params in chosen.items() if name not in ("runid", "num_q")
             for p in (params or (None,))]
    values = _per_query(slots, truth, topk, level, n_threads)
    shown = [slot for slot in slots if slot[0] not in _SUMMARY_ONLY]
    n_q = queries.shape[0]
    totals = []
    for name, params in chosen.items():
        if name == "runid":
            totals.append(("runid", run.runid))
        elif name == "num_q":
            totals.append(("num_q", n_q))
        elif name == "gm_map":
            logs = [math.log(max(v, MIN_GEO_MEAN)) for v in values[name, None].tolist()]
            totals.append(("gm_map", math.exp(_sum_in_order(logs) / n_q)))
        elif name == "num_rel" and complete:
            # trec_eval's -c summary recounts the raw qrels: every level > 0, whatever -l
            totals.append(("num_rel", int(np.count_nonzero(qrels.relevance > 0))))
        else:
            for p in params or (None,):
                total = _sum_in_order(values[name, p])
                totals.append((_label(name, p), total if name in _SUMMED else total / n_q))
    table = (np.stack([values[slot] for slot in shown], axis=1) if shown
             else np.zeros((n_q, 0)))
    return TrecReport([str(q) for q in queries], [_label(*slot) for slot in shown], table,
                      totals, run.runid)


def _check_levels(truth, queries, path):
    """trec_eval 10 sizes a table by a query's largest level, and fails on a query whose
    every level is -2 or below, and on the first query it evaluates when that one has
    no level above -1: stop where it stops."""
    for row, query in enumerate(queries.tolist()):
        levels = truth.data[truth.indptr[row]:truth.indptr[row + 1]]
        top = levels.max() if levels.size else 0.0
        if top <= -2 or (row == 0 and top < 0):
            raise ValueError(
                f"{path}: every judgment of query {query!r} has a negative level (pooled, "
                f"not judged); trec_eval 10 cannot evaluate such a query here ('Can't "
                f"calculate measure'), so neither does fastrank: judge one of its documents "
                f"or drop the query")


def _sum_in_order(values):
    """Σ values added left to right, as trec_eval accumulates its queries (numpy's sum
    adds pairwise, which can round the 4th decimal of the mean the other way)."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def _per_query(slots, truth, topk, level, n_threads):
    """{(measure, parameter): float64 per query} for (measure, parameter) slots; a
    measure without parameters has parameter None, gm_map is map's values."""
    from ._kernels.trec import trec_measures

    if not slots:  # runid and num_q only
        return {}
    kernel_slots = {}  # (measure as computed, parameter) -> (code, cutoff, point)
    for name, p in slots:
        base = "map" if name == "gm_map" else name
        point = name == "iprec_at_recall"
        kernel_slots[base, p] = (_CODES[base], 0 if point or p is None else p,
                                 float(p) if point else 0.0)
    keys = list(kernel_slots)
    data = check_truth(truth)
    n = topk.shape[0]
    longest = max(topk.shape[1], data.max_row_nnz, 1)
    # the C library's log2, which trec_eval divides by (numpy's own may differ in an ulp)
    log2s = np.array([math.log2(j) for j in range(2, longest + 2)], np.float64)
    out = np.zeros((len(keys), n), np.float64)
    code, cut, point = (np.array(column, dtype) for column, dtype in zip(
        zip(*kernel_slots.values()), (np.int64, np.int64, np.float64)))
    with numba_threads(n_threads) as threads:
        trec_measures(data.indptr, data.indices, data.data, np.ascontiguousarray(topk),
                      float(level), code, cut, point, log2s, data.max_row_nnz,
                      max(n_ranges(n, threads, topk.size, 1), 1), out)
    values = dict(zip(keys, out))
    return {(name, p): values["map" if name == "gm_map" else name, p] for name, p in slots}
