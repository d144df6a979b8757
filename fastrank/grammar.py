"""One grammar: a metric label to (metric, cutoff, parameters, convention), in every dialect.

fastrank's own labels are `name`, `name@k` and `name(param=value, ...)@k`, the name
case-insensitive: "ndcg@10", "map", "precision(rel=2)@5", "iprec(recall=0.3)". A label
may start with a dialect, "trec_eval:ndcg_cut_10", or the call may name one for all its
labels (dialect="ir_measures"); a name fastrank does not know is looked up in every
other dialect and taken if its meaning there is unambiguous ("ndcg_cut_10", "P@5").

Every entry point (`evaluate`, `Evaluator`, `evaluate_factors`, the drop-in, Dask, the
CLI, curves and plots) parses here, so the errors are the same everywhere: each names the
label and the nearest valid names.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import FrameType
from typing import Any

import numpy as np

from . import dialects
from .digits import decimal_number, whole_number
from .registry import CONVENTIONS, METRICS, Metric, Param
from .validation import LARGEST_INT

# The patterns below read a label in time linear in its length: no two neighbouring
# repeats can take the same character (blanks are read once, after the name or after the
# parameters, never by two `\s*` in a row), so a failed match gives up after one pass
# instead of trying every split of a run of blanks or digits between them.
# name, optional (params), optional @cutoff
_LABEL = re.compile(r"^\s*(?P<name>[^\W\d][\w\-]*)\s*"
                    r"(?:\((?P<params>[^()]*)\)\s*)?(?:@(?P<cut>.*))?$", re.S)
# trec_eval's name_cutoff and pytrec_eval's name.cutoff, optionally (params)
_TREC = re.compile(r"^\s*(?P<name>P|recall|ndcg_cut|map_cut|success|iprec_at_recall"
                   r"|Rprec_mult|relative_P|unj)"
                   r"[._](?P<cut>[0-9.]+)\s*(?:\((?P<params>[^()]*)\)\s*)?$")
# ranx's rbp.8 (persistence 0.8), and its relevance level suffix: ndcg@10-l2
_RANX_DOT = re.compile(r"^\s*(?P<name>[a-z_]+)\.(?P<p>[0-9]+)\s*(?:@(?P<cut>.*))?$")
_RANX_LEVEL = re.compile(r"^(?P<label>.*?)-l(?P<level>[0-9]+)\s*$")
_CUTOFF = re.compile(r"[0-9]+")
# trec_eval's set_F with its beta, as it prints it (-m set_F.0.5 prints set_F_0.5)
_TREC_SET_F = re.compile(r"^\s*set_F[._](?P<beta>[0-9.]+)\s*$")
_TREC_LIST = re.compile(r"^(?P<name>[A-Za-z_]+?)(?P<sep>[._])[0-9][0-9.]*$")
_PARAM_KEY = re.compile(r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=")

# The longest label read. A label is a name, a few parameters and a cutoff: the longest a
# metric needs, "miscalibration(alpha=0.01, weights=equal, positions=equal)@1000", has 63
# characters. A longer text is a mistake (a paste, a file's contents): it is refused by
# its length before any pattern reads it, with its start quoted rather than all of it.
LONGEST_LABEL = 1000


@dataclass(frozen=True)
class Request:
    """One parsed label: what it asks for, as written and as computed.

    `label` is as the user wrote it (the Result answers to it), `metric` the registry
    entry, `k` the cutoff (the list length K where the label has none), `bare` whether
    the label had none, `params` ((name, value), ...) sorted, `convention` the one whose
    formula is computed and `dialect` where the name came from."""

    label: str
    metric: Metric
    k: int
    bare: bool
    params: tuple[tuple[str, Any], ...]
    convention: str
    dialect: str
    computed: str = ""   # what is computed, where it is not the registry's formula

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def canonical(self) -> str:
        """fastrank's own label for what is computed: "precision(rel=2)@5"."""
        text = self.metric.name
        if self.params:
            text += "(" + ", ".join(f"{key}={_show(value)}" for key, value in self.params) + ")"
        if self.metric.cutoff and not self.bare:
            text += f"@{self.k}"
        return text

    @cached_property
    def code(self) -> int | None:
        """The kernel code of the ranking and beyond engines (None for the others)."""
        return self.metric.code(self.convention, not self.bare)

    @cached_property
    def rel(self) -> Any:
        """The relevance threshold: None (a value above 0 is relevant) or a number."""
        return dict(self.params).get("rel")

    @cached_property
    def aggregate(self) -> str:
        """How the mean is taken: the registry's, or its convention's where that differs
        (implicit's pooled precision, ndeval's topics under trec)."""
        return self.metric.aggregates.get(self.convention, self.metric.aggregate)

    def describe(self) -> str:
        return (f"{self.label!r}: {self.canonical} under the {self.convention} convention "
                f"({self.computed or self.metric.describe(self.convention)})")


