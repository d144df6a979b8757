"""The passes of every family, in one table keyed by the registry's `engine`: each family
makes its passes from its requests (`FAMILIES[engine](requests, setup)`), and the engine's
Plan runs them in the table's order (the ranking family first: its pass of the truth as
given writes the convention's counts). See `pass_protocol` for what a pass is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._types import FloatArray, IntArray
from .aspect_passes import alpha_passes, intent_passes
from .auc import AUCPlan
from .beyond import BeyondPlan
from .calibration import CalibrationPlan
from .debiased import DebiasedPlan
from .grammar import Request
from .pass_protocol import Inputs, Pass, Setup, group_by
from .ranking_pass import ranking_passes
from .trec_pass import trec_passes


class BeyondPass:
    """The beyond-accuracy measures (one walk): per-user ones, and the exposure of the
    counted users' lists for the catalogue ones (`catalogue_means`)."""

    def __init__(self, requests: Sequence[Request], setup: Setup) -> None:
        side = setup.side
        self.plan = BeyondPlan(requests, setup.n_items, setup.k, train=side.train,
                               item_aspects=side.item_aspects, item_vectors=side.item_vectors,
                               baseline=side.baseline, baseline_later=side.baseline_later)
        self.per_user = self.plan.per_user
        self.catalogue = self.plan.catalogue

    def run(self, inputs: Inputs, out: FloatArray) -> IntArray | None:
        values, shown = self.plan.run(inputs.data, inputs.topk, inputs.rows, inputs.counted,
                                      inputs.threads, baseline=inputs.baseline)
        out[...] = values
        return shown

    def catalogue_means(self, shown: IntArray | None) -> dict[str, float]:
        return self.plan.catalogue_means(shown)


class _AtThreshold:
    """A family plan whose `run(data, topk, rows, counted, threads)` gives its values,
    run on the truth at its relevance threshold."""

    def __init__(self, rel: Any, plan: Any) -> None:
        self.rel, self.plan = rel, plan
        self.per_user = plan.per_user

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        out[...] = self.plan.run(inputs.view(self.rel), inputs.topk, inputs.rows,
                                 inputs.counted, inputs.threads)


def _by_threshold(make: Callable[[list[Request], Setup], Any]
                  ) -> Callable[[Sequence[Request], Setup], list[Pass]]:
    """A family's passes: one plan per relevance threshold, `make(requests, setup)`."""

    def passes(requests: Sequence[Request], setup: Setup) -> list[Pass]:
        return [_AtThreshold(rel, make(group, setup))
                for rel, group in group_by(requests, lambda r: r.rel).items()]

    return passes


def _debiased(requests: list[Request], setup: Setup) -> DebiasedPlan:
    return DebiasedPlan(requests, setup.n_items, train=setup.side.train,
                        propensity=setup.side.propensity)


def _calibration(requests: list[Request], setup: Setup) -> CalibrationPlan:
    return CalibrationPlan(requests, setup.n_items, train=setup.side.train,
                           item_aspects=setup.side.item_aspects)


# each engine's passes, in the order the Plan runs them (and lays out its values)
FAMILIES: Mapping[str, Callable[[Sequence[Request], Setup], Sequence[Pass]]] = {
    "ranking": ranking_passes,
    "trec": trec_passes,
    "aspects": alpha_passes,
    "intents": intent_passes,
    "beyond": lambda requests, setup: [BeyondPass(requests, setup)],
    "debiased": _by_threshold(_debiased),
    "auc": _by_threshold(lambda requests, setup: AUCPlan(requests, setup.n_items)),
    "calibration": _by_threshold(_calibration),
}


class ExternalPass:
    """Labels whose values the caller computes (evaluate_factors' full-ranking auc): the
    values given with each block, copied."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.per_user = list(requests)

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        for s, request in enumerate(self.per_user):
            out[s] = inputs.external[request.label]  # type: ignore[index]  # given with them


def make_passes(requests: Sequence[Request], setup: Setup,
                external: Sequence[Request] = ()) -> list[Pass]:
    """Every pass of the requests, in the table's order, then the caller's labels."""
    by_engine = group_by(requests, lambda r: r.metric.engine)
    unknown = [engine for engine in by_engine if engine not in FAMILIES]
    if unknown:  # a registry entry without a family here (the Plan refused the others)
        raise ValueError(f"metrics: no pass computes the engine(s) {unknown} in an "
                         f"evaluation of lists")
    found: list[Pass] = [p for engine, family in FAMILIES.items() if engine in by_engine
                         for p in family(by_engine[engine], setup)]
    if external:
        found.append(ExternalPass(external))
    return found

