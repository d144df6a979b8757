"""Data frames in and out: pandas, pyarrow or polars tables of judgments and of
recommendations to fastrank's arrays, and per-user results back as a table keyed by the
original user ids.

    data = fastrank.io.from_tables(truth_df, recs_df)   # (user, item, relevance), (user, item,
                                                        # score) or (user, rank, item)
    res = data.evaluate(["ndcg@10", "recall@10"])       # = fr.evaluate(data.truth, data.topk, ...)
    data.per_user(res)                                  # a table of truth_df's library

Ids may be of any type that sorts (integers, strings, dates, ...), as long as a column has
the same kind of id in both tables. A dict of equal-length arrays is accepted as a table too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .._types import AnyArray, DataFrame, FloatArray, IntArray, SparseMatrix
from ..engine import parse_requests
from ..evaluate_topk import evaluate
from ..result import Result
from ..validation import LARGEST_INT, check_int
from .lists import by_rank, by_score, pack
from .ties import check_ties, ties_option, wanted
from .trec_files import ESCAPED_BYTE

LIBRARIES = ("pandas", "pyarrow", "polars", "dict")
_TABLE_TYPES = {"pandas": ("DataFrame",), "pyarrow": ("Table", "RecordBatch"),
                "polars": ("DataFrame",)}


def lists_k(width: int, metrics: Any, convention: Any, dialect: Any) -> int | None:
    """K for lists of a table, of which the longest has `width` items (at least 1: the
    packed lists' columns), where k is not given: the largest cutoff asked for when every
    metric names one and it is past the longest list (lists end early; as fastrank.dask
    chooses K, so that a table's evaluation does not depend on how long its longest list
    happens to be), else None (K = width). Labels that do not parse are left to
    evaluate's own error."""
    try:
        requests = parse_requests(metrics, LARGEST_INT,
                                  "recsys" if convention is None else convention, dialect)
    except (ValueError, TypeError):
        return None
    if not requests or any(r.bare for r in requests):
        return None
    largest = max(r.k for r in requests)
    return largest if largest > width else None


@dataclass(frozen=True)
class Tables:
    """Judgments and recommendations from two tables, as fastrank's arrays.

    Row r of `truth` and of `topk` is the user `users[r]`; column j of `truth` (and the id j
    in `topk`) is the item `items[j]`. Both id arrays are sorted. The rows are every user
    of either table: a user with judgments and no recommendations has an empty list (it
    scores 0 where the convention counts it); a user with recommendations and no
    judgments has an empty truth row (not counted by recsys or implicit, nor by trec).
    """

    truth: SparseMatrix  # a scipy.sparse csr_array
    topk: IntArray
    users: AnyArray
    items: AnyArray
    library: str
    user_column: str
    without_recommendations: int
    without_truth: int
    k: int | None = None  # the list length asked for (from_tables' k), if any
    ties: str = "trec_eval"  # how equal scores were ordered (from_tables' ties)
    tied: bool = False  # whether a user's list had two equal scores

    def evaluate(self, metrics: str | Iterable[str], **options: Any) -> Result:
        """`fr.evaluate(self.truth, self.topk, metrics, **options)`, with k= the k given
        to from_tables (lists shorter than it end early), unless options say otherwise.
        Where the lists were built from tied scores, a name whose tool orders them
        otherwise than `ties` warns (fastrank.dialects.TieOrder)."""
        if options.get("k") is None:  # k=None is k not given
            options.pop("k", None)
        if self.k is not None:
            options.setdefault("k", self.k)
        elif "k" not in options:
            options["k"] = lists_k(self.topk.shape[1], metrics, options.get("convention"),
                                   options.get("dialect"))
        if self.tied:
            convention, dialect = options.get("convention"), options.get("dialect")
            check_ties(wanted(metrics, convention, dialect, cut=self.k is not None),
                       self.ties, "Pass {orders} to fastrank.io.from_tables for their "
                       "tools' order, evaluating those names on their own")
        return evaluate(self.truth, self.topk, metrics, **options)

    def per_user(self, result: Result, *, library: str | None = None) -> DataFrame:
        """Per-user values of `result` as a table keyed by the original user ids, in the
        library of the truth table unless `library` says otherwise."""
        return per_user_table(result, self.users, library=library or self.library,
                              user_column=self.user_column)


def from_tables(truth: DataFrame | Mapping[Any, ArrayLike],
                recs: DataFrame | Mapping[Any, ArrayLike], *, k: int | None = None,
                user: Any = "user", item: Any = "item", relevance: Any = "relevance",
                score: Any = "score", rank: Any = "rank", ties: str = "trec_eval") -> Tables:
    """Judgments and recommendations from tables to `Tables` (CSR truth and top-K ids).

    Parameters
    ----------
    truth : pandas / pyarrow / polars table, or dict of arrays
        One row per judged (user, item) pair with its graded relevance. A pair given twice
        has its values summed, as fastrank does with duplicate CSR entries. With
        `relevance=None` every listed pair has relevance 1.
    recs : table of the same kinds
        One row per recommended (user, item) pair, with a `score` column (higher is better;
        equal scores ordered as `ties` says) or, if there is no score column, a `rank`
        column. A rank is a position, as RecTools and every tool
        that takes ranks read it: rank r is the r-th slot of the user's list, and a
        skipped rank is an empty slot (a list with ranks 1 and 9 has 7 empty slots
        between its two items). Ranks are whole numbers from 1; a rank given twice to one
        user is an error, as is a list longer than 2**26 slots in all and 16 per
        recommendation (cut it with k). With both columns the score orders the lists and
        the ranks are not read (pass score=None to order by rank). An item recommended
        twice to a user stays in the list: fastrank counts its first occurrence only.
    k : int, optional
        Cut every list at k (trec_eval's -M; a rank past k is cut). Default: the longest
        list (by rank: the largest rank).
    user, item, relevance, score, rank : str
        Column names. A label equal to the name is used, else the one label whose text is
        the name's (a frame with columns [0, 1, 2] answers to user=0 and user="0"); a
        name that matches two columns is an error, as are columns of a dict of unequal
        lengths.
    ties : {"trec_eval", "docno", "file"}
        The order of a user's items of equal score: "trec_eval" (the default), by item id
        descending compared as text, as trec_eval compares document ids ("9" before
        "10", so a table and a TREC run agree); "docno", ascending (ir-measures' RR@k,
        Judged and diversity names); "file", in the table's row order (ir-measures' RBP).
        Evaluating a tool's name that orders them otherwise warns (TieOrder) where a list
        has tied scores.
    """
    library = _library(truth, "truth")
    _library(recs, "recs")
    if k is not None:
        k = check_int(k, "k")
    ties = ties_option(ties)
    distinct_columns(user, item, relevance, score if _has(recs, score) else rank)
    t_users = id_column(truth, user, "truth", "user")
    t_items = id_column(truth, item, "truth", "item")
    if relevance is None:
        values = np.ones(t_users.shape[0])
        _same_length("truth", [(user, t_users), (item, t_items)])
    else:
        values = number_column(truth, relevance, "truth", "relevance")
        _same_length("truth", [(user, t_users), (item, t_items), (relevance, values)])
    r_users = id_column(recs, user, "recs", "user")
    r_items = id_column(recs, item, "recs", "item")
    scored = _has(recs, score)
    if scored:
        key = number_column(recs, score, "recs", "score", keep_integers=True)
    elif _has(recs, rank):
        key = number_column(recs, rank, "recs", "rank", keep_integers=True)
    else:
        raise ValueError(
            f"recs has neither a {score!r} nor a {rank!r} column, so its order is unknown; "
            f"its columns are {_labels(recs)!r}. Pass score= or rank= to name the column")
    _same_length("recs", [(user, r_users), (item, r_items), (score if scored else rank, key)])

    users, (t_rows, r_rows) = _vocabulary(user, t_users, r_users)
    items, (t_cols, r_cols) = _vocabulary(item, t_items, r_items)
    n_users, n_items = users.shape[0], items.shape[0]
    matrix = sp.csr_array((values, (t_rows, t_cols)), shape=(n_users, n_items))
    matrix.sum_duplicates()
    if relevance is None:  # a pair listed twice is relevant, as once: 1, not 2
        matrix.data[:] = 1.0
    if scored:
        topk, tied = lists(r_rows, r_cols, n_users, k, score=key, item_ids=items, ties=ties)
    else:
        topk, tied = lists(r_rows, r_cols, n_users, k, item_ids=items, rank=key,
                           row_ids=users, column=rank)
    return Tables(truth=matrix, topk=topk, users=users, items=items, library=library,
                  user_column=user, k=k, ties=ties, tied=tied, **one_sided(matrix, topk))


def distinct_columns(user: Any, item: Any, relevance: Any, order: Any) -> None:
    """user= and item= name two columns, and neither is truth's relevance or the recs'
    score or rank: one column read as two (item="user") would make every user's list
    recommend the user's own id."""
    for table, names in (("truth", [("user=", user), ("item=", item),
                                    ("relevance=", relevance)]),
                         ("recs", [("user=", user), ("item=", item),
                                   ("score= (or rank=)", order)])):
        named = [(role, column) for role, column in names if column is not None]
        for j, (role, column) in enumerate(named):
            for other, same in named[:j]:
                if same == column:
                    raise ValueError(
                        f"{other} and {role} both name the column {column!r} of {table}; "
                        f"each must name a column of its own")


def one_sided(truth: SparseMatrix, topk: ArrayLike) -> dict[str, int]:
    """{without_recommendations, without_truth}: rows with stored truth entries and an
    empty list, and rows with a list and no stored truth entry (rows of both align)."""
    judged = np.diff(truth.indptr) > 0
    listed = (np.asarray(topk) >= 0).any(axis=1)
    return {"without_recommendations": int(np.count_nonzero(judged & ~listed)),
            "without_truth": int(np.count_nonzero(listed & ~judged))}


def lists(rows: ArrayLike, items: ArrayLike, n_rows: int, k: int | None = None, *,
          item_ids: AnyArray, score: AnyArray | None = None, rank: AnyArray | None = None,
          row_ids: AnyArray | None = None, column: Any = "rank", table: str = "recs",
          ties: str = "trec_eval") -> tuple[IntArray, bool]:
    """(topk, tied): top-K ids (n_rows, width), padded with -1, from one record per
    recommended item (`items` are codes into the sorted `item_ids`), and whether a row
    had two equal scores. Ordered by score descending (equal scores as `ties` says:
    lists.by_score), or placed by rank: rank r is slot r - 1 of the row, a skipped rank
    an empty slot, and the width the largest rank (cut at k). Errors name the rank
    `column` of `table` and the user (`row_ids[row]`, or the row)."""
    rows = np.asarray(rows, np.int64)
    items = np.asarray(items, np.int64)
    if score is not None:
        order, tied = by_score(rows, items, order_key(score), n_rows, item_ids, ties)
        topk, _ = pack(rows[order], items[order], n_rows, k)
        return topk, tied
    rank = np.asarray(rank)
    where = Where(rows, row_ids, rank, column, table)
    slots = rank_slots(rank, where)
    _, repeated = by_rank(rows, order_key(slots), n_rows)
    if repeated >= 0:
        raise ValueError(
            f"{table} column {column!r} gives rank {where.value(repeated)} twice for user "
            f"{where.user(repeated)!r}, so that user's order is ambiguous; give each of a "
            f"user's items its own rank")
    return placed(rows, slots, items, n_rows, k, where), False


# A table's ranks may ask for a padded top-K array of at most this many slots (512 MiB of
# int64), or of 16 per recommendation where that is more: beyond, the ranks are refused
RANK_SLOTS = 2 ** 26


@dataclass(frozen=True)
class Where:
    """What an error about a record of a rank column names: its user and its value."""

    rows: IntArray
    row_ids: AnyArray | None
    rank: AnyArray
    column: Any
    table: str

    def user(self, record: int) -> Any:
        row = self.rows[record]
        who = row if self.row_ids is None else self.row_ids[row]
        return who.item() if isinstance(who, np.generic) else who

    def value(self, record: int) -> str:
        """The rank as the table holds it; a float's whole number as an integer (CSV and
        Spark give ranks as floats)."""
        value = self.rank[record]
        if not isinstance(value, (float, np.floating)):
            return str(value)
        return str(int(value)) if abs(value) < 1e16 and value == np.floor(value) else \
            f"{value:g}"


def rank_slots(rank: AnyArray, where: Where) -> IntArray:
    """The slot (0-based, int64) of each rank: rank r is slot r - 1. A rank is a whole
    number from 1 (1.0 is 1, as CSV and Spark give integers); ranks past 2**62 (past any
    list's length) become 2**62."""
    if rank.dtype.kind == "f":
        whole = np.isfinite(rank) & (np.floor(rank) == rank)
        bad = np.flatnonzero(~whole)
        if bad.size:
            raise ValueError(
                f"{where.table} column {where.column!r} holds {where.value(bad[0])} for user "
                f"{where.user(bad[0])!r}, which is not a whole number: a rank is a position "
                f"in the user's list (rank r is slot r; a skipped rank is an empty slot); "
                f"give whole ranks 1, 2, ..., or pass a column that only orders the list as "
                f"score= (higher first)")
    low = np.flatnonzero(rank < 1)
    if low.size:
        raise ValueError(
            f"{where.table} column {where.column!r} holds rank {where.value(low[0])} for user "
            f"{where.user(low[0])!r}; ranks are positions counted from 1 (the top of the "
            f"list): add 1 to ranks counted from 0")
    if rank.dtype.kind in "fu":  # a rank past 2**62 (past any list) as 2**62, in int64
        rank = np.minimum(rank, rank.dtype.type(LARGEST_INT))
    slots: IntArray = rank.astype(np.int64) - 1
    return slots


def placed(rows: IntArray, slots: IntArray, items: IntArray, n_rows: int, depth: int | None,
           where: Where) -> IntArray:
    """(n_rows, width) int64 ids, -1 where no record is: each record's item at its row and
    slot (no two records share one), the slots past `depth` cut. width is the largest slot
    kept + 1; lists of more than RANK_SLOTS slots, and more than 16 per record kept, are
    refused (a rank of 10**9 would ask for 10**9 slots for every user)."""
    kept = slots < depth if depth is not None else np.ones(slots.shape[0], bool)
    n_kept = int(np.count_nonzero(kept))
    last = int(np.argmax(np.where(kept, slots, -1))) if n_kept else -1
    width = int(slots[last]) + 1 if n_kept else 0
    if n_rows * width > max(RANK_SLOTS, 16 * n_kept):
        raise ValueError(
            f"{where.table} column {where.column!r} gives user {where.user(last)!r} rank "
            f"{where.value(last)}: a rank is a position, so each of the {n_rows:,} lists "
            f"would be {where.value(last)} slots long, for {n_kept:,} recommendations "
            f"(fastrank pads lists to at most 2**26 slots in all, or 16 per "
            f"recommendation); pass k (-k on the command line) to cut the lists at the "
            f"depth evaluated, or number each user's items 1, 2, ... if the ranks only "
            f"order them")
    topk = np.full((n_rows, max(width, 1)), -1, np.int64)
    topk[rows[kept], slots[kept]] = items[kept]
    return topk


def order_key(values: ArrayLike) -> FloatArray:
    """float64 values that order as `values` do: integers beyond 2**53 (where float64
    would round distinct values into ties) become their dense ranks."""
    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.size and \
            max(abs(int(values.min())), abs(int(values.max()))) > 2 ** 53:
        return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.float64)
    return values.astype(np.float64)


