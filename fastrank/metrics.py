"""Metric names, cutoffs and conventions: from the strings users write to kernel slots.

A metric is written `name@k` (1 <= k <= K) or `name` (meaning @K). The convention decides
which formula a name stands for (SPEC §2); this module turns a list of names into the
slot table the ranking kernel fills in one pass.
"""

import re
from dataclasses import dataclass

import numpy as np

from ._kernels import codes

CONVENTIONS = ("recsys", "trec", "implicit")

# name -> code under the recsys convention; the other conventions override a few below.
_RECSYS = {
    "precision": codes.PRECISION,
    "recall": codes.RECALL,
    "f1": codes.F1,
    "hit_rate": codes.HIT_RATE,
    "mrr": codes.MRR,
    "map": codes.AP_CAPPED,
    "mar": codes.AP_FULL,
    "ndcg": codes.NDCG,
    "ndcg_exp": codes.NDCG_EXP,
    "dcg": codes.DCG,
    "cg": codes.CG,
    "r_precision": codes.R_PRECISION,
    "auc": codes.AUC,
}
_OVERRIDES = {
    "recsys": {},
    "trec": {"map": codes.AP_FULL},
    "implicit": {"precision": codes.PRECISION_CAPPED, "ndcg": codes.NDCG_BINARY},
}
# Metrics whose value does not depend on a cutoff of their own.
_NO_CUTOFF = {"r_precision"}

METRIC_NAMES = tuple(_RECSYS)


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric: its name as written, its base name, cutoff and kernel code."""

    label: str
    name: str
    k: int
    code: int

    @property
    def pooled(self):
        """True when the mean is pooled (sum of hits / sum of min(k, m)), as implicit's precision."""
        return self.code == codes.PRECISION_CAPPED


def _check_convention(convention):
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(
            f"convention must be one of {', '.join(repr(c) for c in CONVENTIONS)}; "
            f"got {convention!r}")


def parse_metric(label, k_max, convention):
    """Parse one metric string into a MetricSpec for lists of length k_max."""
    if not isinstance(label, str):
        raise TypeError(
            f"metrics must be strings such as 'ndcg@10'; got {label!r} "
            f"of type {type(label).__name__}")
    name, sep, k_text = label.strip().partition("@")
    name = name.strip().lower()
    if name not in _RECSYS:
        raise ValueError(
            f"metrics: unknown metric {label!r}; known names are {', '.join(METRIC_NAMES)}, "
            f"and in fr.evaluate coverage, gini, novelty, arp, ild, serendipity, each "
            f"optionally followed by @k")
    if sep:
        if name in _NO_CUTOFF:
            raise ValueError(
                f"metrics: {name!r} has no cutoff of its own (it looks at the first m "
                f"positions); write {name!r} without @k")
        k = parse_cutoff(label, name, k_text, k_max)
    else:
        k = k_max
    code = _OVERRIDES[convention].get(name, _RECSYS[name])
    # trec_eval's `ndcg` (no cutoff) takes the ideal over all relevant items, not cut at K.
    if convention == "trec" and name == "ndcg" and not sep:
        code = codes.NDCG_UNCUT
    return MetricSpec(label=label, name=name, k=k, code=code)


_CUTOFF = re.compile(r"[0-9]+")


def parse_cutoff(label, name, k_text, k_max):
    """The cutoff written after '@' in label: an integer in [1, k_max], k_max being the
    list length K (topk's columns, or the k= given), or 2**62 where any length goes."""
    from .validation import LARGEST_INT

    k_text = k_text.strip()
    if not _CUTOFF.fullmatch(k_text):
        raise ValueError(
            f"metrics: cutoff in {label!r} must be a positive integer, as in '{name}@10'")
    k = int(k_text)
    if k < 1:
        raise ValueError(f"metrics: cutoff in {label!r} must be at least 1")
    if k > min(k_max, LARGEST_INT):
        if k_max >= LARGEST_INT:
            raise ValueError(f"metrics: cutoff in {label!r} is larger than 2**62, the largest "
                             f"cutoff")
        raise ValueError(
            f"metrics: cutoff in {label!r} is larger than K = {k_max}, the list length "
            f"(topk's columns, or the k= given); use cutoffs up to {k_max}, or longer lists "
            f"or a larger k=")
    return k


def metric_labels(metrics):
    """A metric string or a sequence of them, as a non-empty list."""
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        labels = list(metrics)
    except TypeError:
        raise TypeError(
            f"metrics must be a string or a list of strings such as ['ndcg@10', 'map@10']; "
            f"got {type(metrics).__name__}") from None
    if not labels:
        raise ValueError("metrics is empty; ask for at least one metric, e.g. ['ndcg@10']")
    return labels


def with_curves(labels, curves, k_max):
    """labels plus name@1..name@k_max for every name of `curves` (a name, a list of names,
    or True: every ranking metric named in labels), in one list without repeats."""
    if isinstance(curves, np.bool_):
        curves = bool(curves)
    if curves is None or curves is False:
        return labels
    if curves is True:
        names = [label.partition("@")[0].strip().lower() for label in labels
                 if isinstance(label, str)]
        names = [n for n in names if n in _RECSYS and n not in _NO_CUTOFF]
    elif isinstance(curves, str):
        names = [curves]
    else:
        try:
            names = list(curves)
        except TypeError:
            raise TypeError(f"curves must be a metric name such as 'ndcg', a list of them, "
                            f"True (every ranking metric asked for) or None; got {curves!r} "
                            f"of type {type(curves).__name__}") from None
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"curves must be a metric name, a list of them, or True; got "
                        f"{curves!r}")
    out = list(labels)
    for name in dict.fromkeys(name.strip().lower() for name in names):
        if name not in _RECSYS:
            raise ValueError(f"curves: {name!r} is not a ranking metric; curves are drawn "
                             f"for {', '.join(n for n in METRIC_NAMES if n not in _NO_CUTOFF)}")
        if name in _NO_CUTOFF:
            raise ValueError(f"curves: {name!r} has no cutoff, so it has no curve over k")
        out += [f"{name}@{c}" for c in range(1, k_max + 1)]
    return list(dict.fromkeys(out))


def parse_metrics(metrics, k_max, convention):
    """Parse a metric string or a sequence of them; repeated labels are kept once."""
    _check_convention(convention)
    labels = metric_labels(metrics)
    specs = {}
    for label in labels:
        spec = parse_metric(label, k_max, convention)
        specs.setdefault(spec.label, spec)
    return tuple(specs.values())


@dataclass(frozen=True)
class SlotTable:
    """The kernel's view of the requested metrics: distinct cutoffs and one slot per metric."""

    cutoffs: np.ndarray    # sorted distinct cutoffs, int64
    slot_code: np.ndarray  # code per slot, int64
    slot_cut: np.ndarray   # index into cutoffs per slot, int64
    needs_uncut_ideal: bool


def slot_table(specs):
    """Build the slot table of a tuple of MetricSpec; slot s is specs[s]."""
    cutoffs = np.array(sorted({s.k for s in specs}), dtype=np.int64)
    position = {int(k): c for c, k in enumerate(cutoffs)}
    return SlotTable(
        cutoffs=cutoffs,
        slot_code=np.array([s.code for s in specs], dtype=np.int64),
        slot_cut=np.array([position[s.k] for s in specs], dtype=np.int64),
        needs_uncut_ideal=any(s.code == codes.NDCG_UNCUT for s in specs),
    )
