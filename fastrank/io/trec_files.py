"""TREC qrels and run files into fastrank's arrays, with the string ids kept.

    qrels = fastrank.io.read_qrels("qrels.txt")        # qid iter docno rel
    run = fastrank.io.read_run("run.txt")              # qid Q0 docno rank sim runid
    truth, topk, queries = fastrank.io.trec_arrays(qrels, run)
    fr.evaluate(truth, topk, ["ndcg_cut_10"...], convention="trec")

Files may be plain or gzip-compressed (by content, not name). As in trec_eval 10, lines
starting with '#' are comments; relevance levels are read as C's atol reads them (the
leading integer: "2.7" is 2, "1e3" is 1). A run is ordered as trec_eval orders it:
score descending, ties by document id descending (byte order); the rank column is
ignored. A malformed line is a ValueError naming the file, the line number and the text;
so is a file that starts with a byte-order mark (trec_eval would read it as part of the
first query id) and a file with no records.

Files are read as UTF-8, and bytes that are not UTF-8 (a Latin-1 document id) are kept
as they are, as trec_eval reads bytes: each becomes a lone surrogate in the str
(Python's surrogateescape, U+DC80-U+DCFF), which encodes back to the byte
(`s.encode("utf-8", "surrogateescape")`), and ids are ordered by their bytes all the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .._types import AnyArray, FloatArray, IntArray, PathLike, SparseMatrix

from ..digits import whole_number
from .lists import by_score, factorize, lookup, pack
from .ties import ties_option
from ..validation import check_int
from .text import chunks, parse_number


@dataclass(frozen=True)
class Qrels:
    """Judgments: parallel arrays, one entry per (query, document) line."""

    queries: AnyArray      # str, the qid of each line
    documents: AnyArray    # str
    relevance: FloatArray  # float64
    path: str
    raw_bytes: bool = False  # some id holds bytes that are not UTF-8 (surrogate escapes)


@dataclass(frozen=True)
class Run:
    """Retrieved documents: parallel arrays, one entry per line, in file order."""

    queries: AnyArray      # str
    documents: AnyArray    # str
    scores: FloatArray     # float64
    runid: str
    path: str
    raw_bytes: bool = False  # some id holds bytes that are not UTF-8 (surrogate escapes)


def _records(path: PathLike, kind: str, layout: str, exact: bool,
             raw: list[bool] | None = None) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, line, fields) of every record line (comments and blank lines
    skipped), with the column count checked: exactly len(layout) columns, or at least
    that many when not exact. raw[0] is set if a line holds bytes that are not UTF-8."""
    n = len(layout.split())
    for start, chunk in chunks(path, bom="reject", newline="\n", role=kind,
                               errors="surrogateescape"):
        # fields end at C's isspace (ASCII blanks), as trec_eval splits them: a no-break
        # space or a lone carriage return is part of a field, not a separator
        text = "".join(chunk)
        ascii_text = text.isascii()
        if raw is not None and not ascii_text and ESCAPED_BYTE.search(text):
            raw[0] = True
        for offset, line in enumerate(chunk):
            parts = line.split() if ascii_text else _C_BLANKS.split(line.strip(_C_SPACE))
            if not parts or not parts[0] or parts[0][0] == "#":  # blank: [] or [""]
                continue
            if len(parts) < n or (exact and len(parts) > n):
                raise ValueError(
                    f"{path}:{start + offset}: a {kind} line has {n} columns ({layout}); "
                    f"found {len(parts)} in {line.rstrip()!r}")
            yield start + offset, line, parts


# a byte that is not UTF-8, as the surrogateescape decoder keeps it (also read by the
# per-user tables, which write such ids back as their bytes)
ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_C_SPACE = " \t\n\v\f\r"
_C_BLANKS = re.compile(f"[{_C_SPACE}]+")
_QRELS = ("qrels", "qid iter docno rel", True)
_RUN = ("run", "qid Q0 docno rank score runid", False)


def read_qrels(path: PathLike) -> Qrels:
    """Read a TREC qrels file: `qid iter docno rel` per line (blanks separate the fields)."""
    queries: list[str] = []
    documents: list[str] = []
    relevance: list[str] = []
    raw = [False]
    for _, _, parts in _records(path, *_QRELS, raw):
        queries.append(parts[0])
        documents.append(parts[2])
        relevance.append(parts[3])
    if not queries:
        raise ValueError(f"{path}: no judgments (the file is empty, or holds only blank "
                         f"lines and comments)")
    return Qrels(np.array(queries, dtype=str), np.array(documents, dtype=str),
                 _levels(relevance, path), str(path), raw[0])