def per_user_table(result: Result, user_ids: ArrayLike, *, library: str = "pandas",
                   user_column: Any = "user") -> DataFrame:
    """Per-user values of a Result as a table keyed by user id: `user_ids[r]` names truth row
    r. pandas: a DataFrame indexed by user; pyarrow and polars: the user column first;
    "dict": a dict of numpy arrays. Catalogue-level metrics (coverage, gini) have no column."""
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {', '.join(map(repr, LIBRARIES))}; "
                         f"got {library!r}")
    if not isinstance(result, Result):
        raise TypeError(f"result must be a fastrank Result (what fastrank.evaluate returns); "
                        f"got {type(result).__name__}")
    result.require_per_user("a per-user table")
    ids = _user_ids(result, user_ids)
    values = {name: np.array(result.per_user(name)) for name in result.metrics
              if name not in result.catalogue}
    if library == "pandas":
        import pandas as pd

        return pd.DataFrame(values, index=pd.Index(ids, name=user_column))
    if library != "dict":
        user_column = str(user_column)  # pyarrow and polars name columns by text
    if user_column in values:
        raise ValueError(
            f"user_column {user_column!r} is also the name of a metric of the result, whose "
            f"column would replace the user ids; pass another user_column")
    columns = {user_column: ids, **values}
    if library == "pyarrow":
        import pyarrow as pa

        return pa.table({name: arrow_column(values, pa) for name, values in columns.items()})
    if library == "polars":
        import polars as pl

        return pl.DataFrame(columns)
    return columns


