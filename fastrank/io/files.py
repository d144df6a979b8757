"""The files `fastrank evaluate` reads and writes.

Truth: a scipy.sparse `.npz` (users x items, relevance as values; `scipy.sparse.save_npz`)
or a table of `user,item,relevance`. Top-K: a `.npy` of item ids (users x K, row r is truth
row r, -1 pads) or a table of `user,item,score` (or `user,rank,item`). Tables are parquet
(`.parquet`, `.pq`; needs pyarrow) or CSV with a header line (`.csv`, `.tsv`, optionally
gzip-compressed). Ids in a table may be of any type; CSV ids are text, read as integers
when every id of that column in both files is a plain integer.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import scipy.sparse as sp

from .._types import AnyArray, IntArray, PathLike, SparseMatrix
from ..digits import whole_number
from ..output import written
from ..validation import check_truth
from .tables import arrow_column, from_tables, lists, number_column, one_sided
from .text import lines, parse_number, readable
from .trec_files import read_qrels, read_run, trec_lists

_KINDS = {".npz": "npz", ".npy": "npy", ".parquet": "parquet", ".pq": "parquet",
          ".csv": "csv", ".tsv": "csv"}
_NUMBERS = ("relevance", "score", "rank")
_IDS = ("user", "item")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")  # what a row or column number may look like


@dataclass(frozen=True)
class Inputs:
    """What `fastrank evaluate` evaluates: arrays, the id of each truth row, and counts."""

    truth: SparseMatrix
    topk: IntArray
    user_ids: AnyArray
    without_recommendations: int
    without_truth: int
    tied: bool = False  # whether a list was built from two equal scores


def _kind(path: PathLike) -> str | None:
    """'npz', 'npy', 'parquet', 'csv' or None, from the file name (a trailing .gz is skipped)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return _KINDS.get(suffixes[-1] if suffixes else "")


def file_kind(path: PathLike, role: str) -> str:
    """The kind of an input file (see `_kind`), checked against its role and existence."""
    kind = _kind(path)
    allowed = {"truth": ("npz", "parquet", "csv"), "topk": ("npy", "parquet", "csv")}[role]
    if kind not in allowed:
        names = {"npz": ".npz", "npy": ".npy", "parquet": ".parquet", "csv": ".csv/.tsv"}
        raise ValueError(
            f"--{role} {path}: cannot tell the format from the name; use one of "
            f"{', '.join(names[k] for k in allowed)}, or --trec for a TREC qrels and run "
            f"file")
    readable(path, f"--{role}")
    return kind


def read_inputs(truth_path: PathLike, topk_path: PathLike, *, k: int | None = None,
                trec: bool = False, stage: Callable[[str], None] | None = None,
                ties: str = "trec_eval") -> Inputs:
    """Load `fastrank evaluate`'s two inputs as an `Inputs`: files named by their suffix,
    or with trec=True a TREC qrels and run file; equal scores ordered as `ties` says
    (fastrank.io.from_tables). `stage`, if given, is called with the name of each step
    (reading each file, matching ids) as it starts."""
    stage = stage or (lambda name: None)
    if trec:
        return _trec_inputs(truth_path, topk_path, k, stage, ties)
    t_kind, r_kind = file_kind(truth_path, "truth"), file_kind(topk_path, "topk")
    if t_kind != "npz":
        if r_kind == "npy":
            raise ValueError(
                f"--topk {topk_path}: a .npy top-K array is matched to truth by row number, "
                f"so --truth must be a .npz matrix; give the recommendations as a table "
                f"(user,item,score) instead")
        stage(f"reading {Path(truth_path).name}")
        truth = read_table(truth_path)
        stage(f"reading {Path(topk_path).name}")
        recs = read_table(topk_path)
        relevance = _table_columns(truth_path, truth, "truth")
        _table_columns(topk_path, recs, "topk")
        for column in ("user", "item"):
            _integer_ids(column, truth, recs)
        try:
            data = from_tables(truth, recs, k=k, relevance=relevance, ties=ties)
        except (ValueError, TypeError) as err:  # from_tables names "truth" and "recs"
            text = str(err)
            named = (f"--truth {truth_path}: " if text.startswith("truth") else
                     f"--topk {topk_path}: " if text.startswith("recs") else "")
            raise type(err)(named + text) from None
        return Inputs(data.truth, data.topk, data.users,
                      without_recommendations=data.without_recommendations,
                      without_truth=data.without_truth, tied=data.tied)
    stage(f"reading {Path(truth_path).name}")
    truth = _load_npz(truth_path)
    n_users, n_items = truth.shape
    stage(f"reading {Path(topk_path).name}")
    tied = False
    if r_kind == "npy":
        topk = _load_npy(topk_path)
        if k is not None:
            topk = topk[:, :k]
    else:
        topk, tied = _table_topk(read_table(topk_path), topk_path, n_users, n_items, k, ties)
    if topk.shape[0] != n_users:  # evaluate names the mismatch
        return Inputs(truth, topk, np.arange(n_users), 0, 0)
    return Inputs(truth, topk, np.arange(n_users), tied=tied,
                  **one_sided(_rows(truth, truth_path), topk))


