"""The order of tied scores that the metric names asked for need, and the warning when
lists built from tied scores follow another.

Each tool ranks documents of equal score its own way (`fastrank.dialects.tie_order`):
trec_eval by id descending, some of ir-measures' providers by id ascending or in the
run's order, ranx and RecBole in orders nothing reproduces. Where lists are built from
scores with the names known (`fastrank evaluate`, fastrank.dask, fastrank.spark), the
names' own order is taken when they agree on one; where the lists were built before
(`fastrank.io.from_tables`' Tables), or the names disagree, the call warns
(`fastrank.dialects.TieOrder`) naming the names whose tool orders tied scores otherwise.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence

from .. import dialects
from ..dialects import TIE_ORDERS, TIE_RULES, TieOrder
from ..engine import parse_requests
from ..validation import LARGEST_INT

__all__ = ["TieOrder", "Wanted", "check_ties", "pick", "ties_option", "wanted"]

# {label: (its dialect, the order its tool ranks equal scores in, None: none fastrank builds)}
Wanted = Mapping[str, "tuple[str, str | None]"]


def wanted(metrics: str | Iterable[str], convention: str | None, dialect: str | None,
           cut: bool) -> dict[str, tuple[str, str | None]]:
    """The `Wanted` orders of the labels whose value can depend on the order of tied
    scores (on lists cut at a k, when `cut`). Labels that do not parse are left to
    evaluate's own error."""
    try:
        requests = parse_requests(metrics, LARGEST_INT,
                                  "recsys" if convention is None else convention, dialect)
    except (ValueError, TypeError):
        return {}
    return {r.label: (r.dialect, dialects.tie_order(r.dialect, r.name, r.bare))
            for r in requests if dialects.order_matters(r.name, r.bare, cut)}


def pick(orders: Wanted, available: Sequence[str] = TIE_ORDERS) -> str:
    """The order to build lists in: the one every label's tool uses, where they agree
    on one that is `available`; else trec_eval's (fastrank's own)."""
    distinct = {order for _, order in orders.values()}
    if len(distinct) == 1:
        only = distinct.pop()
        if only is not None and only in available:
            return only
    return "trec_eval"


def ties_option(value: object) -> str:
    """A ties= argument, checked: one of TIE_ORDERS."""
    if not isinstance(value, str) or value not in TIE_ORDERS:
        raise ValueError(
            f"ties must be one of {', '.join(map(repr, TIE_ORDERS))} (equal scores "
            f"{TIE_RULES['trec_eval']}; {TIE_RULES['docno']}; {TIE_RULES['file']}); got "
            f"{value!r}")
    return value


def check_ties(orders: Wanted, used: str, remedy: str, stacklevel: int = 3) -> None:
    """Warn (TieOrder) naming the labels of `orders` whose tool ranks equal scores
    otherwise than `used`, the order of lists built from tied scores; `remedy` says how
    to get their numbers ('{orders}' in it: the ties= values they need). One warning per
    call, at the caller's caller (`stacklevel`)."""
    off = {label: how for label, how in orders.items() if how[1] != used}
    if not off:
        return
    parts = []
    for label, (dialect, order) in off.items():
        why = (f"{dialects.TOOLS.get(dialect, dialect)} orders them {TIE_RULES[order]}"
               if order is not None else dialects.tie_reason(dialect))
        parts.append(f"{label!r}: {why}")
    needed = sorted({order for _, order in off.values() if order is not None})
    warnings.warn(
        f"the lists were built from tied scores, ordered {TIE_RULES[used]}, so these "
        f"numbers can differ from their tools' on the same scores ({'; '.join(parts)}). "
        + remedy.format(orders=" or ".join(f"ties={o!r}" for o in needed) or "no ties="),
        TieOrder, stacklevel=stacklevel)