def arrow_column(values: AnyArray, pa: Any) -> Any:
    """A column as an Arrow array: integers past int64 and uint64 together (ids matched
    exactly) as decimals of 20 digits, text with bytes that are not UTF-8 as binary."""
    values = np.asarray(values)
    if values.dtype != object:
        return values
    items = values.tolist()
    if items and all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        if not all(-2**63 <= v < 2**63 for v in items) and \
                not all(0 <= v < 2**64 for v in items):
            from decimal import Decimal
            return pa.array([Decimal(v) for v in items], type=pa.decimal128(20, 0))
    if any(isinstance(v, str) and not v.isascii() and ESCAPED_BYTE.search(v) for v in items):
        return pa.array([v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
                         for v in items], type=pa.binary())
    return values


def _user_ids(result: Result, user_ids: ArrayLike) -> AnyArray:
    """The id of each row of `result`: user_ids[r] names truth row r, so user_ids needs an
    id for every truth row the result has values for."""
    try:
        ids = np.asarray(user_ids)
    except ValueError:
        raise ValueError("user_ids is ragged; pass a 1-D array with one id per truth row") \
            from None
    if ids.ndim != 1:
        raise ValueError(f"user_ids must be 1-D, one id per truth row; got shape {ids.shape}")
    rows: IntArray = np.asarray(result.users)
    if rows.size and int(rows.max()) >= ids.shape[0]:
        raise ValueError(
            f"user_ids has {ids.shape[0]} ids but the result has values for truth row "
            f"{int(rows.max())}, so it needs at least {int(rows.max()) + 1}; pass one id per "
            f"truth row (Tables.users, or the ids the truth rows were built from)")
    return ids[rows]


