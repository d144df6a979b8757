"""fastrank on Dask: evaluate tables that live in partitions, where they live.

    import fastrank.dask
    res = fastrank.dask.evaluate(truth_ddf, recs_ddf, ["ndcg@10", "recall@10"])
    res["ndcg@10"], res.n_users, res.per_user     # means, counts, a Dask DataFrame

How the work splits (see also the README's design note):
1. Both tables are hash-shuffled on the user column into the same number of partitions,
   so partition i of each holds every row of the same users. This is the only time the
   data moves: each row crosses the network at most once.
2. In every partition pair, `fastrank.io.from_tables` builds that partition's CSR truth
   and top-K lists (item ids local to the partition, which is all the metrics need), and
   the one kernel evaluates them (`n_threads` numba threads in each Dask task).
3. Each partition yields its users' values (kept, as a Dask DataFrame, when `per_user`)
   and one row of partial sums; the sums are added in a tree (`split_every`) into the
   means. Nothing per user ever reaches the client unless asked for.
Equal to `fastrank.io.from_tables(truth, recs).evaluate(metrics)` on the same data:
identical per-user values, means to 1e-12 (only the order of the sums differs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ._types import DataFrame

from .engine import Block, Plan, common_convention, parse_requests
from .grammar import metric_labels
from .io.tables import dtype_kind, from_tables
from .means import mean_of
from .streaming import Evaluator
from .validation import LARGEST_INT, check_int

_PER_USER = ("n_relevant", "counted")


class DaskResult(Mapping[str, float]):
    """Means of a Dask evaluation (a read-only mapping metric -> mean) with counts, and
    the per-user values as a Dask DataFrame (`per_user`: columns user, the metrics,
    n_relevant, counted; NaN where a user is not counted) when they were kept."""

    def __init__(self, means: Mapping[str, float], n_users: float, n_rows: float,
                 convention: str | None, per_user: DataFrame | None) -> None:
        self._means = dict(means)
        self.n_users = int(n_users)
        self.n_rows = int(n_rows)
        self.convention = convention
        self.per_user = per_user

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
        return dict(self._means)

    def __repr__(self) -> str:
        lines = [f"DaskResult({self.convention}, {self.n_users} of {self.n_rows} users counted)"]
        lines += [f"  {name}  {value:.6f}" for name, value in self._means.items()]
        return "\n".join(lines)


def evaluate(truth: DataFrame, recs: DataFrame, metrics: str | Iterable[str], *,
             convention: str = "recsys", dialect: str | None = None, k: int | None = None,
             n_items: int | None = None, user: Any = "user", item: Any = "item",
             relevance: Any = "relevance", score: Any = "score", rank: Any = "rank",
             npartitions: int | None = None, per_user: bool = True, n_threads: int | None = 1,
             split_every: int | None = None) -> DaskResult:
    """Evaluate Dask DataFrames of judgments and recommendations.

    Parameters
    ----------
    truth : dask DataFrame
        (user, item, relevance) rows, ids of any type, as for `fastrank.io.from_tables`.
    recs : dask DataFrame
        (user, item, score) rows, or (user, rank, item) without a score column.
    metrics : str or list of str
        Metrics of the lists and the truth alone (families ranking, counts and trec of
        `fastrank.METRICS`, any dialect), with or without @k.
    convention : {"recsys", "trec", "implicit"}
    dialect : str, optional
        As for `fr.evaluate`: read the labels as this tool writes them.
    k : int, optional
        The list length K: lists are cut at K, and a metric without @k means @K. By default
        K is the largest cutoff asked for, or, if a metric has none, the longest list (one
        more pass, which shuffles the recs' user column: pass k to save it).
    n_items : int, optional
        The catalogue size that `auc` needs: by default the number of distinct items in
        both tables (one more pass), as in the local evaluation.
    user, item, relevance, score, rank : str
        Column names.
    npartitions : int, optional
        Partitions after the shuffle (default: the larger of the two inputs').
    per_user : bool
        Keep the per-user values as a persisted Dask DataFrame (`result.per_user`).
    n_threads : int
        Numba threads per Dask task (default 1: Dask's workers are the parallelism).
    split_every : int, optional
        Fan-in of the tree that adds the partial sums.

    Returns
    -------
    DaskResult
    """
    import dask
    import pandas as pd

    labels = list(dict.fromkeys(metric_labels(metrics)))
    requests = parse_requests(labels, LARGEST_INT, convention, dialect)
    for request in requests:
        if request.metric.engine not in ("ranking", "trec"):
            raise ValueError(
                f"metrics: {request.label!r} is not available on Dask; fastrank.dask "
                f"evaluates the metrics of the lists and the truth alone (the families "
                f"ranking, counts and trec of fastrank.METRICS)")
    if n_items is not None:
        n_items = check_int(n_items, "n_items")
    if npartitions is not None:
        npartitions = check_int(npartitions, "npartitions")
    n_threads = check_int(n_threads, "n_threads")
    if split_every is not None:
        split_every = check_int(split_every, "split_every", 2)
    columns = {"truth": (truth, [user, item] + ([relevance] if relevance else [])),
               "recs": (recs, [user, item])}
    for name, (frame, needed) in columns.items():
        _check_frame(frame, name, needed)
    recs_order = score if score in recs.columns else rank
    if recs_order not in recs.columns:
        raise ValueError(f"recs has neither a {score!r} nor a {rank!r} column, so its order "
                         f"is unknown; its columns are {list(recs.columns)}")
    for column in (item, user):
        _same_kind(column, truth[column].dtype, recs[column].dtype)
    truth, recs = _same_user_type(truth, recs, user)
    npartitions = npartitions or max(truth.npartitions, recs.npartitions)
    if k is None:
        if any(r.bare for r in requests):
            # K is the longest list: one more pass, shuffling the user column only
            users = recs[[user]].shuffle(on=user, npartitions=npartitions)
            longest = int(dask.compute(users.map_partitions(_longest, user,
                                                            meta=(None, "int64")).max())[0])
            k = max(longest, 1)  # no list at all: K = 1, every list empty
        else:
            k = max(r.k for r in requests)
    k = check_int(k, "k")
    truth = truth.shuffle(on=user, npartitions=npartitions)
    recs = recs.shuffle(on=user, npartitions=npartitions)
    specs = parse_requests(labels, k, convention, dialect)  # cutoffs > k fail here
    if n_items is None and any(s.name == "auc" for s in specs):
        n_items = int(dask.compute(_distinct_items(truth, recs, item))[0])

    names = dict(user=user, item=item, relevance=relevance, score=score, rank=rank)
    meta = pd.DataFrame({user: truth[user]._meta.iloc[:0],
                         **{label: pd.Series(dtype="float64") for label in labels},
                         "n_relevant": pd.Series(dtype="int64"),
                         "counted": pd.Series(dtype="bool")})
    import dask.dataframe as dd

    values = dd.map_partitions(_evaluate_partition, truth, recs, labels=labels,
                               convention=convention, dialect=dialect, k=k, n_items=n_items,
                               names=names, n_threads=n_threads,
                               user_dtype=meta[user].dtype, meta=meta,
                               align_dataframes=False)
    if per_user:
        values = values.persist()
    sums_meta = pd.DataFrame({c: pd.Series(dtype="float64")
                              for c in _sum_columns(labels)})
    sums = values.map_partitions(_partial_sums, labels, convention, dialect, k,
                                 meta=sums_meta)
    totals = dask.compute(sums.sum(split_every=split_every))[0]
    counted = totals["counted"]
    means: dict[str, float] = {}
    for label in labels:
        num, den = totals[f"{label}:num"], totals[f"{label}:den"]
        means[label] = mean_of(num, den, specs[labels.index(label)].aggregate)
    return DaskResult(means, counted, totals["rows"], common_convention(specs),
                      values if per_user else None)


def _check_frame(frame: Any, name: str, needed: Iterable[str]) -> None:
    if not hasattr(frame, "npartitions") or not hasattr(frame, "shuffle"):
        raise TypeError(f"{name} must be a dask DataFrame; got {type(frame).__name__}. For "
                        f"in-memory tables use fastrank.io.from_tables")
    for column in needed:
        if column not in frame.columns:
            raise ValueError(
                f"{name} has no column {column!r}; its columns are {list(frame.columns)}. "
                f"Rename the column, or pass its name (user=, item=, relevance=, score=, "
                f"rank=)")


def _kind(dtype: Any) -> str | None:
    """The kind of id a column's dtype holds ("integer", "float", "text", ...), or None
    when the dtype does not tell (object columns)."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return _kind(dtype.categories.dtype)
    if isinstance(dtype, pd.StringDtype):
        return "text"
    numpy_dtype = getattr(dtype, "numpy_dtype", dtype)  # pandas' nullable Int64, Float64
    try:
        numpy_dtype = np.dtype(numpy_dtype)
    except TypeError:
        return str(dtype)
    return None if numpy_dtype.kind == "O" else dtype_kind(numpy_dtype)


def _same_kind(column: str, truth_dtype: Any, recs_dtype: Any) -> None:
    """Ids of different kinds (integer and float, numbers and text) never name the same
    user or item: refuse them before anything is shuffled."""
    kinds = (_kind(truth_dtype), _kind(recs_dtype))
    if None not in kinds and kinds[0] != kinds[1]:
        raise TypeError(
            f"the {column!r} ids are {kinds[0]} in truth ({truth_dtype}) and {kinds[1]} in "
            f"recs ({recs_dtype}); ids of different types never name the same {column}, so "
            f"give the column one type in both tables, e.g. with astype('int64') or "
            f"astype(str)")


def _same_user_type(truth: DataFrame, recs: DataFrame, user: Any) -> tuple[Any, Any]:
    """Both user columns in one dtype that holds every id exactly, so that equal ids hash
    to the same partition (int64 with uint64: int64 or uint64 by the values' range)."""
    import dask
    import pandas as pd

    a, b = truth[user].dtype, recs[user].dtype
    if a == b:
        return truth, recs
    if _kind(a) == "integer" == _kind(b):
        if np.uint64 in (getattr(a, "numpy_dtype", a), getattr(b, "numpy_dtype", b)):
            t_lo, r_lo, t_hi, r_hi = dask.compute(truth[user].min(), recs[user].min(),
                                                  truth[user].max(), recs[user].max())
            lo, hi = min(int(t_lo), int(r_lo)), max(int(t_hi), int(r_hi))
            target: Any
            if hi <= np.iinfo(np.int64).max:
                target = np.int64
            elif lo >= 0:
                target = np.uint64
            else:
                raise TypeError(
                    f"the {user!r} ids span [{lo}, {hi}], which no one integer type holds "
                    f"(int64 in one table, uint64 in the other); convert them with "
                    f"astype(str)")
        else:
            target = np.result_type(getattr(a, "numpy_dtype", a), getattr(b, "numpy_dtype", b))
        if any(pd.api.types.is_extension_array_dtype(d) for d in (a, b)):
            # a nullable column may hold NA: keep it nullable, so that from_tables names
            # the missing ids instead of the cast failing
            target = pd.UInt64Dtype() if target == np.uint64 else pd.Int64Dtype()
        return (truth.assign(**{user: truth[user].astype(target)}),
                recs.assign(**{user: recs[user].astype(target)}))
    if _kind(a) == "float" == _kind(b):
        return (truth.assign(**{user: truth[user].astype(np.float64)}),
                recs.assign(**{user: recs[user].astype(np.float64)}))
    return truth, recs.assign(**{user: recs[user].astype(a)})


def _longest(frame: DataFrame, user: Any) -> int:
    return int(frame.groupby(user).size().max()) if len(frame) else 0


def _distinct_items(truth: DataFrame, recs: DataFrame, item: Any) -> Any:
    import dask.dataframe as dd

    both = dd.concat([truth[item].to_frame(), recs[item].to_frame()])
    return both[item].nunique()


def _evaluate_partition(truth: DataFrame, recs: DataFrame, *, labels: Sequence[str],
                        convention: str, dialect: str | None, k: int | None,
                        n_items: int | None, names: Mapping[str, Any], n_threads: int | None,
                        user_dtype: Any) -> DataFrame:
    """One partition pair: from_tables, the kernel, the per-user frame."""
    import pandas as pd
    import scipy.sparse as sp

    user = names["user"]
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
                    n_threads=n_threads).update(
        None, data.topk).result()
    return pd.DataFrame({user: pd.Series(data.users).astype(user_dtype),
                         **{label: res.per_user(label) for label in labels},
                         "n_relevant": res.n_relevant, "counted": res.counted})


def _sum_columns(labels: Iterable[str]) -> list[str]:
    return ["rows", "counted"] + [f"{label}:{part}" for label in labels
                                  for part in ("num", "den")]


def _partial_sums(values: DataFrame, labels: Sequence[str], convention: str,
                  dialect: str | None, k: int) -> DataFrame:
    """One row of sums over a partition's counted users, as fastrank.evaluate takes its
    means (Plan.sums: implicit's pooled precision as hits and min(k, m))."""
    import pandas as pd

    plan = Plan(labels, k, convention, 1, dialect=dialect)
    counted = values["counted"].to_numpy(bool)
    # the Block's rows in the plan's order (its passes), not the order asked for
    block = Block(np.vstack([values[label].to_numpy(np.float64) for label in plan.per_user])
                  if plan.per_user else np.empty((0, len(values))),
                  values["n_relevant"].to_numpy(np.int64), counted, None)
    row = {"rows": float(len(values)), "counted": float(np.count_nonzero(counted))}
    for label, (num, den) in plan.sums(block).items():
        row[f"{label}:num"], row[f"{label}:den"] = num, den
    return pd.DataFrame({c: [row[c]] for c in _sum_columns(labels)})
