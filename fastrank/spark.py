"""fastrank on Spark: evaluate tables that live in a Spark cluster, where they live.

    import fastrank.spark
    res = fastrank.spark.evaluate(truth_df, recs_df, ["ndcg@10", "recall@10"])
    res["ndcg@10"], res.n_users, res.per_user     # means, counts, a Spark DataFrame

The same evaluation as `fastrank.dask.evaluate`, on PySpark DataFrames:
1. Both tables become one of (user, item, value, listed) rows, truth's relevance or the
   recs' score (or rank) in `value`, hash-partitioned on the user: each partition holds
   every row of its users. This shuffle is the only time the data moves.
2. Each partition reaches Python once, as Arrow record batches (`mapInArrow`): one
   `from_tables` and one kernel call per partition (`fastrank.partitions`, shared with
   fastrank.dask), never one call per user.
3. Each partition yields one row of partial sums; the driver collects those rows (one per
   partition, 2 x 8 B per metric) and adds them exactly (`math.fsum`). With `per_user`
   the users' values are kept as a persisted Spark DataFrame; they never reach the driver.
Equal to `fastrank.io.from_tables(truth, recs, k=K).evaluate(metrics)` on the same data,
K as `evaluate` takes it (by default the largest cutoff asked for, where from_tables
takes the longest list): identical per-user values, means to 1e-12 (only the order of the
sums differs).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ._types import AnyArray, DataFrame

from .engine import parse_requests
from .io.tables import distinct_columns
from .partitions import (PartitionedResult, check_columns, check_counts, evaluate_partition,
                         list_metrics, means_of_sums, order_column, partial_sums,
                         partition_ties, per_user_columns, rank_depth, sum_columns)
from .result import Result
from .validation import check_bool, check_int

_T = TypeVar("_T")

# the shuffled table's columns: names of fastrank's own (Spark reads a dot in a column's
# name as a nested field, and refuses an unpaired backtick), the caller's in messages
_USER, _ITEM = "__fastrank_user__", "__fastrank_item__"
_VALUE, _LISTED = "__fastrank_value__", "__fastrank_listed__"


class SparkResult(PartitionedResult):
    """Means of a Spark evaluation (a read-only mapping metric -> mean) with counts, and
    the per-user values as a persisted Spark DataFrame (`per_user`: columns user, the
    metrics, n_relevant, counted; NaN where a user is not counted) when they were kept."""


def evaluate(truth: DataFrame, recs: DataFrame, metrics: str | Iterable[str], *,
             convention: str = "recsys", dialect: str | None = None, k: int | None = None,
             n_items: int | None = None, user: str = "user", item: str = "item",
             relevance: str | None = "relevance", score: str = "score", rank: str = "rank",
             npartitions: int | None = None, per_user: bool = True,
             n_threads: int | None = 1) -> SparkResult:
    """Evaluate Spark DataFrames of judgments and recommendations.

    Parameters
    ----------
    truth : pyspark.sql.DataFrame
        (user, item, relevance) rows, ids of any type (string, integer, long, ...), as for
        `fastrank.io.from_tables`. relevance=None: every listed pair has relevance 1.
    recs : pyspark.sql.DataFrame
        (user, item, score) rows, or (user, rank, item) without a score column. The score
        or rank travels as a double: integer scores beyond 2**53 would round.
    metrics : str or list of str
        Metrics of the lists and the truth alone (families ranking, counts and trec of
        `fastrank.METRICS`, any dialect), with or without @k.
    convention : {"recsys", "trec", "implicit"}
    dialect : str, optional
        As for `fr.evaluate`: read the labels as this tool writes them.
    k : int, optional
        The list length K: lists are cut at K, and a metric without @k means @K. By default
        K is the largest cutoff asked for, or, if a metric has none, the longest list (one
        more Spark job over the recs: pass k to save it); by rank, the largest rank (ranks
        are positions, as for `fastrank.io.from_tables`).
    n_items : int, optional
        The catalogue size that `auc` needs: by default the number of distinct items in
        both tables (one more Spark job), as in the local evaluation.
    user, item, relevance, score, rank : str
        Column names.
    npartitions : int, optional
        Partitions of the shuffle (default: Spark's spark.sql.shuffle.partitions). Each is
        evaluated in one Python call, so its rows must fit a Python worker's memory.
    per_user : bool
        Keep the per-user values as a persisted Spark DataFrame (`result.per_user`).
    n_threads : int
        Numba threads per Spark task (default 1: Spark's executor cores are the
        parallelism).

    Returns
    -------
    SparkResult
    """
    labels, requests = list_metrics(metrics, convention, dialect, "Spark")
    per_user = check_bool(per_user, "per_user")
    n_items, npartitions, n_threads = check_counts(n_items, npartitions, n_threads)
    for name, frame, needed in (("truth", truth, [user, item] + ([relevance] if relevance
                                                                  else [])),
                                ("recs", recs, [user, item])):
        _check_frame(frame, name, needed)
    order = order_column(recs.columns, score, rank)
    distinct_columns(user, item, relevance, order)
    _numbers(truth, relevance, "truth", "relevance")
    _numbers(recs, order, "recs", "score" if order == score else "rank")
    types = {column: _common_type(column, truth.schema[column].dataType,
                                  recs.schema[column].dataType) for column in (item, user)}
    both = _one_table(truth, recs, user, item, relevance, order, types)
    parts = both.repartition(npartitions, _USER) if npartitions else both.repartition(_USER)

    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType

    cut = k is not None or not any(r.bare for r in requests)  # K cuts a list
    if k is None:
        if any(r.bare for r in requests) and order != score:
            # K is the longest list, which ends at the largest rank: one more job
            k = rank_depth(_run(lambda: recs.agg(F.max(_col(order))).first()[0]))
        elif any(r.bare for r in requests):
            # K is the longest list: one more job, counting the rows of each user
            longest = _run(lambda: recs.groupBy(_col(user)).count().agg(
                F.max("count")).first()[0])
            k = max(int(longest or 0), 1)  # no list at all: K = 1, every list empty
        else:
            k = max(r.k for r in requests)
    k = check_int(k, "k")
    tie_order = partition_ties(labels, convention, dialect, cut, order == score,
                               lambda: _tied(recs, user, score))
    specs = parse_requests(labels, k, convention, dialect)  # cutoffs > k fail here
    if n_items is None and any(s.name == "auc" for s in specs):
        n_items = _run(lambda: both.select(_ITEM).distinct().count())

    how: dict[str, Any] = dict(
        labels=labels, convention=convention, dialect=dialect, k=k, n_items=n_items,
        n_threads=n_threads, names=dict(user=user, item=item, relevance=relevance,
                                        score=score, rank=rank, order=order, ties=tie_order))
    # inside, columns are named by position: Spark resolves a label such as
    # "iprec(recall=0.3)" as a nested field
    sums_schema = _positional([DoubleType()] * len(sum_columns(labels)))
    values = None
    if per_user:
        kept = parts.mapInArrow(functools.partial(_per_user_batches, **how), _positional(
            [types[user], *[DoubleType()] * len(labels), LongType(), BooleanType()])).persist()
        sums = kept.mapInArrow(functools.partial(_sums_of_values, labels=labels,
                                                 convention=convention, dialect=dialect, k=k),
                               sums_schema)
        values = kept.toDF(user, *labels, "n_relevant", "counted")
    else:
        sums = parts.mapInArrow(functools.partial(_sums_batches, **how), sums_schema)
    rows = _run(sums.collect)  # one small row per partition
    totals = {c: math.fsum(row[j] for row in rows) for j, c in enumerate(sum_columns(labels))}
    means, common, users_of = means_of_sums(totals, labels, k, convention, dialect)
    return SparkResult(means, totals["counted"], totals["rows"], common, values, users_of)


def _tied(recs: DataFrame, user: str, score: str) -> bool:
    """Does a user have two recommendations of equal score? (One more Spark job.)"""
    from pyspark.sql import functions as F

    most = _run(lambda: recs.groupBy(_col(user), _col(score)).count().agg(
        F.max("count")).first()[0])
    return int(most or 0) > 1


def _col(name: str) -> Any:
    """The column of this name: quoted, as Spark otherwise reads "a.b" as field b of a
    column a (and refuses a backtick)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _numbers(frame: Any, column: str | None, name: str, role: str) -> None:
    """Refuse a relevance, score or rank column that does not hold numbers (or booleans),
    as fastrank.io.from_tables does, rather than let Spark cast its text."""
    from pyspark.sql import types as T

    if column is None:
        return
    data_type = frame.schema[column].dataType
    if not isinstance(data_type, (T.NumericType, T.BooleanType)):
        raise TypeError(f"{name} column {column!r} ({role}) must hold numbers; got Spark "
                        f"type {data_type.simpleString()}. Cast it first, e.g. "
                        f"with .cast('double')")


def _positional(types: Iterable[Any]) -> Any:
    """A Spark schema of columns c0, c1, ... of these types."""
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f"c{j}", t) for j, t in enumerate(types)])