def _library(table: object, name: str) -> str:
    """The library of a table ('pandas', 'pyarrow', 'polars' or 'dict'), or a TypeError
    naming the argument: a Series, an Array or a lazy frame is not a table."""
    for library, kinds in _TABLE_TYPES.items():
        module = sys.modules.get(library)  # a table of a library means it is imported
        if module is not None and isinstance(table, tuple(getattr(module, k) for k in kinds)):
            return library
    if isinstance(table, Mapping):
        return "dict"
    lazy = type(table).__name__ == "LazyFrame"  # polars' plan of a table: not one yet
    raise TypeError(
        f"{name} must be a pandas, pyarrow or polars table, or a dict of columns; got "
        f"{type(table).__name__}" + ("; call .collect() on it first" if lazy else ""))


def _labels(table: Any) -> list[Any]:
    """The column labels of a table as its library holds them (not necessarily str)."""
    if isinstance(table, Mapping):
        return list(table.keys())
    if hasattr(table, "column_names"):  # pyarrow
        return list(table.column_names)
    columns = table.columns
    return columns.tolist() if hasattr(columns, "tolist") else list(columns)


def _matches(labels: Sequence[Any], column: Any) -> list[int]:
    """Positions of the labels equal to `column`, else of those whose text is its text
    (a frame with integer labels answers to 0 and to "0")."""
    same = [j for j, label in enumerate(labels) if _equal(label, column)]
    if same or column is None:  # None (no such column) never matches the text 'None'
        return same
    return [j for j, label in enumerate(labels) if str(label) == str(column)]


