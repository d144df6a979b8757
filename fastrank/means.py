"""Which users count, and how their per-user values become the reported means.

The rule (SPEC §2), in one place for the facade; the ranking kernel applies the same
rule as it walks (its `count_judged` flag):
- "trec": every user with at least one stored truth entry (a judged query);
- "recsys", "implicit": every user with at least one relevant entry (m >= 1).

A metric's mean is one of (the registry's `aggregate`):
- "mean": the plain mean of the counted users' values;
- "pooled": implicit's precision, sum of hits / sum of min(k, m);
- "sum": trec_eval's counts (num_ret, num_rel, num_rel_ret), summed over users;
- "geometric": trec_eval's gm_map, exp(mean(log(max(value, 1e-5))));
- "weighted": Σ m·value / Σ m over the counted users with a value (RecBole's GAUC: each
  user weighs its number of relevant items; a NaN value, a user the metric leaves out,
  weighs nothing);
- "available": the plain mean over the counted users with a value (NaN: the metric
  leaves the user out, e.g. RecTools' insufficient_handling="exclude").
In every aggregate a NaN value weighs nothing: the user is not counted by that metric.

A relevance threshold decides which users a metric counts (`engine.counting_threshold`):
under recsys and implicit, a metric with rel=t counts the users with an item of value
>= t; under trec every judged user counts, as trec_eval's -l counts every judged query.
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._types import BoolArray, FloatArray, IntArray

# trec_eval's MIN_GEO_MEAN: values below it count as it in a geometric mean
MIN_GEO_MEAN = 0.00001


def counts_judged(convention: str) -> bool:
    """Does the convention count every judged user (trec) or every user with m >= 1?"""
    return convention == "trec"


def counted_rows(indptr: IntArray, rows: IntArray, n_relevant: IntArray,
                 judged: bool) -> BoolArray:
    """Which of the truth rows `rows` count (m = n_relevant): every judged row when
    `judged` (counts_judged of the convention), else the rows with m >= 1."""
    if judged:
        return indptr[rows + 1] > indptr[rows]
    return n_relevant > 0


def pooled_parts(values: FloatArray, n_relevant: IntArray,
                 k: int) -> tuple[FloatArray, NDArray[Any]]:
    """implicit's pooled precision per user: (hits, min(k, m)), from the per-user values
    hits / min(k, m); its mean is sum(hits) / sum(min(k, m))."""
    denom = np.minimum(n_relevant, k)
    return np.rint(values * denom), denom


def counted_mean(values: FloatArray, counted: BoolArray) -> float:
    """Plain float64 mean of values over the counted rows; NaN when no row counts."""
    return float(values[counted].mean()) if counted.any() else float("nan")


def sum_parts(values: FloatArray, aggregate: str, n_relevant: IntArray | None = None,
              k: int | None = None) -> tuple[float, float, float]:
    """(numerator, denominator, users) of a mean over the counted rows' `values`,
    mergeable by adding parts: the mean is numerator / denominator, except "geometric",
    whose mean is exp(numerator / denominator), and "sum", whose denominator only says
    whether any user counted; users is how many users the mean is over. A NaN value is a user the metric leaves out (its
    threshold's rule, or a value it does not define): it weighs nothing, in every
    aggregate."""
    left_out = np.isnan(values)
    if left_out.any():
        values = values[~left_out]
        n_relevant = None if n_relevant is None else np.asarray(n_relevant)[~left_out]
    if aggregate == "weighted":
        weights = np.asarray(n_relevant, dtype=np.float64)
        return float((values * weights).sum()), float(weights.sum()), float(values.shape[0])
    n = float(values.shape[0])
    if aggregate == "pooled":
        hits, denom = pooled_parts(values, n_relevant, k)  # type: ignore[arg-type]  # given
        return float(hits.sum()), float(denom.sum()), n
    if aggregate == "geometric":
        return float(np.log(np.maximum(values, MIN_GEO_MEAN)).sum()), n, n
    return float(values.sum()), n, n


def mean_of(num: float, den: float, aggregate: str) -> float:
    """The reported mean of parts from `sum_parts` (NaN when no user counted)."""
    if not den:
        return float("nan")
    if aggregate == "sum":
        return num
    if aggregate == "geometric":
        return math.exp(num / den)
    return num / den