class ComputedElsewhere(ValueError):
    """A registered metric asked of a function that does not compute it: a function of
    its own does (fr.ab_ndcg, fr.rmse, fr.evaluate_factors for gauc, fr.overlap)."""


def _show(value: object) -> str:
    """A parameter as a label writes it: short (2, 0.5) where that is the value exactly,
    else every digit (1.00000001), so that the label names the same metric."""
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


def check_convention(convention: object) -> str:
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(
            f"convention must be one of {', '.join(repr(c) for c in CONVENTIONS)}; "
            f"got {convention!r}")
    return convention


def metric_labels(metrics: str | Iterable[str]) -> list[str]:
    """A metric string or a sequence of them, as a non-empty list of strings. A string of
    several labels joined by commas ("ndcg@10,map@10", as the command line takes them) is
    split as the command line splits it (`split_labels`)."""
    if isinstance(metrics, (bytes, bytearray)):
        raise TypeError(f"metrics must be a string or a list of strings such as "
                        f"['ndcg@10', 'map@10']; got {type(metrics).__name__}: decode it "
                        f"first")
    if isinstance(metrics, str):
        metrics = split_labels(metrics) or [metrics]
    try:
        labels = list(metrics)
    except TypeError:
        raise TypeError(
            f"metrics must be a string or a list of strings such as ['ndcg@10', 'map@10']; "
            f"got {type(metrics).__name__}") from None
    if not labels:
        raise ValueError("metrics is empty; ask for at least one metric, e.g. ['ndcg@10']")
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(
                f"metrics must be strings such as 'ndcg@10'; got {label!r} of type "
                f"{type(label).__name__}")
    return labels


def split_labels(text: str) -> list[str]:
    """Labels from a comma-separated text ("ndcg@10,P(rel=2)@5"): commas inside
    parentheses belong to a label's parameters, and trec_eval's "P.5,10" is P.5 and P.10
    (as its printed "P_5,10" is P_5 and P_10)."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    labels: list[str] = []
    for label in (piece.strip() for piece in out):
        previous = _TREC_LIST.match(labels[-1]) if labels else None
        if previous and re.fullmatch(r"[0-9.]+", label):  # trec_eval's P.5,10 (or P_5,10)
            label = f"{previous['name']}{previous['sep']}{label}"
        if label:
            labels.append(label)
    return labels


def parse(label: str, k_max: int = LARGEST_INT, convention: str = "recsys",
          dialect: str | None = None) -> Request:
    """The Request of one label for lists of length k_max, what a label without @k means
    (LARGEST_INT: lists of any length); a cutoff may exceed it."""
    if not isinstance(label, str):
        raise TypeError(f"metrics must be strings such as 'ndcg@10'; got {label!r} of type "
                        f"{type(label).__name__}")
    check_label_length(label)
    check_convention(convention)
    if not isinstance(dialect, (str, type(None))):
        dialects.check_dialect(dialect)  # the TypeError naming it
    return _parse(label, int(k_max), convention, dialect)


def check_label_length(label: str) -> None:
    """A ValueError for a label longer than LONGEST_LABEL characters."""
    if len(label) > LONGEST_LABEL:
        raise ValueError(
            f"metrics: a label of {len(label):,} characters ({label[:40]!r}...) is not a "
            f"metric label: a label is a name, its parameters and a cutoff, as in "
            f"'precision(rel=2)@5', at most {LONGEST_LABEL:,} characters; pass the labels "
            f"themselves")


def read_own(label: str) -> tuple[str, dict[str, str], str | None] | None:
    """(name as written, {parameter: value text}, cutoff text or None) of a label written
    as fastrank writes its own, `name(key=value, ...)@k` with blanks around the parts, or
    None where it is not of that form; the parameters are checked for their form only.
    For the functions whose names are not the registry's (fr.evaluate_sampled)."""
    check_label_length(label)
    match = _LABEL.match(label)
    if match is None:
        return None
    return match["name"], _raw_params(label, match["params"]), match["cut"]