def _equal(label: Any, column: Any) -> bool:
    try:
        return bool(label == column)
    except (TypeError, ValueError):  # labels that compare element-wise or not at all
        return False


def _has(table: Any, column: Any) -> bool:
    return bool(_matches(_labels(table), column))


def _position(table: Any, column: Any, name: str, role: str) -> int:
    """The position of `column` among the table's columns; an error names a missing,
    repeated or ambiguous column."""
    labels = _labels(table)
    found = _matches(labels, column)
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(
            f"{name} has no column {column!r}; its columns are {labels!r}. Rename the "
            f"column, or pass {role}= with its name"
            + (" (or relevance=None: every listed pair is relevant, as RecTools reads its "
               "interactions whatever their weight)" if role == "relevance" else ""))
    same = [labels[j] for j in found]
    if len({repr(label) for label in same}) == 1:
        raise ValueError(
            f"{name} has {len(found)} columns named {same[0]!r} (positions "
            f"{', '.join(map(str, found))}), so {role}= is ambiguous; drop or rename the "
            f"copies")
    raise ValueError(
        f"{name} has columns {same!r}, all written {str(column)!r}, so {role}={column!r} is "
        f"ambiguous; pass {role}= with the exact label")


def _column(table: Any, column: Any, name: str, role: str, ids: bool = False) -> AnyArray:
    """One column as a numpy array; a missing column or a null names the column. A dict's
    list of `ids` of several Python types stays objects, whose kinds `_ids` checks: numpy
    would make [1, "1"] text and [1, 1.0] or [True, 1] numbers, one id each."""
    j = _position(table, column, name, role)
    label = _labels(table)[j]
    library = _library(table, name)
    if library != "dict":
        try:
            nulls, values = _library_column(table, library, j)
        except Exception as err:  # noqa: BLE001 - each library raises its own errors here
            # a type numpy has no counterpart for: Int128, a struct, ...
            raise TypeError(
                f"{name} column {label!r} cannot be read as a numpy array ({err}); cast it "
                f"to a plain type first, e.g. int64 or str") from None
    else:
        try:
            raw = table[label]
            mixed = ids and isinstance(raw, (list, tuple)) and len({type(v) for v in raw}) > 1 \
                and not any(isinstance(v, (list, tuple, np.ndarray)) for v in raw)  # ragged
            values = np.array(raw, dtype=object) if mixed else np.asarray(raw)
        except ValueError:
            raise ValueError(f"{name} column {label!r} is ragged; give it one value per "
                             f"row") from None
        nulls = int(sum(map(_missing, values.tolist()))) if values.dtype == object else 0
    if values.ndim != 1:
        raise ValueError(f"{name} column {label!r} must be 1-D; got shape {values.shape}")
    if nulls:
        raise ValueError(
            f"{name} column {label!r} has {nulls} missing values; drop or fill those rows "
            f"first")
    return values