def _check_frame(frame: Any, name: str, needed: Iterable[str]) -> None:
    if not (hasattr(frame, "mapInArrow") and hasattr(frame, "schema")):
        raise TypeError(f"{name} must be a Spark DataFrame (pyspark.sql.DataFrame); got "
                        f"{type(frame).__name__}. For in-memory tables use "
                        f"fastrank.io.from_tables")
    check_columns(frame.columns, name, needed)


def _kind(data_type: Any) -> str:
    """The kind of id a Spark type holds: ids of two kinds are never equal."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.IntegralType):
        return "integer"
    if isinstance(data_type, (T.FloatType, T.DoubleType)):
        return "float"
    if isinstance(data_type, (T.StringType, T.VarcharType, T.CharType)):
        return "text"
    return data_type.simpleString()  # type: ignore[no-any-return]  # pyspark: Any


def _common_type(column: str, truth_type: Any, recs_type: Any) -> Any:
    """The one Spark type both tables' `column` is cast to, so that equal ids hash to the
    same partition (Spark hashes an int and a long of one value differently): long for
    integers, double for floats; ids of different kinds are refused."""
    from pyspark.sql import types as T

    if truth_type == recs_type:
        return truth_type
    kinds = (_kind(truth_type), _kind(recs_type))
    if kinds[0] != kinds[1]:
        raise TypeError(
            f"the {column!r} ids are {kinds[0]} in truth ({truth_type.simpleString()}) and "
            f"{kinds[1]} in recs ({recs_type.simpleString()}); ids of different types never "
            f"name the same {column}, so give the column one type in both tables, e.g. "
            f"with .cast('long') or .cast('string')")
    return {"integer": T.LongType(), "float": T.DoubleType(),
            "text": T.StringType()}.get(kinds[0], truth_type)


def _one_table(truth: DataFrame, recs: DataFrame, user: str, item: str, relevance: str | None,
               order: str, types: Mapping[str, Any]) -> DataFrame:
    """(user, item, value, listed) rows of both tables: truth's with its relevance (1 when
    relevance=None) and listed false, the recs' with their score or rank."""
    from pyspark.sql import functions as F

    def ids(frame: DataFrame) -> list[Any]:
        return [_col(user).cast(types[user]).alias(_USER),
                _col(item).cast(types[item]).alias(_ITEM)]

    value = _col(relevance).cast("double") if relevance else F.lit(1.0)
    return truth.select(*ids(truth), value.alias(_VALUE), F.lit(False).alias(_LISTED)) \
        .unionByName(recs.select(*ids(recs), _col(order).cast("double").alias(_VALUE),
                                 F.lit(True).alias(_LISTED)))