@lru_cache(maxsize=4096)
def _parse(label: str, k_max: int, convention: str, dialect: str | None) -> Request:
    """parse, remembered: a Request is immutable, and training loops ask for the same
    labels at every evaluation."""
    dialect = dialects.check_dialect(dialect)
    text = label
    head, colon, rest = label.partition(":")
    if colon and _is_dialect(head):
        dialect, text = dialects.check_dialect(head.strip(), "the dialect of " + repr(label)), rest
    if dialect == "fastrank":
        try:
            found = _own(label, text, convention)
            if found is not None:
                request = _finish(label, *found, k_max, "fastrank")
                _warn_if_foreign(label, text, request)
                return request
        except ComputedElsewhere:
            raise
        except ValueError as own_error:
            if _own_params_only(text):
                # fastrank's name with its own parameters: a value (or the cutoff) is
                # wrong, and another tool's refusal of the name would hide that
                raise own_error from None
            try:  # another tool's spelling of a fastrank name, e.g. nDCG(dcg=exp-log2)@10
                return _anywhere(label, text, k_max)
            except dialects.Refused:
                if not _written_as_own(text):
                    raise  # the tool's spelling (IPrec@0.3), refused: its reason says more
                raise own_error from None  # fastrank's name: its own error says what to fix
            except ValueError:
                raise own_error from None
        return _anywhere(label, text, k_max)
    return _request(label, *_foreign(label, text, dialect), k_max, dialect)


def parse_all(metrics: str | Iterable[str], k_max: int = LARGEST_INT,
              convention: str = "recsys", dialect: str | None = None) -> tuple[Request, ...]:
    """The Requests of a metric string or a list of them; a repeated label is kept once."""
    labels = metric_labels(metrics)
    requests: dict[str, Request] = {}
    for label in labels:
        if label not in requests:
            requests[label] = parse(label, k_max, convention, dialect)
    return tuple(requests.values())


def _is_dialect(head: str) -> bool:
    key = head.strip().lower().replace(" ", "_")
    return key in dialects.DIALECTS or key in dialects._ALIASES


# -- fastrank's own names ----------------------------------------------------------------

def _own_params_only(text: str) -> bool:
    """Is `text` a fastrank metric name written with parameters that are all its own?"""
    match = _LABEL.match(text)
    metric = METRICS.get(match["name"].lower()) if match else None
    if metric is None or match is None or match["params"] is None:
        return False
    try:
        keys = _raw_params(text, match["params"])
    except ValueError:
        return False
    return bool(keys) and all(metric.param(key) is not None for key in keys)


def _written_as_own(text: str) -> bool:
    """Is the name of `text` written as fastrank writes its names (lower case: 'auc@0'),
    rather than as another tool does ('IPrec@0.3')?"""
    match = _LABEL.match(text)
    return match is not None and match["name"] == match["name"].lower()


