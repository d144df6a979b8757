"""Evaluating tables one partition at a time: what fastrank.dask and fastrank.spark share.

A partition holds every row of its users (both tables shuffled on the user column), so it
is evaluated on its own, like any pair of in-memory tables:
- `evaluate_partition`: `fastrank.io.from_tables` and the one kernel, through an
  `Evaluator` (the mergeable accumulator): its users and their `Result`;
- `partial_sums`: one row of sums over a partition's counted users (per metric a numerator
  and a denominator, `Plan.sums`), which add up across partitions;
- `means_of_sums`: the means of the summed rows, as `fastrank.evaluate` takes them.
`PartitionedResult` is what both front ends return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ._types import AnyArray, DataFrame

from .grammar import Request
from .result import Result
from .engine import Block, Plan, common_convention, parse_requests
from .evaluation import means_only, over
from .grammar import metric_labels
from .io import ties
from .io.tables import from_tables
from .means import mean_of
from .streaming import Evaluator
from .validation import LARGEST_INT, check_int

# the columns of the per-user values besides the user and the metrics
PER_USER = ("n_relevant", "counted")


class PartitionedResult(Mapping[str, float]):
    """Means of a partitioned evaluation (a read-only mapping metric -> mean) with counts,
    and the per-user values as a table of the cluster's kind (`per_user`: columns user,
    the metrics, n_relevant, counted; NaN where a user is not counted) when they were
    kept."""

    def __init__(self, means: Mapping[str, float], n_users: float, n_rows: float,
                 convention: str | None, per_user: DataFrame | None,
                 users_of: Mapping[str, float] | None = None) -> None:
        self._means = dict(means)
        self.n_users = int(n_users)
        self.n_rows = int(n_rows)
        self.convention = convention
        self._per_user = per_user
        self._users_of = {name: int(n) for name, n in (users_of or {}).items()}

    def n_users_of(self, name: str) -> int:
        """How many users the mean of `name` is over: fewer than n_users where the metric
        leaves some out (a relevance threshold under recsys, a value it does not
        define)."""
        if name not in self._means:
            raise KeyError(name)
        return self._users_of.get(name, self.n_users)

    @property
    def has_per_user(self) -> bool:
        """False for means only (evaluated with per_user=False)."""
        return self._per_user is not None

    @property
    def per_user(self) -> DataFrame:
        """The per-user values as a table of the cluster's kind; a ValueError for means
        only (evaluated with per_user=False)."""
        if self._per_user is None:
            raise means_only("per_user")
        return self._per_user

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self._means)

    def __getitem__(self, name: str) -> float:
        return self._means[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._means)

    def __len__(self) -> int:
        return len(self._means)

    def to_dict(self) -> dict[str, float]:
        """{metric: mean} as a plain dict."""
        return dict(self._means)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.convention}, {self.n_users} of {self.n_rows} "
                 f"users counted)"]
        lines += [f"  {name}  {value:.6f}" + over(self.n_users_of(name), self.n_users)
                  for name, value in self._means.items()]
        return "\n".join(lines)


def list_metrics(metrics: str | Iterable[str], convention: str, dialect: str | None,
                 where: str) -> tuple[list[str], tuple[Request, ...]]:
    """(distinct labels of `metrics`, their Requests at any K): each a metric of the lists
    and the truth alone (engines ranking and trec), as the others need global item ids or
    side inputs."""
    labels = list(dict.fromkeys(metric_labels(metrics)))
    requests = parse_requests(labels, LARGEST_INT, convention, dialect)
    for request in requests:
        if request.metric.engine not in ("ranking", "trec"):
            raise ValueError(
                f"metrics: {request.label!r} is not available on {where}; "
                f"fastrank.{where.lower()} evaluates the metrics of the lists and the truth "
                f"alone (the families ranking, counts and trec of fastrank.METRICS); for "
                f"the others, feed the blocks to a fr.Evaluator (fr.Evaluator.merge joins "
                f"partial ones)")
    return labels, requests


def check_counts(n_items: Any, npartitions: Any,
                 n_threads: Any) -> tuple[int | None, int | None, int]:
    """The cluster front ends' counts, checked: n_items and npartitions (None: leave them
    to the data and the cluster) and the numba threads of each task."""
    return (None if n_items is None else check_int(n_items, "n_items"),
            None if npartitions is None else check_int(npartitions, "npartitions"),
            check_int(n_threads, "n_threads"))


def check_columns(columns: Iterable[Any], name: str, needed: Iterable[Any]) -> None:
    """Every column `needed` is among a table's `columns`, else a ValueError naming it."""
    for column in needed:
        if column not in columns:
            raise ValueError(
                f"{name} has no column {column!r}; its columns are {list(columns)}. "
                f"Rename the column, or pass its name (user=, item=, relevance=, score=, "
                f"rank=)")


def order_column(columns: Iterable[Any], score: Any, rank: Any) -> Any:
    """The recs column that orders the lists: `score` if there is one, else `rank`."""
    if score in columns:
        return score
    if rank in columns:
        return rank
    raise ValueError(f"recs has neither a {score!r} nor a {rank!r} column, so its order "
                     f"is unknown; its columns are {list(columns)}")


