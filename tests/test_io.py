"""fastrank.io: TREC qrels and run files, trec_eval's order, errors with file and line."""

import gzip
from pathlib import Path

import numpy as np
import pytest

import fastrank as fr
from fastrank import io

# trec_eval 10.0's own test inputs and outputs (NIST notice in LICENSE.md there)
DATA = Path(__file__).resolve().parent / "data" / "trec_eval"


def _expected(path, measures):
    """{measure: value} of the 'all' lines of a trec_eval output file."""
    out = {}
    for line in open(path):
        name, qid, value = line.split()
        if qid == "all" and name in measures:
            out[name] = float(value)
    return out


def test_trec_eval_test_files_reproduce_its_output():
    qrels, run = io.read_qrels(DATA / "qrels.test"), io.read_run(DATA / "results.test")
    truth, topk, queries, _ = io.trec_arrays(qrels, run)
    assert queries.tolist() == ["301", "302", "303"] and run.runid == "STANDARD"
    ours = {"map": "map", "P_5": "precision@5", "P_10": "precision@10", "P_100": "precision@100",
            "Rprec": "r_precision", "recip_rank": "mrr", "ndcg": "ndcg",
            "ndcg_cut_10": "ndcg@10", "recall_100": "recall@100", "map_cut_10": "map@10",
            "success_5": "hit_rate@5"}
    res = fr.evaluate(truth, topk, list(ours.values()), convention="trec")
    expected = _expected(DATA / "out.test.aq", ours)
    assert set(expected) == set(ours)
    for name, label in ours.items():
        assert f"{res[label]:.4f}" == f"{expected[name]:.4f}", name
    assert int((topk >= 0).sum()) == 1500  # num_ret


def test_run_order_is_score_then_document_descending(tmp_path):
    run_file = tmp_path / "run.txt"
    run_file.write_text("q1 Q0 b 1 0.5 r\nq1 Q0 a 2 0.5 r\nq1 Q0 c 3 0.9 r\nq1 Q0 d 9 0.1 r\n"
                        "q2 Q0 a 1 1.0 r\n")
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("q1 0 a 1\nq2 0 b 0\nq3 0 c 1\n")
    truth, topk, queries, docs = io.trec_arrays(io.read_qrels(qrels_file),
                                                io.read_run(run_file))
    assert queries.tolist() == ["q1", "q2"]  # q3 has no results: not evaluated
    assert [[docs[i] if i >= 0 else None for i in row] for row in topk] == [
        ["c", "b", "a", "d"], ["a", None, None, None]]  # the rank column is ignored
    cut = io.trec_arrays(io.read_qrels(qrels_file), io.read_run(run_file), depth=2)[1]
    assert cut.shape == (2, 2)
    assert truth.shape == (2, 4) and truth.toarray()[0].tolist() == [1.0, 0, 0, 0]


def test_gzip_and_plain_read_the_same(tmp_path):
    text = "1 0 doc1 2\n1 0 doc2 0\n\n2 0 doc1 1\n"
    (tmp_path / "q.txt").write_text(text)
    with gzip.open(tmp_path / "q.gz", "wt") as handle:
        handle.write(text)
    plain, packed = io.read_qrels(tmp_path / "q.txt"), io.read_qrels(tmp_path / "q.gz")
    assert plain.documents.tolist() == packed.documents.tolist() == ["doc1", "doc2", "doc1"]
    np.testing.assert_array_equal(plain.relevance, packed.relevance)


@pytest.mark.parametrize("reader, text, match", [
    (io.read_qrels, "1 0 d1 1\n1 0 d2\n",
     r"q\.txt:2: a qrels line has 4 columns .* found 3 in '1 0 d2'"),
    (io.read_qrels, "1 0 d1 high\n", r"q\.txt:1: relevance 'high' is not an integer level"),
    (io.read_run, "1 Q0 d1 1 0.3 r\n1 Q0 d2 2 x r\n", r"q\.txt:2: score 'x' is not a number"),
    (io.read_run, "1 Q0 d1 1 nan r\n", r"q\.txt:1: score 'nan' is not finite"),
    (io.read_run, "1 Q0 d1 1 0.3\n", r"q\.txt:1: a run line has 6 columns"),
])
def test_malformed_lines_name_file_line_and_text(tmp_path, reader, text, match):
    (tmp_path / "q.txt").write_text(text)
    with pytest.raises(ValueError, match=match):
        reader(tmp_path / "q.txt")


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no-such-file: no such file"):
        io.read_run("no-such-file")
    with pytest.raises(ValueError, match="no-such-file: no such file"):  # also a ValueError
        io.read_qrels("no-such-file")


def test_a_document_retrieved_twice_is_an_error_within_the_cut(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 0.9 r\nq1 Q0 b 2 0.5 r\nq1 Q0 a 3 0.1 r\n")
    qrels, run = io.read_qrels(tmp_path / "q.txt"), io.read_run(tmp_path / "r.txt")
    with pytest.raises(ValueError, match="document 'a' is retrieved more than once for query 'q1'"):
        io.trec_arrays(qrels, run)
    topk = io.trec_arrays(qrels, run, depth=2)[1]  # trec_eval checks only within -M
    assert topk.shape == (1, 2)


def test_a_document_judged_twice_is_an_error(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 a 1\nq1 1 a 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 0.9 r\n")
    with pytest.raises(ValueError, match="q.txt: document 'a' is judged more than once for "
                                         "query 'q1'"):
        io.trec_arrays(io.read_qrels(tmp_path / "q.txt"), io.read_run(tmp_path / "r.txt"))


def test_levels_are_read_as_atol_reads_them(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 1e3\n1 0 b 2.7\n1 0 c -1\n1 0 d +4\n1 0 e 007\n")
    assert io.read_qrels(tmp_path / "q.txt").relevance.tolist() == [1, 2, -1, 4, 7]


@pytest.mark.slow
def test_fr_io_is_an_attribute_loaded_on_first_use():
    """`import fastrank as fr; fr.io.read_qrels(...)` works in a fresh process, without
    loading fastrank.io at import and without the standard library's io being shadowed
    (as `from fastrank import io` would shadow it)."""
    import subprocess
    import sys

    code = ("import sys, io; import fastrank as fr\n"
            "assert 'fastrank.io' not in sys.modules\n"
            f"qrels = fr.io.read_qrels({str(DATA / 'qrels.test')!r})\n"
            "assert io.StringIO is __import__('io').StringIO and fr.io.__name__ == 'fastrank.io'\n"
            "print(len(qrels.queries))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == io.read_qrels(DATA / "qrels.test").queries.size
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        fr.nope
