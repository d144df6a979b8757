"""The side inputs of an evaluation, as one checked object: what the beyond-accuracy,
aspect, debiased and calibration metrics read besides the lists and the truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from numpy.typing import ArrayLike

from ._types import SparseMatrix
from .beyond import check_side_inputs, check_side_shapes
from .debiased import check_propensity
from .grammar import Request


@dataclass(frozen=True)
class SideInputs:
    """train= (interactions), item_aspects=, item_vectors=, baseline= (serendipity's
    lists, or "popular") and propensity=, as given; `baseline_later`: the plan of an
    Evaluator, whose blocks (and their per-row baselines) come later."""

    train: SparseMatrix | None = None
    item_aspects: SparseMatrix | None = None
    item_vectors: ArrayLike | None = None
    baseline: Any = None
    propensity: ArrayLike | None = None
    baseline_later: bool = False

    def check_needs(self, requests: Sequence[Request]) -> None:
        """Each request has the side inputs it needs (and ild not two notions of
        distance)."""
        check_side_inputs([r for r in requests if r.metric.needs], train=self.train,
                          item_aspects=self.item_aspects, item_vectors=self.item_vectors,
                          baseline=self.baseline, baseline_later=self.baseline_later,
                          propensity=self.propensity)

    def check(self, requests: Sequence[Request], n_items: int) -> None:
        """Each request has the side inputs it needs; every input given fits the catalogue
        of n_items items (the ones no metric reads are checked too: a matrix of another
        catalogue is an error, not ignored)."""
        self.check_needs(requests)
        # the inputs a metric reads are checked, entries and all, by its pass
        needed = {part for r in requests for need in r.metric.needs for part in need.split("|")}
        given = dict(train=self.train, item_aspects=self.item_aspects,
                     item_vectors=self.item_vectors, propensity=self.propensity,
                     baseline=self.baseline)
        check_side_shapes(n_items, **{name: None if name in needed else value
                                      for name, value in given.items()})
        if self.propensity is not None and "propensity" not in needed:  # every value read
            check_propensity(self.propensity, n_items)