def _own(label: str, text: str,
         convention: str) -> tuple[Metric, dict[str, Any], str | None, str] | None:
    """(metric, params, cutoff text or None, convention) if `text` is a fastrank label."""
    match = _LABEL.match(text)
    if match is None:
        return None
    name = match["name"].lower()
    metric = METRICS.get(name)
    if metric is None:
        return None
    params = _params(label, metric, match["params"])
    return metric, params, match["cut"], convention


# engines whose requests parse as any other, for the function that computes them (the
# engine's Plan refuses them elsewhere, naming that function)
CALLER_COMPUTED = ("factors", "overlap")


def _finish(label: str, metric: Metric, params: dict[str, Any], cut: str | None,
            convention: str, k_max: int, dialect: str) -> Request:
    if metric.entry != "fr.evaluate" and metric.engine not in CALLER_COMPUTED:
        raise ComputedElsewhere(
            f"metrics: {label!r} is computed by {metric.entry}, which takes what it needs "
            + ("(a profile of aspect preferences, and it reuses its ideal); "
               if metric.engine == "aspects" else "(rating predictions); ")
            + f"call {metric.entry}(...) for it")
    if cut is not None and not metric.cutoff:
        raise ValueError(
            f"metrics: {metric.name!r} has no cutoff of its own ({metric.formula}); write "
            f"{metric.name!r} without @k")
    bare = cut is None
    k = k_max if cut is None else parse_cutoff(label, metric.name, cut)
    for param in metric.params:
        if param.needed and param.name not in dict(params):
            raise ValueError(f"metrics: {label!r} needs the parameter {param.name} "
                             f"({param.doc}), as in "
                             f"'{metric.name}({param.name}={param.example})'")
    request = Request(label=label, metric=metric, k=k, bare=bare,
                      params=tuple(sorted(params.items())), convention=convention,
                      dialect=dialect)
    if request.aggregate == "pooled" and request.rel is not None:
        raise ValueError(f"metrics: {label!r}: the implicit convention's precision is pooled "
                         f"over users (Σ hits / Σ min(k, m)) and takes no rel=; use the "
                         f"recsys or trec convention for a relevance threshold")
    return request


def _params(label: str, metric: Metric, text: str | None) -> dict[str, Any]:
    """{name: value} of a '(key=value, ...)' text, each checked against the registry."""
    if text is None:
        return {}
    out: dict[str, Any] = {}
    for key, value in _raw_params(label, text).items():
        param = metric.param(key)
        if param is None:
            names = [p.name for p in metric.params]
            close = difflib.get_close_matches(key.lower(), names, n=1, cutoff=0.5)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(f"metrics: {label!r}: {metric.name} has no parameter {key!r}; "
                             f"{hint}its parameters: {', '.join(names) or 'none'} (it is "
                             f"{metric.formula})")
        out[key] = _value(label, param, value)
    return out


def _value(label: str, param: Param, text: str) -> str | float:
    text = text.strip()
    if param.kind is str:
        if text.lower() not in param.examples:
            raise ValueError(f"metrics: {label!r}: {param.name}={text!r} is not one of "
                             f"{', '.join(param.examples)}; {param.describe()}")
        return text.lower()
    value = decimal_number(text)  # in ASCII: float() would also take 1_0, '１', inf, nan
    if not math.isfinite(value) or not param.low <= value <= param.high or (
            param.name == "rel" and value <= 0):
        raise ValueError(
            f"metrics: {label!r}: {param.name}={text!r} is not a number in "
            f"{'(0' if param.name == 'rel' else f'[{param.low:g}'}, {param.high:g}]; "
            f"{param.describe()}")
    if param.name == "rel" and value == int(value):
        return int(value)
    return value


def parse_cutoff(label: str, name: str, k_text: str) -> int:
    """The cutoff written after '@' in label: an integer in [1, 2**62). A cutoff past the
    lists is computed as every peer computes it: the ranks past a list are empty."""
    k = read_cutoff(label, name, k_text)
    if k < 1:
        raise ValueError(f"metrics: cutoff in {label!r} must be at least 1")
    if k >= LARGEST_INT:  # (2**62 itself stands for "no cutoff given" in a Request)
        raise ValueError(f"metrics: cutoff in {label!r} is not below 2**62, the bound of "
                         f"every cutoff; use a smaller cutoff")
    return k


