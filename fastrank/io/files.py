"""The files `fastrank evaluate` reads and writes.

Truth: a scipy.sparse `.npz` (users x items, relevance as values; `scipy.sparse.save_npz`)
or a table of `user,item,relevance`. Top-K: a `.npy` of item ids (users x K, row r is truth
row r, -1 pads) or a table of `user,item,score` (or `user,rank,item`). Tables are parquet
(`.parquet`, `.pq`; needs pyarrow) or CSV with a header line (`.csv`, `.tsv`, optionally
gzip-compressed). Ids in a table may be of any type; CSV ids are text, read as integers
when every id of that column in both files is a plain integer.
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .tables import from_tables, lists, number_column, one_sided
from .text import lines, parse_number

_KINDS = {".npz": "npz", ".npy": "npy", ".parquet": "parquet", ".pq": "parquet",
          ".csv": "csv", ".tsv": "csv"}
_NUMBERS = ("relevance", "score", "rank")


@dataclass(frozen=True)
class Inputs:
    """What `fastrank evaluate` evaluates: arrays, the id of each truth row, and counts."""

    truth: object
    topk: np.ndarray
    user_ids: np.ndarray
    without_recommendations: int
    without_truth: int


def _kind(path):
    """'npz', 'npy', 'parquet', 'csv' or None, from the file name (a trailing .gz is skipped)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return _KINDS.get(suffixes[-1] if suffixes else "")


def file_kind(path, role):
    """The kind of an input file (see `_kind`), checked against its role and existence."""
    kind = _kind(path)
    allowed = {"truth": ("npz", "parquet", "csv"), "topk": ("npy", "parquet", "csv")}[role]
    if kind not in allowed:
        names = {"npz": ".npz", "npy": ".npy", "parquet": ".parquet", "csv": ".csv/.tsv"}
        raise ValueError(
            f"--{role} {path}: cannot tell the format from the name; use one of "
            f"{', '.join(names[k] for k in allowed)}")
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file")
    return kind


def read_inputs(truth_path, topk_path, *, k=None):
    """Load `fastrank evaluate`'s two inputs as an `Inputs`."""
    t_kind, r_kind = file_kind(truth_path, "truth"), file_kind(topk_path, "topk")
    if t_kind != "npz":
        if r_kind == "npy":
            raise ValueError(
                f"--topk {topk_path}: a .npy top-K array is matched to truth by row number, "
                f"so --truth must be a .npz matrix; give the recommendations as a table "
                f"(user,item,score) instead")
        truth, recs = read_table(truth_path), read_table(topk_path)
        for column in ("user", "item"):
            _integer_ids(column, truth, recs)
        data = from_tables(truth, recs, k=k)
        return Inputs(data.truth, data.topk, data.users,
                      without_recommendations=data.without_recommendations,
                      without_truth=data.without_truth)
    truth = _load_npz(truth_path)
    n_users, n_items = truth.shape
    if r_kind == "npy":
        topk = _load_npy(topk_path)
        if k is not None:
            topk = topk[:, :k]
    else:
        recs = read_table(topk_path)
        rows = _positions(recs, "user", n_users, topk_path, "rows of the --truth matrix")
        items = _positions(recs, "item", n_items, topk_path, "columns of the --truth matrix")
        if "score" in recs:
            score = number_column(recs, "score", str(topk_path), "score")
            topk = lists(rows, items, n_users, k, item_ids=np.arange(n_items), score=score)
        elif "rank" in recs:
            rank = number_column(recs, "rank", str(topk_path), "rank")
            topk = lists(rows, items, n_users, k, item_ids=np.arange(n_items), rank=rank)
        else:
            raise ValueError(
                f"{topk_path}: neither a 'score' nor a 'rank' column, so the order of the "
                f"recommendations is unknown; its columns are {list(recs)}")
    if topk.shape[0] != n_users:  # evaluate names the mismatch
        return Inputs(truth, topk, np.arange(n_users), 0, 0)
    return Inputs(truth, topk, np.arange(n_users), **one_sided(sp.csr_array(truth), topk))


