"""`Evaluation`: the means and per-user values of one evaluation, a read-only mapping.

`fastrank.Result` (in `result.py`) adds the statistics and plots on top; the statistics
and plots modules take any Evaluation, so they sit below Result in the import graph."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._types import BoolArray, DataFrame, FloatArray, IntArray

if TYPE_CHECKING:
    from .grammar import Request

_E = TypeVar("_E", bound="Evaluation")


class UnknownMetric(KeyError, ValueError):
    """A metric name that a Result does not hold. A KeyError, as the Mapping protocol
    (`result["x"]`) wants, and a ValueError, as a bad argument of a method is."""

    def __str__(self) -> str:
        # KeyError's str() quotes its argument; the message reads better plain.
        return str(self.args[0]) if self.args else ""


def _frozen(arr: ArrayLike | None) -> NDArray[Any]:
    """A read-only view of arr (the caller's array keeps its own flags)."""
    view: NDArray[Any] = np.asarray(arr).view()
    view.flags.writeable = False
    return view


def means_only(what: str) -> ValueError:
    """The error of `what` (a name of what was asked) on a result that holds means only:
    a Result, or a Dask or Spark one, evaluated with per_user=False."""
    return ValueError(
        f"{what} needs per-user values, and this result holds means only (evaluated with "
        f"per_user=False); evaluate again with per_user=True (the default) to keep them")


class Evaluation(Mapping[str, float]):
    """Means and per-user values of one evaluation.

    `result["ndcg@10"]` is the mean over the counted users, `result.per_user("ndcg@10")`
    the float64 value of every top-K row (NaN where the user is not counted). The
    per-user arrays are read-only views; copy them to modify. A name the result does not
    hold raises UnknownMetric, both a KeyError (the Mapping protocol) and a ValueError.

    Attributes
    ----------
    metrics : tuple of str
        The metric labels, in the order asked for.
    convention : str or None
        Which formulas: "recsys", "trec" or "implicit" ("mixed" where other tools' names
        bring their own); None for the kinds that have no conventions.
    kind : str
        What kind of evaluation: "ranking" (lists against truth: fr.evaluate, Evaluator,
        evaluate_factors, alpha_ndcg, ab_ndcg), "overlap" (two systems' lists, fr.overlap),
        "ratings" (fr.rmse, fr.mae) or "sampled" (fr.evaluate_sampled).
    users : ndarray of int32 or int64
        The truth row of each top-K row (the `users=` given, or 0..n-1 as int64).
    counted : ndarray of bool
        Which rows count in the means (see the convention's rule).
    n_relevant : ndarray of int64
        m, the number of relevant items in each row's truth.
    n_users : int
        How many rows count in the means.
    catalogue : tuple of str
        Metrics that describe the catalogue (coverage, gini): one value, no per-user values.
    report : dict
        What the metric wants said beside the means: e.g. for `ab_ndcg`, how many users
        had no profile and how many values exceed 1. Empty for most evaluations.
    pooled : dict
        Metrics whose mean is pooled rather than a mean of the per-user values:
        implicit's precision (sum of hits / sum of min(k, m)) with its k, and the rating
        errors ("entries", power) of `fr.rmse` / `fr.mae`.
    k : int or None
        The list length K that metrics without @k refer to (None if not a ranking).
    aggregates : dict
        How each metric's mean is taken: "mean", "pooled", "sum" (trec_eval's counts) or
        "geometric" (gm_map); "catalogue" for coverage and gini.
    requests : dict
        {label: fastrank.grammar.Request}: what each label computed (its canonical name,
        convention and dialect); see `describe`.

    Notes
    -----
    A result of `fr.evaluate(..., per_user=False)` holds the means only: `per_user`,
    `users`, `counted` and `n_relevant` are then None, and what needs per-user values
    (`per_user()`, `to_frame`, intervals, segments, curves) says so.
    """

    def __init__(self, metrics: Iterable[str], per_user: Iterable[ArrayLike | None] | None,
                 means: Mapping[str, float], *, convention: str | None, users: ArrayLike | None,
                 counted: ArrayLike | None, n_relevant: ArrayLike | None,
                 report: Mapping[str, Any] | None = None, catalogue: Iterable[str] = (),
                 pooled: Mapping[str, Any] | None = None, k: int | None = None,
                 aggregates: Mapping[str, str] | None = None,
                 requests: Mapping[str, Request] | None = None, n_rows: int | None = None,
                 n_counted: int | None = None, users_of: Mapping[str, int] | None = None,
                 kind: str = "ranking") -> None:
        self._metrics = tuple(metrics)
        self.catalogue = tuple(catalogue)
        self._per_user: dict[str, FloatArray] | None = None if per_user is None else {
            name: _frozen(values) for name, values in zip(self._metrics, per_user)
            if name not in self.catalogue}
        self._means = {name: float(means[name]) for name in self._metrics}
        self.convention = convention
        self.kind = kind
        self.users: IntArray | None = None if users is None else _frozen(users)
        self.counted: BoolArray | None = None if counted is None else _frozen(counted)
        self.n_relevant: IntArray | None = None if n_relevant is None else _frozen(n_relevant)
        # the counts of a means-only result (per_user=False), which keeps no rows
        self.n_rows = (int(n_rows) if users is None  # type: ignore[arg-type]
                       else self.users.shape[0])  # type: ignore[union-attr]
        self._n_counted = n_counted
        # how many users each mean of a means-only result is over (with per-user values,
        # counted from them)
        self._users_of = dict(users_of or {})
        self.report = dict(report or {})
        self.pooled = dict(pooled or {})
        self.k = k
        self.aggregates = {name: "mean" for name in self._metrics}
        self.aggregates.update({name: "pooled" for name in self.pooled})
        self.aggregates.update({name: "catalogue" for name in self.catalogue})
        self.aggregates.update(aggregates or {})
        self.requests = dict(requests or {})

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (pickle writes arrays back writeable): the arrays read-only again."""
        self.__dict__.update(state)
        for name in ("users", "counted", "n_relevant"):
            if getattr(self, name) is not None:
                setattr(self, name, _frozen(getattr(self, name)))
        if self._per_user is not None:
            self._per_user = {name: _frozen(values) for name, values in self._per_user.items()}

    @property
    def metrics(self) -> tuple[str, ...]:
        return self._metrics

    @property
    def n_users(self) -> int:
        if self.counted is None:
            return int(self._n_counted)  # type: ignore[arg-type]  # given without rows
        return int(np.count_nonzero(self.counted))

    @property
    def has_per_user(self) -> bool:
        """False for a means-only result (`fr.evaluate(..., per_user=False)`)."""
        return self._per_user is not None

    def require_per_user(self, what: str) -> None:
        """Refuse `what` (a name of what was asked) on a means-only result."""
        if self._per_user is None:
            raise means_only(what)

    def __getitem__(self, name: str) -> float:
        if not isinstance(name, str):
            raise TypeError(self._not_a_name(name, "the key"))
        try:
            return self._means[name]
        except KeyError:
            raise UnknownMetric(self._unknown(name)) from None
        except TypeError:  # unhashable: a list or an array
            raise TypeError(self._not_a_name(name, "the key")) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._metrics)

    def __len__(self) -> int:
        return len(self._metrics)

    def _unknown(self, name: object) -> str:
        return (f"{name!r} is not in this result; it holds {', '.join(self._metrics)}: "
                f"pass one of these, or evaluate again with {name!r} among the metrics")

    def _not_a_name(self, name: object, argument: str) -> str:
        example = self._metrics[0] if self._metrics else "ndcg@10"
        return (f"{argument} must be a metric name (a string) such as {example!r}; got "
                f"{name!r} of type {type(name).__name__}")

    def _check_metric(self, name: object, argument: str = "metric") -> str:
        """name if this result holds it: a TypeError for a non-string, UnknownMetric (a
        KeyError and a ValueError) for a name it does not hold."""
        if not isinstance(name, str):
            raise TypeError(self._not_a_name(name, argument))
        if name not in self._means:
            raise UnknownMetric(self._unknown(name))
        return name

    def per_user(self, name: str) -> FloatArray:
        """Per-user values of one metric: float64, one per top-K row, NaN where not counted."""
        self._check_metric(name, "name")
        self.require_per_user(f"per_user({name!r})")
        if name in self.catalogue:
            raise ValueError(
                f"{name!r} describes the catalogue, not a user: it has one value, "
                f"result[{name!r}], and no per-user values")
        return self._per_user[name]  # type: ignore[index]  # per-user: required above

    def canonical(self, name: str) -> str:
        """fastrank's own label of what `name` (a label as asked) computed, e.g.
        "ndcg@10" for ir-measures' "nDCG@10". A label does not carry a convention: the
        value is that label's under the convention `describe(name)` names ("map@10"
        under trec for ir-measures' "AP@10"), so evaluate it with that `convention=`."""
        self._check_metric(name, "name")
        request = self.requests.get(name)
        return request.canonical if request is not None else name

    def describe(self, name: str | None = None) -> str:
        """One line per metric (or for `name`): the label as asked, the canonical metric,
        the convention and the formula computed."""
        names = self._metrics if name is None else [self._check_metric(name, "name")]
        lines = [self.requests[n].describe() if n in self.requests else repr(n)
                 for n in names]
        return "\n".join(lines)

    def relabeled(self: _E, names: Mapping[str, str], report: Mapping[str, Any] | None = None
                  ) -> _E:
        """This evaluation with its metrics named as `names` maps them ({label: new
        label}; the others keep theirs) and `report` added: the same values, no copy."""
        def new(label: str) -> str:
            return names.get(label, label)

        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy._metrics = tuple(new(m) for m in self._metrics)
        copy.catalogue = tuple(new(m) for m in self.catalogue)
        copy._means = {new(m): v for m, v in self._means.items()}
        if self._per_user is not None:
            copy._per_user = {new(m): v for m, v in self._per_user.items()}
        copy._users_of = {new(m): v for m, v in self._users_of.items()}
        copy.pooled = {new(m): v for m, v in self.pooled.items()}
        copy.aggregates = {new(m): v for m, v in self.aggregates.items()}
        copy.requests = {new(m): v for m, v in self.requests.items()}
        copy.report = {**self.report, **(report or {})}
        return copy

    def to_dict(self) -> dict[str, float]:
        """{metric: mean} as a plain dict."""
        return dict(self._means)

    def to_frame(self) -> DataFrame:
        """Per-user values as a pandas DataFrame indexed by truth row (needs pandas);
        catalogue-level metrics have no column."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Result.to_frame() needs pandas: pip install pandas") from None
        self.require_per_user("to_frame()")
        frame = pd.DataFrame({name: self._per_user[name]  # type: ignore[index]  # as above
                              for name in self._metrics
                              if name not in self.catalogue},
                             index=pd.Index(self.users, name="user"))
        return frame

    def n_users_of(self, name: str) -> int:
        """How many users the mean of `name` is over: n_users, or fewer where the metric
        leaves some counted users out (NaN): a relevance threshold under the recsys and
        implicit conventions (a user counts when it has an item relevant at rel=),
        ndeval's topics under trec, the users with a negative for gauc, ..."""
        self._check_metric(name, "name")
        if name in self.catalogue:
            raise ValueError(f"{name!r} describes the catalogue, not users: its value is "
                             f"over every list")
        if self._per_user is None:
            return int(self._users_of.get(name, self.n_users))
        return int(np.count_nonzero(~np.isnan(self._per_user[name])))

    def _over(self, name: str) -> str:
        """What a mean in the repr is over, where that is not the counted users: the
        catalogue, or the users the metric counts (`n_users_of`)."""
        if name in self.catalogue:
            return "  (catalogue)"
        return over(self.n_users_of(name), self.n_users)

    def __repr__(self) -> str:
        width = max(len(name) for name in self._metrics)
        lines = [f"{type(self).__name__}({self.convention or self.kind}, {self.n_users} of "
                 f"{self.n_rows} users counted)"]
        lines += [f"  {name:<{width}}  {self._means[name]:.6f}" + self._over(name)
                  for name in self._metrics]
        lines += [f"  {key}: {value}" for key, value in self.report.items()]
        return "\n".join(lines)


def over(n: int, n_users: int) -> str:
    """What a repr says beside a mean over n of the n_users counted users."""
    return "" if n == n_users else f"  (over {n} user{'' if n == 1 else 's'})"
