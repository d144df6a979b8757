"""TREC qrels and run files into fastrank's arrays, with the string ids kept.

    qrels = fastrank.io.read_qrels("qrels.txt")        # qid iter docno rel
    run = fastrank.io.read_run("run.txt")              # qid Q0 docno rank sim runid
    truth, topk, queries = fastrank.io.trec_arrays(qrels, run)
    fr.evaluate(truth, topk, ["ndcg_cut_10"...], convention="trec")

Files may be plain or gzip-compressed (by content, not name). A run is ordered as
trec_eval orders it: score descending, ties by document id descending (byte order); the
rank column is ignored. A malformed line is a ValueError naming the file, the line number
and the text.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .lists import by_score, lookup, pack
from .text import lines, parse_number


@dataclass(frozen=True)
class Qrels:
    """Judgments: parallel arrays, one entry per (query, document) line."""

    queries: np.ndarray    # str, the qid of each line
    documents: np.ndarray  # str
    relevance: np.ndarray  # float64
    path: str


@dataclass(frozen=True)
class Run:
    """Retrieved documents: parallel arrays, one entry per line, in file order."""

    queries: np.ndarray    # str
    documents: np.ndarray  # str
    scores: np.ndarray     # float64
    runid: str
    path: str


def _records(path, kind, layout, exact):
    """(line number, line, columns) of every line, with the column count checked: exactly
    len(layout) columns, or at least that many when not exact."""
    n = len(layout.split())
    for number, line in lines(path):
        parts = line.split()
        if len(parts) < n or (exact and len(parts) > n):
            raise ValueError(
                f"{path}:{number}: a {kind} line has {n} columns ({layout}); found "
                f"{len(parts)} in {line.rstrip()!r}")
        yield number, line, parts


_QRELS = ("qrels", "qid iter docno rel", True)
_RUN = ("run", "qid Q0 docno rank score runid", False)


def read_qrels(path):
    """Read a TREC qrels file: `qid iter docno rel` per line (whitespace separated)."""
    queries, documents, relevance = [], [], []
    for _, _, parts in _records(path, *_QRELS):
        queries.append(parts[0])
        documents.append(parts[2])
        relevance.append(parts[3])
    return Qrels(np.array(queries, dtype=str), np.array(documents, dtype=str),
                 _numbers(relevance, path, _QRELS, 3, "relevance"), str(path))


def read_run(path):
    """Read a TREC run file: `qid Q0 docno rank sim runid` per line (whitespace separated;
    further columns are ignored, as trec_eval ignores them)."""
    queries, documents, scores = [], [], []
    runid = ""
    for _, _, parts in _records(path, *_RUN):
        queries.append(parts[0])
        documents.append(parts[2])
        scores.append(parts[4])
        runid = parts[5]
    return Run(np.array(queries, dtype=str), np.array(documents, dtype=str),
               _numbers(scores, path, _RUN, 4, "score"), runid, str(path))


def _numbers(texts, path, layout, column, what):
    """The texts as finite float64 numbers; on failure the file is read again to find the
    first bad line, so that the error names its number and text."""
    try:
        values = np.array(texts, dtype=np.float64)
        if np.isfinite(values).all():
            return values
    except ValueError:
        pass
    for number, line, parts in _records(path, *layout):
        parse_number(parts[column], path, number, line, what)
    raise AssertionError("unreachable: the first pass found a bad number")  # pragma: no cover


def trec_arrays(qrels, run, *, depth=None, complete=False):
    """(truth, topk, queries, documents) for `fr.evaluate(..., convention="trec")`.

    Rows are the queries of the run that the qrels judge (trec_eval evaluates only
    those; with complete=True, as trec_eval's -c, every judged query, an empty list for
    those without results), in ascending qid order (byte order, as trec_eval's strcmp);
    columns are the documents of both files in ascending order (`documents`). Each topk
    row is the query's run ordered by score descending, ties by document id descending,
    cut at `depth` (trec_eval's -M) and padded with -1.
    A document retrieved twice for one query within the cut is an error, as in trec_eval.
    """
    documents, codes = np.unique(np.concatenate([qrels.documents, run.documents]),
                                 return_inverse=True)
    docs_q, docs_r = codes[:qrels.documents.shape[0]], codes[qrels.documents.shape[0]:]
    queries = np.unique(qrels.queries)
    if not complete:
        queries = np.intersect1d(queries, np.unique(run.queries))
    rows_q, judged = lookup(queries, qrels.queries)
    truth = sp.csr_array((qrels.relevance[judged], (rows_q[judged], docs_q[judged])),
                         shape=(queries.shape[0], documents.shape[0]))
    truth.sum_duplicates()
    rows_r, ranked = lookup(queries, run.queries)
    rows_r, scores = rows_r[ranked], run.scores[ranked]
    docs_r = docs_r[ranked].astype(np.int64)
    order = by_score(rows_r, docs_r, scores, queries.shape[0], documents)
    rows_r, docs_r = rows_r[order], docs_r[order]
    topk, kept = pack(rows_r, docs_r, queries.shape[0], depth)
    _no_duplicates(rows_r[kept], docs_r[kept], queries, documents, run.path)
    return truth, topk, queries, documents


def _no_duplicates(rows, docs, queries, documents, path):
    """trec_eval stops on a document retrieved twice for one query (within -M): so do we."""
    n_docs = max(documents.shape[0], 1)
    unique, counts = np.unique(rows * np.int64(n_docs) + docs, return_counts=True)
    repeated = unique[counts > 1]
    if repeated.size:
        query, doc = str(queries[repeated[0] // n_docs]), str(documents[repeated[0] % n_docs])
        raise ValueError(
            f"{path}: document {doc!r} is retrieved more than once for query {query!r} "
            f"({repeated.size} such pairs); trec_eval rejects such runs: keep one line per "
            f"(query, document)")