def read_cutoff(label: str, name: str, k_text: str) -> int:
    """The whole number written after '@' in label, as every entry point reads it: ASCII
    digits with blanks around them (no sign, '_' or other scripts' digits, which int()
    would take); a number past 2**62, however many digits it has, reads as 2**62."""
    k_text = k_text.strip()
    if not _CUTOFF.fullmatch(k_text):
        raise ValueError(
            f"metrics: cutoff in {label!r} must be a positive integer, as in '{name}@10'")
    return whole_number(k_text, LARGEST_INT)


# -- other tools' names ------------------------------------------------------------------

def _foreign(label: str, text: str, dialect: str
             ) -> tuple[str, dialects.Meaning | dialects.Refusal, dict[str, str], str | None]:
    """(name as the tool writes it, Meaning, {param: value} as written, cutoff text) of a
    label in a foreign dialect."""
    if dialects.base(dialect) == "trec_eval":
        match = _TREC.match(text)
        if match is not None:
            meaning = dialects.lookup(dialect, match["name"])
            # every name _TREC reads is in trec_eval's table: the meaning is never None
            return (match["name"], meaning,  # type: ignore[return-value]
                    _raw_params(label, match["params"]), match["cut"])
        match = _TREC_SET_F.match(text)
        if match is not None:
            return ("set_F", dialects.lookup(dialect, "set_F"),  # type: ignore[return-value]
                    {"beta": match["beta"]}, None)
    if dialect == "ranx":
        match = _RANX_DOT.match(text)
        meaning = dialects.lookup(dialect, match["name"]) if match else None
        if match is not None and meaning is not None:
            if match["name"] != "rbp":
                raise ValueError(f"metrics: {label!r}: ranx writes a number after a dot only "
                                 f"for rbp's persistence (rbp.95); write {match['name']}@k")
            return match["name"], meaning, {}, match["cut"]
        level = _RANX_LEVEL.match(text)
        if level is not None:
            name, meaning, raw, cut = _foreign(label, level["label"], dialect)
            if "_level" in raw:
                raise ValueError(f"metrics: {label!r} gives ranx's relevance level (-lN) "
                                 f"twice; give it once")
            if isinstance(meaning, dialects.Meaning) and \
                    METRICS[meaning.metric].param("rel") is None:
                return name, dialects.Refusal(
                    f"ranx's -l{level['level']} keeps the raw grades at or above it as "
                    f"gains; fastrank's {meaning.metric} takes no relevance level"), {}, cut
            return name, meaning, {**raw, "_level": level["level"]}, cut
    meaning = dialects.lookup(dialect, text.strip()) \
        if dialects.base(dialect) == "trec_eval" else None
    if meaning is not None:
        return text.strip(), meaning, {}, None  # a name no label pattern reads: 11pt_avg
    match = _LABEL.match(text)
    meaning = dialects.lookup(dialect, match["name"]) if match else None
    if meaning is None or match is None:
        raise ValueError(
            f"metrics: {label!r} is not a metric name of {dialect}; "
            f"{_nearest(match['name'] if match else text, dialect)}")
    return match["name"], meaning, _raw_params(label, match["params"]), match["cut"]


def _raw_params(label: str, text: str | None) -> dict[str, str]:
    """{key: value text} of a '(key=value, ...)' text, checked for its form only."""
    out: dict[str, str] = {}
    for part in filter(str.strip, (text or "").split(",")):
        found = _param(part)
        if found is None:
            raise ValueError(f"metrics: {label!r}: parameters are written name=value, as in "
                             f"'precision(rel=2)@5'; got {part.strip()!r}")
        key, value = found
        if key in out:
            raise ValueError(f"metrics: {label!r} gives the parameter {key} twice; give "
                             f"it once")
        quote = value[:1]
        if quote in ("'", '"'):
            if len(value) < 2 or value[-1] != quote:
                raise ValueError(f"metrics: {label!r}: the value of {key} opens a quote "
                                 f"({value}) it does not close; write {key}=value")
            value = value[1:-1].strip()
        out[key] = value
    return out


