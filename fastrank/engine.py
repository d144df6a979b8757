"""The engine: parsed metric requests to kernel passes, per-user Blocks, means and the Result.

A `Plan` holds the requests of one evaluation for lists of length k and knows which
engine computes each (the registry's `engine`): the one-pass ranking kernel (one pass per
relevance threshold), trec_eval's kernel (bpref, iprec), the beyond-accuracy walk, or
values the caller computes (evaluate_factors' full-ranking auc). `run` fills a Block of
per-user values for some rows; `sums` and `means` aggregate them as each metric's
registry entry says; `result` is the one place a ranking `Result` is built.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from ._types import AnyArray, BoolArray, FloatArray, IntArray, SparseMatrix

from ._kernels import codes
from .aspects import alpha_ndcg_values, check_aspects, intent_values, ndeval_scale
from .auc import AUCPlan
from .beyond import BeyondPlan, check_side_inputs, check_side_shapes
from .calibration import CalibrationPlan
from .debiased import DebiasedPlan, check_propensity
from .discounts import discounts
from .grammar import (ComputedElsewhere, Request, check_convention, curve_requests,
                      parse_all)
from .means import counts_judged, mean_of, sum_parts
from .result import Result
from .threads import n_ranges
from .validation import (LARGEST_INT, RENUMBER_ITEMS, Truth, check_memory, check_scratch,
                         memory_guard, optional_scratch, out_of_memory)

# Bytes of the ranking kernel's scratch per item and range: an int64 stamp.
_RANK_BYTES = 8
# Rows per part of a mean: the parts of consecutive blocks of this many rows are added in
# order, so that evaluating spans of whole blocks without keeping per-user values
# (evaluate(per_user=False)) gives the same means to the bit. Fewer rows are one part.
SUM_ROWS = 1 << 16
# (numerator, denominator, users) of a mean: means.sum_parts
Sums = tuple[float, float, float]
_K = TypeVar("_K")


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
                   external: Collection[str] = (), **side: Any) -> tuple[Request, ...]:
    """Check metric names and the side inputs they need before any list is seen (for
    lists of any length): what Plan would refuse later, refused now."""
    requests = parse_requests(metrics, LARGEST_INT, convention, dialect)
    refuse_caller_computed([r for r in requests if r.label not in external])
    check_side_inputs([r for r in requests if r.metric.needs], **side, baseline_later=True)
    return requests


class Plan:
    """Metric labels parsed for lists of length k: the passes that compute them and how
    their per-user values become means."""

    def __init__(self, metrics: str | Iterable[str], k: int, convention: str, n_items: int, *,
                 dialect: str | None = None, train: SparseMatrix | None = None,
                 item_aspects: SparseMatrix | None = None,
                 item_vectors: ArrayLike | None = None, baseline: Any = None,
                 baseline_later: bool = False, external: Mapping[str, str] | None = None,
                 curves: str | Iterable[str] | bool | None = None,
                 propensity: ArrayLike | None = None) -> None:
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
        check_side_inputs([r for r in own if r.metric.needs], train=train,
                          item_aspects=item_aspects, item_vectors=item_vectors,
                          baseline=baseline, baseline_later=baseline_later,
                          propensity=propensity)
        # the side inputs no metric asked for are checked against the catalogue too
        # (their metrics check the others, entries and all)
        needed = {part for r in own for need in r.metric.needs for part in need.split("|")}
        side = dict(train=train, item_aspects=item_aspects, item_vectors=item_vectors,
                    propensity=propensity, baseline=baseline)
        check_side_shapes(n_items, **{name: None if name in needed else value
                                      for name, value in side.items()})
        if propensity is not None and "propensity" not in needed:  # n_items values: all read
            check_propensity(propensity, n_items)
        self.passes = _ranking_passes([r for r in own if r.metric.engine == "ranking"])
        self.trec = [_Pass(rel, group) for rel, group in
                     _group([r for r in own if r.metric.engine == "trec"],
                            lambda r: r.rel).items()]
        self.aspects = [_Pass(None, group) for group in  # one pass per α
                        _group([r for r in own if r.metric.engine == "aspects"
                                and r.metric.name not in INTENT_FIELDS],
                               lambda r: r.metric.kernel_value(r.params)).values()]
        self.intents = _intent_passes([r for r in own if r.metric.name in INTENT_FIELDS])
        self.item_aspects = (check_aspects(item_aspects, n_items)
                             if self.aspects or self.intents else None)
        beyond = [r for r in own if r.metric.engine == "beyond"]
        self.beyond = (BeyondPlan(beyond, n_items, k, train=train, item_aspects=item_aspects,
                                  item_vectors=item_vectors, baseline=baseline,
                                  baseline_later=baseline_later)
                       if beyond else None)
        self.beyond_baseline = baseline
        # one debiased plan per relevance threshold: each reads the truth at its own
        self.debiased = [(rel, DebiasedPlan(group, n_items, train=train, propensity=propensity))
                         for rel, group in _group([r for r in own if r.metric.engine ==
                                                   "debiased"], lambda r: r.rel).items()]
        # engines with a plan of their own: run(data, topk, rows, counted, threads), with
        # the truth at the plan's relevance threshold
        self.side: list[tuple[Any, AUCPlan | CalibrationPlan]] = [
            (rel, AUCPlan(group, n_items)) for rel, group in
            _group([r for r in own if r.metric.engine == "auc"], lambda r: r.rel).items()]
        if any(r.metric.engine == "calibration" for r in own):
            self.side.append((None, CalibrationPlan(
                [r for r in own if r.metric.engine == "calibration"], n_items, train=train,
                item_aspects=item_aspects)))
        self.labels = list(self.requests)
        per_user = [r.label for p in self.passes for r in p.requests]
        per_user += [r.label for p in self.trec for r in p.requests]
        per_user += [r.label for p in self.aspects for r in p.requests]
        per_user += [r.label for p in self.intents for r in p.requests]
        if self.beyond:
            per_user += [r.label for r in self.beyond.per_user]
        for _, plan in (*self.debiased, *self.side):
            per_user += [r.label for r in plan.per_user]
        self.per_user = per_user + self.external
        self.catalogue = [label for label in self.labels if label not in self.per_user]
        # the relevance threshold that decides which users each per-user label counts
        # (None: the convention's rule for the truth as given)
        self.thresholds = [counting_threshold(self.requests[label], self.judged)
                           for label in self.per_user]

    def checks_in_walk(self, width: int) -> tuple[bool, bool]:
        """What the ranking walk alone reads, and so checks as it reads it (evaluate then
        skips those scans), of every truth row and of lists `width` wide: (every truth
        entry, every list id). The truth when the plan is one ranking pass on the truth
        as given and nothing else; the ids too when its largest cutoff reaches the
        lists' last column."""
        alone = (len(self.passes) == 1 and self.passes[0].rel is None
                 and not (self.trec or self.aspects or self.intents or self.beyond
                          or self.debiased or self.side or self.external))
        return alone, alone and int(self.passes[0].cutoffs[-1]) >= width

    def _view(self, data: Truth, rel: Any) -> Truth:
        """The truth at relevance threshold `rel` (`at_least`), made once per truth."""
        if rel is None:
            return data
        if getattr(self, "_views", (None,))[0] is not data:
            self._views: tuple[Truth, dict[Any, Truth]] = (data, {})
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
        row = 0
        if not self.passes or self.passes[0].rel is not None:
            # m and the counted rows come from the truth as given
            counts_into(data, rows, self.judged, threads, block.n_relevant,
                        block.counted.view(np.uint8))
        for ranking in self.passes:
            n_slots = len(ranking.requests)
            view = self._view(data, ranking.rel)
            if ranking.rel is None:
                rank_into(view, topk, rows, ranking, self.judged, threads,
                          block.values[row:row + n_slots], block.n_relevant,
                          block.counted.view(np.uint8))
            else:  # another threshold: every row with an entry is computed (the
                # zeroed entries stay stored), then the Result's rule picks the rows
                values = block.values[row:row + n_slots]
                rank_into(view, topk, rows, ranking, True, threads, values,
                          np.empty(n_rows, np.int64), np.empty(n_rows, np.uint8))
                values[:, ~block.counted] = np.nan
            row += n_slots
        for trec in self.trec:
            n_slots = len(trec.requests)
            trec_into(data, topk, rows, trec, threads, block.values[row:row + n_slots],
                      block.counted)
            row += n_slots
        # under trec, the aspect metrics count ndeval's topics (one rule for every pass)
        topics = block.counted
        if any(g.requests[0].convention == "trec" for g in (*self.aspects, *self.intents)):
            topics = block.counted & ndeval_topics(data, rows, self.item_aspects)
        for group in self.aspects:
            n_slots = len(group.requests)
            aspect_into(data, topk, rows, group, self.item_aspects, threads,
                        block.values[row:row + n_slots], topics)
            row += n_slots
        for group in self.intents:
            n_slots = len(group.requests)
            intent_into(self._view(data, group.rel), topk, rows, group, self.item_aspects,
                        threads,
                        block.values[row:row + n_slots], topics)
            row += n_slots
        if self.beyond:
            values, block.shown = self.beyond.run(data, topk, rows, block.counted, threads,
                                                  baseline=baseline)
            block.values[row:row + values.shape[0]] = values
            row += values.shape[0]
        for rel, plan in (*self.debiased, *self.side):
            values = plan.run(self._view(data, rel), topk, rows, block.counted, threads)
            block.values[row:row + values.shape[0]] = values
            row += values.shape[0]
        for label in self.external:
            block.values[row] = external[label]  # type: ignore[index]  # given with labels
            row += 1
        if any(rel is not None for rel in self.thresholds):
            count_by_threshold(self._view, data, rows, self.thresholds, threads, block)
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
        if self.beyond:
            means.update(self.beyond.catalogue_means(shown))
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