def _trec_inputs(qrels_path: PathLike, run_path: PathLike, k: int | None,
                 stage: Callable[[str], None], ties: str) -> Inputs:
    """A TREC qrels and run file as `Inputs`: one row per judged query (every one: a judged
    query without results has an empty list, as with trec_eval's -c, and as a table of the
    same data gives), ordered and cut at k as trec_eval orders its runs; the run's queries
    that nobody judged are left out and counted in without_truth."""
    for path, role in ((qrels_path, "truth"), (run_path, "topk")):
        readable(path, f"--{role}")
    stage(f"reading {Path(qrels_path).name}")
    qrels = read_qrels(qrels_path)
    stage(f"reading {Path(run_path).name}")
    run = read_run(run_path)
    truth, topk, queries, _, tied = trec_lists(qrels, run, depth=k, complete=True, ties=ties)
    retrieved = np.unique(run.queries)
    without_recommendations = np.setdiff1d(queries, retrieved).size
    return Inputs(truth, topk, queries, without_recommendations=without_recommendations,
                  without_truth=np.setdiff1d(retrieved, queries).size, tied=tied)


def _rows(truth: SparseMatrix, path: PathLike) -> SparseMatrix:
    """truth with an indptr that one_sided may read: a CSR as loaded (scipy has checked
    its length), any other format checked before it is converted (scipy's converters
    trust their input)."""
    if truth.format == "csr":
        return truth
    return check_truth(truth, f"--truth {path}")


def _table_columns(path: PathLike, table: Mapping[str, AnyArray], role: str) -> str | None:
    """Check the columns the command line reads of a --truth or --topk table (it has no
    option to name others; from_tables' errors would point to its arguments): user and
    item; a truth's relevance, unless the truth is user and item alone (every listed pair
    relevant: implicit feedback); a table of recommendations' score or rank. Returns the
    truth's relevance column for from_tables (None: every pair relevant)."""
    name = "truth" if role == "truth" else "recs"
    relevance = None if role == "truth" and sorted(table) == ["item", "user"] else "relevance"
    for column in ("user", "item") + (("relevance",) if role == "truth" and relevance else ()):
        if column not in table:
            alone = (", or give user and item alone: every listed pair is relevant"
                     if column == "relevance" else "")
            raise ValueError(f"--{role} {path}: {name} has no column {column!r}; its columns "
                             f"are {list(table)}. Rename the column {column}{alone}")
    if role == "topk" and "score" not in table and "rank" not in table:
        raise ValueError(f"--topk {path}: recs has neither a 'score' nor a 'rank' column, so "
                         f"its order is unknown; its columns are {list(table)}. Rename the "
                         f"column score or rank")
    return relevance


def _table_topk(recs: Mapping[str, AnyArray], path: PathLike, n_users: int, n_items: int,
                k: int | None, ties: str) -> tuple[IntArray, bool]:
    """(top-K ids, tied) from a table of recommendations whose ids are the row and column
    numbers of a .npz truth. Only the items it names are looked at: no array has a slot
    per column."""
    rows = _positions(recs, "user", n_users, path, "rows of the --truth matrix")
    items = _positions(recs, "item", n_items, path, "columns of the --truth matrix")
    used, codes = np.unique(items, return_inverse=True)  # sorted: ties break as before
    codes = codes.reshape(-1).astype(np.int64)
    if "score" in recs:
        score = number_column(recs, "score", str(path), "score", keep_integers=True)
        topk, tied = lists(rows, codes, n_users, k, item_ids=used, score=score, ties=ties)
    elif "rank" in recs:
        rank = number_column(recs, "rank", str(path), "rank", keep_integers=True)
        topk, tied = lists(rows, codes, n_users, k, item_ids=used, rank=rank,
                           table=str(path))
    else:
        raise ValueError(
            f"{path}: neither a 'score' nor a 'rank' column, so the order of the "
            f"recommendations is unknown; its columns are {list(recs)}")
    if used.size:
        topk = np.where(topk >= 0, used[np.maximum(topk, 0)], -1)
    return topk, tied