def _param(part: str) -> tuple[str, str] | None:
    """(key, value) of one 'key = value' part, the value without its surrounding blanks;
    None where the part is not of that form. The value is one line; a blank value reads
    as '' (then refused as a value) where a blank other than a line break follows '='.
    (By hand rather than as one pattern: a lazy value followed by optional blanks tries
    every split of a run of blanks, a time quadratic in its length.)"""
    match = _PARAM_KEY.match(part)
    if match is None:
        return None
    rest = part[match.end():]
    value = rest.strip()
    if "\n" in value or not rest.replace("\n", ""):
        return None
    return match["key"], value


def _request(label: str, written: str, meaning: dialects.Meaning | dialects.Refusal,
             raw: dict[str, str], cut: str | None, k_max: int, dialect: str) -> Request:
    if isinstance(meaning, dialects.Refusal):
        raise dialects.Refused(f"metrics: {label!r} ({dialect}) is refused: {meaning.reason}")
    name, raw = dialects.translate(label, dialect, written, meaning, raw)
    metric = METRICS[name]
    if cut is None and dialect == "ir_measures" and name == "ndcg_exp" != meaning.metric:
        raise dialects.Refused(f"metrics: {label!r} ({dialect}) is refused: {dialects._EXP_UNCUT}")
    params: dict[str, Any] = dict(meaning.params)
    convention = meaning.convention
    for key, value in raw.items():
        if metric.param(key) is None:
            raise ValueError(f"metrics: {label!r}: {key}= is not a parameter fastrank "
                             f"reproduces for {dialect}'s name (it computes {metric.name})")
        params[key] = _value(label, metric.param(key), value)  # type: ignore[arg-type]
    if cut is None and meaning.bare_refusal:
        raise dialects.Refused(f"metrics: {label!r} ({dialect}) is refused: {meaning.bare_refusal}")
    if meaning.cutoff == "none" and cut is not None:
        raise ValueError(f"metrics: {label!r}: {dialect}'s name takes no cutoff")
    if meaning.cutoff == "required" and cut is None:
        raise ValueError(f"metrics: {label!r} needs a cutoff in {dialect}, as in "
                         f"'{label.strip()}@10'" if dialects.base(dialect) != "trec_eval" else
                         f"metrics: {label!r} needs a cutoff in trec_eval, as in "
                         f"'{label.strip()}_10'")
    if meaning.cutoff not in ("optional", "required", "none"):  # the number is a parameter
        if cut is None:
            example = {"ir_measures": "IPrec@0.3", "trec_eval": f"{written}_0.30"}.get(
                dialects.base(dialect), f"{written}@0.3")
            raise ValueError(f"metrics: {label!r} needs its {meaning.cutoff} after the name, "
                             f"as in {example!r}")
        params[meaning.cutoff] = _value(label, metric.param(meaning.cutoff),  # type: ignore[arg-type]
                                        cut)
        cut = None
    return _finish(label, metric, params, cut, convention, k_max, dialect)


class AmbiguousName(UserWarning):
    """A label read as fastrank's metric that another tool spells the same way for a
    different number."""


def _warn_if_foreign(label: str, text: str, request: Request) -> None:
    """Warn (once per label) when a name not written as fastrank writes it is, in some
    tool, a different metric or convention: 'MAP@10' is ir-measures' AP over m."""
    name = _LABEL.match(text)["name"]  # type: ignore[index]  # text parsed as a label
    if name == request.metric.name:
        return
    same = (request.name, request.convention)
    for dialect, table in dialects.TABLES.items():  # spelled exactly as a tool that agrees
        meaning = table.get(name)
        if isinstance(meaning, dialects.Meaning) and (meaning.metric, meaning.convention) \
                == same and dialect not in dialects.CASELESS:
            return
    others = []
    for dialect in dialects.TABLES:
        meaning = dialects.lookup(dialect, name)
        if isinstance(meaning, dialects.Meaning) and \
                (meaning.metric, meaning.convention) != same:
            others.append(f"{dialect}: {meaning.metric} ({meaning.convention})")
    if others:
        warnings.warn(
            f"metrics: {label!r} is read as fastrank's {request.canonical} under the "
            f"{request.convention} convention; the same name means {'; '.join(others)}. "
            f"Pass dialect= or write the tool first (e.g. '{others[0].split(':')[0]}:"
            f"{label.strip()}') for a tool's number", AmbiguousName,
            stacklevel=_outside_level())