class _Pass:
    """The requests of one kernel pass and the kernel's slot table for them."""

    # set on the passes of the intent-aware metrics (_intent_passes)
    alpha: float
    beta: float
    max_grade: float
    trec: bool

    def __init__(self, rel: Any, requests: Iterable[Request]) -> None:
        self.rel, self.requests = rel, list(requests)
        cutoffs = sorted({r.k for r in self.requests}) or [1]
        self.cutoffs = np.array(cutoffs, dtype=np.int64)
        position = {int(k): c for c, k in enumerate(self.cutoffs)}
        self.slot_code = np.array([-1 if r.code is None else r.code for r in self.requests],
                                  dtype=np.int64)
        self.slot_cut = np.array([position[r.k] for r in self.requests], dtype=np.int64)
        self.slot_param = np.array([r.metric.kernel_value(r.params) for r in self.requests],
                                   dtype=np.float64)
        self.needs = walk_needs(self.slot_code)


def walk_needs(slot_code: IntArray) -> dict[str, bool]:
    """What the ranking kernel's walk keeps for these slot codes: a graded ideal, that
    ideal uncut, exponential gains, the hits' positions and values (codes with a
    parameter: ERR, nERR, RBP), the codes outside the walk's core (`codes.CORE`). Flags,
    not work the kernel would compile to find out."""
    found = set(slot_code.tolist())
    return {"need_ideal": bool(found & {codes.NDCG, codes.NDCG_EXP, codes.NDCG_UNCUT,
                                        codes.NERR}),
            "need_full": codes.NDCG_UNCUT in found,
            "need_exp": bool(found & {codes.NDCG_EXP, codes.DCG_EXP}),
            "need_acc": any(code >= codes.ERR for code in found),
            "need_extended": any(0 <= code < codes.ERR and code not in codes.CORE
                                 for code in found)}


