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
    with open(path) as lines:
        for line in lines:
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


# judgments and a run whose ids mix Latin-1 bytes (not UTF-8) with UTF-8 text
LATIN1_QRELS = (b"1 0 caf\xe9 1\n1 0 cafe 0\n1 0 caf\xc3\xa9 2\n2 0 \xa9x 1\n"
                b"2 0 \xc3\xa9y 1\n\xe9q 0 z 1\n")
LATIN1_RUN = (b"1 Q0 caf\xe9 1 1.0 r\xe9n\n1 Q0 cafe 2 1.0 r\n1 Q0 caf\xc3\xa9 3 1.0 r\n"
              b"2 Q0 \xa9x 1 1.0 r\n2 Q0 \xc3\xa9y 2 1.0 r\n2 Q0 zz 3 1.0 r\n"
              b"\xe9q Q0 z 1 2 r\n")


def test_bytes_that_are_not_utf8_are_kept_and_ordered_as_bytes(tmp_path):
    """trec_eval reads bytes: a Latin-1 id is read as it is (a surrogate escape per such
    byte, which encodes back to it), and tied documents fall in their bytes' order,
    descending, where a lone byte 0xA9 sorts below UTF-8's 0xC3 0xA9."""
    (tmp_path / "q").write_bytes(LATIN1_QRELS)
    (tmp_path / "r").write_bytes(gzip.compress(LATIN1_RUN))
    qrels, run = io.read_qrels(tmp_path / "q"), io.read_run(tmp_path / "r")
    assert qrels.raw_bytes and run.raw_bytes
    assert run.documents[0] == "caf\udce9" and run.documents[0].encode(
        "utf-8", "surrogateescape") == b"caf\xe9"
    truth, topk, queries, documents = io.trec_arrays(qrels, run)
    raw = [q.encode("utf-8", "surrogateescape") for q in queries]
    assert raw == [b"1", b"2", b"\xe9q"]  # byte order
    names = [[documents[i].encode("utf-8", "surrogateescape") for i in row if i >= 0]
             for row in topk]
    assert names == [[b"caf\xe9", b"caf\xc3\xa9", b"cafe"], [b"\xc3\xa9y", b"\xa9x", b"zz"],
                     [b"z"]]
    assert truth[[0], :].toarray().ravel()[[documents.tolist().index(d) for d in (
        "caf\udce9", "caf\u00e9", "cafe")]].tolist() == [1, 2, 0]
    assert not io.read_qrels(Path(__file__).parent / "data" / "trec_eval" /
                             "qrels.test").raw_bytes


def test_ids_with_lone_surrogates_stay_distinct():
    """pandas' factorize takes 'x\\udce9' and 'x\\udca9' for one value; the ids' factorize
    must not (a Latin-1 document id per such byte)."""
    from fastrank.io.lists import factorize

    values = np.array(["x\udce9", "x\udca9", "x\udce9", "y", "x?"])
    distinct, codes = factorize(values)
    assert distinct.tolist() == sorted(set(values.tolist()))
    assert (distinct[codes] == values).all()


@pytest.mark.parametrize("compress", [False, True])
def test_a_table_file_that_is_not_utf8_is_refused_naming_the_line(tmp_path, compress):
    from fastrank.io import files

    data = b"user,item,score\nu,a,1\nu,b,2\nu,\xff,1\n"
    path = tmp_path / ("t.csv.gz" if compress else "t.csv")
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(ValueError, match=r"t\.csv(\.gz)?:4: not UTF-8 text \(invalid start "
                                         r"byte at byte 3 of the line\)"):
        files.read_csv(path)


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