def read_table(path: PathLike) -> dict[str, AnyArray]:
    """A parquet or CSV table as {column: numpy array}; CSV numbers (relevance, score,
    rank) are parsed, with errors naming the file, line and text; CSV ids stay text."""
    if _kind(path) != "parquet":
        return read_csv(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"{path}: reading parquet needs pyarrow: pip install pyarrow") \
            from None
    import pyarrow as pa

    try:
        _unique_names(pq.read_schema(path).names, path)
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as err:  # ArrowInvalid is a ValueError too
        raise ValueError(f"{path}: not a readable parquet file ({err})") from None
    columns: dict[str, AnyArray] = {}
    for j, name in enumerate(table.column_names):
        if table.column(j).null_count:
            raise ValueError(f"{path}: column {name!r} has missing values; drop or fill "
                             f"those rows")
        try:
            columns[name] = table.column(j).to_numpy(zero_copy_only=False)
        except pa.ArrowException as err:
            raise ValueError(f"{path}: column {name!r} of type {table.column(j).type} cannot "
                             f"be read as an array ({err})") from None
    return columns


def read_csv(path: PathLike) -> dict[str, AnyArray]:
    """{column: array} of a CSV (or, for .tsv, tab-separated) file with a header line:
    numbers (relevance, score, rank) as float64, every other column as text. pyarrow's
    multi-threaded reader reads a clean file where it is installed; the line reader below
    reads any other file (and names the line of any error), with the same arrays. (The
    arrow reader may hand back an id column of plain integers as int64 already, naming
    it in `from_text`: see _integer_ids.)"""
    delimiter = "\t" if ".tsv" in [s.lower() for s in Path(path).suffixes] else ","
    columns = _read_csv_arrow(path, delimiter)
    return _read_csv_lines(path, delimiter) if columns is None else columns


class CsvColumns(dict[str, AnyArray]):
    """read_csv's columns; `from_text` names the id columns that were text of plain
    integers (each field as str(int) writes it) and are given as int64."""

    from_text: frozenset[str] = frozenset()