def _outside_level() -> int:
    """The `stacklevel` that makes a warning name the first caller outside fastrank (the
    user's line, which a warnings filter can then match), from the function that warns."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame: FrameType | None = sys._getframe(2)  # the warning function's caller
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _anywhere(label: str, text: str, k_max: int) -> Request:
    """A label fastrank does not know: its meaning in the one foreign dialect that has it
    (or several that agree), else an error with the nearest names."""
    found: dict[str, tuple[str, dialects.Meaning | dialects.Refusal, dict[str, str],
                           str | None]] = {}
    for dialect in dialects.TABLES:
        try:
            found[dialect] = _foreign(label, text, dialect)
        except ValueError:
            continue
    if not found:
        match = _LABEL.match(text)
        raise ValueError(f"metrics: unknown metric {label!r}; {_unknown_hint(text)}"
                         f"{_nearest(match['name'] if match else text, None)}")
    meanings: dict[str, Request | ValueError] = {}
    for dialect, parts in found.items():
        try:
            request = _request(label, *parts, k_max, dialect)
        except ValueError as exc:
            meanings[dialect] = exc
            continue
        meanings[dialect] = request
    requests = [r for r in meanings.values() if isinstance(r, Request)]
    if requests and len({(r.canonical, r.convention) for r in requests}) == 1:
        return requests[0]
    if not requests:
        raise next(iter(meanings.values()))  # type: ignore[misc]  # all ValueErrors
    which = "; ".join(f"{d}: {r.canonical} ({r.convention})" for d, r in meanings.items()
                      if isinstance(r, Request))
    raise ValueError(f"metrics: {label!r} means different things in different tools "
                     f"({which}); write the tool first, as in "
                     f"'{next(iter(meanings))}:{label.strip()}', or pass dialect=")


def _unknown_hint(text: str) -> str:
    """What an unknown label's form suggests, before the nearest names: a prefix that is
    not a dialect, an unclosed parenthesis, a cutoff glued to the name (ndcg10)."""
    head, colon, _ = text.partition(":")
    if colon and _LABEL.match(head) and not _is_dialect(head):
        return f"{head.strip()!r} is not a dialect (dialects: {', '.join(dialects.DIALECTS)}); "
    if text.count("(") != text.count(")"):
        return "its parentheses do not match, as in 'precision(rel=2)@5'; "
    glued = re.fullmatch(r"\s*([A-Za-z_]+?)[_.]?([0-9]+)\s*", text)
    if glued and METRICS.get(glued[1].lower()) is not None:
        return f"a cutoff follows '@', as in '{glued[1]}@{glued[2]}'; "
    return ""


def _computed_names(dialect: str) -> list[str]:
    """A foreign dialect's names that fastrank computes (the ones worth suggesting)."""
    return [name for name in dialects.foreign_names(dialect)
            if isinstance(dialects.lookup(dialect, name), dialects.Meaning)]


