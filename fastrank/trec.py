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

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._types import AnyArray, FloatArray, IntArray, PathLike, SparseMatrix

from . import dialects, io
from ._kernels import codes
from .io.lists import factorize
from .io.text import readable
from .digits import whole_number
from .trec_pass import trec_values
from .threads import numba_threads
from .validation import check_int, check_truth

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_POINTS = tuple(round(0.1 * j, 2) for j in range(11))
MIN_GEO_MEAN = 0.00001
MISSING_ZSCORE = -1000000.0
# the largest cutoff a measure may take: trec_eval reads cutoffs as C longs
_LARGEST_CUTOFF = 2 ** 62
_LONG_MAX = 2 ** 63 - 1


@dataclass(frozen=True)
class _Measure:
    """How trec_eval reads, computes, prints and totals one measure.

    params: "" (none), "cuts" (whole cutoffs, one value each: name_5), "points" (real
    cutoffs, one value each: name_0.20), "values" (real parameters of one value: name or
    name_<as given>), "pairs" (name=value parameters of one value). shown: "value",
    "long" (printed as a whole number), "summary" (no per-query line: gm_*), "text"
    (relstring: per-query lines only), "none" (runid, num_q). total: "mean", "sum",
    "geometric", "none"."""

    code: int = -1
    params: str = ""
    default: tuple[Any, ...] | None = None
    shown: str = "value"
    total: str = "mean"


