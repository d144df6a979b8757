"""Decisions from per-user values: confidence intervals, paired tests between systems, and
means per user segment, all from a Result's per-user arrays (no second kernel pass).

    res.ci("ndcg@10")                                  # (low, high), percentile bootstrap
    fr.compare({"als": a, "bpr": b}, ["ndcg@10"])      # paired tests, corrected p-values
    res.by(activity_bucket).to_frame()                 # means per segment
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._types import BoolArray, DataFrame, FloatArray, IntArray
from .evaluation import Evaluation, UnknownMetric
from .means import pooled_parts
from .threads import numba_threads
from .validation import check_choice, check_count, check_level, check_memory, check_seed

METHODS = ("bootstrap", "normal")
TESTS = ("t", "wilcoxon", "randomization")
CORRECTIONS = ("holm", "bonferroni", None)
DEFAULT_RESAMPLES = 1000
DEFAULT_PERMUTATIONS = 10_000
# Values past this are scaled down by a power of two before a statistic squares or
# resamples them: 2**400 squared, times any count of users, stays below 2**1024.
HUGE = 2.0**400
# Bytes allocated per resample / permutation: the float64 statistics and np.quantile's
# working copy of them; the sign-flip sums, their absolute values and a bool mask.
BYTES_PER_RESAMPLE = 16
BYTES_PER_PERMUTATION = 17


def _seed(seed: int | None) -> int:
    check_seed(seed)
    if seed is None:
        return int(np.random.default_rng().integers(0, 2**63 - 1))
    return int(seed)  # in [0, 2**63): check_seed


def check_allocation(n: int, name: str, bytes_each: int, typical: int) -> int:
    """Refuse a count whose arrays (n * bytes_each bytes) exceed half the physical memory."""
    check_memory(n * bytes_each, f"{name}={n} ({bytes_each} bytes each)",
                 f"use a typical value such as {name}={typical}")
    return n


def check_resamples(n_resamples: int, method: str | None = "bootstrap") -> int:
    """n_resamples as an int >= 2 whose bootstrap fits in memory (checked when used)."""
    n = check_count(n_resamples, "n_resamples", minimum=2, typical=DEFAULT_RESAMPLES)
    if method == "bootstrap":
        check_allocation(n, "n_resamples", BYTES_PER_RESAMPLE, DEFAULT_RESAMPLES)
    return n


def check_permutations(n_permutations: int, test: str = "randomization") -> int:
    """n_permutations as an int >= 1 whose test fits in memory (checked when used)."""
    n = check_count(n_permutations, "n_permutations", typical=DEFAULT_PERMUTATIONS)
    if test == "randomization":
        check_allocation(n, "n_permutations", BYTES_PER_PERMUTATION, DEFAULT_PERMUTATIONS)
    return n


def metric_names(metrics: str | Iterable[str], argument: str = "metrics",
                 example: str = "ndcg@10") -> list[str]:
    """A metric name or an iterable of them as a non-empty list without repeats."""
    if isinstance(metrics, str):
        return [metrics]
    try:
        names = list(metrics)
    except TypeError:
        raise TypeError(f"{argument} must be a metric name or a list of them, such as "
                        f"[{example!r}]; got {metrics!r} of type "
                        f"{type(metrics).__name__}") from None
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{argument} must hold metric names (strings) such as "
                            f"{example!r}; got {name!r} of type {type(name).__name__}")
    names = list(dict.fromkeys(names))
    if not names:
        raise ValueError(f"{argument} is empty: name at least one per-user metric, e.g. "
                         f"[{example!r}]")
    return names


class Parts:
    """What a reported mean is made of, over the counted users: mean = (sum(num) /
    sum(den)) ** (1 / power) when `ratio`, else num.mean(). implicit's pooled precision is
    hits / min(k, m); a pooled MAE is error sums / entries; a pooled RMSE the same of
    squared errors, with power 2. `label` names the metric in errors."""

    def __init__(self, num: ArrayLike, den: ArrayLike | None = None, power: float = 1,
                 label: str = "the metric") -> None:
        self.num: FloatArray = np.ascontiguousarray(num, dtype=np.float64)
        self.den: FloatArray | None = None if den is None else np.ascontiguousarray(
            den, dtype=np.float64)
        self.power = power
        self.label = label

    @property
    def ratio(self) -> bool:
        return self.den is not None

    def value(self, num: FloatArray | None = None, den: FloatArray | None = None) -> float:
        num = self.num if num is None else num
        if not self.ratio:
            return float(num.mean()) if num.size else math.nan
        den = self.den if den is None else den
        total = den.sum()  # type: ignore[union-attr]  # a ratio has a den
        return (num.sum() / total) ** (1 / self.power) if total > 0 else math.nan

    def take(self, pick: NDArray[Any]) -> Parts:
        return Parts(self.num[pick], None if self.den is None else self.den[pick], self.power,
                     self.label)

    def factor(self) -> float:
        """1, or where a value exceeds HUGE the largest power of two not above the
        largest value, by which the statistics divide the values (to below 2) so that no
        square or sum of n values overflows; a power of two scales exactly, so the
        statistics scale back to the bit."""
        largest = float(np.max(np.abs(self.num))) if self.num.size else 0.0
        return 1.0 if largest <= HUGE else math.ldexp(1.0, math.frexp(largest)[1] - 1)

    def scaled(self, factor: float) -> Parts:
        """These Parts with num divided by `factor`."""
        if factor == 1:
            return self
        return Parts(self.num / factor, self.den, self.power, self.label)

    def overflowed(self, what: str) -> ValueError:
        """The error of finite values whose `what` (a sum, a square, ...) overflows."""
        largest = float(np.max(np.abs(self.num))) if self.num.size else 0.0
        return ValueError(
            f"{self.label!r}: its per-user values are finite (up to {largest:.3g} in "
            f"magnitude), but {what} overflows float64 (past 1.8e308), so it has no "
            f"finite value to report; scale down what the metric sums (e.g. divide the "
            f"relevance values by a power of 2, which keeps every ratio exact)")


def kept_users(result: Evaluation, metric: str) -> BoolArray | None:
    """For a metric that leaves some counted users out (a NaN value: its relevance
    threshold under recsys, the "weighted" and "available" means), which counted users
    have a value; None where it keeps every one."""
    kept = ~np.isnan(result.per_user(metric)[result.counted])
    return None if kept.all() else kept


def mean_parts(result: Evaluation, metric: str, kept: BoolArray | None = None) -> Parts:
    """The Parts of `metric`'s mean in a Result; for a metric that leaves users out (a
    NaN value), over the counted users that `kept` marks (default: those it keeps).

    Intervals, tests and segments are taken of finite means: an infinite per-user value
    (miscalibration with alpha=0) makes the mean infinite, and finite values whose sums
    overflow make it so in float64; either is a ValueError naming the metric and the fix."""
    values, parts = _parts(result, metric, kept)
    _refuse_infinite(values, metric, result)
    with np.errstate(over="ignore"):  # an overflow is refused here
        finite = np.isfinite(parts.num).all() and math.isfinite(
            float(np.abs(parts.num).sum())) and (parts.den is None or math.isfinite(
                float(parts.den.sum())))
    if not finite:
        raise parts.overflowed("their sum over the users")
    return parts


def _parts(result: Evaluation, metric: str,
           kept: BoolArray | None) -> tuple[FloatArray, Parts]:
    """(the per-user values a mean is taken over, the Parts it is made of)."""
    values = result.per_user(metric)  # catalogue metrics and unknown names raise here
    counted = result.counted
    num = values[counted]
    aggregate = result.aggregates.get(metric, "mean")
    if aggregate in ("sum", "geometric"):
        raise ValueError(
            f"{metric!r} is {'a sum over users' if aggregate == 'sum' else 'a geometric mean'}"
            f" (as trec_eval reports it); intervals, tests and segments are taken of "
            f"arithmetic means: use a per-user mean instead (e.g. 'hits@k' for "
            f"num_rel_ret, 'map' for gm_map)")
    # per_user() above raised if the result kept no rows: n_relevant is an array
    m = result.n_relevant[counted]  # type: ignore[index]
    finite = ~np.isnan(num) if kept is None else kept
    if not finite.all():  # NaN: a user the metric leaves out
        num, m = num[finite], m[finite]
    if aggregate == "weighted":
        weights = m.astype(np.float64)
        with np.errstate(over="ignore"):  # an overflow is refused by the caller
            return num, Parts(num * weights, weights, label=metric)
    pooled = result.pooled.get(metric)
    if pooled is None:
        return num, Parts(num, label=metric)
    if isinstance(pooled, tuple):  # ("entries", power): rating errors over all entries
        den = m.astype(np.float64)
        with np.errstate(over="ignore"):  # as above
            return num, Parts(num ** pooled[1] * den, den, pooled[1], label=metric)
    hits, den = pooled_parts(num, m, pooled)
    return num, Parts(hits, den, label=metric)


def _refuse_infinite(values: FloatArray, metric: str, result: Evaluation) -> None:
    """A ValueError naming `metric` and how many users have an infinite value, if any."""
    high = int(np.count_nonzero(values == np.inf))
    low = int(np.count_nonzero(values == -np.inf))
    if not high and not low:
        return
    found = " and ".join(f"{n} user{'s' * (n != 1)} {sign}inf" for n, sign in
                         ((high, "+"), (low, "-")) if n)
    mean = "NaN (inf - inf)" if high and low else "+inf" if high else "-inf"
    request = result.requests.get(metric)
    if request is not None and request.name == "miscalibration":
        fix = ("evaluate it with alpha > 0 (e.g. the default 0.01): miscalibration is "
               "infinite where alpha=0 and a list misses an aspect of the user's profile, "
               "and at most -ln(alpha) otherwise")
    else:
        fix = ("scale down what the metric sums if a value overflowed (e.g. divide the "
               "relevance values by a power of 2), or evaluate without those users "
               "(np.isinf(res.per_user(...)) marks their rows)")
    raise ValueError(
        f"{metric!r} is infinite for some users ({found} of the {values.size} it is taken "
        f"over), so its mean is {mean} and it has no interval, test or segment mean "
        f"(each is of a finite mean); {fix}")


def interval(parts: Parts, *, level: float, method: str, n_resamples: int, seed: int | None,
             n_threads: int | None = None) -> tuple[float, float]:
    """(low, high) of the mean that `parts` make: of huge values (past HUGE) computed on
    the values scaled down by a power of two, so that no square or resampled sum
    overflows, and scaled back."""
    factor = parts.factor()
    low, high = _interval(parts.scaled(factor), level=level, method=method,
                          n_resamples=n_resamples, seed=seed, n_threads=n_threads)
    if factor != 1:
        low, high = low * factor ** (1 / parts.power), high * factor ** (1 / parts.power)
        if math.isinf(low) or math.isinf(high):
            raise parts.overflowed("a bound of its interval")
    return (low, high)


def _interval(parts: Parts, *, level: float, method: str, n_resamples: int,
              seed: int | None, n_threads: int | None) -> tuple[float, float]:
    num, den = parts.num, parts.den
    n = num.shape[0]
    if n == 0:
        return (math.nan, math.nan)
    alpha = 1.0 - level
    root = 1 / parts.power
    if method == "normal":
        from scipy.stats import norm

        z = norm.ppf(1.0 - alpha / 2)
        if parts.ratio:
            centre = num.sum() / den.sum()  # type: ignore[union-attr]  # a ratio has a den
            resid = num - centre * den
            se = math.sqrt(resid.var(ddof=1) / n) / den.mean() if n > 1 else math.nan  # type: ignore[union-attr]
        else:
            centre = float(num.mean())
            se = float(num.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
        low, high = centre - z * se, centre + z * se
        return (float(max(low, 0.0) ** root if root != 1 else low), float(high ** root))
    from ._kernels.resample import bootstrap_means

    if n >= 2**32:
        raise ValueError(f"the bootstrap takes at most 2**32 - 1 users; got {n}: use "
                         f"method='normal'")
    means = np.empty(check_resamples(n_resamples))
    centre = parts.value() ** parts.power if parts.ratio else parts.value()
    with numba_threads(n_threads):
        bootstrap_means(num, den if parts.ratio else num, parts.ratio, centre, _seed(seed),
                        means)
    low, high = np.quantile(means, [alpha / 2, 1.0 - alpha / 2]) ** root
    return (float(low), float(high))


def result_ci(result: Evaluation, metric: str, level: float = 0.95, method: str = "bootstrap",
              n_resamples: int = DEFAULT_RESAMPLES, seed: int | None = None,
              n_threads: int | None = None) -> tuple[float, float]:
    result._check_metric(metric, "metric")
    level = check_level(level)
    method = check_choice(method, "method", METHODS)
    n_resamples = check_resamples(n_resamples, method)
    check_seed(seed)
    result.require_per_user(f"an interval of {metric!r}")
    return interval(mean_parts(result, metric), level=level, method=method,
                    n_resamples=n_resamples, seed=seed, n_threads=n_threads)


# -- paired comparison of systems -----------------------------------------------------


def compare(results: Mapping[str, Evaluation], metrics: str | Iterable[str] | None = None, *,
            baseline: str | None = None, test: str = "t", correction: str | None = "holm",
            seed: int | None = None, n_permutations: int = DEFAULT_PERMUTATIONS,
            level: float = 0.95, n_threads: int | None = None) -> Comparison:
    """Paired tests of every system against a baseline on the same users.

    Parameters
    ----------
    results : dict[str, Result]
        The systems, by name; all evaluated on the same truth rows with the same
        convention (an error otherwise).
    metrics : str or list of str, optional
        Default: every per-user metric the baseline has, in its order.
    baseline : str, optional
        The system the others are compared with (default: the first).
    test : {"t", "wilcoxon", "randomization"}
        Paired t-test and Wilcoxon signed-rank test (the p-values scipy.stats.ttest_rel and
        scipy.stats.wilcoxon give on the same per-user arrays), or a two-sided sign-flip
        randomization test of the mean difference with `n_permutations` (Numba; the same
        p-value for a seed whatever the thread count).
    correction : {"holm", "bonferroni", None}
        Adjusts the p-values over all (system, metric) comparisons of the call.
    seed : int, optional
        Seed of the randomization test (default: a fresh one each call).
    n_permutations : int
        Sign flips of the randomization test (default 10,000).
    level : float
        Confidence of the interval of each difference (t interval) and the significance
        threshold 1 - level of the adjusted p-value.
    n_threads : int, optional
        Numba threads of the randomization test (default: numba's thread count).

    Returns
    -------
    Comparison
        A table: `.to_frame()` (one row per system and metric: system, metric, mean,
        delta, ci_low, ci_high, effect, p_value, p_adjusted, significant, users), and
        `.to_text()`, `.to_markdown()`, `.to_latex()`.

    Notes
    -----
    A metric that leaves some users out (a NaN value: e.g. `insufficient="exclude"`)
    is tested on the counted users that both the system and the baseline keep; `users`
    says how many (`mean` and `delta` are the reported means, each over its own users).
    """
    level = check_level(level)
    test = check_choice(test, "test", TESTS)
    correction = check_choice(correction, "correction", CORRECTIONS)
    n_permutations = check_permutations(n_permutations, test)
    seed = _seed(seed)
    systems = _check_systems(results, baseline)
    base = baseline if baseline is not None else systems[0]
    reference = results[base]
    if metrics is None:
        metrics = [m for m in reference.metrics if m not in reference.catalogue]
        if not metrics:
            raise ValueError(f"metrics is empty: the baseline {base!r} has no per-user metric; "
                             f"name at least one per-user metric to compare, e.g. ['ndcg@10']")
    metrics = metric_names(metrics)
    for name in systems:
        for metric in metrics:
            _check_compared(results[name], name, metric)
    rows: list[dict[str, Any]] = []
    for metric in metrics:
        with of_system(base):
            base_parts = mean_parts(reference, metric)
        for name in systems:
            res = results[name]
            row: dict[str, Any] = {"system": name, "metric": metric, "mean": res[metric],
                   "delta": 0.0 if name == base else res[metric] - reference[metric],
                   "users": base_parts.num.size}  # the baseline's delta: 0 (its mean NaN too)
            if name == base:
                row.update(ci_low=math.nan, ci_high=math.nan, effect=math.nan,
                           p_value=math.nan)
            else:
                with of_system(name):
                    parts, paired_base = _pair(res, reference, metric, base_parts)
                    row["users"] = parts.num.size
                    row.update(_paired(parts, paired_base, test, level, n_permutations,
                                       _derive(seed, metric, name), n_threads))
            rows.append(row)
    _adjust(rows, correction, 1.0 - level)
    return Comparison(rows, base, test, correction, level)


@contextmanager
def of_system(name: str) -> Iterator[None]:
    """The errors raised inside, said of system `name`: "results['als']: ..."."""
    try:
        yield
    except (ValueError, TypeError) as err:
        raise type(err)(f"results[{name!r}]: {err}") from None


def _check_compared(res: Evaluation, name: str, metric: str) -> None:
    """metric is a per-user metric of system `name`'s Result."""
    if metric not in res.metrics:
        raise UnknownMetric(
            f"metrics: metric {metric!r} is not in the result of system {name!r}; it holds "
            f"{', '.join(res.metrics)}: compare metrics every system was evaluated with")
    if metric in res.catalogue:
        raise ValueError(f"metrics: {metric!r} describes the catalogue: it has no per-user "
                         f"values to compare users on; drop it from metrics")


def _check_systems(results: Mapping[str, Evaluation], baseline: str | None) -> list[str]:
    if not isinstance(results, dict) or len(results) < 2:
        got = (f"a dict of {len(results)} system(s)" if isinstance(results, dict)
               else f"{type(results).__name__}")
        raise TypeError(f"results must be a dict of at least two {{name: Result}}, e.g. "
                        f"{{'als': res_als, 'bpr': res_bpr}}; got {got}")
    systems = list(results)
    for name, res in results.items():
        if not isinstance(name, str):
            raise TypeError(f"system names must be strings; got {name!r}")
        if not isinstance(res, Evaluation):
            raise TypeError(f"results[{name!r}] must be a fastrank Result; got "
                            f"{type(res).__name__}")
        res.require_per_user(f"comparing results[{name!r}]")
    if baseline is not None and not isinstance(baseline, str):
        raise TypeError(f"baseline must be the name (a string) of one of the systems: "
                        f"{', '.join(map(repr, systems))}; got {baseline!r} of type "
                        f"{type(baseline).__name__}")
    if baseline is not None and baseline not in results:
        raise ValueError(f"baseline {baseline!r} is not one of the systems: "
                         f"{', '.join(map(repr, systems))}")
    first = results[systems[0]]
    for name in systems[1:]:
        res = results[name]
        if res.kind != first.kind:
            raise ValueError(
                f"systems {systems[0]!r} and {name!r} are different kinds of evaluation "
                f"({first.kind!r}, {res.kind!r}); compare results of one kind")
        if res.convention != first.convention:
            raise ValueError(
                f"systems {systems[0]!r} and {name!r} were evaluated under different "
                f"conventions ({first.convention!r}, {res.convention!r}); compare results "
                f"of one convention")
        if res.users.shape != first.users.shape or not np.array_equal(res.users, first.users) \
                or not np.array_equal(res.counted, first.counted) \
                or not np.array_equal(res.n_relevant, first.n_relevant):
            raise ValueError(
                f"systems {systems[0]!r} and {name!r} were not evaluated on the same users "
                f"(their rows, counted users or relevant counts differ); a paired test needs "
                f"the same users in the same order: evaluate every system on the same truth "
                f"and users=")
        if res.k != first.k:
            raise ValueError(
                f"systems {systems[0]!r} and {name!r} ranked lists of different lengths "
                f"(K = {first.k}, {res.k}), so a metric without @k means different things; "
                f"compare lists of one length")
    return systems


def _pair(res: Evaluation, reference: Evaluation, metric: str,
          base_parts: Parts) -> tuple[Parts, Parts]:
    """The Parts of a system and of the baseline over the same users: for a metric that
    leaves users out (a NaN value, which may differ between systems), the counted users
    both keep; else every counted user (base_parts as given)."""
    kept, kept_base = kept_users(res, metric), kept_users(reference, metric)
    if kept is None and kept_base is None:
        return mean_parts(res, metric), base_parts
    both = (kept_base if kept is None else kept if kept_base is None  # None: every user
            else kept & kept_base)
    return mean_parts(res, metric, both), mean_parts(reference, metric, both)


def _derive(seed: int, metric: str, system: str) -> int:
    """The randomization seed of one (metric, system) pair: from the names, so that adding
    a metric or reordering systems leaves the other pairs' p-values as they were."""
    import zlib

    key = zlib.crc32(f"{metric}\0{system}".encode())
    return (seed + key * 0x9E3779B97F4A7C15) % 2**63


def _paired(parts: Parts, base: Parts, test: str, level: float, n_permutations: int,
            seed: int, n_threads: int | None) -> dict[str, float]:
    """Test a system's per-user values against the baseline's (paired): p-value, effect
    size d_z and the interval of the difference of the means. For a pooled mean (implicit's
    precision, rating errors) the per-user numerators are compared, whose denominators
    the pairing makes equal, so the test, the interval and the delta agree."""
    from scipy import stats

    # huge values are tested scaled down by a power of two (see Parts.factor): the
    # p-values and the effect size do not change, the interval scales back
    factor = max(parts.factor(), base.factor())
    values, reference = parts.scaled(factor).num, base.scaled(factor).num
    d = values - reference
    n = d.shape[0]
    out = {"ci_low": math.nan, "ci_high": math.nan, "effect": math.nan, "p_value": math.nan}
    if n == 0:
        return out
    # every user differs by the same amount: no spread, though numpy's (and scipy's) std
    # of equal values can be 1e-17, the rounding of their mean
    constant = bool(np.all(d == d[0]))
    if n >= 2:
        scale = n / base.den.sum() if parts.ratio else 1.0  # type: ignore[union-attr]  # mean(d) -> difference of means
        scale *= factor
        sd = 0.0 if constant else float(d.std(ddof=1))
        mean = float(d[0]) if constant else float(d.mean())
        if sd > 0:
            out["effect"] = mean / sd
            if parts.power == 1:
                half = stats.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
                out["ci_low"], out["ci_high"] = (mean - half) * scale, (mean + half) * scale
        elif parts.power == 1 or not np.any(d):
            # the interval is that point, as scipy's ttest_rel(...).confidence_interval()
            # gives it
            out["ci_low"] = out["ci_high"] = mean * scale
        if math.isinf(out["ci_low"]) or math.isinf(out["ci_high"]):
            raise parts.overflowed("a bound of the interval of the difference")
    # each test's p-value where its tool has one: scipy's t-test has none for one user or
    # none that differs (NaN); scipy's wilcoxon gives 1 then; the sign-flip p-value is 1
    # when every difference is 0 ((1 + P) / (1 + P))
    if test == "t":
        if n >= 2 and np.any(d):
            # equal differences: t is infinite and p 0, as scipy gives them for a variance
            # of exactly 0 (warning of a precision loss; where the mean rounds, its
            # variance is 1e-34 and its p-value such as 1e-32, an artifact of the rounding)
            out["p_value"] = 0.0 if constant else float(
                stats.ttest_rel(values, reference).pvalue)
    elif test == "wilcoxon":
        out["p_value"] = float(stats.wilcoxon(values, reference).pvalue) if np.any(d) else 1.0
    else:
        out["p_value"] = randomization_p(d, check_permutations(n_permutations), seed,
                                         n_threads)
    return out


def randomization_p(diff: ArrayLike, n_permutations: int, seed: int,
                    n_threads: int | None = None) -> float:
    """Two-sided sign-flip p-value of sum(diff): (1 + #|S_p| >= |S|) / (1 + P)."""
    from ._kernels.resample import signflip_sums

    diff = np.ascontiguousarray(diff, dtype=np.float64)
    observed = abs(float(diff.sum()))
    sums = np.empty(n_permutations)
    with numba_threads(n_threads):
        signflip_sums(diff, seed, sums)
    slack = 1e-12 * float(np.abs(diff).sum())  # sums equal up to rounding count as >=
    extreme = int(np.count_nonzero(np.abs(sums) >= observed - slack))
    return (1 + extreme) / (1 + n_permutations)


def _adjust(rows: list[dict[str, Any]], correction: str | None, alpha: float) -> None:
    """p_adjusted and significant over the rows with a p-value (Holm: step-down)."""
    tested = [r for r in rows if not math.isnan(r["p_value"])]
    m = len(tested)
    for r in rows:
        r["p_adjusted"] = r["p_value"]
    if correction == "bonferroni":
        for r in tested:
            r["p_adjusted"] = min(1.0, r["p_value"] * m)
    elif correction == "holm":
        running = 0.0
        for i, r in enumerate(sorted(tested, key=lambda r: r["p_value"])):
            running = max(running, min(1.0, (m - i) * r["p_value"]))
            r["p_adjusted"] = running
    for r in rows:
        r["significant"] = bool(r["p_adjusted"] < alpha) if not math.isnan(
            r["p_adjusted"]) else False


class Comparison:
    """The table of `fr.compare`: one row per system and metric."""

    COLUMNS = ("system", "metric", "mean", "delta", "ci_low", "ci_high", "effect", "p_value",
               "p_adjusted", "significant", "users")

    def __init__(self, rows: Iterable[Mapping[str, Any]], baseline: str, test: str,
                 correction: str | None, level: float) -> None:
        self.rows = [{c: row[c] for c in self.COLUMNS} for row in rows]
        self.baseline, self.test, self.correction, self.level = \
            baseline, test, correction, level

    def to_frame(self) -> DataFrame:
        """A pandas DataFrame with the columns of COLUMNS (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(self.COLUMNS))

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        header = ["system", "metric", "mean", "delta", f"{self.level:.0%} CI of delta",
                  "effect", "p", "p adj." if self.correction else "", "sig."]
        body = []
        for r in self.rows:
            base = r["system"] == self.baseline
            body.append([
                r["system"] + (" (baseline)" if base else ""), r["metric"], f"{r['mean']:.4f}",
                "" if base else f"{r['delta']:+.4f}",
                "" if base or math.isnan(r["ci_low"]) else
                f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]",
                "" if math.isnan(r["effect"]) else f"{r['effect']:+.3f}",
                _p(r["p_value"]), _p(r["p_adjusted"]) if self.correction else "",
                "*" if r["significant"] else ""])
        keep = [i for i, h in enumerate(header) if h or any(row[i] for row in body)]
        return [header[i] for i in keep], [[row[i] for i in keep] for row in body]

    def _caption(self) -> str:
        what = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
                "randomization": "paired randomization test"}[self.test]
        corrected = f", {self.correction}-corrected" if self.correction else ""
        return (f"{what} against {self.baseline!r}{corrected}; * = significant at "
                f"{1 - self.level:.2g}")

    # The text, markdown and LaTeX tables are written here rather than by a library: none
    # is a dependency (pandas' to_markdown needs tabulate, to_latex jinja2), and tabulate,
    # tried on the demo's 8-row table, took 4.6 ms against 0.3 ms here and re-read the
    # formatted cells as numbers (a delta of "+0.0000" came out as "0").
    def to_text(self) -> str:
        header, body = self._cells()
        widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                           enumerate(zip(row, widths))).rstrip() for row in [header] + body]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines + [self._caption()])

    def to_markdown(self) -> str:
        header, body = self._cells()
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
                  for row in body]
        return "\n".join(lines + ["", self._caption()])

    def to_latex(self) -> str:
        header, body = self._cells()

        def esc(text: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"),
                         ("&", r"\&"), ("#", r"\#"), ("$", r"\$"), ("<", r"$<$")):
                text = text.replace(a, b)
            return text

        lines = [r"\begin{tabular}{ll" + "r" * (len(header) - 2) + "}", r"\hline",
                 " & ".join(esc(h) for h in header) + r" \\", r"\hline"]
        lines += [" & ".join(esc(c) for c in row) + r" \\" for row in body]
        lines += [r"\hline", r"\end{tabular}", "% " + self._caption()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    __repr__ = __str__


def _p(p: float) -> str:
    """A p-value for the tables: 4 decimals, or 2 digits below 1e-4; a p-value that
    underflowed to 0 (scipy's t-test of a large effect on many users) is below 1e-300."""
    if math.isnan(p):
        return ""
    if p == 0:
        return "< 1e-300"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


# -- segments -------------------------------------------------------------------------


class Segments:
    """Means, counted users and intervals of a Result's metrics per user segment."""

    def __init__(self, labels: NDArray[Any], metrics: Iterable[str],
                 means: dict[str, FloatArray], counts: IntArray, low: dict[str, FloatArray],
                 high: dict[str, FloatArray], level: float, method: str) -> None:
        self.labels, self.metrics = labels, tuple(metrics)
        self.means, self.counts, self.low, self.high = means, counts, low, high
        self.level, self.method = level, method

    def to_frame(self, counts: bool = False, intervals: bool = False) -> DataFrame:
        """One row per segment label (the index), one column per metric (the means);
        `counts=True` adds the counted users, `intervals=True` metric:low / metric:high."""
        import pandas as pd

        columns: dict[str, NDArray[Any]] = {}
        for metric in self.metrics:
            columns[metric] = self.means[metric]
            if intervals:
                columns[f"{metric}:low"] = self.low[metric]
                columns[f"{metric}:high"] = self.high[metric]
        if counts:
            columns["users"] = self.counts
        return pd.DataFrame(columns, index=pd.Index(self.labels, name="segment"))

    def __repr__(self) -> str:
        width = max(len(str(label)) for label in self.labels) if len(self.labels) else 7
        lines = [f"Segments({len(self.labels)}; {self.method} {self.level:.0%} intervals)"]
        for s, label in enumerate(self.labels):
            cells = "  ".join(f"{m} {self.means[m][s]:.4f} [{self.low[m][s]:.4f}, "
                              f"{self.high[m][s]:.4f}]" for m in self.metrics)
            lines.append(f"  {str(label):<{width}}  users {self.counts[s]:>8}  {cells}")
        return "\n".join(lines)


def segments(result: Evaluation, labels: ArrayLike, metrics: str | Iterable[str] | None = None,
             level: float = 0.95, method: str = "normal", n_resamples: int = DEFAULT_RESAMPLES,
             seed: int | None = None, n_threads: int | None = None) -> Segments:
    level = check_level(level)
    method = check_choice(method, "method", METHODS)
    n_resamples = check_resamples(n_resamples, method)
    check_seed(seed)
    result.require_per_user("by()")
    labels = _check_labels(labels, result.users.shape[0])  # type: ignore[union-attr]
    if metrics is None:  # the per-user means (not trec_eval's sums and geometric means)
        metrics = [m for m in result.metrics if m not in result.catalogue
                   and result.aggregates.get(m, "mean") not in ("sum", "geometric")]
        if not metrics:
            raise ValueError("metrics is empty: this result has no per-user mean to give "
                             "per segment (coverage and gini have one value each; sums "
                             "and geometric means have none)")
    metrics = metric_names(metrics)
    for metric in metrics:
        result._check_metric(metric, "metrics")
        result.per_user(metric)  # a catalogue metric raises here
    try:
        unique, inverse = np.unique(labels, return_inverse=True)
    except TypeError as err:
        raise TypeError(f"labels must be of one sortable type ({err}); convert them to "
                        f"one, e.g. np.asarray(labels).astype(str)") from None
    counted = result.counted
    seg = inverse.reshape(-1)[counted]
    n_seg = unique.shape[0]
    counts = np.bincount(seg, minlength=n_seg)
    means: dict[str, FloatArray] = {}
    low: dict[str, FloatArray] = {}
    high: dict[str, FloatArray] = {}
    for metric in metrics:
        kept = kept_users(result, metric)
        parts = mean_parts(result, metric, kept)
        if kept is None:
            seg_m, counts_m = seg, counts
        else:  # the segments of the users the metric keeps
            seg_m = seg[kept]
            counts_m = np.bincount(seg_m, minlength=n_seg)
        weights = parts.den if parts.ratio else np.ones_like(parts.num)
        top = np.bincount(seg_m, weights=parts.num, minlength=n_seg)
        bottom = np.bincount(seg_m, weights=weights, minlength=n_seg)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = top / bottom
        root = 1 / parts.power
        means[metric] = ratio ** root
        if method == "normal":
            factor = parts.factor()  # huge values scaled down, as in interval()
            lo, hi = _normal_by_segment(parts.scaled(factor).num,
                                        weights,  # type: ignore[arg-type]
                                        seg_m, n_seg, counts_m, ratio / factor, level)
            with np.errstate(over="ignore"):  # refused just below
                lo, hi = lo * factor, hi * factor
            if np.isinf(lo).any() or np.isinf(hi).any():
                raise parts.overflowed("a bound of a segment's interval")
            low[metric] = np.maximum(lo, 0.0) ** root if root != 1 else lo
            high[metric] = hi ** root
        else:
            low[metric], high[metric] = np.full(n_seg, np.nan), np.full(n_seg, np.nan)
            order = np.argsort(seg_m, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(counts_m)])
            for s in range(n_seg):
                low[metric][s], high[metric][s] = interval(
                    parts.take(order[bounds[s]:bounds[s + 1]]), level=level,
                    method="bootstrap", n_resamples=n_resamples,
                    seed=None if seed is None else (_seed(seed) + s) % 2**63,
                    n_threads=n_threads)
    return Segments(unique, metrics, means, counts, low, high, level, method)


def _check_labels(labels: ArrayLike, n_rows: int) -> NDArray[Any]:
    """labels as a 1-D array of one label per row, none of them missing."""
    try:
        array = np.asarray(labels)
    except (ValueError, TypeError):
        raise ValueError(f"labels must be 1-D with one segment label per row of the result "
                         f"({n_rows}); got a {type(labels).__name__} that is not an array "
                         f"(rows of different lengths?): pass a list or array of "
                         f"{n_rows} labels") from None
    if array.ndim != 1 or array.shape[0] != n_rows:
        raise ValueError(f"labels must be 1-D with one segment label per row of the result "
                         f"({n_rows}); got shape {array.shape}: pass a list or array of "
                         f"{n_rows} labels")
    if array.dtype.kind in "US" and not isinstance(labels, np.ndarray):
        # numpy made text of a list that mixes text with other labels ([1, "a"] -> "1",
        # "a"; b"a" and "a" -> "a"; NaN -> "nan"): those would be one segment
        given: Any = list(labels)  # type: ignore[arg-type]  # a sequence: asarray took it
        missing = np.flatnonzero([_is_missing(x) for x in given])
        if missing.size:
            _refuse_missing(missing)
        kinds = sorted({"str" if isinstance(x, str) else "bytes" if isinstance(x, bytes)
                        else type(x).__name__ for x in given})
        if len(kinds) > 1:
            raise TypeError(f"labels mixes labels of kinds {', '.join(kinds)}; segments are "
                            f"compared as one type: give every row a label of one type "
                            f"(e.g. all str)")
    missing = _missing_rows(array)
    if missing.size:
        _refuse_missing(missing)
    return array


def _refuse_missing(missing: NDArray[np.intp]) -> None:
    raise ValueError(f"labels holds a missing label (NaN, NaT or None) at {missing.size} "
                     f"row(s), the first row {int(missing[0])}: give every row a label, "
                     f"e.g. -1 or 'unknown' for rows without one")


def _missing_rows(labels: NDArray[Any]) -> NDArray[np.intp]:
    """Rows whose label is NaN, NaT or None."""
    kind = labels.dtype.kind
    if kind in "fc":
        return np.flatnonzero(np.isnan(labels))
    if kind in "mM":
        return np.flatnonzero(np.isnat(labels))
    if kind == "O":
        return np.flatnonzero(np.fromiter((_is_missing(x) for x in labels), dtype=bool,
                                          count=labels.shape[0]))
    return np.empty(0, dtype=np.intp)


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT and NA differ from themselves
    except (TypeError, ValueError):
        return True  # pandas' NA has no truth value


def _normal_by_segment(num: FloatArray, den: FloatArray, seg: NDArray[np.intp], n_seg: int,
                       counts: IntArray, means: FloatArray,
                       level: float) -> tuple[FloatArray, FloatArray]:
    """Normal intervals of each segment's mean (a ratio's by the delta method)."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + level / 2)
    r = means[seg]
    resid = num - r * den
    ss = np.bincount(seg, weights=resid * resid, minlength=n_seg)
    d_mean = np.bincount(seg, weights=den, minlength=n_seg)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = ss / (counts - 1)
        se = np.sqrt(var / counts) / (d_mean / counts)
        se[counts < 2] = np.nan
    return means - z * se, means + z * se