def _read_csv_arrow(path: PathLike, delimiter: str) -> CsvColumns | None:
    """read_csv's arrays by pyarrow.csv, or None if pyarrow is not installed or the file is
    anything but clean (a line of the wrong length, a null or non-finite number, an empty
    id, not UTF-8, ...), for the line reader to read or reject with the line's number.

    Why: 200,000 rows (user,item,score) and 75,000 judgments through `read_inputs` on 2
    cores took 1.79 s by the line reader and 0.11 s from parquet; most of the line
    reader's time is Python per field, then text ids turned into numbers."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    first = next(lines(path), None)  # the header, as the line reader sees it
    if first is None:
        return None
    names = _split(first[1], delimiter)
    if any(name != name.strip() for name in names):  # "user, item": the line reader trims
        return None
    _unique_names(names, path)
    types = {name: pa.float64() if name in _NUMBERS else pa.string() for name in names}
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    try:
        with pa.input_stream(str(path), compression="gzip" if gzipped else None) as stream:
            table = pa_csv.read_csv(
                stream, parse_options=pa_csv.ParseOptions(delimiter=delimiter),
                convert_options=pa_csv.ConvertOptions(
                    column_types=types, strings_can_be_null=False,
                    quoted_strings_can_be_null=False))
    except (pa.ArrowException, OSError, ValueError):
        return None
    if table.column_names != names:  # a byte-order mark, say: the line reader strips it
        return None
    columns, from_text = CsvColumns(), set[str]()
    for name, column in zip(names, table.columns):
        if column.null_count:
            return None
        if name in _NUMBERS:
            values = column.to_numpy()
            if not np.isfinite(values).all():
                return None
        elif name in _IDS and (values := _plain_integers(
                column := pc.utf8_trim_whitespace(column), pa, pc)) is not None:
            from_text.add(name)  # (ids trimmed: "1, 11" is item 11, as the line reader reads)
        else:
            values = column.to_numpy(zero_copy_only=False).astype(str)
            if name in _IDS and (np.char.isspace(values) | (values == "")).any():
                return None  # an empty id: the line reader names its line
        columns[name] = values
    columns.from_text = frozenset(from_text)
    return columns


def _plain_integers(column: Any, pa: Any, pc: Any) -> AnyArray | None:
    """An Arrow text column as int64, if every field is an integer as str(int) writes it
    (what _integer_ids asks of text ids), else None."""
    if not len(column):
        return None
    try:
        ints = pc.cast(column, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not pc.all(pc.equal(pc.cast(ints, pa.string()), column)).as_py():
        return None
    return ints.to_numpy()  # type: ignore[no-any-return]  # pyarrow has no stubs


def _read_csv_lines(path: PathLike, delimiter: str) -> dict[str, AnyArray]:
    """read_csv line by line, with errors naming the file, line and text."""
    records = lines(path)
    try:
        _, header = next(records)
    except StopIteration:
        raise ValueError(f"{path}: the file is empty; it needs a header line") from None
    # names and ids trimmed of the spaces around them ("user, item" and "1, 11"), as the
    # numbers are: an id never matched its untrimmed copy, and every metric was 0
    names = [name.strip() for name in _split(header, delimiter)]
    _unique_names(names, path)
    columns: list[list[Any]] = [[] for _ in names]
    numbers = [name in _NUMBERS for name in names]
    ids = [name in _IDS for name in names]
    for number, line in records:
        fields = _split(line, delimiter)
        if len(fields) != len(names):
            raise ValueError(
                f"{path}:{number}: {len(fields)} fields where the header has {len(names)} "
                f"({','.join(names)}) in line {line.rstrip()!r}")
        for column, field, numeric, is_id, name in zip(columns, fields, numbers, ids, names):
            if numeric:
                column.append(_number(field, path, number, line, name))
                continue
            if is_id and not field.strip():
                raise ValueError(
                    f"{path}:{number}: the {name} field is empty in line {line.rstrip()!r}; "
                    f"every row needs its {name} id")
            column.append(field.strip() if is_id else field)
    return {name: np.array(column, dtype=np.float64 if numeric else str)
            for name, column, numeric in zip(names, columns, numbers)}


def _unique_names(names: list[str], path: PathLike) -> None:
    """A header must name each column once: a second copy would silently win."""
    seen = set()
    for name in names:
        if name in seen:
            raise ValueError(
                f"{path}: the header names column {name!r} {names.count(name)} times "
                f"({', '.join(map(repr, names))}); rename or drop the copies")
        seen.add(name)


def _number(field: str, path: PathLike, number: int, line: str, name: str) -> float:
    """A CSV number: parse_number's float, but '1_0' (Python's digit grouping) is refused."""
    if "_" in field:
        raise ValueError(
            f"{path}:{number}: {name} {field!r} is not a number in line {line.rstrip()!r}; "
            f"write it without '_'")
    return parse_number(field, path, number, line, name)


def output_kind(path: PathLike) -> tuple[str, bool]:
    """(".parquet", ".csv" or ".tsv", gzipped) of a --per-user file name, or an error."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    gzipped = bool(suffixes) and suffixes[-1] == ".gz"
    kind = (suffixes[-2] if gzipped and len(suffixes) > 1 else
            suffixes[-1] if suffixes and not gzipped else "")
    kind = ".parquet" if kind == ".pq" else kind
    if kind == ".parquet" and gzipped:
        raise ValueError(f"--per-user {path}: parquet compresses its own columns; drop the "
                         f".gz")
    if kind not in (".parquet", ".csv", ".tsv", ".jsonl"):
        raise ValueError(f"--per-user {path}: cannot tell the format from the name; end it "
                         f"in .csv, .tsv, .jsonl or .parquet (.csv.gz, .tsv.gz and .jsonl.gz "
                         f"are gzipped)")
    return kind, gzipped


def write_per_user(path: PathLike, table: Mapping[str, AnyArray]) -> None:
    """Write {column: array} to `path`, by its name: parquet (.parquet, .pq), JSON lines
    (.jsonl: one object per user, null where a user is not counted) or CSV (.csv; .tsv
    tab-separated; an empty field where a user is not counted); the text formats may be
    gzipped with a further .gz. Values are written exactly (repr); ids as the tables held
    them: dates and durations as ISO text, bytes and ids read from bytes that are not
    UTF-8 (trec_eval's files) as those bytes. The file is written whole or not at all
    (fastrank.output.written): a write that fails raises an UnwritableFile (an OSError)
    naming the path, and leaves no partial file."""
    path = Path(path)
    kind, gzipped = output_kind(path)
    try:
        with written(path, "--per-user") as handle:
            _write(handle, kind, gzipped, table)
    except (ValueError, TypeError, OverflowError, UnicodeError) as err:
        raise ValueError(f"--per-user {path}: the table cannot be written as {kind} "
                         f"({err})") from None