def read_table(path):
    """A parquet or CSV table as {column: numpy array}; CSV numbers (relevance, score,
    rank) are parsed, with errors naming the file, line and text; CSV ids stay text."""
    if _kind(path) != "parquet":
        return read_csv(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"{path}: reading parquet needs pyarrow: pip install pyarrow") \
            from None
    table = pq.read_table(path)
    columns = {}
    for name in table.column_names:
        if table.column(name).null_count:
            raise ValueError(f"{path}: column {name!r} has missing values; drop or fill "
                             f"those rows")
        columns[name] = table.column(name).to_numpy(zero_copy_only=False)
    return columns


def read_csv(path):
    """{column: array} of a CSV (or, for .tsv, tab-separated) file with a header line."""
    delimiter = "\t" if ".tsv" in [s.lower() for s in Path(path).suffixes] else ","
    records = lines(path)
    try:
        _, header = next(records)
    except StopIteration:
        raise ValueError(f"{path}: the file is empty; it needs a header line") from None
    names = _split(header, delimiter)
    columns = [[] for _ in names]
    numbers = [name in _NUMBERS for name in names]
    for number, line in records:
        fields = _split(line, delimiter)
        if len(fields) != len(names):
            raise ValueError(
                f"{path}:{number}: {len(fields)} fields where the header has {len(names)} "
                f"({','.join(names)}) in line {line.rstrip()!r}")
        for column, field, numeric, name in zip(columns, fields, numbers, names):
            column.append(parse_number(field, path, number, line, name) if numeric else field)
    return {name: np.array(column, dtype=np.float64 if numeric else str)
            for name, column, numeric in zip(names, columns, numbers)}


def write_per_user(path, table):
    """Write {column: array} to `path`: parquet by its suffix (.parquet, .pq), else CSV with
    values printed exactly (repr) and an empty field where a user is not counted."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(table), path)
        return
    names = list(table)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        columns = [table[name].tolist() for name in names]
        for row in zip(*columns):
            writer.writerow(["" if isinstance(v, float) and v != v else v for v in row])


def _split(line, delimiter):
    line = line.rstrip("\r\n")
    if '"' in line:
        return next(csv.reader([line], delimiter=delimiter))
    return line.split(delimiter)


def _integer_ids(column, *tables):
    """Read a text id column as int64 in every table when all its ids are plain integers
    (as written by str(int)) and the other tables' ids are integers too."""
    arrays = [t[column] for t in tables if column in t]
    text = [a for a in arrays if a.dtype.kind == "U"]
    if not text or any(a.dtype.kind not in "Uiu" for a in arrays):
        return
    converted = []
    for a in text:
        try:
            ints = a.astype(np.int64)
        except (ValueError, OverflowError):
            return
        if not np.array_equal(ints.astype(str), a):
            return
        converted.append(ints)
    done = iter(converted)
    for t in tables:
        if column in t and t[column].dtype.kind == "U":
            t[column] = next(done)


def _positions(recs, column, n, path, what):
    """A column of row or column numbers (ids of a .npz truth are positions)."""
    if column not in recs:
        raise ValueError(f"{path}: no column {column!r}; its columns are {list(recs)}")
    values = recs[column]
    if values.dtype.kind == "U":
        try:
            values = values.astype(np.int64)
        except ValueError:
            values = None
    if values is None or values.dtype.kind not in "iu":
        raise ValueError(
            f"{path}: column {column!r} must hold integers, the {what}, because --truth is "
            f"a .npz matrix")
    if values.size and (values.min() < 0 or values.max() >= n):
        raise ValueError(
            f"{path}: column {column!r} has values outside [0, {n}), the {what}")
    return values.astype(np.int64)


def _load_npz(path):
    try:
        matrix = sp.load_npz(path)
    except (ValueError, KeyError, OSError) as err:
        raise ValueError(
            f"{path}: not a scipy.sparse .npz file ({err}); write one with "
            f"scipy.sparse.save_npz") from None
    return matrix


def _load_npy(path):
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as err:
        raise ValueError(f"{path}: not a .npy array of item ids ({err}); write one with "
                         f"numpy.save") from None