# the orders of equal scores a partition builds (fastrank.io.from_tables' ties=): by item
# id, as the tools do; a shuffle keeps no row order, so none follows the table's rows
PARTITION_TIES = ("trec_eval", "docno")


def partition_ties(labels: Sequence[str], convention: str, dialect: str | None, cut: bool,
                   scored: bool, has_ties: Callable[[], bool]) -> str:
    """The order in which the partitions rank equal scores: that of every label's tool
    where they agree on one a partition builds, else trec_eval's. Where a label's tool
    orders them otherwise and the recs (`scored`: ordered by score) have tied scores
    (`has_ties()`, one more pass, run only then), warns (fastrank.dialects.TieOrder) at
    the front end's caller."""
    orders = ties.wanted(labels, convention, dialect, cut)
    used = ties.pick(orders, PARTITION_TIES)
    if scored and any(order != used for _, order in orders.values()) and has_ties():
        ties.check_ties(orders, used, "Ask for each tool's names in a call of their own, "
                        "whose lists then follow that tool's order where fastrank builds "
                        "it (by item id: a shuffle keeps no row order)", stacklevel=4)
    return used


def rank_depth(largest: Any) -> int:
    """K of lists ordered by a rank column, whose largest rank is `largest` (None where the
    table is empty): ranks are positions, so the longest list ends at the largest rank.
    At least 1 and at most 2**62; a rank that is not a whole number from 1 is left to the
    partitions, whose `from_tables` refuses it naming the column."""
    value = np.nan if largest is None else float(largest)
    return int(min(np.ceil(value), LARGEST_INT)) if value >= 1 else 1  # NaN: not >= 1


def evaluate_partition(truth: DataFrame | Mapping[Any, Any], recs: DataFrame | Mapping[Any, Any],
                       *, labels: Sequence[str], convention: str, dialect: str | None,
                       k: int | None, n_items: int | None, names: Mapping[str, Any],
                       n_threads: int | None) -> tuple[AnyArray, Result]:
    """(users, Result) of one partition's tables: `from_tables` (item ids local to the
    partition, which is all the metrics need; `auc` gets the catalogue size `n_items`),
    then the kernel through an Evaluator."""
    import scipy.sparse as sp

    data = from_tables(truth, recs, k=k, **names)
    if n_items is not None and data.items.shape[0] > n_items:
        raise ValueError(
            f"n_items={n_items} is less than the {data.items.shape[0]} distinct items of one "
            f"partition; pass the catalogue size (or leave n_items out to count it)")
    width = max(n_items or 0, data.truth.shape[1])
    matrix = sp.csr_array((data.truth.data, data.truth.indices, data.truth.indptr),
                          shape=(data.truth.shape[0], width))
    # lists of K slots: a partition's shorter lists end early, with no padding built
    res = Evaluator(matrix, labels, convention=convention, dialect=dialect, k=k,
                    n_threads=n_threads).update(None, data.topk).result()
    return data.users, res


def per_user_columns(res: Result, labels: Iterable[str]) -> dict[str, AnyArray | None]:
    """{column: array} of a partition's Result: the metrics, n_relevant, counted."""
    return {**{label: res.per_user(label) for label in labels},
            "n_relevant": res.n_relevant, "counted": res.counted}


def sum_columns(labels: Iterable[str]) -> list[str]:
    return ["rows", "counted"] + [f"{label}:{part}" for label in labels
                                  for part in ("num", "den", "users")]


def partial_sums(values: Mapping[str, Any], labels: Sequence[str], convention: str,
                 dialect: str | None, k: int) -> dict[str, float]:
    """{column of `sum_columns`: float}: sums over the counted users of a partition's
    per-user values (a mapping of columns, as `per_user_columns` gives), as
    fastrank.evaluate takes its means (Plan.sums: implicit's pooled precision as hits and
    min(k, m))."""
    plan = Plan(labels, k, convention, 1, dialect=dialect)
    counted = np.asarray(values["counted"], bool)
    n = counted.shape[0]
    # the Block's rows in the plan's order (its passes), not the order asked for
    block = Block(np.vstack([np.asarray(values[label], np.float64) for label in plan.per_user])
                  if plan.per_user else np.empty((0, n)),
                  np.asarray(values["n_relevant"], np.int64), counted, None)
    row = {"rows": float(n), "counted": float(np.count_nonzero(counted))}
    for label, (num, den, users) in plan.sums(block).items():
        row[f"{label}:num"], row[f"{label}:den"], row[f"{label}:users"] = num, den, users
    return {c: row[c] for c in sum_columns(labels)}


def means_of_sums(totals: Mapping[str, float], labels: Sequence[str], k: int,
                  convention: str, dialect: str | None
                  ) -> tuple[dict[str, float], str | None, dict[str, float]]:
    """({label: mean}, convention, {label: users the mean is over}) of the partitions'
    summed rows (a mapping of `sum_columns`)."""
    specs = parse_requests(labels, k, convention, dialect)
    means = {label: mean_of(totals[f"{label}:num"], totals[f"{label}:den"], spec.aggregate)
             for label, spec in zip(labels, specs)}
    return means, common_convention(specs), {label: totals[f"{label}:users"]
                                            for label in labels}
