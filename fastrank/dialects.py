"""The metric names of other tools, each mapped to the registry entry and convention that
reproduces that tool's number, or refused with the reason.

    fr.evaluate(truth, topk, ["nDCG@10", "P(rel=2)@5"], dialect="ir_measures")
    fr.evaluate(truth, topk, ["ndcg_cut_10", "P_5", "recip_rank"])   # unambiguous: found
    fr.evaluate(truth, topk, ["recbole:NDCG@10", "rectools:MAP@10"])  # one dialect each

A dialect is a table {name as the tool spells it: Meaning or Refusal}. A Meaning names a
registry metric, the convention whose formula is the tool's, fixed parameters, and how
the tool's cutoff is written. A Refusal says why the name is not computed: fastrank
computes something different under that name, or does not compute it yet. Nothing is
approximated: a name maps only where the formula, the gains, the ideal, the
denominator and the users that count are the tool's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from .digits import decimal_number

DIALECTS = ("fastrank", "ir_measures", "ranx", "trec_eval", "pytrec_eval", "recbole",
            "rectools")
# how users write them in a prefix (`ir-measures:nDCG@10`) or a dialect= argument
_ALIASES = {"ir-measures": "ir_measures", "irmeasures": "ir_measures",
            "trec-eval": "trec_eval", "treceval": "trec_eval", "pytrec-eval": "pytrec_eval",
            "pytreceval": "pytrec_eval"}


@dataclass(frozen=True)
class Meaning:
    """A foreign name's meaning: registry metric, convention, fixed parameters
    ((name, value), ...), and its cutoff: "optional" (@k or none, none meaning the whole
    list), "required", "none", or a parameter name the @ value fills (ir-measures'
    IPrec@0.3 is the recall point)."""

    metric: str
    convention: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: str = "optional"
    bare_refusal: str = ""   # why the name without a cutoff is refused, if it is
    note: str = ""   # where the tool's number differs on some inputs and fastrank's is kept


class Refused(ValueError):
    """Another tool's metric name that fastrank does not compute as that tool does."""


@dataclass(frozen=True)
class Refusal:
    reason: str


# a dialect's table: {name as the tool spells it: Meaning or Refusal}
Table: TypeAlias = "dict[str, Meaning | Refusal]"


def _not_yet(what: str) -> Refusal:
    return Refusal(f"fastrank does not compute {what} yet")


_REL_ONLY = ("rel",)

_EXP_UNCUT = ("without a cutoff its exponential-gain nDCG takes the ideal over every "
              "judged item; fastrank's ndcg_exp cuts it at K: give a cutoff")

# ir-measures' normalised diversity measures (ndeval's): the same formula, but the greedy
# ideal is not: ndeval breaks its ties by document name.
_GREEDY_TIES = ("ir-measures' {0} is ndeval's, whose greedy ideal breaks ties between equal "
                "gains by the larger document name, where fastrank takes the lower item id: "
                "the ideals, and so the values, can differ; fastrank's {1} with "
                "convention='trec' (and item_aspects=) is ndeval's with ties to the lower id")