def _library_column(table: Any, library: str, j: int) -> tuple[int, AnyArray]:
    """(number of nulls, numpy values) of column j of a pandas, pyarrow or polars table."""
    if library == "pandas":
        series = table.iloc[:, j]
        return int(series.isna().sum()), series.to_numpy()
    if library == "pyarrow":
        chunked = table.column(j)
        return chunked.null_count, chunked.to_numpy(zero_copy_only=False)
    series = table.to_series(j)
    return series.null_count(), series.to_numpy()


def _missing(value: object) -> bool:
    """None, pandas.NA or NaT in an object column (NaN is checked by the column's use)."""
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def _same_length(name: str, columns: Sequence[tuple[Any, AnyArray]]) -> None:
    """Every (label, values) pair of a table's used columns has one length (a dict of
    columns can be ragged): an error names the columns and their lengths."""
    if len({values.shape[0] for _, values in columns}) > 1:
        lengths = ", ".join(f"{label!r} has {values.shape[0]}" for label, values in columns)
        raise ValueError(
            f"{name} columns differ in length: {lengths} values; give every column one "
            f"value per row")


def id_column(table: Any, column: Any, name: str, role: str) -> AnyArray:
    values = _column(table, column, name, role, ids=True)
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(f"{name} column {column!r} has NaN ids; drop those rows first")
    if values.dtype.kind in "mM" and np.isnat(values).any():
        raise ValueError(f"{name} column {column!r} has NaT ids; drop those rows first")
    return values


