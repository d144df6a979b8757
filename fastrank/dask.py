"""fastrank on Dask: evaluate tables that live in partitions, where they live.

    import fastrank.dask
    res = fastrank.dask.evaluate(truth_ddf, recs_ddf, ["ndcg@10", "recall@10"])
    res["ndcg@10"], res.n_users, res.per_user     # means, counts, a Dask DataFrame

How the work splits (see also docs/scale.md):
1. Both tables are hash-shuffled on the user column into the same number of partitions,
   so partition i of each holds every row of the same users. This is the only time the
   data moves: each row crosses the network at most once.
2. In every partition pair, `fastrank.io.from_tables` builds that partition's CSR truth
   and top-K lists (item ids local to the partition, which is all the metrics need), and
   the one kernel evaluates them (`n_threads` numba threads in each Dask task).
3. Each partition yields its users' values (kept, as a Dask DataFrame, when `per_user`)
   and one row of partial sums; the client adds the rows exactly (`math.fsum`, as
   fastrank.spark does) into the means. Nothing per user ever reaches the client unless
   asked for.
Equal to `fastrank.io.from_tables(truth, recs).evaluate(metrics)` on the same data:
identical per-user values, means to 1e-12 (only the order of the sums differs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any
import numpy as np

from ._types import DataFrame

from .engine import parse_requests
from .io.tables import distinct_columns, dtype_kind
from .partitions import (PartitionedResult, check_columns, check_counts, evaluate_partition,
                         list_metrics, means_of_sums, order_column, partial_sums,
                         partition_ties, per_user_columns, rank_depth, sum_columns)
from .validation import check_bool, check_int


class DaskResult(PartitionedResult):
    """Means of a Dask evaluation (a read-only mapping metric -> mean) with counts, and
    the per-user values as a Dask DataFrame (`per_user`: columns user, the metrics,
    n_relevant, counted; NaN where a user is not counted) when they were kept."""


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
        more pass, which shuffles the recs' user column: pass k to save it); by rank, the
        largest rank (ranks are positions, as for `fastrank.io.from_tables`).
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
        Kept for calls written for earlier versions, and checked, but not used: the
        partitions' rows of sums (one each) are added on the client exactly, so that no
        tree's order of additions changes a mean.

    Returns
    -------
    DaskResult
    """
    import dask
    import pandas as pd

    labels, requests = list_metrics(metrics, convention, dialect, "Dask")
    per_user = check_bool(per_user, "per_user")
    n_items, npartitions, n_threads = check_counts(n_items, npartitions, n_threads)
    if split_every is not None:
        split_every = check_int(split_every, "split_every", 2)
    columns = {"truth": (truth, [user, item] + ([relevance] if relevance else [])),
               "recs": (recs, [user, item])}
    for name, (frame, needed) in columns.items():
        _check_frame(frame, name, needed)
    order = order_column(recs.columns, score, rank)
    distinct_columns(user, item, relevance, order)
    for column in (item, user):
        _same_kind(column, truth[column].dtype, recs[column].dtype)
    truth, recs = _same_user_type(truth, recs, user)
    npartitions = npartitions or max(truth.npartitions, recs.npartitions)
    cut = k is not None or not any(r.bare for r in requests)  # K cuts a list
    if k is None:
        if any(r.bare for r in requests) and order != score:
            # K is the longest list, which ends at the largest rank: one more pass
            k = rank_depth(dask.compute(recs[order].max())[0])
        elif any(r.bare for r in requests):
            # K is the longest list: one more pass, shuffling the user column only
            users = recs[[user]].shuffle(on=user, npartitions=npartitions)
            longest = int(dask.compute(users.map_partitions(_longest, user,
                                                            meta=(None, "int64")).max())[0])
            k = max(longest, 1)  # no list at all: K = 1, every list empty
        else:
            k = max(r.k for r in requests)
    k = check_int(k, "k")
    tie_order = partition_ties(labels, convention, dialect, cut, order == score,
                               lambda: _tied(recs, user, score))
    on = _KEY if _KEY in truth.columns else user
    truth = truth.shuffle(on=on, npartitions=npartitions)
    recs = recs.shuffle(on=on, npartitions=npartitions)
    specs = parse_requests(labels, k, convention, dialect)  # cutoffs > k fail here
    if n_items is None and any(s.name == "auc" for s in specs):
        n_items = int(dask.compute(_distinct_items(truth, recs, item))[0])

    names = dict(user=user, item=item, relevance=relevance, score=score, rank=rank,
                 ties=tie_order)
    # int64 ids in one table and uint64 in the other, past both: Python ints
    ids = pd.Series(dtype=object) if on == _KEY else truth[user]._meta.iloc[:0]
    meta = pd.DataFrame({user: ids,
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
    sums_meta = pd.DataFrame({c: pd.Series(dtype="float64") for c in sum_columns(labels)})
    sums = values.map_partitions(_partial_sums, labels, convention, dialect, k,
                                 meta=sums_meta)
    rows = dask.compute(sums)[0]  # one row per partition: added exactly, in any order
    totals = {c: math.fsum(rows[c].tolist()) for c in rows.columns}
    means, common, users_of = means_of_sums(totals, labels, k, convention, dialect)
    return DaskResult(means, totals["counted"], totals["rows"], common,
                      values if per_user else None, users_of)


def _check_frame(frame: Any, name: str, needed: Iterable[str]) -> None:
    if not hasattr(frame, "npartitions") or not hasattr(frame, "shuffle"):
        raise TypeError(f"{name} must be a dask DataFrame; got {type(frame).__name__}. For "
                        f"in-memory tables use fastrank.io.from_tables")
    check_columns(frame.columns, name, needed)


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
    # a categorical column beside another dtype (or other categories): its categories'
    # values, as a cast to the other's categories would turn the ids outside them into NA
    if isinstance(a, pd.CategoricalDtype):
        truth = truth.assign(**{user: truth[user].astype(a.categories.dtype)})
        a = truth[user].dtype
    if isinstance(b, pd.CategoricalDtype):
        recs = recs.assign(**{user: recs[user].astype(b.categories.dtype)})
        b = recs[user].dtype
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
            else:  # no one integer type holds them: each table keeps its own, and both
                # go to partitions by their bits as uint64 (equal ids, equal bits; ids
                # whose bits agree only share a partition), where from_tables matches
                # int64 and uint64 ids exactly
                key = (_KEY, "uint64")  # the meta: no sample run of _bits on NA
                return (truth.assign(**{_KEY: truth[user].map_partitions(_bits, meta=key)}),
                        recs.assign(**{_KEY: recs[user].map_partitions(_bits, meta=key)}))
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


# the column by which both tables go to partitions where their user ids have no one dtype
_KEY = "__fastrank_partition_key"


def _bits(ids: Any) -> Any:
    """Integer ids as the uint64 of their 64 bits (int64's two's complement)."""
    import pandas as pd

    values = ids.to_numpy()
    return pd.Series(values.view(np.uint64) if values.dtype == np.int64 else
                     values.astype(np.uint64), index=ids.index, name=_KEY)


def _tied(recs: DataFrame, user: Any, score: Any) -> bool:
    """Does a user have two recommendations of equal score? (One pass over the recs.)"""
    import dask

    return bool(dask.compute(recs.groupby([user, score]).size().max())[0] > 1)


def _longest(frame: DataFrame, user: Any) -> int:
    return int(frame.groupby(user).size().max()) if len(frame) else 0


def _distinct_items(truth: DataFrame, recs: DataFrame, item: Any) -> Any:
    import dask.dataframe as dd

    both = dd.concat([truth[item].to_frame(), recs[item].to_frame()])
    return both[item].nunique()


def _evaluate_partition(truth: DataFrame, recs: DataFrame, *, labels: Sequence[str],
                        user_dtype: Any, **how: Any) -> DataFrame:
    """One partition pair: its users' values as a pandas frame."""
    import pandas as pd

    users, res = evaluate_partition(truth, recs, labels=labels, **how)
    return pd.DataFrame({how["names"]["user"]: pd.Series(users).astype(user_dtype),
                         **per_user_columns(res, labels)})


def _partial_sums(values: DataFrame, labels: Sequence[str], convention: str,
                  dialect: str | None, k: int) -> DataFrame:
    """One row of sums over a partition's counted users."""
    import pandas as pd

    row = partial_sums(values, labels, convention, dialect, k)
    return pd.DataFrame({c: [v] for c, v in row.items()})