# ir-measures 0.4: its default providers for these are pytrec_eval (trec_eval) and, for
# RR@k, msmarco (the same formula on the lists given): the trec convention. Every query of
# the qrels counts, as in fastrank's trec convention.
IR_MEASURES: Table = {
    "P": Meaning("precision", "trec", cutoff="required"),
    "R": Meaning("recall", "trec", cutoff="required"),
    "AP": Meaning("map", "trec"),
    "RR": Meaning("mrr", "trec"),
    "nDCG": Meaning("ndcg", "trec"),
    "Rprec": Meaning("r_precision", "trec", cutoff="none"),
    "Bpref": Meaning("bpref", "trec", cutoff="none"),
    "NumRet": Meaning("num_ret", "trec", cutoff="none"),
    "NumRel": Refusal("ir-measures scores a judged query without results 0 in every "
                      "measure, NumRel too, where its number of relevant documents is not 0; "
                      "trec_eval's num_rel counts them: write 'trec_eval:num_rel'"),
    "NumRelRet": Meaning("num_rel_ret", "trec", cutoff="none"),
    "Success": Meaning("hit_rate", "trec", cutoff="required"),
    "IPrec": Refusal("ir-measures computes IPrec with pytrec_eval, whose trec_eval 9 finds the "
                     "recall point at (long)(point·R + 0.9) relevant documents; fastrank's "
                     "iprec is trec_eval 10's, lround(point·R): write "
                     "'trec_eval:iprec_at_recall_0.30'"),
    "MAP": Meaning("map", "trec"), "MRR": Meaning("mrr", "trec"),
    "NDCG": Meaning("ndcg", "trec"), "Precision": Meaning("precision", "trec", cutoff="required"),
    "Recall": Meaning("recall", "trec", cutoff="required"),
    "BPref": Meaning("bpref", "trec", cutoff="none"),
    "RPrec": Meaning("r_precision", "trec", cutoff="none"),
    "NumQ": Refusal("NumQ counts queries, not a per-query value: it is Result.n_users"),
    "SetP": Meaning("set_precision", "trec", cutoff="none"),
    "SetR": Meaning("recall", "trec", cutoff="none"),
    "SetF": Meaning("set_f", "trec", cutoff="none"),
    "SetAP": Meaning("set_map", "trec", cutoff="none"),
    "infAP": Meaning("infap", "trec", cutoff="none"),
    # gdeval's ERR (ir-measures' provider), the trec convention, with its top grade 4
    # (gdeval stops on a grade above 4; fastrank caps such grades at 4)
    "ERR": Meaning("err", "trec", params=(("max_grade", 4.0),), cutoff="required"),
    # cwl_eval's RBP (ir-measures' provider for RBP(rel=...), its only form): binary, the
    # whole list; cwl_eval takes no cutoff, and ir-measures refuses RBP(rel=1)@k
    "RBP": Meaning("rbp", "trec", cutoff="none"),
    "Judged": Meaning("judged", "trec"),
    "alpha_nDCG": Refusal(_GREEDY_TIES.format("alpha_nDCG", "alpha_ndcg")),
    "NERR8": _not_yet("NERR8"), "NERR9": _not_yet("NERR9"),
    "NERR10": _not_yet("NERR10"), "NERR11": _not_yet("NERR11"),
    "INST": _not_yet("INST"), "INSQ": _not_yet("INSQ"), "SDCG": _not_yet("SDCG"),
    "Compat": _not_yet("Compat"),
    # ndeval's intent-aware measures (its pyndeval provider), with item_aspects= as the
    # subtopics: the qrels (user, aspect, item, value) of each aspect of each judged item
    "ERR_IA": Meaning("err_ia", "trec", cutoff="required"),
    "nERR_IA": Refusal(_GREEDY_TIES.format("nERR_IA", "nerr_ia")),
    "P_IA": Meaning("p_ia", "trec", cutoff="required"),
    "AP_IA": Meaning("map_ia", "trec", cutoff="none"),
    "MAP_IA": Meaning("map_ia", "trec", cutoff="none"),
    "SetRelP": Meaning("set_relative_precision", "trec", cutoff="none"),
    "α_nDCG": Refusal(_GREEDY_TIES.format("α_nDCG", "alpha_ndcg")),
    "alpha_DCG": Meaning("alpha_dcg", "trec", cutoff="required"),
    "α_DCG": Meaning("alpha_dcg", "trec", cutoff="required"),
    # NRBP is not cut (pyndeval reads the whole run); StRecall's cutoff is required (its
    # provider asks pyndeval for strec@cutoff)
    "NRBP": Meaning("nrbp", "trec", cutoff="none"),
    "nNRBP": Refusal(_GREEDY_TIES.format("nNRBP", "nnrbp")),
    "BPM": _not_yet("BPM"),
    "StRecall": Meaning("st_recall", "trec", cutoff="required"),
    "Accuracy": _not_yet("Accuracy"),
}
# trec_eval 10 (and pytrec_eval, which spells a cutoff "P.5" where trec_eval prints
# "P_5"): the trec convention, where the last number is the cutoff.
TREC_EVAL: Table = {
    "map": Meaning("map", "trec", cutoff="none"),
    "gm_map": Meaning("gm_map", "trec", cutoff="none"),
    "Rprec": Meaning("r_precision", "trec", cutoff="none"),
    "bpref": Meaning("bpref", "trec", cutoff="none"),
    "recip_rank": Meaning("mrr", "trec", cutoff="none"),
    "ndcg": Meaning("ndcg", "trec", cutoff="none"),
    "num_ret": Meaning("num_ret", "trec", cutoff="none"),
    "num_rel": Meaning("num_rel", "trec", cutoff="none"),
    "num_rel_ret": Meaning("num_rel_ret", "trec", cutoff="none"),
    "P": Meaning("precision", "trec", cutoff="required"),
    "recall": Meaning("recall", "trec", cutoff="required"),
    "ndcg_cut": Meaning("ndcg", "trec", cutoff="required"),
    "map_cut": Meaning("map", "trec", cutoff="required"),
    "success": Meaning("hit_rate", "trec", cutoff="required"),
    "iprec_at_recall": Meaning("iprec", "trec", cutoff="recall"),
    "runid": Refusal("runid is the run's name, not a measure of users"),
    "num_q": Refusal("num_q counts queries, not a per-query value: it is Result.n_users"),
    "infAP": Meaning("infap", "trec", cutoff="none"),
    "gm_bpref": Meaning("gm_bpref", "trec", cutoff="none"),
    "Rprec_mult": Meaning("rprec_mult", "trec", cutoff="mult"),
    "relative_P": Meaning("relative_precision", "trec", cutoff="required"),
    "set_P": Meaning("set_precision", "trec", cutoff="none"),
    "set_recall": Meaning("recall", "trec", cutoff="none"),
    "set_relative_P": Meaning("set_relative_precision", "trec", cutoff="none"),
    "set_map": Meaning("set_map", "trec", cutoff="none"),
    "set_F": Meaning("set_f", "trec", cutoff="none"),
    "num_nonrel_judged_ret": Meaning("num_nonrel_judged_ret", "trec", cutoff="none"),
    "yaap": Meaning("yaap", "trec", cutoff="none"),
    "unj": Meaning("unjudged", "trec", cutoff="required"),
    **{name: Refusal(f"fr.evaluate does not compute trec_eval's {name}: its gains are "
                     f"integer levels, or its parameters a list; `fastrank trec -m {name}` "
                     f"and fastrank.trec.evaluate_files print it as trec_eval 10 does")
       for name in ("11pt_avg", "utility", "binG", "G", "ndcg_rel", "Rndcg", "rbp",
                    "rbp_resid", "relstring", "dcg", "ideal_dcg")},
    **{name: _not_yet(f"trec_eval's {name}") for name in (
        "unjudged", "success_P", "ndcg_p")},
    **{name: Refusal(f"trec_eval's {name} needs a preferences or qrels_jg file, which "
                     f"fastrank does not read") for name in (
        "P_avgjg", "map_avgjg", "Rprec_mult_avgjg")},
    **{name: Refusal(f"{name} names a set of measures; name each one, e.g. P_10")
       for name in ("official", "set", "all_trec")},
}