def _partition(batches: Iterable[Any], *, labels: Sequence[str], convention: str,
               dialect: str | None, k: int | None, n_items: int | None,
               n_threads: int | None, names: Mapping[str, Any]
               ) -> tuple[Any, AnyArray, Result] | None:
    """(user type, users, Result) of one partition's Arrow batches, or None if empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batches = list(batches)
    table = pa.Table.from_batches(batches) if batches else None
    if table is None or table.num_rows == 0:
        return None
    user, item, order = names["user"], names["item"], names["order"]
    listed = table.column(_LISTED)
    # each table's value column under its own name, so that errors name it
    truth = table.filter(pc.invert(listed)).select([_USER, _ITEM, _VALUE]) \
        .rename_columns([user, item, names["relevance"] or _VALUE])
    recs = table.filter(listed).select([_USER, _ITEM, _VALUE]).rename_columns(
        [user, item, order])
    by_rank = order != names["score"]  # ranks travel as doubles: from_tables reads them
    found = dict(user=user, item=item, relevance=names["relevance"],
                 score=None if by_rank else order, rank=order, ties=names["ties"])
    users, res = evaluate_partition(truth, recs, labels=labels, convention=convention,
                                    dialect=dialect, k=k, n_items=n_items, names=found,
                                    n_threads=n_threads)
    return table.schema.field(_USER).type, users, res


def _per_user_batches(batches: Iterable[Any], *, labels: Sequence[str],
                      names: Mapping[str, Any], **how: Any) -> Iterator[Any]:
    """mapInArrow: a partition's users and their values, one record batch."""
    import pyarrow as pa

    found = _partition(batches, labels=labels, names=names, **how)
    if found is None:
        return
    user_type, users, res = found
    columns = per_user_columns(res, labels)
    types = {**{label: pa.float64() for label in labels}, "n_relevant": pa.int64(),
             "counted": pa.bool_()}
    arrays = [pa.array(users).cast(user_type), *(pa.array(columns[c], types[c])
                                                  for c in columns)]
    yield pa.RecordBatch.from_arrays(arrays, names=[f"c{j}" for j in range(len(arrays))])


