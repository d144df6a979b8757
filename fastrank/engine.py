"""The engine: parsed metric requests to passes, per-user Blocks, means and the Result.

A `Plan` holds the requests of one evaluation for lists of length k and the passes that
compute them (`fastrank.passes.FAMILIES`, keyed by the registry's `engine`); it groups
requests and loops, and holds no metric name. `run` fills a Block of per-user values for
some rows, with the one rule of relevance thresholds (`count_by_threshold`); `sums` and
`means` aggregate them as each request's aggregate says; `result` is the one place a
ranking `Result` is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ._types import AnyArray, BoolArray, FloatArray, IntArray

from .grammar import (ComputedElsewhere, Request, check_convention, curve_requests,
                      parse_all)
from .means import counts_judged, mean_of, sum_parts
from .pass_protocol import Inputs, Pass, Setup
from .passes import make_passes
from .ranking_pass import counts_into
from .result import Result
from .side_inputs import SideInputs
from .thresholds import at_least, counting_threshold
from .validation import LARGEST_INT, Truth, check_memory

# Rows per part of a mean: the parts of consecutive blocks of this many rows are added in
# order, so that evaluating spans of whole blocks without keeping per-user values
# (evaluate(per_user=False)) gives the same means to the bit. Fewer rows are one part.
SUM_ROWS = 1 << 16
# (numerator, denominator, users) of a mean: means.sum_parts
Sums = tuple[float, float, float]


class Block:
    """Per-user outputs of some top-K rows: one row of `values` per per-user metric,
    n_relevant, counted, and the item exposure of catalogue metrics (or None)."""

    def __init__(self, values: FloatArray, n_relevant: IntArray, counted: BoolArray,
                 shown: IntArray | None) -> None:
        self.values, self.n_relevant, self.counted, self.shown = \
            values, n_relevant, counted, shown

    def fill(self, lo: int, part: Block) -> None:
        """Copy a Block of rows lo.. into this one and add its exposure."""
        hi = lo + part.n_relevant.shape[0]
        self.values[:, lo:hi] = part.values
        self.n_relevant[lo:hi] = part.n_relevant
        self.counted[lo:hi] = part.counted
        self.shown = added_exposure(self.shown, part.shown)


def added_exposure(total: IntArray | None, part: IntArray | None) -> IntArray | None:
    """Item exposure (catalogue metrics; None without them) added up over blocks."""
    if part is None:
        return total
    return part if total is None else total + part


def parse_requests(metrics: str | Iterable[str], k: int, convention: str = "recsys",
                   dialect: str | None = None,
                   curves: str | Iterable[str] | bool | None = None) -> tuple[Request, ...]:
    """The Requests of metric labels for lists of length k (and of the curves asked for:
    name@1..name@k), one counting rule for all."""
    check_convention(convention)
    requests = parse_all(metrics, k, convention, dialect)
    requests += tuple(curve_requests(requests, curves, k, convention))
    rules = {counts_judged(r.convention) for r in requests}
    if len(rules) > 1:
        judged = [r.label for r in requests if counts_judged(r.convention)]
        other = [r.label for r in requests if not counts_judged(r.convention)]
        raise ValueError(
            f"metrics: {judged} count every judged user (trec_eval's rule) and {other} "
            f"only users with a relevant item; one Result has one set of counted users: "
            f"pass convention='trec' to count every judged user for all of them, or "
            f"evaluate the two groups in two calls")
    return requests


def check_requests(metrics: str | Iterable[str], convention: str, dialect: str | None = None,
                   external: Collection[str] = (),
                   side: SideInputs | None = None) -> tuple[Request, ...]:
    """Check metric names and the side inputs they need before any list is seen (for
    lists of any length): what Plan would refuse later, refused now."""
    requests = parse_requests(metrics, LARGEST_INT, convention, dialect)
    refuse_caller_computed([r for r in requests if r.label not in external])
    dataclasses.replace(side or SideInputs(), baseline_later=True).check_needs(requests)
    return requests


class Plan:
    """Metric labels parsed for lists of length k: the passes that compute them and how
    their per-user values become means."""

    def __init__(self, metrics: str | Iterable[str], k: int, convention: str, n_items: int, *,
                 dialect: str | None = None, side: SideInputs | None = None,
                 external: Mapping[str, str] | None = None,
                 curves: str | Iterable[str] | bool | None = None) -> None:
        requests = parse_requests(metrics, k, convention, dialect, curves)
        self.requests = {r.label: r for r in requests}
        self.k = k
        self.convention = common_convention(requests) or convention
        self.judged = counts_judged(requests[0].convention if requests else convention)
        # labels the caller computes, {label: what it computes}: the full-ranking auc
        external = external or {}
        self.external = [label for label in external if label in self.requests]
        for label in self.external:
            self.requests[label] = dataclasses.replace(self.requests[label],
                                                       computed=external[label])
        own = [r for r in requests if r.label not in self.external]
        refuse_caller_computed(own)
        self.side = side if side is not None else SideInputs()
        self.side.check(own, n_items)
        self.passes: list[Pass] = make_passes(
            own, Setup(k, n_items, self.judged, self.side),
            [self.requests[label] for label in self.external])
        self.labels = list(self.requests)
        self.per_user = [r.label for p in self.passes for r in p.per_user]
        self.catalogue = [label for label in self.labels if label not in self.per_user]
        # the relevance threshold that decides which users each per-user label counts
        # (None: the convention's rule for the truth as given)
        self.thresholds = [counting_threshold(self.requests[label], self.judged)
                           for label in self.per_user]
        self.beyond_baseline = self.side.baseline
        self._views: tuple[Truth | None, dict[Any, Truth]] = (None, {})

    def checks_in_walk(self, width: int) -> tuple[bool, bool]:
        """What the ranking walk alone reads, and so checks as it reads it (evaluate then
        skips those scans), of every truth row and of lists `width` wide: (every truth
        entry, every list id). The truth when the plan is one ranking pass of the truth
        as given and nothing else; the ids too when its largest cutoff reaches the
        lists' last column."""
        alone = len(self.passes) == 1 and getattr(self.passes[0], "writes_counts", False)
        return alone, alone and int(self.passes[0].cutoffs[-1]) >= width  # type: ignore[attr-defined]

    def view(self, data: Truth, rel: Any) -> Truth:
        """The truth at relevance threshold `rel` (`thresholds.at_least`), made once per
        truth."""
        if rel is None:
            return data
        if self._views[0] is not data:
            self._views = (data, {})
        views = self._views[1]
        if rel not in views:
            views[rel] = at_least(data, rel)
        return views[rel]

    def empty(self, n_rows: int) -> Block:
        """An unfilled Block for n_rows rows (its memory checked first)."""
        check_memory(n_rows * (8 * len(self.per_user) + 9),
                     f"the per-user values of {len(self.per_user)} metrics for {n_rows:,} "
                     f"users", "ask for fewer metrics (or curves), or evaluate fewer users "
                     "at a time")
        return Block(np.empty((len(self.per_user), n_rows)), np.empty(n_rows, np.int64),
                     np.empty(n_rows, np.bool_), None)

    def run(self, data: Truth, topk: AnyArray, rows: IntArray, threads: int,
            baseline: Any = None, into: Block | None = None, at: int = 0,
            external: Mapping[str, FloatArray] | None = None) -> Block:
        """The Block of checked top-K rows; written into columns at.. of the Block `into`
        (its exposure added) when given, with no intermediate copy of the ranking values.
        `external` gives the values of the caller's labels for these rows."""
        n_rows = topk.shape[0]
        block = self.empty(n_rows) if into is None else Block(
            into.values[:, at:at + n_rows], into.n_relevant[at:at + n_rows],
            into.counted[at:at + n_rows], None)
        inputs = Inputs(data, topk, rows, threads, block.counted, block.n_relevant,
                        lambda rel: self.view(data, rel), baseline, external)
        if not (self.passes and getattr(self.passes[0], "writes_counts", False)):
            # m and the counted rows of the truth as given, before any pass reads them
            counts_into(data, rows, self.judged, threads, block.n_relevant,
                        block.counted.view(np.uint8))
        row = 0
        for one in self.passes:
            n_slots = len(one.per_user)
            shown = one.run(inputs, block.values[row:row + n_slots])
            if shown is not None:
                block.shown = added_exposure(block.shown, shown)
            row += n_slots
        if any(rel is not None for rel in self.thresholds):
            count_by_threshold(self.view, data, rows, self.thresholds, threads, block)
        if into is not None:
            into.shown = added_exposure(into.shown, block.shown)
        return block

    def sums(self, block: Block, totals: Mapping[str, Sums] | None = None
             ) -> dict[str, Sums]:
        """{label: (numerator, denominator, users)} of every per-user mean over a Block:
        parts over the counted rows that add up across blocks (means.sum_parts), taken
        over blocks of SUM_ROWS rows and added in order (to `totals`, when given)."""
        out = dict(totals) if totals is not None else \
            {label: (0.0, 0.0, 0.0) for label in self.per_user}
        n_rows = block.n_relevant.shape[0]
        for lo in range(0, n_rows, SUM_ROWS):
            part = slice(lo, lo + SUM_ROWS)
            counted = block.counted[part]
            all_counted = counted.all()
            m = block.n_relevant[part] if all_counted else block.n_relevant[part][counted]
            for label, values in zip(self.per_user, block.values):
                request = self.requests[label]
                picked = values[part] if all_counted else values[part][counted]
                parts = sum_parts(picked, request.aggregate, m, request.k)
                out[label] = (out[label][0] + parts[0], out[label][1] + parts[1],
                              out[label][2] + parts[2])
        return out

    def means(self, sums: Mapping[str, Sums], shown: IntArray | None) -> dict[str, float]:
        """{label: mean} from accumulated `sums` and catalogue exposure."""
        means = {label: mean_of(num, den, self.requests[label].aggregate)
                 for label, (num, den, _) in sums.items()}
        for one in self.passes:
            if getattr(one, "catalogue", None):
                means.update(one.catalogue_means(shown))  # type: ignore[attr-defined]
        return means

    def result(self, block: Block, rows: IntArray,
               means: Mapping[str, float] | None = None) -> Result:
        """The Result of a Block (means from it unless given): the one place a ranking
        Result is built."""
        if means is None:
            means = self.means(self.sums(block), block.shown)
        values = dict(zip(self.per_user, block.values))
        return self._result([values.get(label) for label in self.labels], means, users=rows,
                            counted=block.counted, n_relevant=block.n_relevant)

    def means_result(self, sums: Mapping[str, Sums], shown: IntArray | None,
                     n_rows: int, n_counted: int) -> Result:
        """The means-only Result of accumulated `sums` (and exposure) over n_rows rows, of
        which n_counted count: no per-user values."""
        return self._result(None, self.means(sums, shown), users=None, counted=None,
                            n_relevant=None, n_rows=n_rows, n_counted=n_counted,
                            users_of={label: int(users) for label, (_, _, users)
                                      in sums.items()})

    def _result(self, per_user: Sequence[FloatArray | None] | None,
                means: Mapping[str, float], **rows: Any) -> Result:
        aggregates = {label: r.aggregate for label, r in self.requests.items()}
        return Result(self.labels, per_user, means, convention=self.convention,
                      catalogue=self.catalogue,
                      pooled={label: r.k for label, r in self.requests.items()
                              if aggregates[label] == "pooled"},
                      aggregates=aggregates, requests=self.requests, k=self.k, **rows)


