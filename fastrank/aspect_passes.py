"""The aspect families' passes: α-nDCG (`aspects`, ndeval's classic, one pass per α) and
the intent-aware measures (`intents`: P-IA, MAP-IA, α-DCG, ERR-IA, nERR-IA, S-recall,
NRBP, nNRBP), whose kernel (`fastrank._kernels.intents`) writes one field per measure,
the registry's code of each. Under trec both count ndeval's topics (`Inputs.topics`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._types import BoolArray, FloatArray
from ._kernels import codes
from .aspects import alpha_ndcg_values, intent_values, ndeval_scale
from .grammar import Request
from .pass_protocol import Inputs, Setup, group_by
from .ranking_pass import SlotTable

# the parameters an intent pass runs its kernel with, and their values for the measures
# that do not take them (the registry's defaults of α-DCG, NRBP and ERR-IA)
_PASS_PARAMS = {"alpha": 0.5, "beta": 0.5, "max_grade": 0.0}


class AlphaPass(SlotTable):
    """α-nDCG at one α, at the requests' cutoffs: NaN where not counted, 0 for a counted
    user without a relevant item."""

    def __init__(self, requests: Sequence[Request], setup: Setup) -> None:
        super().__init__(None, requests)
        self.per_user = self.requests
        self.aspects = setup.aspects
        self.alpha = requests[0].metric.kernel_value(requests[0].params)
        self.trec = requests[0].convention == "trec"

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        counted = inputs.topics(self.aspects) if self.trec else inputs.counted
        values, _ = alpha_ndcg_values(inputs.data, inputs.topk, inputs.rows, self.aspects,
                                      self.cutoffs, self.alpha, inputs.threads)
        position = {int(k): c for c, k in enumerate(self.cutoffs)}
        for s, request in enumerate(self.requests):
            row = values[position[request.k]]
            out[s] = np.where(counted, np.nan_to_num(row, nan=0.0), np.nan)


def alpha_passes(requests: Sequence[Request], setup: Setup) -> list[AlphaPass]:
    """One pass per α."""
    return [AlphaPass(group, setup) for group in
            group_by(requests, lambda r: r.metric.kernel_value(r.params)).values()]


class IntentPass(SlotTable):
    """The intent-aware measures of one relevance threshold and convention, run with one
    (α, β, max_grade): NaN where not counted, 0 for a counted user without an intent (no
    relevant item, or relevant items without aspects)."""

    def __init__(self, rel: Any, requests: Sequence[Request], setup: Setup, trec: bool,
                 values: dict[str, float]) -> None:
        super().__init__(rel, requests)
        self.per_user = self.requests
        self.aspects = setup.aspects
        self.trec = trec
        self.alpha, self.beta, self.max_grade = (values.get(name, default)
                                                 for name, default in _PASS_PARAMS.items())
        self.codes = {int(r.code) for r in self.requests if r.code is not None}
        self.takes_grade = any(r.metric.param("max_grade") is not None for r in self.requests)

    def run(self, inputs: Inputs, out: FloatArray) -> None:
        data = inputs.view(self.rel)
        counted: BoolArray = inputs.topics(self.aspects) if self.trec else inputs.counted
        largest = float(data.data.max()) if data.data.size else 0.0
        max_grade = self.max_grade
        if max_grade == 0.0:
            max_grade = largest if largest > 0 else 1.0
        elif max_grade < largest and self.takes_grade:
            raise ValueError(
                f"metrics: max_grade={max_grade:g} is below the largest relevance in truth "
                f"({largest:g}); R = (2^g − 1)/2^max_grade must stay below 1: pass "
                f"max_grade >= {largest:g} or leave it out (default: the largest value in "
                f"truth)")
        values, n_intents = intent_values(
            data, inputs.topk, inputs.rows, self.aspects, self.cutoffs, alpha=self.alpha,
            binary=self.trec, max_grade=max_grade, map_full=self.trec,
            want_ideal=codes.IA_NERR in self.codes, threads=inputs.threads,
            novelty=any(code >= codes.IA_CORE for code in self.codes), beta=self.beta,
            want_full=codes.IA_NNRBP in self.codes)
        position = {int(k): c for c, k in enumerate(self.cutoffs)}
        for s, request in enumerate(self.requests):
            field, c = request.code, position[request.k]
            row = values[field, c]
            if self.trec and field in (codes.IA_ERR, codes.IA_ALPHA_DCG):
                row = ndeval_scale(values[field, c:c + 1], n_intents, self.cutoffs[c:c + 1],
                                   field, self.alpha)[0]
            out[s] = np.where(counted, row, np.nan)


def intent_passes(requests: Sequence[Request], setup: Setup) -> list[IntentPass]:
    """The passes of the intent-aware requests: one per relevance threshold and
    convention, and more where the requests ask the kernel's α, β or max_grade at values
    that differ (each request joins the first pass whose values agree with its own)."""
    passes: list[IntentPass] = []
    for (rel, trec), group in group_by(requests, lambda r: (r.rel, r.convention == "trec")
                                       ).items():
        found: list[tuple[dict[str, float], list[Request]]] = []
        for r in group:
            if trec and "max_grade" in dict(r.params):
                raise ValueError(
                    f"metrics: {r.label!r}: under the trec convention {r.name} is ndeval's, "
                    f"with binary grades (R = 1/2); max_grade= sets the graded R of the "
                    f"recsys convention")
            own = {name: float(r.metric.value(r.params, name)) for name in _PASS_PARAMS
                   if r.metric.param(name) is not None}
            for values, members in found:
                if all(values.get(name, value) == value for name, value in own.items()):
                    values.update(own)
                    members.append(r)
                    break
            else:
                found.append((own, [r]))
        passes += [IntentPass(rel, members, setup, trec, values) for values, members in found]
    return passes