# the parameters ir-measures 0.4 takes for each name it maps (SUPPORTED_PARAMS, less
# cutoff): any other is refused, as ir-measures refuses it
_IR_PARAMS = {
    **dict.fromkeys(("P", "R", "AP", "RR", "Success", "MAP", "MRR", "Precision", "Recall",
                     "Rprec", "RPrec", "SetAP", "ERR_IA", "P_IA", "AP_IA", "MAP_IA"),
                    ("rel", "judged_only")),
    **dict.fromkeys(("nDCG", "NDCG"), ("dcg", "gains", "judged_only")),
    **dict.fromkeys(("Bpref", "BPref", "NumRet", "NumRelRet", "SetR", "infAP"), ("rel",)),
    "SetP": ("rel", "judged_only", "relative"), "SetRelP": ("rel", "judged_only", "relative"),
    "SetF": ("rel", "judged_only", "beta"), "ERR": (), "Judged": (), "RBP": ("p", "rel"),
    **dict.fromkeys(("alpha_DCG", "α_DCG"), ("alpha", "rel", "judged_only")),
    "StRecall": ("rel",), "NRBP": ("alpha", "beta", "rel"),
}

# pytrec_eval: trec_eval's names (as the trec_eval dialect reads them) but for the
# measures whose numbers it reports differently
PYTREC_EVAL: dict[str, Refusal] = {
    "iprec_at_recall": Refusal(
        "pytrec_eval finds the recall point as trec_eval 9 did, at (long)(point·R + 0.9) "
        "relevant documents; fastrank's iprec is trec_eval 10's, lround(point·R): write "
        "'trec_eval:iprec_at_recall_0.30' for trec_eval 10's number"),
    **{name: Refusal(
        f"pytrec_eval reports {name} per query as log(max({base}, 0.00001)), the log that "
        f"its compute_aggregated_measure averages; fastrank's per-user {name} values are "
        f"{base} and its mean is trec_eval's geometric one: write 'trec_eval:{name}'")
       for name, base in (("gm_map", "AP"), ("gm_bpref", "bpref"))},
}
# dialects read as another's names, with some of them overridden: {dialect: (base,
# overrides)}. Not in TABLES: their names are the base's, found there.
VARIANTS = {"pytrec_eval": ("trec_eval", PYTREC_EVAL)}