def _group(requests: Iterable[Request],
           key: Callable[[Request], _K]) -> dict[_K, list[Request]]:
    """{key: the requests with that key}, in the order the keys first appear."""
    groups: dict[_K, list[Request]] = {}
    for r in requests:
        groups.setdefault(key(r), []).append(r)
    return groups


def _ranking_passes(requests: Iterable[Request]) -> list[_Pass]:
    """One pass per view of the truth: the truth as given (value > 0 is relevant) first,
    then one per relevance threshold, then every stored entry relevant (judged)."""
    groups: dict[Any, list[Request]] = _group(
        requests, lambda r: STORED if r.metric.truth_view == "stored" else r.rel)
    order = sorted(groups, key=lambda rel: (0, 0) if rel is None else (2, 0) if rel is STORED
                   else (1, rel))
    return [_Pass(rel, groups[rel]) for rel in order]


# the truth view of `judged`: every stored entry relevant
STORED = "stored"


# the loop of at_least's comparison: in float64, whatever the grades' dtype
_AT_LEAST = (np.float64, np.float64, np.bool_)


def at_least(data: Truth, rel: Any) -> Truth:
    """The truth with entries below `rel` stored as 0 (judged, not relevant); with
    rel=STORED, every stored entry as 1."""
    if rel is None:
        return data
    if rel is STORED:
        values = np.ones_like(data.data)
    else:
        # compared in float64, as the trec kernels compare: float32(0.7) is below 0.7
        values = np.where(np.greater_equal(data.data, rel, signature=_AT_LEAST), data.data, 0.0)
    return Truth(indptr=data.indptr, indices=data.indices, data=values, n_users=data.n_users,
                 n_items=data.n_items)