def _write(raw: BinaryIO, kind: str, gzipped: bool, table: Mapping[str, AnyArray]) -> None:
    """Write the table to the open binary file `raw` (see fastrank.output.written)."""
    if kind == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({name: arrow_column(values, pa)
                                 for name, values in table.items()}), raw)
        return
    names = list(table)
    columns = [_text_column(table[name]) for name in names]
    binary: BinaryIO = gzip.GzipFile(fileobj=raw, mode="wb") if gzipped else raw  # type: ignore[assignment]
    # surrogateescape: ids read from bytes that are not UTF-8 go back out as those bytes
    with io.TextIOWrapper(binary, newline="", encoding="utf-8",
                          errors="surrogateescape") as handle:
        if kind == ".jsonl":
            for row in zip(*columns):
                values = [None if isinstance(v, float) and v != v else v for v in row]
                handle.write(json.dumps(dict(zip(names, values)), ensure_ascii=False) + "\n")
            return
        writer = csv.writer(handle, delimiter="\t" if kind == ".tsv" else ",")
        writer.writerow(names)
        for row in zip(*columns):
            writer.writerow(["" if isinstance(v, float) and v != v else v for v in row])


def _text_column(values: AnyArray) -> list[Any]:
    """A column as the text formats write it: numbers and text as they are, dates and
    durations as ISO text (numpy's tolist gives nanoseconds as integers), bytes as text
    whose bytes are theirs."""
    values = np.asarray(values)
    if values.dtype.kind == "M":
        return np.datetime_as_string(values).tolist()  # type: ignore[no-any-return]
    if values.dtype.kind == "m":
        return [str(v) for v in values]
    return [v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v
            for v in values.tolist()]


def _split(line: str, delimiter: str) -> list[str]:
    line = line.rstrip("\r\n")
    if '"' in line:
        return next(csv.reader([line], delimiter=delimiter))
    return line.split(delimiter)


def _integer_ids(column: str, *tables: dict[str, AnyArray]) -> None:
    """Read a text id column as int64 in every table when all its ids are plain integers
    (as written by str(int)) and the other tables' ids are integers too. Where text ids
    stay text, a CSV column that the reader gave as int64 (`from_text`) is text again.
    Beside a CSV file's ids (text), a table's Python strings (parquet's, as object) are
    text too: a parquet of ids "1", "2" matches a CSV of 1, 2."""
    if any(column in t and (t[column].dtype.kind == "U" or column in getattr(
            t, "from_text", ())) for t in tables):
        for t in tables:
            ids = t.get(column)
            if ids is not None and ids.dtype == object and ids.size and \
                    all(isinstance(v, str) for v in ids.tolist()):
                t[column] = ids.astype(str)
    arrays = [t[column] for t in tables if column in t]
    text = [a for a in arrays if a.dtype.kind == "U"]
    if text and all(a.dtype.kind in "Uiu" for a in arrays):
        converted = []
        for a in text:
            try:
                ints = a.astype(np.int64)
            except (ValueError, OverflowError):
                break
            if not np.array_equal(ints.astype(str), a):
                break
            converted.append(ints)
        else:
            done = iter(converted)
            for t in tables:
                if column in t and t[column].dtype.kind == "U":
                    t[column] = next(done)
            return
    if text:
        for t in tables:
            if column in getattr(t, "from_text", ()):
                t[column] = t[column].astype(str)  # exact: each was str(int) of its value


def _positions(recs: Mapping[str, AnyArray], column: str, n: int, path: PathLike,
               what: str) -> IntArray:
    """A column of row or column numbers (ids of a .npz truth are positions)."""
    if column not in recs:
        raise ValueError(f"{path}: no column {column!r}; its columns are {list(recs)}")
    values = recs[column]
    if values.dtype.kind == "U":
        values = _text_positions(values, column, n, path, what)
    if values.dtype.kind not in "iu":
        raise ValueError(
            f"{path}: column {column!r} must hold integers, the {what}, because --truth is "
            f"a .npz matrix; got {values.dtype} values")
    if values.size and (values.min() < 0 or values.max() >= n):
        bad = values.min() if values.min() < 0 else values.max()
        raise ValueError(
            f"{path}: column {column!r} has values outside [0, {n}), the {what}: {int(bad)}")
    return values.astype(np.int64)