_RANX_BARE = ("without a cutoff ranx divides by each query's own list length, not K: give "
              "a cutoff")
# ranx 0.3: trec_eval's definitions (map divides by every relevant item), lowercase.
RANX: Table = {
    "hits": Meaning("hits", "trec"),  # ranx 0.3: every query of the qrels counts
    "hit_rate": Meaning("hit_rate", "trec"),
    "precision": Meaning("precision", "trec", bare_refusal=_RANX_BARE),
    "recall": Meaning("recall", "trec"),
    "f1": Meaning("f1", "trec", bare_refusal=_RANX_BARE),
    "r-precision": Meaning("r_precision", "trec", cutoff="none"),
    "mrr": Meaning("mrr", "trec"),
    "map": Meaning("map", "trec"),
    "ndcg": Meaning("ndcg", "trec"),
    "ndcg_burges": Meaning("ndcg_exp", "trec", bare_refusal=_EXP_UNCUT),
    "dcg": Meaning("dcg", "trec"),
    "dcg_burges": Meaning("dcg_exp", "trec"),
    "bpref": Refusal("ranx's bpref is NaN for a query without a judged non-relevant "
                     "document (trec_eval's is defined) and counts negative grades as judged; "
                     "fastrank's bpref is trec_eval's: write 'trec_eval:bpref'"),
    "rbp": Refusal("ranx's rbp weighs each rank by the raw grade (a query can score above "
                   "1, though its documentation says 0 or 1); fastrank's rbp is Moffat & "
                   "Zobel's binary one: write rbp(p=0.95, rel=1)"),
}

# RecBole 1.2: metric names are case-insensitive, results keyed "ndcg@10" and rounded to
# metric_decimal_place (4) places. RecBole 1.2.1 itself is the oracle of these names in
# tests/test_recbole_oracle.py. As its full-sort evaluation sees fastrank's inputs: every
# test interaction is positive (fastrank's stored value <= 0 is judged non-relevant: store
# only the relevant ones), only users with one are evaluated, and a list shorter than k is
# its top k whose tail (its padding item 0, the history) is never positive.
RECBOLE: Table = {
    "Recall": Meaning("recall", "recsys", cutoff="required"),
    "MRR": Meaning("mrr", "recsys", cutoff="required"),
    "NDCG": Meaning("ndcg", "implicit", cutoff="required"),  # binary gains, ideal min(k, m)
    "Hit": Meaning("hit_rate", "recsys", cutoff="required"),
    "MAP": Meaning("map", "recsys", cutoff="required"),      # over min(k, m)
    "Precision": Meaning("precision", "recsys", cutoff="required"),
    "ItemCoverage": Refusal(
        "RecBole's ItemCoverage divides by its item count, which includes its padding item "
        "0 (one more than the catalogue); fastrank's coverage divides by n_items (on lists "
        "of k items, a truth with an empty first column for item 0 and ids shifted by "
        "one give RecBole's number)"),
    "AveragePopularity": Refusal(
        "RecBole's AveragePopularity counts an item's training interactions (every row, "
        "repeats included) where fastrank's arp counts its training users (the same "
        "number on lists of k items where train holds each interaction once, as a value "
        "> 0)"),
    "GiniIndex": Refusal(
        "RecBole's GiniIndex runs over its item count, which includes its padding item 0; "
        "fastrank's gini runs over the n_items of the catalogue (on lists of k items, a "
        "truth with an empty first column for item 0 and ids shifted by one give "
        "RecBole's number)"),
    # full sort: its ranks average ties, its history items (score -inf) are not ranked, and
    # its history is the used items less the test items, where fastrank ranks an excluded
    # test item last: exclude the training entries that are not test entries
    "GAUC": Meaning("gauc", "recsys", cutoff="none"),
    "AUC": Refusal("RecBole's AUC is one global AUC over every scored pair; fastrank's "
                   "auc is per user (fr.evaluate_factors computes its full-ranking form)"),
    # -Σ p·ln p over the items in the lists, / their number; RecBole counts every slot
    # (padding item 0 and repeats too): the same number on lists of k distinct items
    "ShannonEntropy": Meaning("entropy", "recsys", cutoff="required"),
    "TailPercentage": Refusal(
        "RecBole's TailPercentage@k is each evaluated user's count of long-tail items in "
        "its top k slots (its padding item 0 is never long-tail but fills a slot; a "
        "repeated id counts each time) over k, averaged over users; long-tail: with "
        "tail_ratio > 1, at most tail_ratio training interactions (repeats counted, not "
        "training users); otherwise (tail_ratio unset or <= 0 means 0.1) the max("
        "⌊tail_ratio·n⌋, 1) of the n items seen in training with the fewest, ties to the "
        "lower id; an item never seen in training is never long-tail. fastrank does not "
        "compute it yet"),
    "LogLoss": Refusal("LogLoss scores predicted probabilities, not rankings"),
    "RMSE": Refusal("RMSE scores rating predictions: use fr.rmse(truth, predictions)"),
    "MAE": Refusal("MAE scores rating predictions: use fr.mae(truth, predictions)"),
}