def _sums_batches(batches: Iterable[Any], *, labels: Sequence[str], convention: str,
                  dialect: str | None, k: int, **how: Any) -> Iterator[Any]:
    """mapInArrow: a partition's row of partial sums, its per-user values left behind."""
    found = _partition(batches, labels=labels, convention=convention, dialect=dialect, k=k,
                       **how)
    if found is not None:
        yield _sums_batch(per_user_columns(found[2], labels), labels, convention, dialect, k)


def _sums_of_values(batches: Iterable[Any], *, labels: Sequence[str], convention: str,
                    dialect: str | None, k: int) -> Iterator[Any]:
    """mapInArrow: the row of partial sums of a partition of kept per-user values."""
    import pyarrow as pa

    batches = list(batches)
    if batches and sum(b.num_rows for b in batches):
        table = pa.Table.from_batches(batches)
        columns = {c: table.column(j + 1).to_numpy()  # column 0 holds the users
                   for j, c in enumerate([*labels, "n_relevant", "counted"])}
        yield _sums_batch(columns, labels, convention, dialect, k)


def _sums_batch(columns: Mapping[str, Any], labels: Sequence[str], convention: str,
                dialect: str | None, k: int) -> Any:
    import pyarrow as pa

    row = partial_sums(columns, labels, convention, dialect, k)
    return pa.RecordBatch.from_arrays([pa.array([v], pa.float64()) for v in row.values()],
                                      names=[f"c{j}" for j in range(len(row))])


# the last "ValueError: ..." or "TypeError: ..." line of a Python worker's traceback
_WORKER_ERROR = re.compile(r"^(ValueError|TypeError): (.+)$", re.M)


def _run(action: Callable[[], _T]) -> _T:
    """Run a Spark action; a ValueError or TypeError raised in a Python worker (a bad id,
    a missing value) is raised again here as itself, its message unchanged."""
    try:
        return action()
    except Exception as exc:
        if type(exc).__name__ != "PythonException":
            raise
        found = _WORKER_ERROR.findall(str(exc))
        if not found:
            raise
        kind, message = found[-1]
        raise {"ValueError": ValueError, "TypeError": TypeError}[kind](message) from exc