_M = _Measure
# trec_eval 10's measure table (measures.c), in its order: the order of computing and printing
MEASURES = {
    "runid": _M(shown="none", total="none"),
    "num_q": _M(shown="none", total="none"),
    "num_ret": _M(codes.TREC_NUM_RET, shown="long", total="sum"),
    "num_rel": _M(codes.TREC_NUM_REL, shown="long", total="sum"),
    "num_rel_ret": _M(codes.TREC_NUM_REL_RET, shown="long", total="sum"),
    "map": _M(codes.TREC_MAP),
    "gm_map": _M(codes.TREC_MAP, shown="summary", total="geometric"),
    "Rprec": _M(codes.TREC_RPREC),
    "bpref": _M(codes.TREC_BPREF),
    "recip_rank": _M(codes.TREC_RECIP_RANK),
    "iprec_at_recall": _M(codes.TREC_IPREC, "points", RECALL_POINTS),
    "P": _M(codes.TREC_P, "cuts", CUTOFFS),
    "relstring": _M(params="values", default=(10.0,), shown="text", total="none"),
    "recall": _M(codes.TREC_RECALL, "cuts", CUTOFFS),
    "infAP": _M(codes.TREC_INFAP),
    "gm_bpref": _M(codes.TREC_BPREF, shown="summary", total="geometric"),
    "Rprec_mult": _M(codes.TREC_RPREC_MULT, "points",
                     (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility": _M(codes.TREC_UTILITY, "values", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": _M(codes.TREC_11PT_AVG, "values", RECALL_POINTS),
    "binG": _M(codes.TREC_BING),
    "G": _M(codes.TREC_G, "pairs", ()),
    "dcg": _M(codes.TREC_DCG, "pairs", ()),
    "ideal_dcg": _M(codes.TREC_IDEAL_DCG, "pairs", ()),
    "ndcg": _M(codes.TREC_NDCG, "pairs", ()),
    "ndcg_rel": _M(codes.TREC_NDCG_REL, "pairs", ()),
    "Rndcg": _M(codes.TREC_RNDCG, "pairs", ()),
    "ndcg_cut": _M(codes.TREC_NDCG_CUT, "cuts", CUTOFFS),
    "map_cut": _M(codes.TREC_MAP_CUT, "cuts", CUTOFFS),
    "relative_P": _M(codes.TREC_RELATIVE_P, "cuts", CUTOFFS),
    "success": _M(codes.TREC_SUCCESS, "cuts", (1, 5, 10)),
    "set_P": _M(codes.TREC_SET_P),
    "set_relative_P": _M(codes.TREC_SET_RELATIVE_P),
    "set_recall": _M(codes.TREC_SET_RECALL),
    "set_map": _M(codes.TREC_SET_MAP),
    "set_F": _M(codes.TREC_SET_F, "values", (1.0,)),
    "num_nonrel_judged_ret": _M(codes.TREC_NUM_NONREL_JUDGED_RET, shown="long", total="sum"),
    "yaap": _M(codes.TREC_YAAP),
    "rbp": _M(codes.TREC_RBP, "pairs", ()),
    "rbp_resid": _M(codes.TREC_RBP_RESID, "pairs", ()),
    "unj": _M(codes.TREC_UNJ, "cuts", (5, 10, 20)),
}
ORDER = tuple(MEASURES)
# trec_eval's sets of measures (its nicknames)
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P")
SETS = {
    "official": OFFICIAL,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": tuple(name for name in ORDER if name not in ("dcg", "ideal_dcg", "yaap")),
}
_NEEDS_OTHER_FILES = {
    name: "it needs a preferences file or a qrels_jg file (trec_eval -R prefs / "
          "qrels_jg), which fastrank does not read"
    for name in ("all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss",
                 "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
                 "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                 "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
                 "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg",
                 "P_avgjg", "Rprec_mult_avgjg")}


@dataclass(frozen=True)
class Chosen:
    """A measure's parameters as given (`text`, None for the default) and as read."""

    values: Any  # a tuple, None for a measure without parameters (read only where it has)
    text: object = None


# a printed value: (measure name, its cutoff or point, or None)
Slot = tuple[str, Any]


def parse_measures(measures: str | Iterable[str] | None) -> dict[str, Chosen]:
    """{name: Chosen} in trec_eval's order from `-m` arguments such as "P.5,10",
    "ndcg.1=3,2=9", "utility.1,-2,0,0", "official", "set" or "all_trec".

    As trec_eval 10: a measure's parameters come from the first `-m` that gives them;
    whole cutoffs are read as C's atol reads them ("23.4" is 23) and real parameters as
    atof; cutoffs must be positive and distinct, real cutoffs distinct."""
    if isinstance(measures, str):
        measures = [measures]
    chosen: dict[str, Chosen | None] = {}
    given: set[str] = set()
    known = ", ".join(ORDER)
    for text in measures or ["official"]:
        if not isinstance(text, str):
            raise TypeError(f"measures must be strings such as 'P.5,10'; got {text!r}")
        name, dot, params = text.partition(".")
        if name in SETS and not dot:
            for base in SETS[name]:
                chosen.setdefault(base, None)
            continue
        if name in _NEEDS_OTHER_FILES:
            raise ValueError(f"measures: {text!r}: {_NEEDS_OTHER_FILES[name]}")
        if name not in MEASURES:
            meaning = dialects.lookup("trec_eval", name)
            printed = re.fullmatch(r"(\w+?)_([0-9][0-9.]*)", text)
            why = (meaning.reason + "; " if isinstance(meaning, dialects.Refusal)
                   else f"{text!r} is the name trec_eval prints; -m takes "
                        f"'{printed[1]}.{printed[2]}'; " if printed and printed[1] in MEASURES
                   else f"unknown measure {text!r}; ")
            raise ValueError(f"measures: {why}fastrank's trec_eval measures are {known} "
                             f"(and the sets {', '.join(SETS)})")
        chosen.setdefault(name, None)
        if not dot or name in given:
            continue
        kind = MEASURES[name].params
        if not kind:
            raise ValueError(f"measures: {name!r} takes no parameters; got {text!r}")
        chosen[name] = Chosen(_parse_params(name, kind, params, text), params)
        given.add(name)
    shared = [name for name in ("dcg", "ideal_dcg", "ndcg") if name in chosen]
    if len(shared) > 1 and given & set(shared):
        raise ValueError(
            f"measures: {', '.join(shared)} with gains given to "
            f"{', '.join(sorted(given & set(shared)))}: trec_eval 10 keeps one gain table "
            f"for dcg, ideal_dcg and ndcg and crashes on this combination; evaluate them "
            f"in separate runs")
    return {name: chosen[name] or Chosen(MEASURES[name].default)
            for name in ORDER if name in chosen}


# C's atol and atof: the longest number at the start of the text (after blanks)
_ATOL = re.compile(r"\s*([+-]?[0-9]+)")
_ATOF = re.compile(r"\s*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                   r"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                   r"|inf(?:inity)?|nan))", re.IGNORECASE)


def c_long(match: re.Match[str]) -> int:
    """The whole number an _ATOL match read, clamped to C's long as atol clamps it (where
    int() would refuse a text of more than 4,300 digits)."""
    return whole_number(match.group(1), _LONG_MAX)


def _atof(text: str) -> float:
    """C's atof: the number at the start of the text (hex, inf and nan included), else 0."""
    match = _ATOF.match(text)
    if match is None:
        return 0.0
    number = match.group(1)
    if "x" in number.lower():
        sign = -1.0 if number.startswith("-") else 1.0
        return sign * float.fromhex(number.lstrip("+-"))
    return float(number)


def _parse_params(name: str, kind: str, params: str, text: str) -> tuple[Any, ...]:
    if not params:
        raise ValueError(f"measures: {text!r} has an empty parameter list; write "
                         f"{name}.5,10 or drop the dot")
    if kind == "pairs":
        return _parse_pairs(params, text)
    values: list[float] = []
    for part in params.split(","):
        if kind in ("points", "values"):
            value = _atof(part)
            if not math.isfinite(value):
                raise ValueError(f"measures: parameter {part!r} in {text!r} is not a "
                                 f"finite number")
        else:
            match = _ATOL.match(part)
            value = c_long(match) if match else 0
            if value < 1:
                raise ValueError(
                    f"measures: cutoff {part!r} in {text!r} is not a positive integer "
                    f"(trec_eval stops with 'Negative cutoff detected')")
            if value > _LARGEST_CUTOFF:
                raise ValueError(f"measures: cutoff {part!r} in {text!r} is beyond 2**62")
        values.append(value)
    if kind == "values":
        if name == "utility" and len(values) != 4:
            raise ValueError(f"measures: {text!r}: utility takes 4 coefficients (retrieved "
                             f"relevant, retrieved non-relevant, missed relevant, missed "
                             f"non-relevant); trec_eval stops on {len(values)}")
        return tuple(values)
    if len(set(values)) != len(values):
        raise ValueError(f"measures: {text!r} gives a parameter twice (after reading "
                         f"cutoffs as whole numbers); trec_eval stops on duplicate cutoffs")
    if kind == "cuts" and max(values) - min(values) >= 2 ** 31:
        raise ValueError(
            f"measures: the cutoffs of {text!r} lie more than 2**31 apart; trec_eval sorts "
            f"cutoffs by their difference cast to a C int, so it prints them in a scrambled "
            f"order: give such cutoffs in separate runs")
    return tuple(sorted(values))


_WHOLE = re.compile(r"[+-]?[0-9]+")


def _parse_pairs(params: str, text: str) -> tuple[tuple[str, float], ...]:
    """`level=gain` (and rbp's `p=persistence`) pairs as trec_eval 10 reads them: each
    comma-separated part one name=value; a name that is not a whole number other than
    p is ignored."""
    parts = params.split(",")
    if any(part.count("=") != 1 for part in parts):
        raise ValueError(f"measures: {text!r} has malformed pair parameters; write "
                         f"name=value pairs separated by commas, e.g. ndcg.1=3,2=9 or "
                         f"rbp.p=0.8")
    pairs = []
    for part in parts:
        key, _, value = part.partition("=")
        number = _atof(value)
        if not math.isfinite(number):
            raise ValueError(f"measures: {part!r} in {text!r} is not a finite number")
        pairs.append((key, number))
    return tuple(pairs)


def _label(name: str, param: Any) -> str:
    """The name trec_eval prints for a measure and one of its cutoffs (or None)."""
    if param is None:
        return name
    if MEASURES[name].params == "points":  # snprintf into strlen(name) + 10 bytes
        return f"{name}_{param:3.2f}"[:len(name) + 9]
    return f"{name}_{param}"


def _slots(chosen: Mapping[str, Chosen]) -> list[Slot]:
    """[(name, cutoff or None)] of the measures' printed values, in order."""
    return [(name, p) for name, c in chosen.items()
            for p in (c.values if MEASURES[name].params in ("cuts", "points") else (None,))]


def _printed(name: str, chosen: Mapping[str, Chosen], param: Any) -> str:
    c = chosen[name]
    if MEASURES[name].params in ("values", "pairs"):
        return name if c.text is None else f"{name}_{c.text}"
    return _label(name, param)


@dataclass
class TrecReport:
    """trec_eval's per-query values and `all` line, in its print order.

    `columns` are the printed names of the per-query measures and `values[row]` the
    values of `queries[row]` (a text column, relstring's, holds 0 there and its strings
    in `texts[column]`); `totals` the (name, value) pairs of the `all` line. A name may
    repeat: trec_eval prints two recall points that round to the same two decimals as
    two lines of one name. `per_query` ({qid: {name: value}}) and `summary` ({name:
    value}) are the same as dicts, where a repeated name keeps its last value. With
    `zscores` every value is a z-score and every name but runid is printed with a Z.
    """

    queries: list[str]
    columns: list[str]
    values: FloatArray
    totals: list[tuple[str, Any]]
    runid: str
    texts: dict[int, list[str]] = field(default_factory=dict)
    longs: frozenset[str] = frozenset()  # names printed as whole numbers
    zscores: bool = False

    @property
    def per_query(self) -> dict[str, dict[str, Any]]:
        out = {}
        for row, (qid, values) in enumerate(zip(self.queries, self.values.tolist())):
            out[qid] = {name: (self.texts[c][row] if c in self.texts else value)
                        for c, (name, value) in enumerate(zip(self.columns, values))}
        return out

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.totals)

    def lines(self, per_query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output: `measure<TAB>qid|all<TAB>value`, values to 4 decimals: each
        query's lines (per_query, trec_eval's -q), then the summary's, 'all' (unless
        summary=False, trec_eval's -n)."""
        out = []
        if per_query:
            for row, (qid, values) in enumerate(zip(self.queries, self.values.tolist())):
                for c, (name, value) in enumerate(zip(self.columns, values)):
                    if c in self.texts:
                        out.append(f"{name:<22}\t{qid}\t'{self.texts[c][row]}'")
                    else:
                        out.append(self._line(name, qid, value))
        if summary:
            out += [self._line(name, "all", value) for name, value in self.totals]
        return out

    def _line(self, name: str, qid: str, value: Any) -> str:
        if name == "runid":
            return f"{name:<22}\t{qid}\t{value}"
        if self.zscores:
            return f"Z{name:<22}\t{qid}\t{_fixed(value)}"
        if name in self.longs:
            return f"{name:<22}\t{qid}\t{int(value)}"
        return f"{name:<22}\t{qid}\t{_fixed(value)}"


def _fixed(value: float) -> str:
    """C's %6.4f, which prints a NaN with its sign ("-nan")."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


def evaluate_files(qrels_path: PathLike, run_path: PathLike,
                   measures: str | Iterable[str] | None = None, *, relevance_level: int = 1,
                   depth: int | None = None, complete: bool = False, judged_only: bool = False,
                   num_docs: int | None = None, zscores: PathLike | None = None,
                   n_threads: int | None = None,
                   stage: Callable[[str], None] | None = None) -> TrecReport:
    """trec_eval's measures of a run against qrels, from file paths (plain or gzip);
    zscores is the path of a `qid measure mean stddev` file (trec_eval's -Z); `stage`,
    if given, is called with the name of each of the three steps as it starts."""
    stage = stage or (lambda name: None)
    table = read_zscores(zscores) if zscores is not None else None
    stage("reading the qrels")
    qrels = io.read_qrels(qrels_path)
    stage("reading the run")
    run = io.read_run(run_path)
    stage("evaluating")
    return evaluate_trec(qrels, run, measures, relevance_level=relevance_level, depth=depth,
                         complete=complete, judged_only=judged_only, num_docs=num_docs,
                         zscores=table, n_threads=n_threads)


def read_zscores(path: PathLike) -> dict[tuple[str, str], tuple[float, float]]:
    """{(qid, measure): (mean, stddev)} of a trec_eval -Z file: lines `qid measure mean
    stddev`, numbers read as C's atof; the first line of a pair given twice wins."""
    table: dict[tuple[str, str], tuple[float, float]] = {}
    path = readable(path, "zscores (-Z)")
    with open(path, encoding="utf-8", errors="surrogateescape") as lines:
        for number, line in enumerate(lines, start=1):
            parts = line.split()
            if len(parts) != 4:
                raise ValueError(f"{path}:{number}: a z-score line has 4 fields (qid "
                                 f"measure mean stddev); got {line.rstrip()!r}")
            table.setdefault((parts[0], parts[1]), (_atof(parts[2]), _atof(parts[3])))
    if not table:
        raise ValueError(f"{path}: no z-score lines (qid measure mean stddev); trec_eval "
                         f"cannot read an empty file either")
    return table


def evaluate_trec(qrels: io.Qrels, run: io.Run, measures: str | Iterable[str] | None = None, *,
                  relevance_level: int = 1, depth: int | None = None, complete: bool = False,
                  judged_only: bool = False, num_docs: int | None = None,
                  zscores: Mapping[tuple[str, str], tuple[float, float]] | None = None,
                  n_threads: int | None = None) -> TrecReport:
    """The TrecReport of `io.Qrels` and `io.Run` (see evaluate_files): judged_only is
    trec_eval's -J (unjudged documents leave the ranking), num_docs its -N (the
    collection size, read by utility's fourth coefficient; default 0, as trec_eval's),
    zscores the table of read_zscores (-Z)."""
    chosen = parse_measures(measures)
    level = check_int(relevance_level, "relevance_level", 0,
                      " (trec_eval counts unjudged documents as relevant below 0)")
    num_docs = 0 if num_docs is None else check_int(num_docs, "num_docs", 0)
    truth, topk, queries, documents = io.trec_arrays(qrels, run, depth=depth,
                                                     complete=complete)
    if not complete:  # queries holds the judged queries with results
        missing = np.setdiff1d(factorize(qrels.queries)[0], queries)
        if missing.size:
            raise ValueError(
                f"{qrels.path}: query {str(missing[0])!r} is judged but {run.path} has no "
                f"results for it ({missing.size} such queries); trec_eval 10 stops here "
                f"too. Pass complete=True (-c) to score such queries 0, or drop them from "
                f"the qrels")
    if not queries.size:
        raise ValueError(f"{run.path}: no query has both judgments and results")
    _check_levels(truth, queries, qrels.path)
    bogus = np.zeros(queries.shape[0], np.bool_)
    if complete:
        topk, bogus = _bogus_rankings(topk, documents)
    slots = [slot for slot in _slots(chosen) if MEASURES[slot[0]].code >= 0]
    values = _per_query(slots, chosen, truth, topk, level, judged_only, num_docs, n_threads)
    n_q = queries.shape[0]
    qids = [str(q) for q in queries]
    if bogus.any():
        # what trec_eval resets after scoring its stand-in ranking (by plain names only)
        for (name, p), column in values.items():
            if name in ("num_ret", "unj") or (
                    name in ("utility", "rbp_resid") and chosen[name].text is None):
                column[bogus] = 0.0
    for (name, p), column in values.items():
        if MEASURES[name].total == "geometric":
            values[name, p] = np.log(np.maximum(column, MIN_GEO_MEAN))
    if zscores is not None:
        for (name, p), column in values.items():
            values[name, p] = _zscores(column, qids, _printed(name, chosen, p), zscores)
    texts: dict[int, list[str]] = {}
    totals: list[tuple[str, Any]] = []
    for name, c in chosen.items():
        kind = MEASURES[name].total
        if name == "runid":
            totals.append(("runid", run.runid))
        elif name == "num_q":
            totals.append(("num_q", n_q))
        elif kind == "none":
            continue
        elif name == "num_rel" and complete:
            # trec_eval's -c summary recounts the raw qrels: every level > 0, whatever -l
            totals.append(("num_rel", int(np.count_nonzero(qrels.relevance > 0))))
        else:
            for p in (c.values if MEASURES[name].params in ("cuts", "points") else (None,)):
                total = _sum_in_order(values[name, p])
                if kind == "mean":
                    total /= n_q
                elif kind == "geometric":
                    total = math.exp(total / n_q)
                totals.append((_printed(name, chosen, p), total))
    columns: list[str] = []
    table: list[FloatArray] = []
    for name, p in _slots(chosen):
        if MEASURES[name].shown in ("value", "long"):
            columns.append(_printed(name, chosen, p))
            table.append(values[name, p])
        elif MEASURES[name].shown == "text":
            strings = _relstrings(truth, topk, chosen[name].values[0], judged_only)
            if chosen[name].text is None:
                strings = ["" if b else text for text, b in zip(strings, bogus.tolist())]
            texts[len(columns)] = strings
            columns.append(_printed(name, chosen, p))
            table.append(np.zeros(n_q))
    longs = frozenset(name for name in chosen if MEASURES[name].shown == "long"
                      or name == "num_q")
    return TrecReport(qids, columns,
                      np.stack(table, axis=1) if table else np.zeros((n_q, 0)),
                      totals, run.runid, texts, longs, zscores is not None)


# the one document of the ranking trec_eval's -c gives a judged query without results
_BOGUS_DOCNO = "ceci_nest_pas_un_docno"


def _bogus_rankings(topk: IntArray, documents: AnyArray) -> tuple[IntArray, Any]:
    """trec_eval -c scores a judged query without results as if it had retrieved one
    document, "ceci_nest_pas_un_docno" (not in the qrels unless judged there), then
    resets some of its values: (the lists with that ranking, which rows are such)."""
    bogus = ~(np.asarray(topk) >= 0).any(axis=1)  # a query of the run retrieved something
    if not bogus.any():
        return topk, bogus
    at = np.searchsorted(documents, _BOGUS_DOCNO)
    judged = at < documents.shape[0] and documents[at] == _BOGUS_DOCNO
    lists = np.array(topk, dtype=np.int64)
    if lists.shape[1] == 0:
        lists = np.full((lists.shape[0], 1), -1, np.int64)
    lists[bogus, 0] = at if judged else documents.shape[0]
    return lists, bogus


def _zscores(column: FloatArray, qids: Sequence[str], name: str,
             zscores: Mapping[tuple[str, str], tuple[float, float]]) -> FloatArray:
    """trec_eval's -Z: (value − mean) / stddev of the query's line for the measure;
    0 where stddev is 0 and the value is the mean; -1000000 where there is no line or
    stddev is 0 and the value differs."""
    out = np.empty_like(column)
    for row, (qid, value) in enumerate(zip(qids, column.tolist())):
        mean, stddev = zscores.get((qid, name), (None, None))
        if mean is None:
            out[row] = MISSING_ZSCORE
        elif stddev:
            out[row] = (value - mean) / stddev
        else:
            out[row] = 0.0 if value == mean else MISSING_ZSCORE
    return out


def _relstrings(truth: SparseMatrix, topk: IntArray, width: int,
                judged_only: bool) -> list[str]:
    """relstring: the levels of each query's first `width` ranked documents, one
    character each (0-9, '>' above 9, '-' not in the qrels, '.' pooled unjudged)."""
    width = max(int(width) if abs(width) < 2 ** 62 else (2 ** 62 if width > 0 else 0), 0)
    n_docs = truth.shape[1] + 1  # room for the one id past the documents (-c)
    rows = np.repeat(np.arange(truth.shape[0], dtype=np.int64), np.diff(truth.indptr))
    keys = rows * n_docs + truth.indices
    out = []
    for i, row in enumerate(np.asarray(topk)):
        docs = row[row >= 0].astype(np.int64)
        where = np.searchsorted(keys, i * n_docs + docs)
        found = (where < keys.shape[0]) & (keys[np.minimum(where, keys.shape[0] - 1)]
                                           == i * n_docs + docs)
        levels = np.where(found, truth.data[np.minimum(where, keys.shape[0] - 1)], -1.0)
        levels[found & (levels < 0)] = -2.0
        if judged_only:
            levels = levels[levels >= 0]
        out.append("".join(_REL_CHAR.get(int(v), ">" if v > 9 else "<")
                           for v in levels[:width].tolist()))
    return out


_REL_CHAR = {**{j: str(j) for j in range(10)}, -1: "-", -2: "."}


def _check_levels(truth: SparseMatrix, queries: AnyArray, path: str) -> None:
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


def _sum_in_order(values: FloatArray) -> float:
    """Σ values added left to right, as trec_eval accumulates its queries (numpy's sum
    adds pairwise, which can round the 4th decimal of the mean the other way)."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def _per_query(slots: Sequence[Slot], chosen: Mapping[str, Chosen], truth: SparseMatrix,
               topk: IntArray, level: int, judged_only: bool, num_docs: int,
               n_threads: int | None) -> dict[Slot, FloatArray]:
    """{(measure, cutoff): float64 per query} for (measure, cutoff) slots (cutoff None
    for a measure of one value); gm_map is map's values, gm_bpref bpref's."""
    if not slots:  # runid, num_q and relstring only
        return {}
    data = check_truth(truth)
    columns = kernel_slots(slots, chosen)
    out = run_kernel(data.indptr, data.indices, data.data, topk, float(level), columns,
                     judged_only, num_docs, data.max_row_nnz, n_threads)
    return {slot: out[s] for s, slot in enumerate(slots)}


def kernel_slots(slots: Sequence[Slot], chosen: Mapping[str, Chosen]) -> tuple[AnyArray, ...]:
    """The kernel's slot arrays (code, cut, point, lo, hi, extra levels, extra values) of
    (measure, cutoff) slots and the measures' parameters ({name: Chosen})."""
    code: list[int] = []
    cut: list[int] = []
    point: list[float] = []
    lo: list[int] = []
    hi: list[int] = []
    extra_level: list[int] = []
    extra_value: list[float] = []
    for name, p in slots:
        measure = MEASURES[name]
        values: Any = chosen[name].values if name in chosen else measure.default
        code.append(measure.code)
        cut.append(p if measure.params == "cuts" else 0)
        point.append(0.0)
        lo.append(len(extra_value))
        if measure.params == "points":
            point[-1] = float(p)
        elif name == "set_F":
            point[-1] = values[0]
        elif measure.params == "values":  # utility's coefficients, 11pt_avg's points
            extra_level += [0] * len(values)
            extra_value += list(values)
        elif measure.params == "pairs":
            persistence = [v for key, v in values if key == "p"]
            point[-1] = persistence[-1] if persistence else 0.9  # trec_eval: the last
            if name != "rbp_resid":
                for key, v in values:
                    if _WHOLE.fullmatch(key):
                        extra_level.append(whole_number(key, _LONG_MAX))
                        extra_value.append(v)
        hi.append(len(extra_value))
    return (np.array(code, np.int64), np.array(cut, np.int64), np.array(point, np.float64),
            np.array(lo, np.int64), np.array(hi, np.int64),
            np.array(extra_level, np.int64), np.array(extra_value, np.float64))


def run_kernel(indptr: IntArray, indices: AnyArray, values: FloatArray, lists: AnyArray,
               level: float, columns: Sequence[AnyArray], judged_only: bool, num_docs: int,
               max_row_nnz: int, n_threads: int | None) -> FloatArray:
    """trec_eval's kernel over checked CSR arrays and lists: (slots, queries) values."""
    n_docs = int(max(lists.max(initial=-1), indices.max(initial=-1))) + 1
    with numba_threads(n_threads) as threads:
        return trec_values(indptr, indices, values, lists, level, columns, threads,
                           max_row_nnz, n_docs, judged_only, num_docs,
                           int(max(values.max(initial=0.0), 0.0)))