# RecTools merges its recommendations with every test row: a (user, item) pair listed
# twice in the test interactions is two relevant items, each a hit, in these names (its
# own test, tests/metrics/test_ranking.py::TestMAP::test_when_duplicates_in_interactions,
# expects AP = 3.5/3 > 1); fastrank counts the pair once, as a set of relevant items
_RECTOOLS_REPEATS = ("a (user, item) test pair listed twice counts once; RecTools counts "
                     "it twice, as two relevant items (two hits where recommended), and its "
                     "value can then exceed 1 (AP = 3.5/3 in its own test)")

# RecTools 0.x: metric classes keyed by the user, conventionally "NDCG@10".
RECTOOLS: Table = {
    "Precision": Meaning("precision", "recsys", cutoff="required", note=_RECTOOLS_REPEATS),
    "Recall": Meaning("recall", "recsys", cutoff="required", note=_RECTOOLS_REPEATS),
    "HitRate": Meaning("hit_rate", "recsys", cutoff="required"),
    "MRR": Meaning("mrr", "recsys", cutoff="required"),
    # divide_by_k=False: over m
    "MAP": Meaning("mar", "recsys", cutoff="required", note=_RECTOOLS_REPEATS),
    # divide_by_achievable=True
    "NDCG": Meaning("ndcg", "implicit", cutoff="required", note=_RECTOOLS_REPEATS),
    "F1Beta": Meaning("f_beta", "recsys", cutoff="required", note=_RECTOOLS_REPEATS),
    "MeanInvUserFreq": Refusal(
        "RecTools' MeanInvUserFreq averages over every user with recommendations, counts a "
        "repeated item each time and an item's every training interaction; fastrank counts "
        "the users with a relevant item, an item once per list and its training users "
        "(novelty@k is the same number on lists without repeats, with binary train, when "
        "every user with a list has a relevant item)"),
    "AvgRecPopularity": Refusal(
        "RecTools' AvgRecPopularity counts an item's training interactions where fastrank's "
        "arp counts its training users"),
    "Serendipity": Refusal(
        "RecTools' Serendipity multiplies relevance by unexpectedness from popularity "
        "ranks; fastrank's serendipity is the share of relevant items not in a baseline "
        "list"),
    "IntraListDiversity": Refusal(
        "RecTools' IntraListDiversity takes a distance calculator of its own; fastrank's "
        "ild is Jaccard of aspects or cosine of vectors: use ild with item_aspects= or "
        "item_vectors="),
    # k counts non-relevant items; insufficient_handling= as insufficient=
    "PartialAUC": Meaning("partial_auc", "recsys", cutoff="required"),
    "PAP": Meaning("pap", "recsys", cutoff="required"),
    "Accuracy": Refusal("RecTools' Accuracy needs the full catalogue of negatives per user"),
    "MCC": Refusal("RecTools' MCC needs the full catalogue of negatives per user"),
    "CatalogCoverage": Refusal(
        "RecTools' CatalogCoverage counts the distinct items in the top k of every user with "
        "recommendations (normalize=True: over the catalogue); fastrank's coverage@k is the "
        "share of the catalogue in the top k of the users with a relevant item (the same "
        "number, with normalize=True, when every user with a list has one)"),
    "Intersection": Refusal(
        "RecTools' Intersection compares two models' lists (the share of one's top k in the "
        "other's top ref_k): compare two lists with fr.overlap(topk_a, topk_b, "
        "['jaccard@k', 'rbo@k'])"),
    "SufficientReco": _not_yet("RecTools' SufficientReco"),
    "UnrepeatedReco": _not_yet("RecTools' UnrepeatedReco"),
    "CoveredUsers": _not_yet("RecTools' CoveredUsers"),
    "DebiasedCalcMetric": _not_yet("debiased metrics"),
}