# where the metrics of the caller-computed engines are computed
_COMPUTED_BY = {"factors": ("fr.evaluate_factors (or fr.evaluate_model)", "it needs the "
                            "score of every item, not a top-K list"),
                "overlap": ("fr.overlap", "it compares the lists of two systems, not a "
                            "list with the truth")}


def refuse_caller_computed(requests: Iterable[Request]) -> None:
    """A metric that a function of its own computes, asked of a top-K evaluation."""
    for r in requests:
        if r.metric.engine in _COMPUTED_BY:
            where, why = _COMPUTED_BY[r.metric.engine]
            raise ComputedElsewhere(f"metrics: {r.label!r} is computed by {where}: {why}; "
                                    f"call {where.split(' ')[0]}(...) for it")


def common_convention(requests: Iterable[Request]) -> str | None:
    """The one convention of all requests, or "mixed" (None without requests)."""
    found = {r.convention for r in requests}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "mixed"


def count_by_threshold(view: Callable[[Truth, Any], Truth], data: Truth, rows: IntArray,
                       thresholds: Sequence[Any], threads: int, block: Block) -> None:
    """The one rule of thresholds, applied to a Block's values: a user with no item
    relevant at a label's threshold is not counted by that label (NaN), and the Block's
    counted users are those some label counts."""
    counted_by: dict[Any, BoolArray] = {None: block.counted.copy()}
    some = np.zeros(block.counted.shape[0], np.bool_)
    for values, rel in zip(block.values, thresholds):
        if rel not in counted_by:
            counted = np.empty(rows.shape[0], np.uint8)
            counts_into(view(data, rel), rows, False, threads,
                        np.empty(rows.shape[0], np.int64), counted)
            counted_by[rel] = counted.view(np.bool_) & counted_by[None]
        values[~counted_by[rel]] = np.nan
        some |= counted_by[rel]
    block.counted &= some
