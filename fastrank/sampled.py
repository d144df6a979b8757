"""Sampled metrics and their corrections (Krichene & Rendle, "On Sampled Metrics for Item
Recommendation", KDD 2020).

Many papers rank each held-out item among m sampled negatives instead of the whole
catalogue of n items. The metric of that short list (its "sampled" value) is not the
full-catalogue metric, and can even order models wrongly. Krichene & Rendle replace the
metric's value at a sampled rank r by a corrected value M̃(r), fitted so that its
expectation over the sampling matches the full-catalogue metric M(R):

    fr.evaluate_sampled(scores, n_items, ["recall@10", "ndcg@10"])     # scores: users x (1 + m)
    fr.evaluate_sampled_ranks(ranks, n_items, ["ndcg@10"], n_negatives=100)
    fastrank.sampled.correction_table(n_items, 100, "ndcg@10", "bv")  # M̃(r), r = 1..m+1

Why beside the registry and not in it: the registry's metrics are computed from a ranked
list and the user's truth row; a sampled metric is a function of one number per held-out
item (its rank among m + 1 candidates) and of the catalogue size, and its corrections are
fitted once per (n, m, metric) rather than walked per list. They share the `Result`
(means, per-user values, intervals), not the ranking engine.

Notation. R in 1..n: the held-out item's rank in the full catalogue; r in 1..m+1: its rank
among itself and the m sampled negatives. The sampling model P(r | R):
- "binomial" (the paper's; negatives drawn with replacement):
  r - 1 ~ Binomial(m, (R - 1) / (n - 1));
- "hypergeometric" (drawn without replacement, as most evaluation scripts do):
  r - 1 ~ Hypergeometric(n - 1 items, R - 1 of them above, m draws).

Metric values at a rank x of a list of N items (one relevant item; @k cuts at k):
recall@k = hit_rate@k = [x <= k]; precision@k = [x <= k] / k; ndcg@k = [x <= k] / log2(x + 1);
map@k = ap@k = mrr@k = [x <= k] / x; auc = (N - x) / (N - 1).

Estimators (one label each, `metric[tag]`):
- `[sampled]` (correction "none"): the metric of the short list, M_{m+1}(r);
- `[adjusted]`: the metric at the rank r maps to, M_n(1 + (r - 1)(n - 1) / m), the R for which
  E[r | R] = r under the binomial model (so the mapped rank is unbiased for R);
- `[mes]`: the minimal-bias correction, M̃ = argmin Σ_R w_R (Σ_r P(r|R) M̃(r) - M_n(R))²
  subject to min M_n <= M̃(r) <= max M_n. Without the bounds the problem is ill-posed (for
  n = 2,000, m = 100 the matrix has condition number ~6e15 and the exact minimiser has
  entries of ±1e12): the bounds make it an estimator; solved exactly by bounded-variable
  least squares. ("mes" is fastrank's short name for the paper's minimal-bias correction;
  Jin et al., AAAI 2021, use the letters for a maximal-entropy estimator of their own);
- `[bv]`: the bias-variance trade-off, M̃ = argmin Σ_R w_R [(E[M̃(r)|R] - M_n(R))²
  + λ Var(M̃(r)|R)], in closed form ((1 - λ) AᵀWA + λ diag(c)) M̃ = AᵀW b with
  A[R, r] = P(r | R), b = M_n(R), c = AᵀW 1 (λ is the paper's γ). λ = 1 gives the posterior
  mean E[M_n(R) | r]; smaller λ less bias and more variance.
w_R is uniform (1/n) unless `prior` gives weights over R. The sums over R run in blocks:
the rows sqrt(w_R) P(r | R) (log space, lgamma tables) are folded into a QR factor of
[A | b], so memory is O(block x (m + 1)) whatever n.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._types import AnyArray, BoolArray, FloatArray, IntArray

from .grammar import metric_labels, read_cutoff, read_own
from .result import Result
from .threads import numba_threads
from .validation import check_choice, check_int, check_memory, check_number

KIND = "sampled"  # the kind of evaluation of its Results
METRICS = ("recall", "hit_rate", "precision", "ndcg", "map", "ap", "mrr", "auc")
CORRECTIONS = ("none", "adjusted", "mes", "bv")
TAGS = {"none": "sampled", "adjusted": "adjusted", "mes": "mes", "bv": "bv"}
TIES = ("pessimistic", "optimistic", "average")
SAMPLING = ("binomial", "hypergeometric")
_NEEDS_K = ("recall", "hit_rate", "precision")
_BLOCK = 1 << 15  # full ranks R per block of the fit
# the most probabilities (n_items × (m + 1 + metrics)) a fit computes: about half an hour
# on a 2-core machine where 10^6 items and 100 negatives took 5 s; more is refused by name
_MOST_FIT_WORK = 1 << 35

__all__ = ["evaluate_sampled", "evaluate_sampled_ranks", "correction_table"]

# a checked label: (label, metric name, cutoff or None)
_Request = tuple[str, str, "int | None"]


# -- the public functions -----------------------------------------------------------------


def evaluate_sampled(scores: ArrayLike, n_items: int, metrics: str | Iterable[str], *,
                     positive: int | ArrayLike = 0,
                     correction: str | Iterable[str] = CORRECTIONS, bv_lambda: float = 0.01,
                     ties: str = "pessimistic", sampling: str = "binomial",
                     prior: ArrayLike | None = None, n_threads: int | None = None) -> Result:
    """Metrics of held-out items ranked among sampled negatives, plain and corrected.

    Parameters
    ----------
    scores : 2-D array (n_users, 1 + m), float or int
        Each row: the model's scores of the held-out item(s) and of the m sampled negatives.
        NaN is an error; ±inf is a score like any other. Never modified.
    n_items : int
        n, the number of items the full ranking would have: the held-out item plus every
        item the negatives are drawn from (e.g. the catalogue minus the user's training
        items). At least the number of columns.
    metrics : str or list of str
        `recall@k`, `hit_rate@k` (the same), `precision@k`, `ndcg[@k]`, `map[@k]` (= `ap`),
        `mrr[@k]`, `auc`; k in 1..n_items (k may exceed m + 1). Read as `fr.evaluate`
        reads its labels: any case, blanks around the parts, k in ASCII digits.
    positive : int, 1-D int array or 2-D bool array
        Where the held-out items are: one column for every row (default 0), one column per
        row, or a mask of `scores`' shape. With a mask a row may hold several positives:
        each is a case of its own, ranked against the row's negatives only (the other
        positives are left out), with m = the row's negatives; the user's value is the mean
        over its cases.
    correction : str or sequence of {"none", "adjusted", "mes", "bv"}
        The estimators to report (labels `metric[sampled]`, `[adjusted]`, `[mes]`, `[bv]`).
    bv_lambda : float in (0, 1]
        λ (the paper's γ) of the "bv" correction.
    ties : {"pessimistic", "optimistic", "average"}
        A negative scored equal to the held-out item ranks above it (pessimistic, the
        default), below it (optimistic), or the value is the mean over the tied ranks
        (average: the expectation under a random order of the ties).
    sampling : {"binomial", "hypergeometric"}
        The model P(r | R) the corrections are fitted on (see the module's docstring).
    prior : 1-D array of n_items weights, optional
        Weights w_R over the full ranks R = 1..n for the "mes" and "bv" fits (normalised
        to sum 1); default uniform.
    n_threads : int, optional
        Numba threads for this call; the values do not depend on it.

    Returns
    -------
    Result
        Labels `metric[tag]` in the order metrics x corrections; `per_user` one value per
        row, `ci` and `fr.compare` as for any Result. `n_relevant` holds the positives per
        row; `report` the n, m, ties, sampling, λ used.
    """
    scores = _check_scores(scores)
    mask = _check_positive(positive, scores.shape)
    n_pos = mask.sum(axis=1).astype(np.int64)
    n_items = _check_n_items(n_items, scores.shape[1], "the number of score columns")
    requests = _check_metrics(metrics, n_items)
    corrections = _check_corrections(correction)
    ties_code = TIES.index(check_choice(ties, "ties", TIES))
    lam = _check_lambda(bv_lambda)
    sampling = check_choice(sampling, "sampling", SAMPLING)
    weights = _check_prior(prior, n_items)
    case_ptr = np.zeros(scores.shape[0] + 1, dtype=np.int64)
    np.cumsum(n_pos, out=case_ptr[1:])
    n_cases = int(case_ptr[-1])
    negatives = np.repeat(scores.shape[1] - n_pos, n_pos)
    from ._kernels.sampled import count_cases

    above = np.empty(n_cases, dtype=np.int64)
    equal = np.empty(n_cases, dtype=np.int64)
    with numba_threads(n_threads):
        count_cases(scores, mask.view(np.uint8), case_ptr, above, equal)
    return _evaluate(above, equal, negatives, case_ptr, n_pos, n_items, requests, corrections,
                     ties_code, ties, lam, sampling, weights, n_threads)


def evaluate_sampled_ranks(ranks: ArrayLike, n_items: int, metrics: str | Iterable[str], *,
                           n_negatives: int, correction: str | Iterable[str] = CORRECTIONS,
                           bv_lambda: float = 0.01, sampling: str = "binomial",
                           prior: ArrayLike | None = None,
                           n_threads: int | None = None) -> Result:
    """As `evaluate_sampled`, from the sampled rank of each held-out item: `ranks` is a 1-D
    integer array, one rank in 1..n_negatives + 1 per user (1 = above every negative),
    however its ties were broken. `n_negatives` is m, the same for every user."""
    m = check_int(n_negatives, "n_negatives", 1, " (m, the sampled negatives per user)")
    ranks = _check_ranks(ranks, m)
    n_items = _check_n_items(n_items, m + 1, "n_negatives + 1")
    requests = _check_metrics(metrics, n_items)
    corrections = _check_corrections(correction)
    lam = _check_lambda(bv_lambda)
    sampling = check_choice(sampling, "sampling", SAMPLING)
    weights = _check_prior(prior, n_items)
    n_users = ranks.shape[0]
    case_ptr = np.arange(n_users + 1, dtype=np.int64)
    ones = np.ones(n_users, dtype=np.int64)
    return _evaluate(ranks - 1, np.zeros(n_users, dtype=np.int64), np.full(n_users, m),
                     case_ptr, ones, n_items, requests, corrections, 0, "pessimistic", lam,
                     sampling, weights, n_threads)


def correction_table(n_items: int, n_negatives: int, metric: str, correction: str = "bv", *,
                     bv_lambda: float = 0.01, sampling: str = "binomial",
                     prior: ArrayLike | None = None) -> FloatArray:
    """The value an estimator gives to each sampled rank r = 1..m+1: a float64 array of
    m + 1 entries (entry r - 1 for rank r). `metric` is one label (`"ndcg@10"`),
    `correction` one of "none", "adjusted", "mes", "bv"."""
    m = check_int(n_negatives, "n_negatives", 1, " (m, the sampled negatives per user)")
    n_items = _check_n_items(n_items, m + 1, "n_negatives + 1")
    if not isinstance(metric, str):
        raise TypeError(f"metric must be one metric label such as 'ndcg@10'; got {metric!r}")
    (request,) = _check_metrics([metric], n_items)
    correction = check_choice(correction, "correction", CORRECTIONS)
    tables = _tables(n_items, m, [request], [correction], _check_lambda(bv_lambda),
                     check_choice(sampling, "sampling", SAMPLING), _check_prior(prior, n_items))
    return tables[0]  # type: ignore[no-any-return]


# -- the metric values --------------------------------------------------------------------


def metric_values(name: str, k: int | None, x: ArrayLike, length: float) -> FloatArray:
    """The value of metric `name`@k (k None: no cutoff) of one relevant item at rank x
    (float array, >= 1) of a list of `length` items."""
    x = np.asarray(x, dtype=np.float64)
    inside = x <= k if k is not None else np.ones(x.shape, dtype=bool)
    if name in ("recall", "hit_rate"):
        return inside.astype(np.float64)
    if name == "precision":
        return inside / k  # type: ignore[operator]  # precision has a k
    if name == "ndcg":
        return np.where(inside, 1.0 / np.log2(x + 1.0), 0.0)
    if name in ("map", "ap", "mrr"):
        return np.where(inside, 1.0 / x, 0.0)
    if name == "auc":
        return (length - x) / (length - 1.0)
    raise AssertionError(name)  # pragma: no cover - names are checked before


def _tables(n_items: int, m: int, requests: Sequence[_Request], corrections: Sequence[str],
            lam: float, sampling: str, weights: FloatArray | None) -> FloatArray:
    """One row per (request, correction): the estimator's value at r = 1..m+1."""
    r = np.arange(1, m + 2, dtype=np.float64)
    fitted: dict[str, list[FloatArray]] = {}
    if "mes" in corrections or "bv" in corrections:
        fitted = _fit(n_items, m, requests, corrections, lam, sampling, weights)
    rows = []
    for i, (_, name, k) in enumerate(requests):
        for correction in corrections:
            if correction == "none":
                rows.append(metric_values(name, k, r, m + 1))
            elif correction == "adjusted":
                rows.append(metric_values(name, k, 1.0 + (r - 1.0) * (n_items - 1) / m, n_items))
            else:
                rows.append(fitted[correction][i])
    return np.array(rows, dtype=np.float64).reshape(len(rows), m + 1)


def _fit(n_items: int, m: int, requests: Sequence[_Request], corrections: Sequence[str],
         lam: float, sampling: str, weights: FloatArray | None) -> dict[str, list[FloatArray]]:
    """{"mes": [M̃ per request], "bv": [...]}, fitted over R = 1..n_items in blocks: a QR
    factor of [sqrt(w) A | sqrt(w) B] (B: one column M_n(R) per request), c = AᵀW 1 and
    h = AᵀW B (summed directly: λ = 1 divides it by c, tiny entries included)."""
    from scipy.optimize import lsq_linear
    from scipy.special import gammaln

    from ._kernels.sampled import rank_rows

    hyper = sampling == "hypergeometric"
    width = m + 1 + len(requests)
    check_memory(8 * ((n_items + 1 if hyper else m + 1) + 2 * (_BLOCK + width) * width),
                 f"the {'/'.join(corrections)} fit for n_items={n_items:,} and "
                 f"{m:,} sampled negatives (a table of {n_items + 1 if hyper else m + 1:,} "
                 f"log-factorials and blocks of {_BLOCK:,} × {width:,} probabilities)",
                 "use fewer sampled negatives, sampling='binomial', or "
                 "correction=('none', 'adjusted'), which need no fit")
    if n_items * width > _MOST_FIT_WORK:
        raise ValueError(
            f"n_items: the {'/'.join(corrections)} fit walks every full rank 1..n_items, "
            f"{n_items:,} × {width:,} probabilities here, more than {_MOST_FIT_WORK:,} "
            f"(hours; 10^6 × 101 takes seconds): check n_items, or use "
            f"correction=('none', 'adjusted'), which need no fit")
    log_fact = gammaln(np.arange((n_items if hyper else m) + 1, dtype=np.float64) + 1.0)
    sqrt_w = np.sqrt(weights) if weights is not None else None
    n_b = len(requests)
    factor = np.zeros((0, width))
    c = np.zeros(m + 1)
    h = np.zeros((m + 1, n_b))
    lo_b = np.full(n_b, np.inf)
    hi_b = np.full(n_b, -np.inf)
    for lo in range(1, n_items + 1, _BLOCK):
        hi = min(n_items, lo + _BLOCK - 1)
        ranks = np.arange(lo, hi + 1, dtype=np.float64)
        sw = sqrt_w[lo - 1:hi] if sqrt_w is not None else np.full(ranks.shape[0],
                                                                   1.0 / np.sqrt(n_items))
        block = np.empty((ranks.shape[0], width))
        rank_rows(lo, n_items, m, hyper, log_fact, sw, block[:, :m + 1])
        c += sw @ block[:, :m + 1]
        for j, (_, name, k) in enumerate(requests):
            values = metric_values(name, k, ranks, n_items)
            block[:, m + 1 + j] = sw * values
            lo_b[j] = min(lo_b[j], values.min())
            hi_b[j] = max(hi_b[j], values.max())
        h += block[:, :m + 1].T @ block[:, m + 1:]
        factor = np.linalg.qr(np.vstack([factor, block]), mode="r")  # type: ignore[assignment]
    if factor.shape[0] < width:  # fewer ranks than columns: pad the factor square
        factor = np.vstack([factor, np.zeros((width - factor.shape[0], width))])
    rf, z = factor[:m + 1, :m + 1], factor[:m + 1, m + 1:]
    out: dict[str, list[FloatArray]] = {}
    if "mes" in corrections:
        # a metric of one value at every rank (recall@k with k >= n_items) is that value
        # (scipy refuses bounds that are equal)
        out["mes"] = [np.full(m + 1, lo_b[j]) if lo_b[j] == hi_b[j] else
                      np.clip(lsq_linear(rf, z[:, j], bounds=(lo_b[j], hi_b[j]),
                                         method="bvls").x, lo_b[j], hi_b[j])
                      for j in range(n_b)]
    if "bv" in corrections:
        if lam == 1.0:
            safe = np.where(c > 0, c, 1.0)
            out["bv"] = [np.where(c > 0, h[:, j] / safe, 0.0) for j in range(n_b)]
        else:
            stacked = np.vstack([np.sqrt(1.0 - lam) * rf, np.diag(np.sqrt(lam * c))])
            rhs = np.vstack([z / np.sqrt(1.0 - lam), np.zeros((m + 1, n_b))])
            solution = np.linalg.lstsq(stacked, rhs, rcond=None)[0]
            out["bv"] = [solution[:, j] for j in range(n_b)]
    return out


def _evaluate(above: IntArray, equal: IntArray, negatives: AnyArray, case_ptr: IntArray,
              n_pos: IntArray, n_items: int, requests: Sequence[_Request],
              corrections: Sequence[str], ties_code: int, ties: str, lam: float, sampling: str,
              weights: FloatArray | None, n_threads: int | None) -> Result:
    """Tables for every distinct m, then each user's mean over its cases."""
    from ._kernels.sampled import user_values

    distinct = np.unique(negatives)
    segments = []
    offsets = np.zeros(distinct.shape[0], dtype=np.int64)
    start = 0
    for i, m in enumerate(distinct.tolist()):
        segments.append(_tables(n_items, m, requests, corrections, lam, sampling, weights))
        offsets[i] = start
        start += m + 1
    n_labels = len(requests) * len(corrections)
    tables = np.hstack(segments) if segments else np.zeros((n_labels, 0))
    offset = offsets[np.searchsorted(distinct, negatives)] if negatives.size else \
        np.zeros(0, dtype=np.int64)
    n_users = case_ptr.shape[0] - 1
    out = np.empty((n_labels, n_users))
    with numba_threads(n_threads):
        user_values(above, equal, offset.astype(np.int64), case_ptr,
                    np.ascontiguousarray(tables), ties_code, out)
    labels = [f"{label}[{TAGS[c]}]" for label, _, _ in requests for c in corrections]
    per_user = list(out)
    means = {label: (float(values.mean()) if n_users else float("nan"))
             for label, values in zip(labels, per_user)}
    ms = distinct.tolist()
    report: dict[str, Any] = {"n_items": n_items, "n_negatives": ms[0] if len(ms) == 1 else ms,
              "sampling": sampling, "ties": ties}
    if "bv" in corrections:
        report["bv_lambda"] = lam
    if weights is not None:
        report["prior"] = "given"
    return Result(labels, per_user, means, convention=None, kind=KIND,
                  users=np.arange(n_users, dtype=np.int64),
                  counted=np.ones(n_users, dtype=bool), n_relevant=n_pos, report=report)


# -- checks -------------------------------------------------------------------------------


def _check_scores(scores: ArrayLike) -> NDArray[Any]:
    if not isinstance(scores, np.ndarray):
        try:
            scores = np.asarray(scores)
        except ValueError:
            raise ValueError("scores is ragged: pass a rectangular array (n_users, 1 + m) "
                             "of scores") from None
    if scores.dtype == np.bool_ or scores.dtype.kind not in "iuf":
        raise TypeError(f"scores must be a numeric array (n_users, 1 + m) of model scores; "
                        f"got dtype {scores.dtype}. Cast with scores.astype(np.float64)")
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D (n_users, 1 + m): a row per user, the held-out "
                         f"item(s) and the sampled negatives; got {scores.ndim} dimensions. "
                         f"Reshape one user's scores with scores.reshape(1, -1)")
    if scores.shape[1] < 2:
        raise ValueError(f"scores has {scores.shape[1]} column(s); each row needs the "
                         f"held-out item and at least one sampled negative (m >= 1)")
    if scores.dtype.kind == "f":
        if scores.dtype.itemsize < 4:
            scores = scores.astype(np.float32)
        elif scores.dtype.itemsize > 8:  # long double: rounded, scores could tie anew
            raise TypeError(f"scores of dtype {scores.dtype} are past what the kernels rank "
                            f"(float32, float64); cast with scores.astype(np.float64) if "
                            f"no two scores of a row differ below float64's precision")
        bad = np.isnan(scores)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise ValueError(f"scores contains NaN (row {row}, column {col}); give every "
                             f"candidate a score (use -np.inf for an item ranked last)")
    elif scores.dtype.kind == "u" and scores.size and int(scores.max()) > np.iinfo(np.int64).max:
        raise ValueError("scores holds unsigned integers above 2**63 - 1; subtract an offset "
                         "or cast to float")
    elif scores.dtype.kind in "iu":
        scores = scores.astype(np.int64, copy=False)
    if not scores.dtype.isnative:
        scores = scores.astype(scores.dtype.newbyteorder("="))
    return np.ascontiguousarray(scores)


def _check_positive(positive: int | ArrayLike, shape: tuple[int, ...]) -> BoolArray:
    """A C-contiguous bool mask of the positive cells (a new array: never the caller's)."""
    n_users, n_cols = shape
    if isinstance(positive, (bool, np.bool_)):
        raise TypeError("positive must be a column index, a 1-D array of column indices or a "
                        "2-D boolean mask; got a bool")
    if isinstance(positive, (int, np.integer)):
        col = int(positive)
        if not 0 <= col < n_cols:
            raise ValueError(f"positive is column {col}, outside [0, {n_cols}) of scores; "
                             f"give the column of the held-out item")
        mask = np.zeros(shape, dtype=bool)
        mask[:, col] = True
        return mask
    arr = np.asarray(positive)
    if arr.dtype == np.bool_:
        if arr.shape != shape:
            raise ValueError(f"positive as a mask must have scores' shape {shape}; got "
                             f"{arr.shape}")
        mask = np.ascontiguousarray(arr, dtype=bool).copy()
        counts = mask.sum(axis=1)
        if n_users and counts.min() == 0:
            row = int(np.argmin(counts))
            raise ValueError(f"positive marks no held-out item in row {row}; every row needs "
                             f"at least one True")
        if n_users and counts.max() == n_cols:
            row = int(np.argmax(counts))
            raise ValueError(f"positive marks every column of row {row} as held out; every "
                             f"row needs at least one negative (a False)")
        return mask  # type: ignore[no-any-return]
    if arr.dtype.kind not in "iu":
        raise TypeError(f"positive must be a column index, a 1-D integer array of columns or "
                        f"a 2-D boolean mask; got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n_users:
        raise ValueError(f"positive as column indices must be 1-D with one column per row "
                         f"({n_users}); got shape {arr.shape}")
    if n_users and (int(arr.min()) < 0 or int(arr.max()) >= n_cols):
        bad = int(arr.min()) if int(arr.min()) < 0 else int(arr.max())
        raise ValueError(f"positive contains column {bad}, outside [0, {n_cols}) of scores")
    mask = np.zeros(shape, dtype=bool)
    mask[np.arange(n_users), arr.astype(np.int64)] = True
    return mask


def _check_n_items(n_items: int, least: int, what: str) -> int:
    n_items = check_int(n_items, "n_items", 2, " (the catalogue size of the full ranking)")
    if n_items < least:
        raise ValueError(f"n_items is {n_items} but must be at least {least} ({what}): the "
                         f"full ranking holds the held-out item and every item the negatives "
                         f"come from; pass the catalogue size")
    return n_items


def _check_ranks(ranks: ArrayLike, m: int) -> IntArray:
    if not isinstance(ranks, np.ndarray):
        ranks = np.asarray(ranks)
        if ranks.size == 0 and ranks.dtype.kind == "f":  # [] (numpy makes it float64)
            ranks = ranks.astype(np.int64)
    if ranks.dtype == np.bool_ or ranks.dtype.kind not in "iu":
        raise TypeError(f"ranks must be an integer array (1-based sampled ranks); got dtype "
                        f"{ranks.dtype}. Cast with ranks.astype(np.int64) after checking "
                        f"that the values are whole numbers")
    if ranks.ndim != 1:
        raise ValueError(f"ranks must be 1-D, one sampled rank per user; got shape "
                         f"{ranks.shape}")
    if ranks.size and (int(ranks.min()) < 1 or int(ranks.max()) > m + 1):
        bad = int(ranks.min()) if int(ranks.min()) < 1 else int(ranks.max())
        raise ValueError(f"ranks contains {bad}, outside [1, {m + 1}] (n_negatives + 1); "
                         f"ranks are 1-based among the held-out item and its m negatives")
    return ranks.astype(np.int64)


def _check_metrics(metrics: str | Iterable[str], n_items: int) -> list[_Request]:
    """[(label, name, k)] with k None where the metric has no cutoff: the labels as
    fr.evaluate reads them (a list, or one string of labels joined by commas), each of
    fastrank's form with a sampled metric's name."""
    out: list[_Request] = []
    for label in metric_labels(metrics):
        parts = read_own(label)  # fastrank's grammar: its blanks, case, digits and errors
        name = parts[0].lower() if parts else ""
        if parts is None or name not in METRICS:
            raise ValueError(f"unknown sampled metric {label!r}; known: "
                             f"{', '.join(METRICS)}, as 'name@k' (auc takes no @k)")
        _, params, cut = parts
        if params:
            raise ValueError(f"{label!r}: the sampled metrics take no parameters; write "
                             f"the name and its cutoff alone, as in 'ndcg@10'")
        k = None
        if cut is not None:
            if name == "auc":
                raise ValueError(f"{label!r}: auc takes no cutoff; write 'auc'")
            k = read_cutoff(label, name, cut)
            if not 1 <= k <= n_items:
                raise ValueError(f"{label!r}: the cutoff must lie in [1, n_items = {n_items}]")
        elif name in _NEEDS_K:
            raise ValueError(f"{label!r} needs a cutoff: write '{name}@k', e.g. '{name}@10'")
        if any(label == seen for seen, _, _ in out):
            raise ValueError(f"metrics names {label!r} twice; name each metric once")
        out.append((label, name, k))
    return out


def _check_corrections(correction: str | Iterable[str]) -> list[str]:
    if isinstance(correction, str):
        correction = [correction]
    try:
        correction = list(correction)
    except TypeError:
        raise TypeError(f"correction must be one of {', '.join(map(repr, CORRECTIONS))} or a "
                        f"list of them; got {correction!r}") from None
    if not correction:
        raise ValueError(f"correction is empty; pick from {', '.join(map(repr, CORRECTIONS))}")
    out: list[str] = []
    for c in correction:
        c = check_choice(c, "correction", CORRECTIONS)
        if c not in out:
            out.append(c)
    return out


def _check_lambda(value: float) -> float:
    value = check_number(value, "bv_lambda")
    if not 0.0 < value <= 1.0:
        raise ValueError(f"bv_lambda must lie in (0, 1] (0 is the unbounded minimal-bias fit: "
                         f"use correction='mes'); got {value}")
    return value


def _check_prior(prior: ArrayLike | None, n_items: int) -> FloatArray | None:
    if prior is None:
        return None
    arr = np.asarray(prior)
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(f"prior must be a numeric 1-D array of weights over the full ranks "
                        f"1..n_items; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.shape != (n_items,):
        raise ValueError(f"prior must be 1-D with one weight per full rank (n_items = "
                         f"{n_items}); got shape {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any() or not arr.max(initial=0.0) > 0:
        raise ValueError("prior must hold finite weights >= 0, not all zero")
    with np.errstate(over="ignore"):
        total = arr.sum()
    if not np.isfinite(total):  # finite weights whose sum overflows: scale them first
        arr = arr / arr.max()
        total = arr.sum()
    return arr / total  # type: ignore[no-any-return]