TABLES = {"ir_measures": IR_MEASURES, "trec_eval": TREC_EVAL, "ranx": RANX,
          "recbole": RECBOLE, "rectools": RECTOOLS}
# dialects whose names are matched case-insensitively (RecBole lowercases them; RecTools'
# classes are written by hand in every case), each with its index by lowercased name
CASELESS = {"recbole", "rectools"}
_FOLDED = {d: {name.lower(): meaning for name, meaning in TABLES[d].items()} for d in CASELESS}


def check_dialect(dialect: object, argument: str = "dialect") -> str:
    """A dialect name, canonical (aliases and case folded); None is fastrank's own."""
    if dialect is None:
        return "fastrank"
    if not isinstance(dialect, str):
        raise TypeError(f"{argument} must be one of {', '.join(DIALECTS)} (a string); got "
                        f"{dialect!r} of type {type(dialect).__name__}")
    key = dialect.strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in DIALECTS:
        raise ValueError(f"{argument} {dialect!r} is not a dialect fastrank speaks; use one "
                         f"of {', '.join(DIALECTS)}")
    return key


def translate(label: str, dialect: str, name: str, meaning: Meaning,
              raw: dict[str, str]) -> tuple[str, dict[str, str]]:
    """(metric name, {param: text}) of a foreign name's parameters `raw` ({key: text as
    written}): the tool's options fastrank reproduces become its metric or parameters,
    the rest are refused with the reason."""
    metric, params = meaning.metric, {}
    key_name = name.lower() if dialect in CASELESS else name
    if dialect == "ir_measures":
        _check_ir_params(label, name, raw)
        if name == "NumRet" and "rel" in raw:  # ir-measures' NumRelRet is NumRet(rel=1)
            metric = "num_rel_ret"
    for key, value in raw.items():
        flag = value.strip().lower()
        if dialect == "ir_measures" and key == "relative":  # SetRelP is SetP(relative=True)
            if flag not in ("true", "false"):
                raise ValueError(f"metrics: {label!r}: ir-measures' relative= is True or "
                                 f"False; got {value!r}")
            metric = "set_relative_precision" if flag == "true" else "set_precision"
            continue
        if dialect == "ir_measures" and key == "dcg" and key_name in ("nDCG", "NDCG"):
            if value not in ("log2", "exp-log2"):
                raise ValueError(f"metrics: {label!r}: ir-measures' dcg={value!r} is not one "
                                 f"fastrank computes ('log2' or 'exp-log2')")
            metric = "ndcg_exp" if value == "exp-log2" else metric
        elif dialect == "ir_measures" and key == "gains":
            raise Refused(f"metrics: {label!r} is refused: fastrank's nDCG takes the "
                          f"stored values as gains; ir-measures' gains= maps them")
        elif dialect == "ir_measures" and key == "judged_only":
            if flag != "false":
                raise Refused(f"metrics: {label!r} is refused: judged_only=True drops the "
                              f"unjudged documents from the ranking first, which fastrank "
                              f"does not do")
        elif dialect == "rectools" and key_name == "ndcg" and key == "divide_by_achievable":
            if flag != "true":
                raise Refused(f"metrics: {label!r} is refused: {_RECTOOLS_NDCG}")
        elif dialect == "rectools" and key_name == "ndcg" and key == "log_base":
            # the ratio of two sums in the same base does not depend on it, where it has one
            base = decimal_number(value.strip())  # as every number of a label is read
            if not (base > 0 and base != 1 and math.isfinite(base)):
                raise ValueError(f"metrics: {label!r}: RecTools' log_base must be a number "
                                 f"> 0 other than 1 (a logarithm's base); got {value!r}")
        elif dialect == "rectools" and key_name == "map" and key == "divide_by_k":
            if flag != "false":
                raise Refused(f"metrics: {label!r} is refused: fastrank has no AP over k "
                              f"(RecTools' divide_by_k=True)")
        elif dialect == "rectools" and key_name == "precision" and key == "r_precision":
            if flag != "false":
                raise Refused(
                    f"metrics: {label!r} is refused: RecTools' r_precision=True averages "
                    f"hits / min(k, m) over users with equal weight; fastrank's implicit "
                    f"precision pools it (Σ hits / Σ min(k, m))")
        elif dialect == "rectools" and key_name in ("partialauc", "pap") and \
                key == "insufficient_handling":
            params["insufficient"] = value
        elif key == "_level":  # ranx's -lN
            params["rel"] = value
        elif key == "rel" and dialect in ("ranx", "recbole", "rectools"):
            raise Refused(
                f"metrics: {label!r} is refused: {dialect} has no rel= parameter"
                + (" (ranx writes a relevance level as -lN: 'precision@5-l2')"
                   if dialect == "ranx" else ""))
        else:
            params[key] = value
    if dialect == "rectools" and key_name == "ndcg" and \
            raw.get("divide_by_achievable", "").strip().lower() != "true":
        raise Refused(f"metrics: {label!r} is refused: {_RECTOOLS_NDCG}; write "
                      f"'NDCG(divide_by_achievable=True)@k' for the achievable ideal")
    return metric, params