def read_run(path: PathLike) -> Run:
    """Read a TREC run file: `qid Q0 docno rank sim runid` per line (blanks separate the
    fields; further columns are ignored, as trec_eval ignores them)."""
    queries: list[str] = []
    documents: list[str] = []
    scores: list[str] = []
    runid = ""
    raw = [False]
    for _, _, parts in _records(path, *_RUN, raw):
        queries.append(parts[0])
        documents.append(parts[2])
        scores.append(parts[4])
        runid = parts[5]
    if not queries:
        raise ValueError(f"{path}: no results (the file is empty, or holds only blank "
                         f"lines and comments)")
    return Run(np.array(queries, dtype=str), np.array(documents, dtype=str),
               _numbers(scores, path, _RUN, 4, "score"), runid, str(path), raw[0])


# C's atol: optional sign, then digits; the rest of the field is ignored
_LEADING_INTEGER = re.compile(r"[+-]?[0-9]+")
_LARGEST_LEVEL = 2 ** 31 - 1


def _levels(texts: Sequence[str], path: PathLike) -> FloatArray:
    """Relevance levels as trec_eval reads them (atol: the leading integer), as float64;
    a field that does not start with an integer, or one beyond 2**31, is an error naming
    its line (trec_eval would silently read 0, or overflow)."""
    values = np.array(texts, dtype=str)
    ascii_digits = np.char.str_len(np.char.lstrip(values, "0123456789")) == 0
    if ascii_digits.all() and np.char.str_len(values).max() < 10:
        return values.astype(np.int64).astype(np.float64)  # plain digits: the usual file
    levels = np.zeros(values.shape[0], np.float64)
    bad = None
    for j, text in enumerate(values.tolist()):
        match = _LEADING_INTEGER.match(text)
        value = None if match is None else whole_number(match.group(), _LARGEST_LEVEL + 1)
        if value is None or abs(value) > _LARGEST_LEVEL:
            bad = j
            break
        levels[j] = value
    if bad is None:
        return levels
    for j, (number, line, parts) in enumerate(_records(path, *_QRELS)):
        level = parts[3]
        if j == bad:
            raise ValueError(
                f"{path}:{number}: relevance {level!r} is not an integer level (trec_eval "
                f"reads levels with C's atol) in line {line.rstrip()!r}")
    raise AssertionError("unreachable: the first pass found a bad level")  # pragma: no cover


# a finite number as C writes it (what trec_eval's atof reads whole): no '_' or non-ASCII
# digits, which Python's float() would also take. (The digits after the point belong to
# the point's group: `[0-9]+\.?[0-9]*` would try every split of a long run of digits.)
_C_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                       r"|inf(?:inity)?|nan)", re.IGNORECASE)


def _numbers(texts: Sequence[str], path: PathLike, layout: tuple[str, str, bool], column: int,
             what: str) -> FloatArray:
    """The texts as finite float64 numbers written as C writes them; on failure the file
    is read again to find the first bad line, so that the error names its number and
    text."""
    try:
        values = np.array(texts, dtype=np.float64)
        joined = "".join(texts)
        if np.isfinite(values).all() and "_" not in joined and joined.isascii():
            return values
    except ValueError:
        pass
    for number, line, parts in _records(path, *layout):
        text = parts[column]
        if not _C_NUMBER.fullmatch(text):
            raise ValueError(f"{path}:{number}: {what} {text!r} is not a number in "
                             f"line {line.rstrip()!r}")
        parse_number(text, path, number, line, what)
    raise AssertionError("unreachable: the first pass found a bad number")  # pragma: no cover


def trec_arrays(qrels: Qrels, run: Run, *, depth: int | None = None, complete: bool = False,
                ties: str = "trec_eval") -> tuple[SparseMatrix, IntArray, AnyArray, AnyArray]:
    """(truth, topk, queries, documents) for `fr.evaluate(..., convention="trec")`.

    Rows are the queries of the run that the qrels judge (with complete=True, as
    trec_eval's -c, every judged query, an empty list for those without results), in
    ascending qid order (byte order, as trec_eval's strcmp); columns are the documents of
    both files in ascending order (`documents`). Each topk row is the query's run ordered
    by score descending, ties by document id descending, cut at `depth` (trec_eval's -M)
    and padded with -1. As in trec_eval, a document judged twice for one query, or
    retrieved twice for one query within the cut, is an error.

    `ties` orders documents of equal score as a tool does: "trec_eval" (and pytrec_eval,
    ir-measures' pytrec_eval and gdeval measures), by document id descending; "docno",
    ascending (ir-measures' RR@k, Judged and its pyndeval diversity names); "file", in the
    run's line order (ir-measures' RBP, from cwl_eval). fastrank.dialects.tie_order
    says each tool's; ranx's and RecBole's are none of these.
    """
    return trec_lists(qrels, run, depth=depth, complete=complete, ties=ties)[:4]