def number_column(table: Any, column: Any, name: str, role: str, *,
                  keep_integers: bool = False) -> AnyArray:
    """A numeric column as float64 (integers kept as they are with keep_integers: a score
    or rank beyond 2**53 would round into a false tie in float64)."""
    values = _column(table, column, name, role)
    if values.dtype == object and values.size == 0:  # pandas' empty frame: no value to type
        values = values.astype(np.float64)
    if values.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} column {column!r} must hold numbers; got dtype {values.dtype}. Convert "
            f"it, e.g. with astype(float)")
    if keep_integers and values.dtype.kind == "b":  # True/False orders no list
        raise TypeError(
            f"{name} column {column!r} ({role}) holds True/False, which orders no list; "
            f"give each recommendation its {role} as a number")
    if keep_integers and values.dtype.kind in "iu":
        return values
    values = values.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ValueError(
            f"{name} column {column!r} has {bad.size} NaN or infinite values (first at row "
            f"{bad[0]}); drop or fill those rows first")
    return values


def _vocabulary(column: Any, *arrays: AnyArray) -> tuple[AnyArray, list[IntArray]]:
    """(sorted distinct ids of all arrays, the code of every id in each array). The arrays
    are the column in truth and in recs: ids of different types are never the same id."""
    arrays = [_ids(a, column, role) for a, role in zip(arrays, _ROLES)]  # type: ignore[assignment]
    kinds = [(role, _kind(a), a.dtype) for a, role in zip(arrays, _ROLES) if a.size]
    if len({kind for _, kind, _ in kinds}) > 1:
        described = " and ".join(f"{kind} in {role} ({dtype})" for role, kind, dtype in kinds)
        raise TypeError(
            f"the {column!r} ids are {described}; ids of different types never name the "
            f"same {column}, so give the column one type in both tables, e.g. with "
            f"astype('int64') or astype(str)")
    if kinds and kinds[0][1] == "integer":
        arrays = _same_integers(arrays)  # type: ignore[assignment]
    joined = np.concatenate(arrays)
    bounds = np.cumsum([a.shape[0] for a in arrays])[:-1]
    if joined.dtype.kind in "iu" and joined.size:
        lo, hi = int(joined.min()), int(joined.max())
        if hi - lo <= 4 * joined.size + 1024:  # dense ids: no sort, memory ~ the input's
            unsigned = joined.dtype.kind == "u"
            if unsigned:  # ids >= lo: no wrap in their own dtype (and uint64 past int64)
                offset = (joined - joined.dtype.type(lo)).astype(np.int64)
            else:  # in int64: the span of int8 or int16 ids need not fit their dtype
                offset = joined.astype(np.int64) - lo
            present = np.zeros(hi - lo + 1, bool)
            present[offset] = True
            found = np.flatnonzero(present)
            vocab = found.astype(joined.dtype) + joined.dtype.type(lo) if unsigned else \
                (found + lo).astype(joined.dtype)
            codes = (np.cumsum(present, dtype=np.int64) - 1)[offset]
            return vocab, np.split(codes, bounds)
    try:
        vocab, codes = np.unique(joined, return_inverse=True)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"the {column!r} ids cannot be sorted ({err}); give them one type, e.g. all "
            f"strings or all integers") from None
    return vocab, np.split(codes.reshape(-1).astype(np.int64), bounds)