def _check_ir_params(label: str, name: str, raw: dict[str, str]) -> None:
    """ir-measures' refusals of a name's parameters: those it does not take, RBP without
    rel= (it computes no graded RBP) and a persistence p outside (0, 1)."""
    allowed = _IR_PARAMS.get(name, ())
    for key in raw:
        if key not in allowed:
            takes = ", ".join(f"{a}=" for a in allowed) or "no parameter but its cutoff"
            raise ValueError(f"metrics: {label!r}: ir-measures' {name} takes no {key}= "
                             f"(it takes {takes}); leave it out")
    if name == "RBP":
        if "rel" not in raw:
            raise Refused(f"metrics: {label!r} is refused: ir-measures computes RBP only "
                          f"with rel= (binary, from a relevance level; it has no graded "
                          f"RBP): write 'RBP(rel=1)'")
        p = decimal_number(raw.get("p", "0.8").strip())
        if not 0 < p < 1:
            raise ValueError(f"metrics: {label!r}: ir-measures' RBP takes a persistence p "
                             f"strictly between 0 and 1; got p={raw['p']!r}")


_RECTOOLS_NDCG = ("RecTools' NDCG divides by default by the ideal of k relevant items for "
                  "every user, where fastrank's ndcg divides by the ideal the user can reach "
                  "(min(k, m) items)")



# How each tool orders documents (items) of equal score, as fastrank's ties= names them:
# "trec_eval", by id descending as text (trec_eval's qsort, strcmp; pytrec_eval; gdeval,
# ir-measures' ERR@k and nDCG(dcg='exp-log2')); "docno", by id ascending (ir-measures'
# msmarco provider of RR@k, its judged provider of Judged, its pyndeval provider of the
# diversity names: sorted by (-score, id)); "file", in the run's order (ir-measures' RBP:
# cwl_eval takes a stable sort by score). None: no order fastrank builds (ranx: numba's
# quicksort, not stable, of a dict's or a Run's documents; RecBole: torch.topk; RecTools
# reads the ranks of its recommendations, not their scores).
TIE_ORDERS = ("trec_eval", "docno", "file")
TIE_RULES = {"trec_eval": "by item id descending, compared as text (trec_eval's order)",
             "docno": "by item id ascending, compared as text",
             "file": "in the order of their records (the run's lines, the table's rows)"}
_IR_DOCNO = frozenset({"judged", "err_ia", "p_ia", "map_ia", "alpha_dcg", "nrbp", "st_recall"})
_NO_TIE_ORDER = {
    "ranx": "ranx sorts each query's documents with numba's quicksort, which is not "
            "stable: no order of tied scores reproduces it",
    "recbole": "RecBole ranks with torch.topk, whose order among tied scores is its own",
    "rectools": "RecTools reads the rank column of its recommendations, not their scores: "
                "give the table its ranks (without a score column, or with score=None)"}
# metrics whose value on a whole list (no cutoff) does not depend on its order
_UNORDERED = frozenset({"judged", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
                        "set_precision", "set_relative_precision", "set_f", "set_map",
                        "recall", "hits", "hit_rate", "precision"})


class TieOrder(UserWarning):
    """A tool's metric name on lists built from tied scores in another order than the
    tool's: its number may differ from the tool's on the same scores."""


def tie_order(dialect: str, metric: str, bare: bool) -> str | None:
    """The order (one of TIE_ORDERS) in which the tool of `dialect` ranks documents of
    equal score for its name of `metric` (`bare`: without a cutoff), or None where
    fastrank builds no such order (`tie_reason` says why)."""
    if dialect in _NO_TIE_ORDER:
        return None
    if dialect == "ir_measures":
        if metric == "rbp":
            return "file"
        if metric in _IR_DOCNO or (metric == "mrr" and not bare):
            return "docno"
    return "trec_eval"