def _text_positions(text: AnyArray, column: str, n: int, path: PathLike,
                    what: str) -> IntArray:
    """CSV text as int64 row or column numbers: whole numbers only ('1_0' and non-ASCII
    digits are not), and none beyond int64 (beyond any matrix); errors quote the value."""
    try:
        values = text.astype(np.int64)
    except (ValueError, OverflowError):
        values = None
    if values is not None:
        odd = np.flatnonzero(values.astype(str) != text)  # '01', '+1', ' 1', '1_0', ...
        if not any(_INTEGER.fullmatch(s) is None for s in text[odd].tolist()):
            return values
    text = text.tolist()
    for value in text:
        if _INTEGER.fullmatch(value) is None:
            raise ValueError(
                f"{path}: column {column!r} must hold integers, the {what}, because --truth "
                f"is a .npz matrix; got {value!r}")
        if not 0 <= whole_number(value.strip(), n) < n:
            raise ValueError(
                f"{path}: column {column!r} has values outside [0, {n}), the {what}: "
                f"{value.strip()}")
    return np.array([whole_number(value.strip(), n) for value in text], np.int64)  # in [0, n)


def _load_npz(path: PathLike) -> SparseMatrix:
    """A scipy.sparse matrix saved with save_npz; any other file (empty, truncated, not a
    zip, a zip of other arrays) is a ValueError naming it."""
    _not_empty(path, "a scipy.sparse .npz matrix")
    try:
        # opened here: numpy leaves the file open when the archive is corrupt
        with open(path, "rb") as handle:
            matrix = sp.load_npz(handle)
    except (EOFError, zipfile.BadZipFile, zlib.error) as err:
        raise ValueError(f"{path}: a truncated or corrupt .npz file ({err}); write it again "
                         f"with scipy.sparse.save_npz") from None
    except (ValueError, KeyError, OSError, TypeError, AttributeError, IndexError,
            NotImplementedError) as err:
        raise ValueError(
            f"{path}: not a scipy.sparse .npz file ({err}); write one with "
            f"scipy.sparse.save_npz") from None
    if len(matrix.shape) != 2:
        raise ValueError(f"{path}: the matrix must be 2-D (users x items); got shape "
                         f"{matrix.shape}")
    if matrix.dtype.kind not in "biuf":
        raise TypeError(f"{path}: the matrix values must be numeric relevance grades; got "
                        f"dtype {matrix.dtype}. Save it with matrix.astype(np.float64)")
    return matrix


def _load_npy(path: PathLike) -> IntArray:
    """The top-K ids of a .npy: a 2-D integer array, one row per truth row."""
    _not_empty(path, "a .npy array of item ids")
    with open(path, "rb") as head:
        zipped = head.read(4) in (b"PK\x03\x04", b"PK\x05\x06")  # numpy's test of a .npz
    if zipped:  # refused before np.load, which fails on a truncated archive with a
        # BadZipFile and leaves the file open
        raise ValueError(f"{path}: a .npz archive, not a .npy array of item ids; write one "
                         f"with numpy.save")
    try:
        topk: IntArray = np.load(path, mmap_mode="r", allow_pickle=False)
    except EOFError as err:
        raise ValueError(f"{path}: a truncated .npy file ({err}); write it again with "
                         f"numpy.save") from None
    except (ValueError, OSError) as err:
        raise ValueError(f"{path}: not a .npy array of item ids ({err}); write one with "
                         f"numpy.save") from None
    if topk.ndim != 2:
        raise ValueError(
            f"{path}: the top-K array must be 2-D, one row of item ids per truth row; got "
            f"shape {topk.shape}. Save a single list as ids.reshape(1, -1)")
    if topk.dtype == np.bool_ or topk.dtype.kind not in "iu":
        raise TypeError(f"{path}: the top-K array must hold integer item ids; got dtype "
                        f"{topk.dtype}. Save it with ids.astype(np.int64)")
    return topk


def _not_empty(path: PathLike, what: str) -> None:
    if Path(path).stat().st_size == 0:
        raise ValueError(f"{path}: the file is empty; it should hold {what}")