_ROLES = ("truth", "recs")


_KINDS = {"i": "integer", "u": "integer", "f": "float", "b": "boolean", "U": "text",
          "S": "bytes", "M": "datetime", "m": "timedelta"}


def dtype_kind(dtype: np.dtype[Any]) -> str:
    """The kind of id a numpy dtype (not object) holds: ids of two kinds are never equal."""
    return _KINDS.get(dtype.kind, str(dtype))


def _kind(ids: AnyArray) -> str:
    """The kind of id an array holds (after `_ids`)."""
    if ids.dtype == object:
        return _object_kind(type(ids[0])) if ids.size else "object"
    return dtype_kind(ids.dtype)


def _object_kind(kind: type) -> str:
    if issubclass(kind, (bool, np.bool_)):
        return "boolean"
    if issubclass(kind, (int, np.integer)):
        return "integer"
    if issubclass(kind, (float, np.floating)):
        return "float"
    if issubclass(kind, str):
        return "text"
    return kind.__name__


def _ids(values: AnyArray, column: Any, role: str) -> AnyArray:
    """An id column with one numpy type: object columns of strings, integers or floats
    become str, int64 (Python ints when beyond int64) or float64 arrays; a column that
    mixes kinds of id is an error, since the mix would merge or split ids silently."""
    if values.dtype != object or not values.size:
        return values
    kinds = {_object_kind(t) for t in {type(v) for v in values.tolist()}}
    if len(kinds) > 1:
        raise TypeError(
            f"{role} column {column!r} mixes ids of kinds {', '.join(sorted(kinds))}; give "
            f"every id one type, e.g. with astype(str)")
    kind = kinds.pop()
    if kind == "text":
        return values.astype(str)  # sorts ~5x faster than objects
    if kind == "float":
        values = values.astype(np.float64)
        if np.isnan(values).any():
            raise ValueError(f"{role} column {column!r} has NaN ids; drop those rows first")
        return values
    if kind == "integer":
        try:
            return values.astype(np.int64)
        except OverflowError:
            return values  # beyond int64: Python ints, exact
    return values


def _same_integers(arrays: Sequence[AnyArray]) -> Sequence[AnyArray]:
    """Integer id arrays in one dtype that holds every value exactly (numpy would take
    int64 with uint64 to float64, where ids above 2**53 merge)."""
    if len({a.dtype for a in arrays}) == 1:
        return arrays
    if all(a.dtype != np.uint64 and a.dtype != object for a in arrays):
        return arrays  # numpy's common type (int64) holds them all
    values = [a for a in arrays if a.size]
    lo = min(int(a.min()) for a in values)
    hi = max(int(a.max()) for a in values)
    if lo >= np.iinfo(np.int64).min and hi <= np.iinfo(np.int64).max:
        return [a.astype(np.int64) for a in arrays]
    if lo >= 0 and hi <= np.iinfo(np.uint64).max:
        return [a.astype(np.uint64) for a in arrays]
    return [a.astype(object) for a in arrays]  # Python ints, exact
