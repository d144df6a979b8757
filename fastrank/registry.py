"""The registry: one table of every metric fastrank computes, read by every part of it.

    import fastrank as fr
    fr.METRICS["ndcg"]                 # Metric(name="ndcg", family="ranking", ...)
    fr.METRICS["ndcg"].formula         # one line, also in errors and the docs
    fr.METRICS.to_frame()              # the whole table as a pandas DataFrame
    fr.METRICS.names("beyond")         # the names of one family

For each metric: its canonical name; its family; whether it takes a cutoff (`name@k`) and
which parameters (`name(p=v)`) with their defaults and ranges; the side inputs it needs;
its formula; how each convention computes it; which engine computes it (the family of
passes that runs it, `fastrank.passes.FAMILIES`: `ranking` the one-pass kernel, `trec`
trec_eval's own arithmetic, `beyond` the beyond-accuracy walk, `aspects` α-nDCG,
`intents` the intent-aware walk, ...; or a function of its own: `factors`, `ratings`,
`overlap`), its kernel code per convention (the variant a kernel computes); how per-user
values become the mean, and where a convention takes it otherwise (`aggregates`);
where the definition comes from; and what the tests compare it against (`oracle`). The
grammar (`fastrank.grammar`) parses labels against this table, the engine
(`fastrank.engine`) computes from it, the tests generate their cases from it, and the docs'
metric table and metric reference (docs/metrics.md) are generated from it.

Adding a metric: see docs/contributing.md, "Adding a metric".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
import dataclasses
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeAlias

from ._kernels import codes
from ._types import DataFrame

# a request's parameters: ((name, value), ...) or {name: value}
Params: TypeAlias = "Iterable[tuple[str, Any]] | Mapping[str, Any]"

CONVENTIONS = ("recsys", "trec", "implicit")
FAMILIES = ("ranking", "counts", "trec", "beyond", "catalogue", "aspects", "ratings",
            "debiased", "auc", "overlap")
# "factors": computed from the score of every item (fr.evaluate_factors, fr.evaluate_model);
# "overlap": two systems' lists compared with each other (fr.overlap)
ENGINES = ("ranking", "trec", "beyond", "aspects", "intents", "ratings", "debiased", "factors",
           "auc", "calibration", "overlap")
AGGREGATES = ("mean", "pooled", "sum", "geometric", "catalogue", "weighted", "available")


@dataclass(frozen=True)
class Param:
    """A parameter written `name(param=value)`: its kind, default (None: required, or
    for `rel` "value > 0"), inclusive range, meaning, and values that show it (in error
    messages, and drawn by the property tests)."""

    name: str
    kind: type
    default: object
    low: float
    high: float
    doc: str
    examples: tuple[Any, ...] = ()

    @property
    def needed(self) -> bool:
        """Must a label give it? (No default; `rel`'s None means "value > 0".)"""
        return self.default is None and self.name != "rel"

    @property
    def example(self) -> Any:
        """A value that shows it, in a label written for the user (its middle example)."""
        return self.examples[len(self.examples) // 2] if self.examples else 1

    def describe(self) -> str:
        if self.kind is str:
            return (f"{self.name} one of {', '.join(self.examples)}, default "
                    f"{self.default!r}: {self.doc}")
        if self.name == "rel":
            return f"rel > 0, default: any value above 0 is relevant: {self.doc}"
        default = "required" if self.default is None else repr(self.default)
        return f"{self.name} in [{self.low:g}, {self.high:g}], default {default}: {self.doc}"


# The relevance threshold of the binary measures (ir-measures' rel=, trec_eval's -l): an
# entry is relevant when its value is >= rel (default: > 0).
REL = Param("rel", float, None, 0.0, float("inf"),
            "an entry is relevant when its stored value is at least rel (default: above 0)",
            (1, 2, 3, 0.5))


# ERR's largest grade and RBP's persistence
MAX_GRADE = Param("max_grade", float, 4.0, 0.001, 1024.0,
                  "the largest grade G: an item of grade g stops the user with chance "
                  "(2^min(g, G) − 1)/2^G", (1.0, 3.0, 4.0))
PERSISTENCE = Param("p", float, 0.8, 0.0, 1.0,
                    "persistence: the chance the user goes on to the next rank",
                    (0.5, 0.8, 0.95))


@dataclass(frozen=True)
class Metric:
    """One registered metric. Read-only; see the module docstring for the fields."""

    name: str
    formula: str
    family: str = "ranking"
    engine: str = "ranking"
    cutoff: bool = True          # takes @k; without it, @K (the list length)
    params: tuple[Param, ...] = ()
    needs: tuple[str, ...] = ()            # side inputs, each "a" or "a|b" (one of them)
    codes: Mapping[str, int] = field(default_factory=dict)         # convention -> kernel code
    conventions: Mapping[str, str] = field(default_factory=dict)   # convention -> how it differs
    aggregate: str = "mean"
    source: str = ""
    entry: str = "fr.evaluate"   # the function that computes it
    uncut_code: Mapping[str, int] = field(default_factory=dict)    # convention -> code without @k
    kernel_param: str = ""       # the parameter the kernel reads per slot (slot_param)
    truth_view: str = ""         # "stored": every stored entry counts as relevant (judged)
    oracle: tuple[str, ...] = ()  # what the tests compare it against: "tool: tests/file.py"
    # convention -> how the mean is taken where it differs from `aggregate`
    aggregates: Mapping[str, str] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the registry's entry of its name (a Result, with its requests, goes
        to other processes and caches): its mappings are read-only proxies, which pickle
        cannot copy. An entry outside the registry is pickled by its fields."""
        if METRICS.get(self.name) is self:
            return (_registered, (self.name,))
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields.update((name, dict(fields[name])) for name in _PROXIES)
        return (_rebuilt, (fields,))

    @property
    def per_user(self) -> bool:
        """Does it have a value per user (catalogue metrics have one value)?"""
        return self.aggregate != "catalogue"

    def kernel_value(self, params: Params) -> float:
        """The float the kernel reads for this metric (slot_param) from a request's
        {name: value} parameters: the kernel parameter's value or default, else 0."""
        if not self.kernel_param:
            return 0.0
        return float(self.value(params, self.kernel_param))

    def value(self, params: Params, name: str) -> Any:
        """A parameter's value in a request's {name: value} parameters, or its default."""
        return dict(params).get(name, self.param(name).default)  # type: ignore[union-attr]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def code(self, convention: str, has_cutoff: bool = True) -> int | None:
        """The kernel code under a convention (None: the engine needs none)."""
        if not has_cutoff and convention in self.uncut_code:
            return self.uncut_code[convention]
        return self.codes.get(convention)

    def describe(self, convention: str) -> str:
        """The formula under a convention, one line."""
        return self.conventions.get(convention, self.formula)


def _same(code: int) -> Mapping[str, int]:
    return MappingProxyType({c: code for c in CONVENTIONS})


def _ranking(name: str, formula: str, code: int, *, implicit: int | None = None,
             trec: int | None = None, cutoff: bool = True, params: tuple[Param, ...] = (REL,),
             conventions: dict[str, str] | None = None, aggregate: str = "mean",
             family: str = "ranking", source: str = "",
             uncut: dict[str, int] | None = None,
             aggregates: dict[str, str] | None = None) -> Metric:
    table = {c: code for c in CONVENTIONS}
    if implicit is not None:
        table["implicit"] = implicit
    if trec is not None:
        table["trec"] = trec
    return Metric(name=name, formula=formula, family=family, cutoff=cutoff, params=params,
                  codes=MappingProxyType(table),
                  conventions=MappingProxyType(conventions or {}), aggregate=aggregate,
                  source=source, uncut_code=MappingProxyType(uncut or {}),
                  aggregates=MappingProxyType(aggregates or {}))


# Debiased (inverse-propensity-weighted) metrics, Yang et al. 2018: a relevant item i has
# weight w_i = 1/p_i, its propensity from propensity= or from train= popularity (gamma).
GAMMA = Param("gamma", float, 0.0, -1.0, 9.0,
              "the power-law exponent of the popularity propensities estimated from train=: "
              "p_i ∝ max(n_i, 1)^((γ+1)/2), the most popular item p = 1 (not with "
              "propensity=)", (-1.0, 0.0, 1.0, 2.0))
_DEBIASED_SOURCE = ("Yang et al. 2018 (RecSys), IPS and SNIPS; propensities p_i ∝ "
                    "n_i^((γ+1)/2)")


def _debiased(name: str, formula: str, code: int) -> Metric:
    """A debiased metric: the same formula under every convention (only the counted
    users differ: trec counts a judged user with m = 0, as 0)."""
    return Metric(name, formula, family="debiased", engine="debiased", params=(GAMMA, REL),
                  needs=("propensity|train",), codes=_same(code), kernel_param="gamma",
                  source=_DEBIASED_SOURCE)


# Intent-aware measures (Agrawal et al. 2009) over the item -> aspect matrix: a user's
# intents are the aspects of its relevant items, P(a) = 1/S over its S intents, and an
# item is relevant to intent a when it is relevant and covers a. The trec convention is
# TREC's ndeval 4.5 (pyndeval, ir-measures' provider), value for value.
_INTENTS = ("intents a: the aspects of the user's relevant items, P(a) = 1/S over its S "
            "intents; an item is relevant to a if relevant and covering a")
_ALPHA_DCG = Param("alpha", float, 0.5, 0.0, 1.0, "the redundancy penalty",
                   (0.0, 0.2, 0.5, 0.9))
_MAX_GRADE = Param("max_grade", float, 0.0, 0.0, 1000.0,
                   "g_max in R = (2^g − 1)/2^g_max; 0 (default): the largest value in "
                   "truth (recsys; under trec grades are binary, R = 1/2)", (0, 3, 4, 5))
_NDEVAL = "TREC ndeval 4.5 (pyndeval)"
_PATIENCE = Param("beta", float, 0.5, 0.0, 1.0,
                  "patience: the chance the user goes on to the next rank",
                  (0.2, 0.5, 0.8))
_NRBP_SUM = ("Σ_r β^{r−1}·Σ_{a∈aspects(i_r)} rel(i_r)·(1−α)^{c_a}, c_a = earlier relevant "
             "items covering a, over the whole list")


# ndeval scores its topics (a judged user with a relevant item that has an aspect): under
# trec the mean of an aspect measure is over them
_OVER_TOPICS = MappingProxyType({"trec": "available"})


def _intent_aware(name: str, formula: str, trec: str, source: str,
                  params: tuple[Param, ...] = (REL,), kernel_param: str = "",
                  cutoff: bool = True, *, code: int) -> Metric:
    return Metric(name, formula, family="aspects", engine="intents", needs=("item_aspects",),
                  params=params, kernel_param=kernel_param, cutoff=cutoff, codes=_same(code),
                  conventions=MappingProxyType({"trec": trec} if trec else {}), source=source,
                  aggregates=_OVER_TOPICS)


_INTENT_AWARE = (
    _intent_aware("p_ia", "Σ_a P(a)·hits_a@k / k, hits_a = items relevant to intent a in the "
                  "first k; " + _INTENTS, "",
                  "Agrawal et al. 2009 (WSDM); = ndeval P-IA", code=codes.IA_P),
    _intent_aware("map_ia", "Σ_a P(a)·Σ_{r≤k} P_a@r·rel_a(r) / min(k, m_a), m_a = the "
                  "relevant items covering a; " + _INTENTS,
                  "Σ_a P(a)·Σ_{r≤k} P_a@r·rel_a(r) / m_a (ndeval MAP-IA: without @k, the "
                  "whole list)", "Agrawal et al. 2009 (WSDM); trec: ndeval MAP-IA",
                  code=codes.IA_MAP),
    _intent_aware("err_ia", "Σ_a P(a)·Σ_{r≤k} R_a(r)/r·Π_{s<r}(1 − R_a(s)), R_a = (2^g − 1)"
                  "/2^g_max for an item relevant to a (g its value), else 0; " + _INTENTS,
                  "ndeval ERR-IA: binary grades (R = 1/2), divided by Σ_{r≤k} 2^-r/r (every "
                  "item relevant to every intent); @1 undivided, as ndeval: the intents the "
                  "first item covers", "Chapelle et al. 2009 (CIKM) ERR; Chapelle et al. 2011 "
                  "ERR-IA; trec: " + _NDEVAL, (_MAX_GRADE, REL), "max_grade", code=codes.IA_ERR),
    _intent_aware("nerr_ia", "err_ia@k / err_ia@k of the greedy ideal over the relevant items "
                  "(each step the largest Σ_a P(a)·R_a·Π(1 − R_a) so far; ties: lowest id)",
                  "as recsys with binary grades (R = 1/2): ndeval nERR-IA, whose ideal is "
                  "α-nDCG's greedy (α = 0.5)", "Clarke et al. 2011 (WSDM), ideal of the "
                  "collective ranking as ndeval", (_MAX_GRADE, REL), "max_grade",
                  code=codes.IA_NERR),
    _intent_aware("alpha_dcg", "Σ_{r≤k} d(r)·Σ_{a∈aspects(i_r)} rel(i_r)·(1−α)^{c_a}, c_a = "
                  "earlier relevant items covering a (α-nDCG's numerator)",
                  "ndeval α-DCG: divided by Σ_{r≤k} S·(1−α)^{r−1}·d(r) (S intents); @1 "
                  "undivided, as ndeval", "Clarke et al. 2008 (SIGIR); trec: " + _NDEVAL,
                  (_ALPHA_DCG, REL), "alpha", code=codes.IA_ALPHA_DCG),
    _intent_aware("st_recall", "|intents covered by the relevant items in the first k| / S "
                  "(S-recall, subtopic recall); " + _INTENTS, "",
                  "Zhai et al. 2003 (SIGIR) S-recall; = ndeval strec", code=codes.IA_ST_RECALL),
    _intent_aware("nrbp", "(1 − (1−α)·β)/S · " + _NRBP_SUM + " (no cutoff; S intents)", "",
                  "Clarke et al. 2009 (ICTIR) NRBP; = " + _NDEVAL + " NRBP",
                  (_ALPHA_DCG, _PATIENCE, REL), cutoff=False, code=codes.IA_NRBP),
    _intent_aware("nnrbp", "nrbp / the nrbp of α-nDCG's greedy ideal over every relevant "
                  "item, not cut at K (each step the largest Σ_a (1−α)^{c_a}; ties: lowest "
                  "id); 0 where that is 0",
                  "as recsys: ndeval nNRBP with ties to the lowest id (ndeval's go to the "
                  "larger document name, and it gives NaN, 0/0, for a topic without a "
                  "relevant document)", "Clarke et al. 2009 (ICTIR), ideal as ndeval",
                  (_ALPHA_DCG, _PATIENCE, REL), cutoff=False, code=codes.IA_NNRBP),
)

# GAUC, RecTools' partial AUCs, list overlap, miscalibration
INSUFFICIENT = Param("insufficient", str, "ignore", 0.0, 0.0,
                     "RecTools' insufficient_handling for a user whose list has fewer than k "
                     "non-relevant items and misses a relevant one: ignore (compute as is), "
                     "exclude (NaN, left out of the mean) or raise (an error)",
                     ("ignore", "exclude", "raise"))
_RECTOOLS_AUC = ("RecTools 0.19 rectools.metrics.auc; Hiranandani et al. 2020 (ICML), "
                 "Budhiraja et al. 2020")
_AUCS_OVERLAP_CALIBRATION = (
    Metric("gauc", "Σ_u m_u·AUC_u / Σ_u m_u, AUC_u the full-ranking AUC of u's relevant "
           "items against every non-excluded non-relevant item (ties ½); users with no "
           "relevant or no non-relevant item are left out (NaN)", family="auc",
           engine="factors", cutoff=False, params=(), aggregate="weighted",
           entry="fr.evaluate_factors",
           source="Zhou et al. 2018 (KDD, DIN); RecBole GAUC"),
    Metric("partial_auc", "Σ over the list's hits with f < k non-relevant items above them "
           "of (k − f), over k·m; k counts non-relevant items, the whole list is read",
           family="auc", engine="auc", params=(INSUFFICIENT, REL), aggregate="available",
           conventions={"trec": "as recsys; a judged user with m = 0 scores 0"},
           codes=_same(codes.PARTIAL_AUC), source=_RECTOOLS_AUC + "; RecTools PartialAUC"),
    Metric("pap", "Σ over the list's first k hits with f < k non-relevant items above them "
           "of (k − f), over k·min(k, m); the whole list is read",
           family="auc", engine="auc", params=(INSUFFICIENT, REL), aggregate="available",
           conventions={"trec": "as recsys; a judged user with m = 0 scores 0"},
           codes=_same(codes.PAP), source=_RECTOOLS_AUC + "; RecTools PAP"),
    Metric("jaccard", "|A_k ∩ B_k| / |A_k ∪ B_k| of two systems' first k items (padding "
           "and repeats dropped); NaN when both are empty", family="overlap",
           engine="overlap", entry="fr.overlap", aggregate="available",
           source="Jaccard 1901"),
    Metric("rbo", "extrapolated rank-biased overlap RBO_ext of the first k items of two "
           "lists, unequal lengths by Webber et al.'s eq. 32 (padding and repeats dropped); "
           "NaN when both are empty, 0 when one is", family="overlap", engine="overlap",
           entry="fr.overlap", aggregate="available",
           params=(Param("p", float, 0.9, 0.0, 1.0, "the persistence: how far down the "
                         "lists the comparison looks", (0.5, 0.8, 0.9, 0.98)),),
           source="Webber, Moffat & Zobel 2010 (TOIS), eq. 32"),
    Metric("miscalibration", "KL(p‖q̃) = Σ_g p(g)·ln(p(g)/q̃(g)), p the aspect "
           "distribution of the user's train items, q that of the first k items, "
           "q̃ = (1 − α)·q + α·p; an item's aspects share 1 equally", family="beyond",
           engine="calibration", needs=("train", "item_aspects"), aggregate="available",
           params=(Param("alpha", float, 0.01, 0.0, 1.0, "the share of p mixed into q so "
                         "that KL stays finite", (0.0, 0.01, 0.1)),
                   Param("weights", str, "equal", 0.0, 0.0, "how the train items weigh in "
                         "p: equal, or value (each its stored value: a rating, a count)",
                         ("equal", "value")),
                   Param("positions", str, "equal", 0.0, 0.0, "how the list's items weigh "
                         "in q: equal, or log (1/log2(rank + 1))", ("equal", "log"))),
           source="Steck 2018 (RecSys), Calibrated recommendations, eq. 1–4"),
)

def _trec(name: str, formula: str, code: int, *, cutoff: bool = False,
          params: tuple[Param, ...] = (REL,), kernel_param: str = "", aggregate: str = "mean",
          family: str = "trec", source: str = "") -> Metric:
    """A measure of trec_eval's kernel: its arithmetic, negative truth values pooled but
    unjudged, a document outside the truth row retrieved but not in the pool."""
    return Metric(name, formula, family=family, engine="trec", cutoff=cutoff, params=params,
                  codes=_same(code), kernel_param=kernel_param, aggregate=aggregate,
                  source=source)


# trec_eval 10's measures of the whole list (and two with a cutoff), through its kernel
_TREC_MEASURES = (
    _trec("infap", "inferred AP: Σ over retrieved relevant r at rank j of 1/j + (j−1)/j · "
          "(judged above r)/(j−1) · (relevant above r + ε)/(judged above r + 2ε), over R; "
          "documents outside the truth skipped, negative values (pooled, unjudged) count "
          "only in the judged share (ε = 0.00001)", codes.TREC_INFAP,
          source="Yilmaz & Aslam 2006; trec_eval infAP"),
    _trec("gm_bpref", "geometric mean over users of bpref, each at least 0.00001",
          codes.TREC_BPREF, aggregate="geometric", source="trec_eval gm_bpref"),
    _trec("rprec_mult", "precision at c = (long)(mult·R + 0.9) documents: hits@c / c (0 "
          "before the first relevant document; past the list, hits / c)",
          codes.TREC_RPREC_MULT, kernel_param="mult",
          params=(Param("mult", float, None, 0.0, 1e6, "the multiple of R, e.g. 0.5 or 2",
                        (0.2, 0.5, 1.0, 2.0)), REL), source="trec_eval Rprec_mult"),
    _trec("relative_precision", "hits@k / min(k, R) (0 for R = 0)", codes.TREC_RELATIVE_P,
          cutoff=True, source="trec_eval relative_P"),
    _trec("set_precision", "hits / n over the whole list of n retrieved documents",
          codes.TREC_SET_P, source="trec_eval set_P"),
    _trec("set_relative_precision", "hits / min(n, R) over the whole list",
          codes.TREC_SET_RELATIVE_P, source="trec_eval set_relative_P"),
    _trec("set_map", "(hits / n)·(hits / R) over the whole list", codes.TREC_SET_MAP,
          source="trec_eval set_map"),
    _trec("set_f", "(β + 1)·P·R / (β·P + R) of set precision and set recall (β weighs "
          "recall, as trec_eval's set_F parameter; 0 without a hit)", codes.TREC_SET_F,
          kernel_param="beta", params=(Param("beta", float, 1.0, 0.0, 1e6, "how much "
                                             "recall weighs against precision",
                                             (0.5, 1.0, 2.0)), REL),
          source="van Rijsbergen 1979; trec_eval set_F"),
    _trec("num_nonrel_judged_ret", "retrieved documents judged non-relevant (stored, value "
          "≥ 0, not relevant); summed over users", codes.TREC_NUM_NONREL_JUDGED_RET,
          aggregate="sum", family="counts", source="trec_eval num_nonrel_judged_ret"),
    _trec("yaap", "ln((1 + Σ P@rank over relevant ranks) / (1 + R − that sum))",
          codes.TREC_YAAP, source="Robertson 2006; trec_eval yaap"),
    _trec("unjudged", "the share of the first k ranks (k in the denominator) holding a "
          "document without a judgment: outside the truth, or a negative value",
          codes.TREC_UNJ, cutoff=True, params=(), source="trec_eval unj"),
)


_NDCG_SOURCE = "Järvelin & Kekäläinen 2002; trec_eval ndcg_cut"
_ENTRIES = (
    _ranking("precision", "hits@k / k", codes.PRECISION, implicit=codes.PRECISION_CAPPED,
             conventions={"trec": "hits@k / k (trec_eval P_k)",
                          "implicit": "hits@k / min(k, m); mean pooled: Σ hits / Σ min(k, m)"},
             aggregates={"implicit": "pooled"}, source="trec_eval P; implicit precision_at_k"),
    _ranking("recall", "hits@k / m", codes.RECALL,
             conventions={"trec": "hits@k / m (trec_eval recall_k)"}, source="trec_eval recall"),
    _ranking("f1", "2·P·R / (P + R) of precision@k and recall@k (0 if both 0)", codes.F1,
             source="van Rijsbergen 1979; ranx f1"),
    Metric("f_beta", "(1 + β²)·P·R / (β²·P + R) of precision@k and recall@k (0 if both 0)",
           codes=_same(codes.F_BETA), kernel_param="beta",
           params=(Param("beta", float, 1.0, 0.0, 1e6, "how much more recall weighs than "
                         "precision", (0.5, 1.0, 2.0)), REL),
           source="van Rijsbergen 1979; RecTools F1Beta"),
    _ranking("hit_rate", "1 if hits@k > 0 else 0", codes.HIT_RATE,
             conventions={"trec": "1 if hits@k > 0 else 0 (trec_eval success_k)"},
             source="trec_eval success"),
    _ranking("mrr", "1 / rank of the first hit within k, else 0", codes.MRR,
             conventions={"trec": "1 / rank of the first hit within k, else 0 (trec_eval "
                                  "recip_rank without @k)"},
             source="Voorhees 1999; trec_eval recip_rank"),
    _ranking("map", "Σ_{i≤k} P@i·rel(i) / min(k, m)", codes.AP_CAPPED, trec=codes.AP_FULL,
             conventions={"trec": "Σ_{i≤k} P@i·rel(i) / m (trec_eval map_cut_k; map without "
                                  "@k = the whole list)"},
             source="trec_eval map; implicit mean_average_precision_at_k"),
    _ranking("mar", "Σ_{i≤k} P@i·rel(i) / m", codes.AP_FULL,
             source="trec_eval map_cut; RecTools MAP"),
    _ranking("ndcg", "Σ_{i≤k} g(i)·d(i) / IDCG@k, the ideal over the user's values sorted "
             "descending, cut at k", codes.NDCG, implicit=codes.NDCG_BINARY, params=(),
             uncut={"trec": codes.NDCG_UNCUT},
             conventions={"trec": "as recsys (trec_eval ndcg_cut_k); without @k trec_eval's "
                                  "ndcg: the ideal over all m relevant items",
                          "implicit": "binary gain: Σ_{i≤k} rel(i)·d(i) / Σ_{i≤min(k,m)} d(i)"},
             source=_NDCG_SOURCE),
    _ranking("ndcg_exp", "as ndcg with gain 2^g − 1 in the DCG and the ideal", codes.NDCG_EXP,
             params=(), source="Burges et al. 2005; ranx ndcg_burges"),
    _ranking("dcg", "Σ_{i≤k} g(i)·d(i)", codes.DCG, params=(), source="Järvelin & "
             "Kekäläinen 2002; ranx dcg"),
    _ranking("dcg_exp", "Σ_{i≤k} (2^g(i) − 1)·d(i)", codes.DCG_EXP, params=(),
             source="Burges et al. 2005; ranx dcg_burges"),
    _ranking("cg", "Σ_{i≤k} g(i)", codes.CG, params=(), source="Järvelin & Kekäläinen 2002"),
    _ranking("r_precision", "hits@m / m (the whole list if m > K); takes no @k",
             codes.R_PRECISION, cutoff=False,
             conventions={"trec": "hits@m / m (trec_eval Rprec)"}, source="trec_eval Rprec"),
    _ranking("auc", "implicit's top-k AUC: Σ over the list's misses of the hits above them, "
             "plus (hits + m)/2·(n_neg − misses), over m·n_neg (n_neg = n_items − m)",
             codes.AUC, source="implicit AUC_at_k; full ranking in fr.evaluate_factors"),
    _ranking("hits", "hits@k: the number of relevant items in the first k", codes.HITS,
             source="ranx hits"),
    Metric("judged", "the share of the real items in the first k that have a stored truth "
           "entry (judged, whatever the value); 0 for an empty list",
           codes=_same(codes.HIT_SHARE), truth_view="stored",
           source="Sakai 2007; ir-measures Judged"),
    Metric("err", "Σ_{i≤k} R(i)/i·Π_{j<i} (1 − R(j)), R = (2^min(g, G) − 1)/2^G for a "
           "relevant item of grade g (else 0), G = max_grade: the cascade user's expected "
           "reciprocal rank", codes=_same(codes.ERR), kernel_param="max_grade",
           params=(MAX_GRADE, REL), source="Chapelle et al. 2009; gdeval ERR (G = 4)"),
    Metric("nerr", "err@k / the err@k of the user's relevant values sorted descending",
           codes=_same(codes.NERR), kernel_param="max_grade", params=(MAX_GRADE, REL),
           source="Chapelle et al. 2009"),
    Metric("rbp", "(1 − p)·Σ_{i≤k} p^(i−1)·rel(i), rel binary: rank-biased precision of a "
           "user who goes on to the next rank with chance p", codes=_same(codes.RBP),
           kernel_param="p", params=(PERSISTENCE, REL),
           source="Moffat & Zobel 2008; ir-measures RBP"),
    Metric("rbp_resid", "1 − (1 − p)·Σ_{i≤k} p^(i−1)·judged(i): the most that ranks without "
           "a stored truth entry, and ranks past k, could add to rbp@k", codes=_same(
               codes.RBP_RESID), kernel_param="p", params=(PERSISTENCE,),
           truth_view="stored", source="Moffat & Zobel 2008 (the residual)"),
    _ranking("num_ret", "the number of real items in the first k (no padding, no repeats); "
             "summed over users", codes.RETRIEVED, params=(), aggregate="sum",
             family="counts", source="trec_eval num_ret"),
    _ranking("num_rel", "m, the number of relevant items; summed over users",
             codes.N_RELEVANT, cutoff=False, aggregate="sum", family="counts",
             source="trec_eval num_rel"),
    _ranking("num_rel_ret", "hits@k, summed over users", codes.HITS, aggregate="sum",
             family="counts", source="trec_eval num_rel_ret"),
    _ranking("gm_map", "geometric mean over users of map@k, each at least 0.00001",
             codes.AP_CAPPED, trec=codes.AP_FULL, aggregate="geometric",
             conventions={"trec": "geometric mean over users of trec's map@k (trec_eval "
                                  "gm_map), each at least 0.00001"},
             source="trec_eval gm_map; Robertson 2006"),
    Metric("bpref", family="trec",
           formula="1/R·Σ over retrieved relevant r of (1 − min(R, N above r) / min(R, N)), R "
           "relevant and N judged non-relevant (trec_eval bpref)",
           engine="trec", cutoff=False, params=(REL,), codes=_same(codes.TREC_BPREF),
           source="Buckley & Voorhees 2004; "
           "trec_eval bpref"),
    Metric("iprec", family="trec",
           formula="interpolated precision at a recall point: the best precision at any rank "
           "where recall ≥ the point (trec_eval iprec_at_recall)", engine="trec",
           cutoff=False, params=(Param("recall", float, None, 0.0, 1.0,
                                       "the recall point, e.g. 0.3",
                                       (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 1.0)), REL),
           codes=_same(codes.TREC_IPREC), kernel_param="recall",
           source="trec_eval iprec_at_recall"),
    *_TREC_MEASURES,
    Metric("novelty", "mean over the list's items of −log2(max(pop(i), 1) / U); pop(i) = "
           "training users with a positive entry for i, U = training users with any",
           engine="beyond", needs=("train",), codes=_same(0), family="beyond",
           source="Zhou et al. 2010; RecTools MeanInvUserFreq"),
    Metric("arp", "mean pop(i) over the list's items", engine="beyond", needs=("train",),
           codes=_same(1), family="beyond", source="Abdollahpouri et al. 2019"),
    Metric("ild", "mean over pairs of the list's items of 1 − Jaccard(aspects) or 1 − "
           "cosine(vectors); 0 with fewer than 2 items", engine="beyond",
           needs=("item_aspects|item_vectors",), codes=_same(2), family="beyond",
           source="Ziegler et al. 2005"),
    Metric("serendipity", "(items of the top k that are relevant and not in the user's "
           "baseline list) / k; baseline='popular': the k most popular items",
           engine="beyond", needs=("baseline",), codes=_same(3), family="beyond",
           source="Ge et al. 2010"),
    Metric("coverage", "items in the top k of any counted user / n_items (one value)",
           engine="beyond", aggregate="catalogue", family="catalogue",
           source="Herlocker et al. 2004"),
    Metric("gini", "Gini index of the exposure x over all n_items: Σ_j (2j − n − 1)·x_(j) / "
           "(n·Σx), x sorted ascending (one value)", engine="beyond",
           aggregate="catalogue", family="catalogue", source="Fleder & Hosanagar 2009"),
    Metric("entropy", "−Σ_i p(i)·ln p(i) / D, p(i) = x_i / Σx the share of the exposure x "
           "(a list shows an item once: padding and repeats are skipped) of the D items shown "
           "(RecBole's ShannonEntropy; one value)", engine="beyond",
           aggregate="catalogue", family="catalogue", source="RecBole 1.2 ShannonEntropy"),
    Metric("ab_ndcg", "Σ_{i≤k} G(i)·d(i) / greedy IDCG@k, G(i) = 1 − Π_φ (1 − p(i,φ)·s[φ]), "
           "s the user's remaining interest in each aspect (from γ_u, its aspect "
           "preferences), p(i,φ) = α for an unrated item with aspect φ, β·r/r_max for a "
           "rated one", engine="aspects", needs=("item_aspects",), entry="fr.ab_ndcg",
           family="aspects", params=(Param("alpha", float, 0.01, 0.0, 1.0,
                                           "the chance an unjudged item satisfies an aspect"),
                                     Param("beta", float, 0.5, 0.0, 1.0,
                                           "the weight of a judged item's grade")),
           source="Parapar & Radlinski 2021"),
    Metric("alpha_ndcg", "Σ_{i≤k} rel(i)·Σ_{φ∈aspects(i)} (1−α)^{c_φ}·d(i) / greedy IDCG@k",
           engine="aspects", needs=("item_aspects",), family="aspects",
           params=(Param("alpha", float, 0.5, 0.0, 1.0, "the redundancy penalty",
                         (0.0, 0.2, 0.5, 0.9)),),
           kernel_param="alpha", aggregates=_OVER_TOPICS,
           source="Clarke et al. 2008; TREC ndeval"),
    Metric("rmse", "√(Σe²/N) over every stored truth entry, e = prediction − rating",
           engine="ratings", cutoff=False, entry="fr.rmse", family="ratings",
           aggregate="pooled", source="standard"),
    Metric("mae", "Σ|e|/N over every stored truth entry", engine="ratings", cutoff=False,
           entry="fr.mae", family="ratings", aggregate="pooled", source="standard"),
    *(_debiased(*entry) for entry in (
        ("recall_ips", "Σ_{hits i} w_i / (m·w̄), w_i = 1/p_i, w̄ = the mean w over every "
         "relevant truth entry (IPS; = recall@k if the p_i are equal)", codes.RECALL_IPS),
        ("recall_snips", "Σ_{hits i} w_i / Σ_{relevant i} w_i (SNIPS; = recall@k if the p_i "
         "are equal)", codes.RECALL_SNIPS),
        ("dcg_ips", "Σ_{hits i} w_i·d(rank_i) / (m·w̄), binary gain (IPS)", codes.DCG_IPS),
        ("dcg_snips", "Σ_{hits i} w_i·d(rank_i) / Σ_{relevant i} w_i, binary gain (SNIPS)",
         codes.DCG_SNIPS),
        ("ap_ips", "Σ_{hits i} w_i·P@rank_i / (m·w̄), P@r = hits@r / r unweighted (IPS; "
         "= mar@k if the p_i are equal)", codes.AP_IPS),
        ("ap_snips", "Σ_{hits i} w_i·P@rank_i / Σ_{relevant i} w_i, P@r = hits@r / r "
         "unweighted (SNIPS; = mar@k if the p_i are equal)", codes.AP_SNIPS))),
    *_INTENT_AWARE,
    *_AUCS_OVERLAP_CALIBRATION,
)


# What the tests compare each metric against, beyond the property tests: "tool: test file".
# The tools are ORACLE_TOOLS' keys (tests/test_registry.py checks that each named file exists
# and uses its tool, and that every name a tool's dialect maps is compared with that tool).
ORACLE_TOOLS = {
    "reference": "a plain-Python reference written from the formula (tests/reference*.py)",
    "trec_eval": "trec_eval 10, built from NIST's source in the tests",
    "pytrec_eval": "pytrec_eval",
    "ir_measures": "ir-measures 0.4 (its providers pytrec_eval, gdeval, cwl-eval, pyndeval)",
    "ranx": "ranx 0.3",
    "implicit": "implicit 0.7",
    "sklearn": "scikit-learn",
    "pyndeval": "TREC's ndeval 4.5 (pyndeval)",
    "recbole": "RecBole 1.2's formula as its code computes it, or RecBole 1.2.1 itself "
               "(tests/test_recbole_oracle.py, skipped where RecBole is not installed)",
    "rectools": "RecTools 0.19's formula as its code computes it, or its documented examples",
    "spec": "SPEC §4's worked example",
}
_REF, _ORACLES_PY, _DIALECTS_PY = ("tests/test_reference.py", "tests/test_oracles.py",
                                   "tests/test_dialects.py")


def _oracles(reference: str, *tools: str,
             dialects_of: Iterable[str] = ()) -> tuple[str, ...]:
    """(reference test file, "tool: file" ...) plus "tool: tests/test_dialects.py" for each
    tool of dialects_of, whose names tests/test_dialects.py compares with the tool."""
    return (f"reference: {reference}", *tools, *(f"{t}: {_DIALECTS_PY}" for t in dialects_of))


_IR_TOOLS = ("trec_eval", "ir_measures", "ranx")
_TREC_EVAL_ONLY = _oracles(_REF, dialects_of=("trec_eval",))
_TREC_EVAL_AND_IR = _oracles(_REF, dialects_of=("trec_eval", "ir_measures"))
_INTENTS_PY = "tests/test_intents.py"
_RECBOLE = "recbole: tests/test_recbole_oracle.py"  # RecBole itself, where installed
_INTENT_ORACLES = _oracles(_INTENTS_PY, f"pyndeval: {_INTENTS_PY}", f"ir_measures: {_INTENTS_PY}")
_ORACLES = {
    "precision": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", f"implicit: {_ORACLES_PY}",
                          "implicit: tests/test_implicit.py", _RECBOLE,
                          dialects_of=_IR_TOOLS + ("recbole", "rectools")),
    "recall": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", _RECBOLE,
                       dialects_of=_IR_TOOLS + ("recbole", "rectools")),
    "f1": _oracles(_REF, dialects_of=("ranx",)),
    "f_beta": _oracles(_REF, dialects_of=("rectools",)),
    "hit_rate": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", _RECBOLE,
                         dialects_of=_IR_TOOLS + ("recbole", "rectools")),
    "mrr": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", _RECBOLE,
                    dialects_of=_IR_TOOLS + ("recbole", "rectools")),
    "map": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", f"implicit: {_ORACLES_PY}",
                    "implicit: tests/test_implicit.py", _RECBOLE,
                    dialects_of=_IR_TOOLS + ("recbole",)),
    "mar": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", f"sklearn: {_ORACLES_PY}",
                    dialects_of=("rectools",)),
    "ndcg": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", f"implicit: {_ORACLES_PY}",
                     "implicit: tests/test_implicit.py", f"sklearn: {_ORACLES_PY}", _RECBOLE,
                     dialects_of=_IR_TOOLS + ("recbole", "rectools")),
    "ndcg_exp": _oracles(_REF, dialects_of=("ranx",)),
    "dcg": _oracles(_REF, dialects_of=("ranx",)),
    "dcg_exp": _oracles(_REF, dialects_of=("ranx",)),
    "cg": _oracles(_REF),
    "r_precision": _oracles(_REF, f"pytrec_eval: {_ORACLES_PY}", dialects_of=_IR_TOOLS),
    "auc": _oracles(_REF, f"implicit: {_ORACLES_PY}", "implicit: tests/test_implicit.py",
                    f"sklearn: {_ORACLES_PY}", "sklearn: tests/test_factors.py"),
    "hits": _oracles(_REF, dialects_of=("ranx",)),
    "judged": _oracles(_REF, dialects_of=("ir_measures",)),
    "err": _oracles(_REF, dialects_of=("ir_measures",)),
    "nerr": _oracles(_REF),
    "rbp": _oracles(_REF, dialects_of=("ir_measures",)),
    "rbp_resid": _oracles(_REF),
    "num_ret": _TREC_EVAL_AND_IR,
    "num_rel": _TREC_EVAL_ONLY,
    "num_rel_ret": _TREC_EVAL_AND_IR,
    "gm_map": _TREC_EVAL_ONLY,
    "bpref": _TREC_EVAL_AND_IR,
    "iprec": _TREC_EVAL_ONLY,
    "infap": _TREC_EVAL_AND_IR,
    "gm_bpref": _TREC_EVAL_ONLY,
    "rprec_mult": _TREC_EVAL_ONLY,
    "relative_precision": _TREC_EVAL_ONLY,
    "set_precision": _TREC_EVAL_AND_IR,
    "set_relative_precision": _TREC_EVAL_AND_IR,
    "set_map": _TREC_EVAL_AND_IR,
    "set_f": _TREC_EVAL_AND_IR,
    "num_nonrel_judged_ret": _TREC_EVAL_ONLY,
    "yaap": _TREC_EVAL_ONLY,
    "unjudged": _TREC_EVAL_ONLY,
    **{name: _oracles("tests/test_beyond.py")
       for name in ("novelty", "arp", "ild", "serendipity", "coverage", "gini")},
    "entropy": _oracles("tests/test_beyond.py", _RECBOLE),
    "ab_ndcg": _oracles("tests/test_diversity.py", "spec: tests/test_diversity.py"),
    "alpha_ndcg": _oracles("tests/test_diversity.py", "pyndeval: tests/test_diversity.py"),
    "rmse": _oracles("tests/test_ratings.py", "sklearn: tests/test_ratings.py"),
    "mae": _oracles("tests/test_ratings.py", "sklearn: tests/test_ratings.py"),
    **{name: _oracles("tests/test_debiased.py")
       for name in ("recall_ips", "recall_snips", "dcg_ips", "dcg_snips", "ap_ips",
                    "ap_snips")},
    "p_ia": _INTENT_ORACLES,
    "map_ia": _INTENT_ORACLES,
    "err_ia": _INTENT_ORACLES,
    "nerr_ia": _oracles(_INTENTS_PY, f"pyndeval: {_INTENTS_PY}"),
    "alpha_dcg": _INTENT_ORACLES,
    "st_recall": _INTENT_ORACLES,
    "nrbp": _INTENT_ORACLES,
    "nnrbp": _oracles(_INTENTS_PY, f"pyndeval: {_INTENTS_PY}"),
    "gauc": _oracles("tests/test_recs.py", "recbole: tests/test_recs.py",
                     "sklearn: tests/test_recs.py", _RECBOLE),
    "partial_auc": _oracles("tests/test_recs.py", "rectools: tests/test_recs.py"),
    "pap": _oracles("tests/test_recs.py", "rectools: tests/test_recs.py"),
    "jaccard": _oracles("tests/test_recs.py"),
    "rbo": _oracles("tests/test_recs.py"),
    "miscalibration": _oracles("tests/test_recs.py"),
}