def _nearest(name: str, dialect: str | None) -> str:
    """'did you mean ...' over the names of a dialect (None: fastrank's and every tool's)."""
    if dialect in (None, "fastrank"):
        pool = list(METRICS.names())
        for d in dialects.TABLES:
            pool += _computed_names(d)
    else:
        pool = _computed_names(dialect)
    pool = list(dict.fromkeys(pool))
    spelled: dict[str, str] = {}
    for p in pool:
        spelled.setdefault(p.lower(), p)
    close = difflib.get_close_matches(name, pool, n=4, cutoff=0.6)
    close += [spelled[p] for p in difflib.get_close_matches(name.lower(), list(spelled), n=4,
                                                            cutoff=0.6)]
    own = ", ".join(METRICS.names("ranking", "counts", "trec", "beyond", "catalogue",
                                  "debiased", "auc"))
    hint = f"did you mean {', '.join(repr(c) for c in dict.fromkeys(close))}? " if close else ""
    if dialect in (None, "fastrank"):
        return (f"{hint}known names are {own} (each optionally @k), and the names of "
                f"{', '.join(dialects.TABLES)} (see fastrank.METRICS and docs/dialects.md)")
    return f"{hint}its names are {', '.join(dialects.foreign_names(dialect))}"


# -- curves ----------------------------------------------------------------------------

def _curved(metric: Metric) -> bool:
    """Does the metric have a curve over k: a per-user mean of the ranking kernel with a
    cutoff (not a sum or a geometric mean)?"""
    return metric.engine == "ranking" and metric.cutoff and metric.aggregate == "mean"


def curve_requests(requests: Sequence[Request], curves: str | Iterable[str] | bool | None,
                   k_max: int, convention: str = "recsys") -> list[Request]:
    """The Requests of name@1..name@k_max for every name of `curves`: a fastrank name or
    a list of them (under the convention the requests share, else the call's), or True:
    every curved metric among the requests, each under its own convention. Labels that
    are already among the requests are not repeated."""
    if isinstance(curves, np.bool_):
        curves = bool(curves)
    if curves is None or curves is False:
        return []
    shared = {r.convention for r in requests}
    default = shared.pop() if len(shared) == 1 else convention
    named: dict[str, str]
    if curves is True:
        named = {}
        for r in requests:
            if _curved(r.metric) and not r.params:
                named.setdefault(r.metric.name, r.convention)
    else:
        names = [curves] if isinstance(curves, str) else _curve_list(curves)
        named = {}
        for name in dict.fromkeys(name.strip().lower() for name in names):
            check_curve_name(name, "curves")
            named[name] = default
    have = {r.label for r in requests}
    out = []
    for name, curve_convention in named.items():
        for c in range(1, k_max + 1):
            label = f"{name}@{c}"
            if label not in have:
                out.append(parse(label, k_max, curve_convention, None))
    return out


def _curve_list(curves: Any) -> list[str]:
    try:
        names = list(curves)
    except TypeError:
        raise TypeError(f"curves must be a metric name such as 'ndcg', a list of them, "
                        f"True (every ranking metric asked for) or None; got {curves!r} "
                        f"of type {type(curves).__name__}") from None
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"curves must be a metric name, a list of them, or True; got "
                        f"{curves!r}")
    return names


def check_curve_name(name: str, argument: str) -> Metric:
    """A metric name that has a curve over k: a registered per-user ranking mean with a
    cutoff."""
    metric = METRICS.get(name)
    bare, at, _ = name.partition("@")
    if metric is None and at and METRICS.get(bare.strip()) is not None:
        raise ValueError(f"{argument}: {name!r}: a curve runs over every cutoff, so it takes "
                         f"the name without @k: {bare.strip()!r}")
    if metric is None or metric.engine != "ranking":
        curved = ", ".join(n for n in METRICS.names() if _curved(METRICS[n]))
        raise ValueError(f"{argument}: {name!r} is not a ranking metric; curves are drawn "
                         f"for {curved}")
    if not metric.cutoff:
        raise ValueError(f"{argument}: {name!r} has no cutoff, so it has no curve over k")
    if not _curved(metric):
        summed = metric.aggregate == "sum"
        raise ValueError(f"{argument}: {name!r} is "
                         f"{'a sum over users' if summed else 'a geometric mean'}, not a "
                         f"mean, so it has no curve with intervals; draw "
                         f"{'hits' if summed else 'map'} instead")
    return metric