def tie_reason(dialect: str) -> str:
    """Why no order of tied scores reproduces a tool's (for a dialect with none)."""
    return _NO_TIE_ORDER[dialect]


def order_matters(metric: str, bare: bool, cut: bool) -> bool:
    """Whether the order of tied scores can change the metric: always, but for a metric
    of the whole list's set of items on lists that no cutoff has cut."""
    return not (bare and not cut and metric in _UNORDERED)


def lookup(dialect: str, name: str) -> Meaning | Refusal | None:
    """The Meaning or Refusal of `name` in a foreign dialect, or None."""
    if dialect in VARIANTS:
        base, overrides = VARIANTS[dialect]
        return overrides.get(name) or lookup(base, name)
    if dialect in CASELESS:
        return _FOLDED[dialect].get(name.lower())
    return TABLES[dialect].get(name)


def base(dialect: str) -> str:
    """The dialect whose names a dialect reads (itself but for VARIANTS')."""
    return VARIANTS[dialect][0] if dialect in VARIANTS else dialect


def foreign_names(dialect: str) -> tuple[str, ...]:
    """Every name of a foreign dialect as the tool spells it (for suggestions and docs)."""
    return tuple(TABLES[base(dialect)])


VARIANT_TOOLS = {"pytrec_eval": "pytrec_eval-terrier 0.5"}
TOOLS = {"ir_measures": "ir-measures 0.4", "ranx": "ranx 0.3", "trec_eval": "trec_eval 10",
         "recbole": "RecBole 1.2", "rectools": "RecTools 0.19"}


# names a tool computes as fastrank does only with an option given
_WRITTEN_WITH = {("ir_measures", "RBP"): "RBP(rel=1)",
                 ("rectools", "NDCG"): "NDCG(divide_by_achievable=True)@k"}


def written_names() -> Iterator[tuple[str, str, Meaning]]:
    """(dialect, name as the tool writes it, Meaning) of every name a tool's table maps,
    tool by tool in TOOLS' order: `P@k`, `ndcg_cut_k`, `nDCG[@k]`, `iprec_at_recall_0.30`."""
    for dialect in TOOLS:
        for name, meaning in TABLES[dialect].items():
            if isinstance(meaning, Refusal):
                continue
            written = {"trec_eval": {"required": f"{name}_k", "recall": f"{name}_0.30",
                                     "mult": f"{name}_0.20"},
                       "ir_measures": {"required": f"{name}@k", "recall": f"{name}@0.3"}}
            label = _WRITTEN_WITH.get((dialect, name)) or \
                written.get(dialect, {}).get(meaning.cutoff)
            if label is None:
                label = name + ("@k" if meaning.cutoff == "required" or meaning.bare_refusal
                                else "[@k]" if meaning.cutoff == "optional" else "")
            yield dialect, label, meaning


def names_of(metric: str) -> list[tuple[str, str, str]]:
    """[(tool, name as the tool writes it, convention)] of every tool's name that maps to
    a registry metric: the dialect names of the docs' metric reference."""
    return [(TOOLS[dialect], label, meaning.convention)
            for dialect, label, meaning in written_names() if meaning.metric == metric]


def markdown() -> str:
    """The docs' dialect table: for each tool, the names fastrank computes as that tool
    does (and which metric and convention), and the names it refuses."""
    lines = ["| tool | its name | fastrank computes |", "|---|---|---|"]
    rows = list(written_names())
    for dialect, tool in TOOLS.items():
        for _, label, meaning in (row for row in rows if row[0] == dialect):
            note = f"; {meaning.note}" if meaning.note else ""
            lines.append(f"| {tool} | `{label}` | `{meaning.metric}` ({meaning.convention})"
                         f"{note} |")
        refused = [f"`{name}`" for name, meaning in TABLES[dialect].items()
                   if isinstance(meaning, Refusal)]
        lines.append(f"| {tool} | refused, with the reason | {', '.join(refused)} |")
    for dialect, (base, overrides) in VARIANTS.items():
        lines.append(f"| {VARIANT_TOOLS[dialect]} | {TOOLS[base]}'s names above | as "
                     f"{TOOLS[base]} |")
        lines.append(f"| {VARIANT_TOOLS[dialect]} | refused, with the reason | "
                     f"{', '.join(f'`{name}`' for name in overrides)} |")
    return "\n".join(lines)