def counting_threshold(request: Request, judged: bool) -> Any:
    """The relevance threshold whose relevant items decide which users `request` counts:
    its rel= where the convention counts users by their relevant items (recsys,
    implicit: a user counts when m >= 1 at that threshold), else None (the truth as
    given; under trec every judged user counts, whatever the threshold, as trec_eval's
    -l counts every judged query)."""
    return None if judged else request.rel


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


class InputFlagged(Exception):
    """The ranking walk met an entry that the input checks refuse (see
    ranking.BAD_INPUT): the caller scans the inputs, which raises the checks' error (or
    makes a non-canonical truth canonical), and runs again."""


def rank_into(data: Truth, topk: AnyArray, rows: IntArray, ranking: _Pass, judged: bool,
              threads: int, out: FloatArray, n_relevant: IntArray, counted: BoolArray) -> None:
    """Run the ranking kernel, filling out, n_relevant and counted. The inputs are
    scanned, or (data.scanned False, `evaluate`) checked by the walk as it reads them:
    InputFlagged if it meets what the scans refuse."""
    from ._kernels import frames  # numba loads on first use, not at import
    from ._kernels.ranking import (BAD_INPUT, MEMO_ROWS, MOST_ITEMS, NEEDS_SORT, RANGE_ROWS,
                                   may_need_sort, memo_entries, rank_rows, scratch)

    n_rows, width = topk.shape
    largest = int(ranking.cutoffs[-1])
    n_chunks = n_ranges(n_rows, threads, n_rows * width + data.indices.shape[0], data.n_items)
    n_chunks = max(n_chunks, -(-n_rows // RANGE_ROWS))  # the stamps' tags fit 31 bits
    check_scratch(data.n_items, _RANK_BYTES, n_chunks)
    if data.n_items >= MOST_ITEMS:  # (a machine of some 64 GiB or more gets this far)
        raise ValueError(f"truth has {data.n_items:,} columns (items), and the ranking "
                         f"metrics take fewer than 2^32; {RENUMBER_ITEMS}")
    needs = ranking.needs
    dtypes = (data.indptr.dtype.type, data.indices.dtype.type, data.data.dtype.type,
              topk.dtype.type, rows.dtype.type)
    # the walk that keeps the hits for ERR, nERR and RBP compiles only when they are asked,
    # the one that sorts a row's grades where they are not whole and small (may_need_sort)
    acc = needs["need_acc"]
    # the walk of the core codes (codes.CORE) compiles without the others' sums and slots
    extended = needs["need_extended"]
    # the memo of graded ideals (a walk of its own) pays for its compile in large calls
    n_memo = memo_entries(ranking.cutoffs.shape[0], ranking.slot_code.shape[0],
                          needs["need_ideal"]) if n_rows >= MEMO_ROWS else 0
    memo = n_memo > 0
    sort_first = needs["need_ideal"] and (frames.ready(rank_rows, acc, True, *dtypes, memo,
                                                       extended)
                                          or may_need_sort(data.data))
    for sorting in (True,) if sort_first else (False, True):
        # the most values of a row the walk keeps: the longest row's where it sorts them
        # or takes the uncut ideal, else a row's largest grades up to the largest cutoff
        # (no pass over indptr for the longest row: 1 ms a million rows, on one thread)
        if sorting or needs["need_full"] or largest > width:
            if data.steps[0] < 0:  # an unscanned indptr that decreases: no scratch sized by it
                raise InputFlagged
            kept = data.max_row_nnz
        else:
            kept = largest
        # discounts for the positions walked and for the ideal (cut at the largest cutoff)
        disc = discounts(max(min(width, largest), kept if needs["need_full"] else
                             min(largest, kept), 1))
        with memory_guard("the ranking kernel"):
            floats, ints, at, n_block = scratch(
                n_rows, n_chunks, data.n_items, kept, ranking.cutoffs.shape[0],
                ranking.slot_code.shape[0], min(width, largest), n_memo, acc)
            frame = frames.Frame(
                data.indptr, data.indices, data.data, topk, rows, data.n_items,
                ranking.cutoffs, ranking.slot_code, ranking.slot_cut, ranking.slot_param,
                judged, disc, kept, frames.Rows(out), n_relevant, counted,
                needs["need_ideal"], needs["need_full"], needs["need_exp"], np.cumsum(disc),
                floats, ints, at, n_block, n_memo)
            walk = frames.walk(rank_rows, acc, sorting, *dtypes, memo, extended)
            done = frames.run(walk, frame, n_chunks)
        if (done == BAD_INPUT).any():
            raise InputFlagged
        if not (done == NEEDS_SORT).any():
            break
    if not done.all():  # a walk's C wrapper cannot raise: it returned 0
        raise out_of_memory("the ranking kernel")


def counts_into(data: Truth, rows: IntArray, judged: bool, threads: int,
                n_relevant: IntArray, counted: AnyArray) -> None:
    """n_relevant and counted of checked inputs, as the ranking kernel writes them, where
    no ranking slot is asked (a kernel that compiles in a fraction of its time)."""
    from ._kernels import frames
    from ._kernels.ranking import relevant_counts

    n_rows = rows.shape[0]
    n_chunks = max(n_ranges(n_rows, threads, data.indices.shape[0] + n_rows, 1), 1)
    walk = frames.walk(relevant_counts, data.indptr.dtype.type, data.data.dtype.type,
                       rows.dtype.type)
    frames.run(walk, frames.Frame(data.indptr, data.data, rows, judged, n_relevant, counted),
               n_chunks)


def trec_into(data: Truth, topk: AnyArray, rows: IntArray, trec: _Pass,
              threads: int, out: FloatArray, counted: BoolArray) -> None:
    """trec_eval's measures (bpref, iprec, infap, ...) of checked inputs, NaN where not
    counted.

    trec_eval's kernel reads truth row i for list i, stops at the first -1 and looks every
    id up: rows are gathered, padding and repeats before the end of a list become an id
    outside the catalogue (retrieved, not judged), as the ranking kernel counts them."""
    n_rows = topk.shape[0]
    # a measure with a cutoff sees the whole list (a hole before a later id is a
    # retrieved document); the others see the list cut at their k
    k = topk.shape[1] if any(r.metric.cutoff for r in trec.requests) else \
        max(r.k for r in trec.requests)
    lists = _trec_lists(topk[:, :k], data.n_items)
    indptr, indices, values = _rows_of(data, rows)
    level = math.ulp(0.0) if trec.rel is None else float(trec.rel)
    n_slots = len(trec.requests)
    none = np.zeros(n_slots, np.int64)
    columns = (np.array([r.code for r in trec.requests], np.int64),
               np.array([r.k if r.metric.cutoff else 0 for r in trec.requests], np.int64),
               trec.slot_param, none, none, np.zeros(0, np.int64), np.zeros(0, np.float64))
    max_row_nnz = int(np.diff(indptr).max()) if n_rows else 0
    with memory_guard("trec_eval's kernel"):
        values_out = trec_values(indptr, indices, values, lists, level, columns, threads,
                                 max_row_nnz, data.n_items + 1)
    empty = ~(topk[:, :k] >= 0).any(axis=1)
    for s, request in enumerate(trec.requests):
        if request.code == codes.TREC_UNJ:  # trec_eval -c resets unj of a query without results
            values_out[s, empty] = 0.0
    values_out[:, ~counted] = np.nan
    out[...] = values_out


def trec_values(indptr: IntArray, indices: AnyArray, values: FloatArray, lists: AnyArray,
                level: float, columns: Sequence[AnyArray], threads: int, max_row_nnz: int,
                n_docs: int, judged_only: bool = False, num_docs: int = 2 ** 63 - 1,
                max_level: float = 0) -> FloatArray:
    """trec_eval's kernel over checked CSR arrays and lists (ids below n_docs): the
    (slots, queries) values of the slot arrays `columns` (code, cut, point, lo, hi, extra
    levels, extra values); judged_only, num_docs and max_level as the kernel reads them."""
    from ._kernels import frames
    from ._kernels.trec import GAIN_CODES, trec_rows

    n_rows = lists.shape[0]
    longest = max(lists.shape[1], max_row_nnz, 1)
    # the C library's log2, which trec_eval divides by (numpy's own may differ in an ulp)
    log2s = np.array([math.log2(j) for j in range(2, longest + 3)], np.float64)
    out = np.zeros((columns[0].shape[0], n_rows), np.float64)
    n_chunks = max(n_ranges(n_rows, threads, lists.size, 1), 1)
    frame = frames.Frame(indptr, indices, values, lists, float(level), *columns,
                         bool(judged_only), num_docs, int(max_level),
                         optional_scratch(n_docs, 16, n_chunks), log2s, max_row_nnz, out)
    # the walk of measures without graded gains compiles none of theirs (trec_rows)
    graded = bool(GAIN_CODES & set(columns[0].tolist()))
    walk = frames.walk(trec_rows, indptr.dtype.type, indices.dtype.type, values.dtype.type,
                       lists.dtype.type, graded)
    if not frames.run(walk, frame, n_chunks).all():  # a walk's C wrapper cannot raise
        raise out_of_memory("trec_eval's kernel")
    return out


def aspect_into(data: Truth, topk: AnyArray, rows: IntArray, group: _Pass, aspects: Any,
                threads: int, out: FloatArray, counted: BoolArray) -> None:
    """α-nDCG (one α) at the group's cutoffs: NaN where not counted, 0 for a counted user
    without a relevant item (the trec convention counts judged users: `counted` is then
    ndeval's topics, `ndeval_topics`)."""
    cutoffs = group.cutoffs
    alpha = group.requests[0].metric.kernel_value(group.requests[0].params)
    values, _ = alpha_ndcg_values(data, topk, rows, aspects, cutoffs, alpha, threads)
    position = {int(k): c for c, k in enumerate(cutoffs)}
    for s, request in enumerate(group.requests):
        row = values[position[request.k]]
        out[s] = np.where(counted, np.nan_to_num(row, nan=0.0), np.nan)


def ndeval_topics(data: Truth, rows: IntArray, aspects: Any) -> BoolArray:
    """Per list, whether its truth row judges an item that has an aspect: ndeval's topics
    (a judgment without a subtopic is no line of its qrels, and a topic without a line
    is not scored), which the trec convention's aspect metrics count (their mean is
    over these users: "available")."""
    has_aspect = np.diff(aspects.indptr) > 0
    stored = data.indices[:int(data.indptr[-1])]
    before = np.zeros(stored.shape[0] + 1, np.int64)  # entries with an aspect before each
    np.cumsum(has_aspect[stored], out=before[1:])
    judged = before[data.indptr[1:]] - before[data.indptr[:-1]] > 0
    return judged[rows]


# the intent-aware metrics and their field of the kernel's output
INTENT_FIELDS = {"p_ia": 0, "map_ia": 1, "alpha_dcg": 2, "err_ia": 3, "nerr_ia": 4,
                 "st_recall": 5, "nrbp": 6, "nnrbp": 7}
# those of the kernel's walk made with `novelty`, which compiles only when one is asked
NOVELTY = ("st_recall", "nrbp", "nnrbp")


def _intent_passes(requests: Iterable[Request]) -> list[_Pass]:
    """The kernel passes of the intent-aware requests: one per relevance threshold and
    convention, and more where several α (alpha_dcg; with β, nrbp and nnrbp) or max_grade
    (err_ia, nerr_ia) are asked for; each pass carries (rel, α, β, max_grade, trec)."""
    passes: list[_Pass] = []
    for (rel, trec), group in _group(requests, lambda r: (r.rel, r.convention == "trec")
                                     ).items():
        for r in group:
            if trec and "max_grade" in dict(r.params):
                raise ValueError(
                    f"metrics: {r.label!r}: under the trec convention {r.name} is ndeval's, "
                    f"with binary grades (R = 1/2); max_grade= sets the graded R of the "
                    f"recsys convention")
        # (α, β) of each pass: NRBP's pairs, then α-DCG's α where no pair has it
        alphas = _group([r for r in group if r.name in ("nrbp", "nnrbp")],
                        lambda r: (float(r.metric.value(r.params, "alpha")),
                                   float(r.metric.value(r.params, "beta"))))
        for r in group:
            if r.name == "alpha_dcg":
                alpha = r.metric.kernel_value(r.params)
                key = next((key for key in alphas if key[0] == alpha), (alpha, 0.5))
                alphas.setdefault(key, []).append(r)
        grades = _group([r for r in group if r.name in ("err_ia", "nerr_ia")],
                        lambda r: r.metric.kernel_value(r.params))
        rest = [r for r in group if r.name in ("p_ia", "map_ia", "st_recall")]
        alpha_keys, grade_keys = list(alphas), list(grades)
        for j in range(max(len(alpha_keys), len(grade_keys), 1)):
            alpha, beta = alpha_keys[j] if j < len(alpha_keys) else (0.5, 0.5)
            grade = grade_keys[j] if j < len(grade_keys) else 0.0
            picked = (rest if j == 0 else []) + \
                (alphas[(alpha, beta)] if j < len(alpha_keys) else []) + \
                (grades[grade] if j < len(grade_keys) else [])
            one = _Pass(rel, picked)
            one.alpha, one.beta, one.max_grade, one.trec = alpha, beta, grade, trec
            passes.append(one)
    return passes


def intent_into(data: Truth, topk: AnyArray, rows: IntArray, group: _Pass, aspects: Any,
                threads: int, out: FloatArray, counted: BoolArray) -> None:
    """The intent-aware metrics of one pass, `data` the truth at its relevance threshold:
    NaN where not counted, 0 for a counted user without an intent (no relevant item, or
    relevant items without aspects; under trec `counted` is ndeval's topics,
    `ndeval_topics`)."""
    largest = float(data.data.max()) if data.data.size else 0.0
    max_grade = group.max_grade
    if max_grade == 0.0:
        max_grade = largest if largest > 0 else 1.0
    elif max_grade < largest and any(r.name in ("err_ia", "nerr_ia") for r in group.requests):
        raise ValueError(
            f"metrics: max_grade={max_grade:g} is below the largest relevance in truth "
            f"({largest:g}); R = (2^g − 1)/2^max_grade must stay below 1: pass max_grade >= "
            f"{largest:g} or leave it out (default: the largest value in truth)")
    names = {r.name for r in group.requests}
    values, n_intents = intent_values(
        data, topk, rows, aspects, group.cutoffs, alpha=group.alpha, binary=group.trec,
        max_grade=max_grade, map_full=group.trec, want_ideal="nerr_ia" in names,
        threads=threads, novelty=bool(names & set(NOVELTY)), beta=group.beta,
        want_full="nnrbp" in names)
    position = {int(k): c for c, k in enumerate(group.cutoffs)}
    for s, request in enumerate(group.requests):
        field = INTENT_FIELDS[request.name]
        c = position[request.k]
        row = values[field, c]
        if group.trec and request.name in ("err_ia", "alpha_dcg"):
            row = ndeval_scale(values[field, c:c + 1], n_intents, group.cutoffs[c:c + 1],
                               field, group.alpha)[0]
        out[s] = np.where(counted, row, np.nan)


def _trec_lists(topk: AnyArray, n_items: int) -> IntArray:
    """Lists for trec_eval's kernel: a -1 or a repeated id before a list's last real id
    becomes n_items (a retrieved document that is in no qrels); trailing padding stays."""
    lists = np.array(topk, dtype=np.int64)
    if lists.shape[1] == 0:
        lists = np.full((lists.shape[0], 1), -1, np.int64)
    order = np.argsort(lists, axis=1, kind="stable")
    ordered = np.take_along_axis(lists, order, axis=1)
    repeat = np.zeros(lists.shape, np.bool_)
    repeat[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    again = np.zeros(lists.shape, np.bool_)
    np.put_along_axis(again, order, repeat, axis=1)
    hole = again | (lists < 0)
    real = ~hole
    # the position after each list's last real id: holes before it are filled
    last = lists.shape[1] - np.argmax(real[:, ::-1], axis=1)
    last[~real.any(axis=1)] = 0
    inside = np.arange(lists.shape[1])[None, :] < last[:, None]
    lists[hole & inside] = n_items
    lists[hole & ~inside] = -1
    # an empty list is scored as trec_eval -c scores a query without results: one
    # retrieved document in no qrels (iprec's 0/0 would otherwise be NaN)
    lists[~real.any(axis=1), 0] = n_items
    return np.ascontiguousarray(lists)


def _rows_of(data: Truth, rows: IntArray) -> tuple[IntArray, AnyArray, FloatArray]:
    """The CSR arrays of truth rows `rows` in that order (the truth itself when rows is
    every row in order)."""
    if rows.shape[0] == data.n_users and (rows == np.arange(data.n_users)).all():
        return data.indptr, data.indices, data.data
    starts, ends = data.indptr[rows], data.indptr[rows + 1]
    lengths = ends - starts
    indptr = np.zeros(rows.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
    return indptr, data.indices[take], data.data[take]