def trec_lists(qrels: Qrels, run: Run, *, depth: int | None = None, complete: bool = False,
               ties: str = "trec_eval"
               ) -> tuple[SparseMatrix, IntArray, AnyArray, AnyArray, bool]:
    """trec_arrays' (truth, topk, queries, documents) and whether a query's run had two
    documents of equal score."""
    for value, name, kind in ((qrels, "qrels", Qrels), (run, "run", Run)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be a fastrank.io.{kind.__name__} (from "
                            f"read_{name}); got {type(value).__name__}")
    if depth is not None:
        depth = check_int(depth, "depth")
    ties = ties_option(ties)
    if qrels.raw_bytes or run.raw_bytes:
        # ids with bytes that are not UTF-8: the same steps on ids whose code points are
        # their bytes (Latin-1), so that every sort and every tie follows the bytes as
        # trec_eval's strcmp does (UTF-8 text alone sorts so as it is)
        truth, topk, queries, documents, tied = _arrays(
            replace(qrels, queries=_as_bytes(qrels.queries),
                    documents=_as_bytes(qrels.documents)),
            replace(run, queries=_as_bytes(run.queries), documents=_as_bytes(run.documents)),
            depth, complete, ties, _from_bytes)
        return truth, topk, _from_bytes_array(queries), _from_bytes_array(documents), tied
    return _arrays(qrels, run, depth, complete, ties, str)


def _as_bytes(ids: AnyArray) -> AnyArray:
    """str ids as str whose code points are their UTF-8 bytes (surrogate escapes too)."""
    distinct, codes = factorize(ids)
    return np.array([v.encode("utf-8", "surrogateescape").decode("latin-1")
                     for v in distinct.tolist()], dtype=str)[codes]


def _from_bytes(text: str) -> str:
    return text.encode("latin-1").decode("utf-8", "surrogateescape")


def _from_bytes_array(ids: AnyArray) -> AnyArray:
    return np.array([_from_bytes(v) for v in ids.tolist()], dtype=str)


def _arrays(qrels: Qrels, run: Run, depth: int | None, complete: bool, ties: str,
            shown: Callable[[str], str]
            ) -> tuple[SparseMatrix, IntArray, AnyArray, AnyArray, bool]:
    """trec_lists' work; `shown` turns an id into the text of a message."""
    documents, codes = factorize(np.concatenate([qrels.documents, run.documents]))
    docs_q, docs_r = codes[:qrels.documents.shape[0]], codes[qrels.documents.shape[0]:]
    judged_queries, rows_all = np.unique(qrels.queries, return_inverse=True)
    repeated = _repeated_pair(rows_all, docs_q, judged_queries, documents)
    if repeated:
        query, doc, n = repeated
        raise ValueError(
            f"{qrels.path}: document {shown(doc)!r} is judged more than once for query "
            f"{shown(query)!r} ({n} such pairs); trec_eval stops on such qrels: keep one "
            f"judgment per (query, document)")
    queries = judged_queries
    if not complete:
        queries = np.intersect1d(queries, np.unique(run.queries))
    rows_q, judged = lookup(queries, qrels.queries)
    truth = sp.csr_array((qrels.relevance[judged], (rows_q[judged], docs_q[judged])),
                         shape=(queries.shape[0], documents.shape[0]))
    truth.sum_duplicates()  # none left: this sorts each row by document
    rows_r, ranked = lookup(queries, run.queries)
    rows_r, scores = rows_r[ranked], run.scores[ranked]
    docs_r = docs_r[ranked].astype(np.int64)
    # equal scores by a key sorted descending: the document's place among the ids (text:
    # by_score reads no other), its opposite, or the opposite of the line's
    second = {"trec_eval": docs_r, "docno": -docs_r}.get(ties)
    if second is None:
        second = -np.flatnonzero(ranked).astype(np.int64)
    order, tied = by_score(rows_r, second, scores, queries.shape[0], documents)
    rows_r, docs_r = rows_r[order], docs_r[order]
    topk, kept = pack(rows_r, docs_r, queries.shape[0], depth)
    repeated = _repeated_pair(rows_r[kept], docs_r[kept], queries, documents)
    if repeated:
        query, doc, n = repeated
        raise ValueError(
            f"{run.path}: document {shown(doc)!r} is retrieved more than once for query "
            f"{shown(query)!r} ({n} such pairs); trec_eval rejects such runs: keep one "
            f"line per (query, document)")
    return truth, topk, queries, documents, tied


def _repeated_pair(rows: IntArray, docs: IntArray, queries: AnyArray,
                   documents: AnyArray) -> tuple[str, str, int] | None:
    """(query, document, number of such pairs) of the first (row, doc) pair that occurs
    more than once, or None."""
    n_docs = max(documents.shape[0], 1)
    unique, counts = np.unique(np.asarray(rows, np.int64) * np.int64(n_docs) + docs,
                               return_counts=True)
    repeated = unique[counts > 1]
    if not repeated.size:
        return None
    return (str(queries[repeated[0] // n_docs]), str(documents[repeated[0] % n_docs]),
            int(repeated.size))