# the fields of a Metric held as read-only proxies
_PROXIES = ("codes", "conventions", "uncut_code", "aggregates")


def _registered(name: str) -> Metric:
    return METRICS[name]


def _rebuilt(fields: dict[str, Any]) -> Metric:
    fields.update((name, MappingProxyType(fields[name])) for name in _PROXIES)
    return Metric(**fields)


class Registry(Mapping[str, Metric]):
    """The read-only table of metrics: `METRICS[name]` is a `Metric`."""

    def __init__(self, entries: Iterable[Metric]) -> None:
        self._by_name = {m.name: m for m in entries}

    def __getitem__(self, name: str) -> Metric:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self, *families: str, engine: str | None = None) -> tuple[str, ...]:
        """The names of the given families (all without), optionally of one engine."""
        return tuple(name for name, m in self._by_name.items()
                     if (not families or m.family in families)
                     and (engine is None or m.engine == engine))

    def rows(self) -> list[dict[str, Any]]:
        """One dict per metric: what `to_frame` shows."""
        return [{"name": m.name, "family": m.family, "cutoff": m.cutoff,
                 "params": ", ".join(p.name for p in m.params),
                 "needs": ", ".join(m.needs), "aggregate": m.aggregate,
                 "engine": m.engine, "entry": m.entry, "formula": m.formula,
                 **{c: m.describe(c) for c in CONVENTIONS}, "source": m.source,
                 "oracle": "; ".join(m.oracle)}
                for m in self._by_name.values()]

    def to_frame(self) -> DataFrame:
        """The registry as a pandas DataFrame indexed by name (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("METRICS.to_frame() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.rows()).set_index("name")

    def __repr__(self) -> str:
        return f"<fastrank metrics: {', '.join(self._by_name)}>"


METRICS = Registry(replace(m, oracle=_ORACLES.get(m.name, ())) for m in _ENTRIES)
# the per-user ranking metrics of the one-pass kernel, the names of the original table
METRIC_NAMES = METRICS.names("ranking")


def markdown() -> str:
    """The docs' metric table (docs/metrics.md): one row per registered metric, the formula
    under each convention (`fastrank metrics --markdown` prints it; a test checks the page)."""
    lines = ["| name | family | recsys (default) | trec (= trec_eval) | implicit (= implicit "
             "0.7) | mean | computed by |", "|---|---|---|---|---|---|---|"]
    for m in METRICS.values():
        label = f"`{m.name}" + ("(" + ", ".join(p.name + "=" for p in m.params) + ")"
                                if m.params else "") + ("@k`" if m.cutoff else "`")
        cells = [m.describe("recsys")]
        for convention in ("trec", "implicit"):
            text = m.describe(convention)
            cells.append("same" if text == cells[0] else text)
        where = m.entry if m.entry != "fr.evaluate" else f"fr.evaluate ({m.engine})"
        lines.append(f"| {label} | {m.family} | " + " | ".join(_cell(c) for c in cells)
                     + f" | {m.aggregate} | {where} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")

