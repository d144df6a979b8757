"""`fastrank evaluate`: recommender files in (npz/npy, parquet, CSV), means out as a table,
JSON or CSV, per-user values to a file; exit codes and one-line messages."""

import gzip
import json
import math
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

import fastrank as fr
from fastrank import cli, io

TRUTH = "user,item,relevance\nu1,a,1\nu1,b,2\nu2,c,1\nu3,a,0\nu10,\"x,y\",3\n"
RECS = "user,item,score\nu1,b,0.9\nu1,c,0.5\nu2,c,0.3\nu4,a,1.0\nu10,a,2\nu10,\"x,y\",1\n"


def run(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def csv_files(tmp_path):
    (tmp_path / "t.csv").write_text(TRUTH)
    (tmp_path / "r.csv").write_text(RECS)
    return tmp_path / "t.csv", tmp_path / "r.csv"


def expected_result(metrics):
    """The same data through fastrank.io.from_tables, ids as text."""
    def table(text):
        import csv

        rows = list(csv.reader(text.splitlines()))
        cols = dict(zip(rows[0], map(list, zip(*rows[1:]))))
        for name in ("relevance", "score"):
            if name in cols:
                cols[name] = [float(v) for v in cols[name]]
        return cols

    data = io.from_tables(table(TRUTH), table(RECS))
    return data, data.evaluate(metrics)


def test_json_has_the_means_and_counts(csv_files, capsys):
    code, out, err = run(["evaluate", "--truth", str(csv_files[0]), "--topk",
                          str(csv_files[1]), "-m", "ndcg@2", "recall@2,mrr", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    _, res = expected_result(["ndcg@2", "recall@2", "mrr"])
    assert {k: doc[k] for k in res} == res.to_dict()
    assert doc["counts"] == {"users": 5, "counted": 3, "without_recommendations": 1,
                             "without_truth": 1}
    assert doc["convention"] == "recsys" and doc["k"] == 2


def test_cutoffs_past_the_longest_list_and_a_header_only_recs_file(csv_files, capsys,
                                                                  tmp_path):
    """As from_tables' evaluate: a cutoff past the longest list ends the lists early, and
    a recs file with no row scores the judged users 0."""
    code, out, err = run(["evaluate", "--truth", str(csv_files[0]), "--topk",
                          str(csv_files[1]), "-m", "ndcg@5,precision@5", "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    _, res = expected_result(["ndcg@5", "precision@5"])
    assert {k: doc[k] for k in res} == res.to_dict() and doc["k"] == 5
    (tmp_path / "none.csv").write_text("user,item,score\n")
    code, out, err = run(["evaluate", "--truth", str(csv_files[0]), "--topk",
                          str(tmp_path / "none.csv"), "-m", "ndcg@2,recall@2", "--json"],
                         capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["ndcg@2"] == 0.0 and doc["recall@2"] == 0.0 and doc["counts"]["counted"] == 3


def test_table_csv_and_per_user_file(csv_files, capsys, tmp_path):
    truth, recs = map(str, csv_files)
    code, out, _ = run(["evaluate", "--truth", truth, "--topk", recs, "-m", "ndcg@2",
                        "--per-user", str(tmp_path / "users.csv")], capsys)
    data, res = expected_result(["ndcg@2"])
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("5 users, 3 counted (convention recsys, K = 2)")
    assert lines[2].split() == ["ndcg@2", f"{res['ndcg@2']:.6f}"]
    written = (tmp_path / "users.csv").read_text().splitlines()
    assert written[0] == "user,ndcg@2"
    users = dict(line.rsplit(",", 1) for line in written[1:])
    assert list(users) == data.users.tolist()
    for user, value in zip(data.users, res.per_user("ndcg@2")):
        assert (users[user] == "") if math.isnan(value) else float(users[user]) == value

    code, out, _ = run(["evaluate", "--truth", truth, "--topk", recs, "-m", "map@2", "--csv",
                        "--convention", "trec"], capsys)
    header, row = out.splitlines()
    trec = io.from_tables(*_tables()).evaluate(["map@2"], convention="trec")
    assert header == "metric,mean,users" and row == f"map@2,{trec['map@2']!r},{trec.n_users}"


def _tables():
    data, _ = expected_result(["mrr"])
    rows = data.truth.tocoo()
    truth = {"user": data.users[rows.row], "item": data.items[rows.col],
             "relevance": rows.data}
    r, c = np.nonzero(data.topk >= 0)
    k = data.topk.shape[1]
    recs = {"user": data.users[r], "item": data.items[data.topk[r, c]],
            "score": (k - c).astype(float)}
    return truth, recs


def test_parquet_gzip_tsv_and_default_metrics(csv_files, tmp_path, capsys):
    truth, recs = _tables()
    pq.write_table(pa.table(truth), tmp_path / "t.parquet")
    pq.write_table(pa.table(recs), tmp_path / "r.parquet")
    with gzip.open(tmp_path / "r.tsv.gz", "wt") as handle:
        handle.write("user\titem\tscore\n" + "".join(
            f"{u}\t{i}\t{s}\n" for u, i, s in zip(*recs.values())))
    outs = []
    for t, r in [(csv_files[0], csv_files[1]), (tmp_path / "t.parquet", tmp_path / "r.parquet"),
                 (csv_files[0], tmp_path / "r.tsv.gz")]:
        code, out, err = run(["evaluate", "--truth", str(t), "--topk", str(r), "--json"],
                             capsys)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0] == outs[1] == outs[2]
    assert [k for k in outs[0] if "@" in k] == [f"{m}@2" for m in cli.DEFAULT_METRICS]
    code, _, _ = run(["evaluate", "--truth", str(tmp_path / "t.parquet"), "--topk",
                      str(tmp_path / "r.parquet"), "--per-user", str(tmp_path / "u.parquet")],
                     capsys)
    back = pq.read_table(tmp_path / "u.parquet").to_pydict()
    assert code == 0 and back["user"] == sorted(set(truth["user"]) | set(recs["user"]))


def test_integer_csv_ids_sort_as_numbers(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("user,item,relevance\n10,1,1\n9,2,1\n")
    (tmp_path / "r.csv").write_text("user,item,score\n10,2,1\n10,1,1\n9,2,1\n")
    code, _, _ = run(["evaluate", "--truth", str(tmp_path / "t.csv"), "--topk",
                      str(tmp_path / "r.csv"), "-m", "mrr@1", "--per-user",
                      str(tmp_path / "u.csv")], capsys)
    # numeric ids: user 9 before 10, and the tie at user 10 goes to item 2 (larger id)
    assert code == 0
    assert (tmp_path / "u.csv").read_text().splitlines() == ["user,mrr@1", "9,1.0", "10,0.0"]


def test_npz_truth_with_npy_or_table_topk(tmp_path, capsys):
    truth = sp.csr_array(np.array([[1, 2, 0], [0, 0, 1], [0, 0, 0]], float))
    sp.save_npz(tmp_path / "t.npz", truth)
    topk = np.array([[1, 2], [2, -1], [0, -1]])
    np.save(tmp_path / "k.npy", topk)
    (tmp_path / "s.csv").write_text("user,item,score\n0,1,0.9\n0,2,0.5\n1,2,0.3\n2,0,1\n")
    (tmp_path / "r.csv").write_text("user,rank,item\n0,2,2\n0,1,1\n1,1,2\n2,1,0\n")
    want = fr.evaluate(truth, topk, ["ndcg@2", "precision@1"]).to_dict()
    for recs in ("k.npy", "s.csv", "r.csv"):
        code, out, err = run(["evaluate", "--truth", str(tmp_path / "t.npz"), "--topk",
                              str(tmp_path / recs), "-m", "ndcg@2,precision@1", "--json"],
                             capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert {k: doc[k] for k in want} == want
        assert doc["counts"]["without_truth"] == 1
    code, out, _ = run(["evaluate", "--truth", str(tmp_path / "t.npz"), "--topk",
                        str(tmp_path / "k.npy"), "-k", "1", "-m", "precision", "--json"],
                       capsys)
    assert json.loads(out)["k"] == 1


@pytest.mark.parametrize("files, message", [
    (("missing.csv", "r.csv"), "--truth {d}/missing.csv: no such file"),
    (("t.csv", "missing.csv"), "--topk {d}/missing.csv: no such file"),
    (("t.csv", "r.txt"), "--topk {d}/r.txt: cannot tell the format from the name; use one of "
                         ".npy, .parquet, .csv/.tsv"),
    (("t.csv", "k.npy"), "--topk {d}/k.npy: a .npy top-K array is matched to truth by row"),
    (("bad_fields.csv", "r.csv"), "bad_fields.csv:3: 2 fields where the header has 3 "
                                  "(user,item,relevance) in line 'u2,c'"),
    (("bad_number.csv", "r.csv"), "bad_number.csv:2: relevance 'high' is not a number in "
                                  "line 'u1,a,high'"),
    (("no_rel.csv", "r.csv"), "truth has no column 'relevance'; its columns are "
                              "['user', 'item', 'grade']"),
    (("empty.csv", "r.csv"), "empty.csv: the file is empty; it needs a header line"),
    (("fake.npz", "k.npy"), "fake.npz: not a scipy.sparse .npz file"),
    (("t.npz", "r.csv"), "r.csv: column 'user' must hold integers, the rows of the --truth "
                         "matrix"),
    (("t.npz", "far.csv"), "far.csv: column 'item' has values outside [0, 3)"),
])
def test_errors_exit_2_with_one_line(tmp_path, capsys, files, message):
    (tmp_path / "t.csv").write_text(TRUTH)
    (tmp_path / "r.csv").write_text(RECS)
    (tmp_path / "r.txt").write_text(RECS)
    np.save(tmp_path / "k.npy", np.zeros((3, 2), np.int64))
    (tmp_path / "bad_fields.csv").write_text("user,item,relevance\nu1,a,1\nu2,c\n")
    (tmp_path / "bad_number.csv").write_text("user,item,relevance\nu1,a,high\n")
    (tmp_path / "no_rel.csv").write_text("user,item,grade\nu1,a,1\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "fake.npz").write_bytes(b"not a zip")
    sp.save_npz(tmp_path / "t.npz", sp.csr_array(np.eye(3)))
    (tmp_path / "far.csv").write_text("user,item,score\n0,7,1\n")
    t, r = (str(tmp_path / f) for f in files)
    code, out, err = run(["evaluate", "--truth", t, "--topk", r], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fastrank evaluate: error: ")
    assert message.format(d=tmp_path) in err


def test_an_output_in_a_folder_that_does_not_exist_is_named_before_the_work(
        csv_files, capsys, tmp_path):
    for option, command in (("--per-user", ["evaluate", "--truth", str(csv_files[0]),
                                            "--topk", str(csv_files[1])]),
                            ("--compare", ["demo", "--users", "50", "--items", "20"])):
        path = tmp_path / "no-folder" / "out.csv"
        code, out, err = run([*command, option, str(path)], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"{option} {path}: the folder {str(path.parent)!r} does not exist" in err
        folder = tmp_path / "folder.csv"
        folder.mkdir(exist_ok=True)
        code, out, err = run([*command, option, str(folder)], capsys)
        assert code == 2 and f"{option} {folder}: is a directory" in err


def test_unknown_metric_lists_the_known_ones(csv_files, capsys):
    code, _, err = run(["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]),
                        "-m", "nDCG10"], capsys)
    assert code == 2 and ("unknown metric 'nDCG10'; a cutoff follows '@', as in 'nDCG@10'; "
                          "did you mean 'nDCG'") in err
    assert "known names are precision, recall" in err


@pytest.mark.slow
def test_no_traceback_from_the_installed_command(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "fastrank", "evaluate", "--truth",
                           str(tmp_path / "nope.csv"), "--topk", str(tmp_path / "r.csv")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == \
        f"fastrank evaluate: error: --truth {tmp_path / 'nope.csv'}: no such file"


def _malformed_files(d):
    """Every file of test_malformed_files_exit_2_with_one_line, written to d."""
    sp.save_npz(d / "t.npz", sp.csr_array(np.eye(3)))
    (d / "t.csv").write_text(TRUTH)
    (d / "r.csv").write_text(RECS)
    texts = {
        "dup_rel.csv": "user,item,relevance,relevance\nu1,a,1,2\n",
        "dup_item.csv": "user,item,score,item\nu1,a,1,b\n",
        "empty_user.csv": "user,item,relevance\nu1,a,1\n,10,2\n",
        "empty_item.csv": "user,item,score\nu1,,2\n",
        "blank_user.tsv": "user\titem\tscore\n \ta\t2\n",
        "empty_rel.csv": "user,item,relevance\nu1,a,\n",
        "grouped_rel.csv": "user,item,relevance\nu1,a,1_0\n",
        "grouped_score.csv": "user,item,score\nu1,a,1_000.5\n",
        "big_item.csv": "user,item,score\n0,99999999999999999999,1\n",
        "big_user.csv": "user,item,score\n-99999999999999999999,1,1\n",
        "grouped_item.csv": "user,item,score\n0,1_0,1\n",
        "arabic_item.csv": "user,item,score\n0,\u0661,1\n",
    }
    for name, text in texts.items():
        (d / name).write_text(text, encoding="utf-8")
    (d / "empty.npy").write_bytes(b"")
    (d / "empty.npz").write_bytes(b"")
    whole = (d / "t.npz").read_bytes()
    (d / "truncated.npz").write_bytes(whole[: len(whole) // 2])
    np.save(d / "flat.npy", np.array([0, 1, 2]))
    np.save(d / "floats.npy", np.zeros((3, 2)))
    (d / "zip.npy").write_bytes(whole)
    (d / "cut_zip.npy").write_bytes(whole[: len(whole) // 2])
    np.save(d / "header.npy", np.zeros((3, 2), np.int64))
    (d / "cut.npy").write_bytes((d / "header.npy").read_bytes()[:20])
    np.savez(d / "flat.npz", format=b"coo", shape=np.array([5]), data=np.array([1.0]),
             coords=np.array([[0]]), _is_array=True)
    np.savez(d / "arrays.npz", a=np.arange(3))
    np.savez(d / "text.npz", format=b"csr", shape=np.array([3, 3]), data=np.array(["a"]),
             indices=np.array([0]), indptr=np.array([0, 1, 1, 1]))
    pq.write_table(pa.Table.from_arrays([pa.array(["u1"]), pa.array(["a"]), pa.array([1.0]),
                                         pa.array([2.0])],
                                        names=["user", "item", "score", "score"]),
                   d / "dup.parquet")
    (d / "junk.parquet").write_bytes(b"PAR1 not parquet")


@pytest.mark.parametrize("files, options, message", [
    (("dup_rel.csv", "r.csv"), [], "dup_rel.csv: the header names column 'relevance' 2 times"),
    (("t.csv", "dup_item.csv"), [], "dup_item.csv: the header names column 'item' 2 times "
                                    "('user', 'item', 'score', 'item')"),
    (("empty_user.csv", "r.csv"), [], "empty_user.csv:3: the user field is empty in line "
                                      "',10,2'"),
    (("t.csv", "empty_item.csv"), [], "empty_item.csv:2: the item field is empty"),
    (("t.csv", "blank_user.tsv"), [], "blank_user.tsv:2: the user field is empty"),
    (("empty_rel.csv", "r.csv"), [], "empty_rel.csv:2: relevance '' is not a number"),
    (("grouped_rel.csv", "r.csv"), [], "grouped_rel.csv:2: relevance '1_0' is not a number in "
                                       "line 'u1,a,1_0'; write it without '_'"),
    (("t.csv", "grouped_score.csv"), [], "grouped_score.csv:2: score '1_000.5' is not a "
                                         "number"),
    (("t.npz", "empty.npy"), [], "empty.npy: the file is empty"),
    (("empty.npz", "r.csv"), [], "empty.npz: the file is empty"),
    (("truncated.npz", "r.csv"), [], "truncated.npz: a truncated or corrupt .npz file"),
    (("t.npz", "flat.npy"), ["-k", "1"], "flat.npy: the top-K array must be 2-D, one row of "
                                         "item ids per truth row; got shape (3,)"),
    (("t.npz", "flat.npy"), [], "flat.npy: the top-K array must be 2-D"),
    (("t.npz", "floats.npy"), [], "floats.npy: the top-K array must hold integer item ids; "
                                  "got dtype float64"),
    (("t.npz", "zip.npy"), [], "zip.npy: a .npz archive, not a .npy array"),
    (("t.npz", "cut_zip.npy"), [], "cut_zip.npy: a .npz archive, not a .npy array"),
    (("t.npz", "cut.npy"), [], "cut.npy: not a .npy array of item ids"),
    (("flat.npz", "r.csv"), [], "flat.npz: the matrix must be 2-D (users x items); got shape "
                                "(5,)"),
    (("arrays.npz", "r.csv"), [], "arrays.npz: not a scipy.sparse .npz file"),
    (("text.npz", "r.csv"), [], "text.npz: the matrix values must be numeric"),
    (("t.npz", "big_item.csv"), [], "big_item.csv: column 'item' has values outside [0, 3), "
                                    "the columns of the --truth matrix: 99999999999999999999"),
    (("t.npz", "big_user.csv"), [], "big_user.csv: column 'user' has values outside [0, 3), "
                                    "the rows of the --truth matrix: -99999999999999999999"),
    (("t.npz", "grouped_item.csv"), [], "grouped_item.csv: column 'item' must hold integers, "
                                        "the columns of the --truth matrix, because --truth "
                                        "is a .npz matrix; got '1_0'"),
    (("t.npz", "arabic_item.csv"), [], "arabic_item.csv: column 'item' must hold integers"),
    (("t.npz", "dup.parquet"), [], "dup.parquet: the header names column 'score' 2 times"),
    (("t.csv", "junk.parquet"), [], "junk.parquet: not a readable parquet file"),
])
def test_malformed_files_exit_2_with_one_line(tmp_path, capsys, files, options, message):
    _malformed_files(tmp_path)
    t, r = (str(tmp_path / f) for f in files)
    code, out, err = run(["evaluate", "--truth", t, "--topk", r, *options], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fastrank evaluate: error: ")
    assert "Traceback" not in err
    assert message in err


def test_npz_truth_with_table_ids_keeps_trec_ties_and_allocates_nothing_per_column(tmp_path):
    """Items 9 and 10 tie: "9" ranks first, as trec_eval compares ids as text. A truth
    declaring 2**40 columns loads: only the items the table names are looked at."""
    from fastrank.io.files import read_inputs

    for n_items in (11, 2**40):
        truth = sp.csr_array((np.array([1.0]), np.array([9]), np.array([0, 1, 1])),
                             shape=(2, n_items))
        sp.save_npz(tmp_path / "t.npz", truth)
        (tmp_path / "s.csv").write_text("user,item,score\n0,10,0.5\n0,9,0.5\n0,3,0.9\n")
        (tmp_path / "r.csv").write_text("user,rank,item\n0,2,10\n0,1,3\n1,1,0\n")
        scored = read_inputs(tmp_path / "t.npz", tmp_path / "s.csv")
        assert scored.topk.tolist() == [[3, 9, 10], [-1, -1, -1]]
        assert scored.without_recommendations == 0 and scored.without_truth == 0
        ranked = read_inputs(tmp_path / "t.npz", tmp_path / "r.csv", k=1)
        assert ranked.topk.tolist() == [[3], [0]] and ranked.without_truth == 1


def test_a_rank_column_is_a_position_on_every_kind_of_input(tmp_path, capsys):
    """RecTools' example: item 3 at rank 1, the relevant item 1 at rank 9 (ranks 2..8
    empty), m = 2: map@9 = (1/9) / 2 = 1/18 (RecTools 0.19.0's MAP(k=9): 0.0556), K is the
    largest rank, and -k 5 cuts the item at rank 9. The same through a CSV truth, a parquet
    pair and a .npz truth whose ids are row and column numbers."""
    (tmp_path / "t.csv").write_text("user,item\n1,1\n1,2\n")
    (tmp_path / "r.csv").write_text("user,item,rank\n1,3,1\n1,1,9\n")
    pq.write_table(pa.table({"user": [1, 1], "item": [1, 2]}), tmp_path / "t.parquet")
    pq.write_table(pa.table({"user": [1, 1], "item": [3, 1], "rank": [1, 9]}),
                   tmp_path / "r.parquet")
    sp.save_npz(tmp_path / "t.npz", sp.csr_array(np.array([[0, 1.0, 1.0, 0]])))
    (tmp_path / "n.csv").write_text("user,item,rank\n0,3,1\n0,1,9\n")
    for truth, recs in (("t.csv", "r.csv"), ("t.parquet", "r.parquet"), ("t.npz", "n.csv")):
        argv = ["evaluate", "--truth", str(tmp_path / truth), "--topk", str(tmp_path / recs),
                "-m", "map@9,precision@9,mrr@9,recall@9", "--json"]
        code, out, err = run(argv, capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["k"] == 9
        assert doc["map@9"] == pytest.approx(1 / 18, rel=1e-12)
        assert doc["precision@9"] == pytest.approx(1 / 9, rel=1e-12)
        assert doc["mrr@9"] == pytest.approx(1 / 9, rel=1e-12) and doc["recall@9"] == 0.5
        code, out, err = run(argv[:-3] + ["-k", "5", "-m", "map@5,mrr", "--json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert (doc["k"], doc["map@5"], doc["mrr"]) == (5, 0.0, 0.0)


@pytest.mark.parametrize("ranks, message", [
    ("1.5", "column 'rank' holds 1.5 for user 1, which is not a whole number"),
    ("0", "column 'rank' holds rank 0 for user 1; ranks are positions counted from 1"),
    ("1", "column 'rank' gives rank 1 twice for user 1"),
    ("1000000000", "column 'rank' gives user 1 rank 1000000000: a rank is a position"),
])
def test_ranks_that_are_no_position_exit_2_naming_the_file_and_column(tmp_path, capsys,
                                                                       ranks, message):
    (tmp_path / "t.csv").write_text("user,item\n1,1\n")
    (tmp_path / "r.csv").write_text(f"user,item,rank\n1,3,1\n1,1,{ranks}\n")
    sp.save_npz(tmp_path / "t.npz", sp.csr_array(np.array([[0, 1.0, 0, 0]] * 2)))
    for truth in ("t.csv", "t.npz"):
        code, out, err = run(["evaluate", "--truth", str(tmp_path / truth), "--topk",
                              str(tmp_path / "r.csv"), "-m", "map@9"], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert str(tmp_path / "r.csv") in err and message in err


def test_valid_positions_may_be_padded_or_signed(tmp_path, capsys):
    sp.save_npz(tmp_path / "t.npz", sp.csr_array(np.eye(3)))
    (tmp_path / "r.csv").write_text("user,item,score\n+0, 00,1\n1,1,1\n2,2,1\n")
    code, out, err = run(["evaluate", "--truth", str(tmp_path / "t.npz"), "--topk",
                          str(tmp_path / "r.csv"), "-m", "precision@1", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["precision@1"] == 1.0


def test_per_user_files_by_their_names(csv_files, tmp_path, capsys):
    import gzip

    base = ["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]), "-m",
            "ndcg@2"]
    code, _, _ = run(base + ["--per-user", str(tmp_path / "u.csv.gz")], capsys)
    assert code == 0
    with gzip.open(tmp_path / "u.csv.gz", "rt") as handle:
        assert handle.readline().strip() == "user,ndcg@2"
    code, _, _ = run(base + ["--per-user", str(tmp_path / "u.tsv")], capsys)
    assert code == 0 and (tmp_path / "u.tsv").read_text().splitlines()[0] == "user\tndcg@2"
    for name, message in (("u.parquet.gz", "parquet compresses its own columns"),
                          ("u.txt", "cannot tell the format from the name")):
        code, _, err = run(base + ["--per-user", str(tmp_path / name)], capsys)
        assert code == 2 and message in err and err.count("\n") == 1
        assert not (tmp_path / name).exists()


def test_csv_summary_quotes_labels_with_commas_and_dialects_read_as_in_python(csv_files,
                                                                               capsys):
    import csv

    code, out, _ = run(["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]),
                        "-m", "f_beta(beta=2, rel=1)@2", "-m", "ndcg@2", "--csv"], capsys)
    assert code == 0
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["metric", "mean", "users"]
    assert [row[0] for row in rows[1:]] == ["f_beta(beta=2, rel=1)@2", "ndcg@2"]
    assert all(len(row) == 3 for row in rows)
    code, out, _ = run(["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]),
                        "-m", "P_2", "--csv", "--dialect", "TREC-EVAL"], capsys)
    assert code == 0 and out.splitlines()[1].startswith("P_2,")
    code, _, err = run(["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]),
                        "--dialect", "trec_evil"], capsys)
    assert code == 2 and "'trec_evil' is not a dialect fastrank speaks" in err


def test_metrics_lists_the_parameters_a_name_needs(capsys):
    code, out, _ = run(["metrics"], capsys)
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert "iprec(recall=0.3)" in names and "rprec_mult(mult=1.0)" in names
    for name in names:  # each as printed, with a cutoff for the names that take one
        try:
            fr.grammar.parse(name.replace("@k", "@5"), 10)
        except fr.grammar.ComputedElsewhere:  # rmse, ab_ndcg: parsed, then sent elsewhere
            pass


def test_table_files_as_users_write_them(tmp_path, capsys):
    """Spaces after the commas are trimmed from names and ids ("1, 11" is item 11: it
    matched no judged " 11" and every metric was 0); a truth of user and item alone lists
    relevant pairs; a CSV truth's ids (text) match a parquet's strings of the same ids."""
    (tmp_path / "t.csv").write_text("user,item,relevance\n1,10,1\n1,11,2\n2,12,1\n3,10,1\n")
    (tmp_path / "r.csv").write_text("user, item, score\n1, 11,0.9\n1, 12,0.5\n2, 10,0.8\n"
                                    "2, 12,0.3\n")
    pq.write_table(pa.table({"user": ["1", "1", "2", "2"], "item": ["11", "12", "10", "12"],
                             "score": [0.9, 0.5, 0.8, 0.3]}), tmp_path / "r.parquet")
    # user 1: 2/1 over 2 + 1/log2(3); user 2: 1/log2(3) over 1; user 3: 0
    want = (2 / (2 + 1 / math.log2(3)) + 1 / math.log2(3)) / 3
    for recs in ("r.csv", "r.parquet"):
        code, out, err = run(["evaluate", "--truth", str(tmp_path / "t.csv"), "--topk",
                              str(tmp_path / recs), "-m", "ndcg@2", "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["ndcg@2"] == pytest.approx(want, rel=1e-12)
    (tmp_path / "pairs.csv").write_text("user,item\n1,10\n1,11\n1,10\n")
    code, out, err = run(["evaluate", "--truth", str(tmp_path / "pairs.csv"), "--topk",
                          str(tmp_path / "r.csv"), "-m", "ndcg@2", "--json"], capsys)
    # user 1 lists 11 (relevant, listed twice: still 1) then 12: 1 over 1 + 1/log2(3)
    assert json.loads(out)["ndcg@2"] == pytest.approx(1 / (1 + 1 / math.log2(3)), rel=1e-12)


def test_per_user_files_keep_the_ids(tmp_path, capsys):
    """Dates as ISO text (not nanoseconds), bytes as their bytes, trec_eval's ids that are
    not UTF-8 as their bytes, and ids of int64 and uint64 together in parquet (decimal)."""
    dates = np.array(["2020-01-01", "2020-01-02"], "datetime64[ns]")
    pq.write_table(pa.table({"user": dates, "item": [1, 2], "relevance": [1, 1]}),
                   tmp_path / "t_dt.parquet")
    pq.write_table(pa.table({"user": dates, "item": [1, 1], "score": [1.0, 1.0]}),
                   tmp_path / "r_dt.parquet")
    pq.write_table(pa.table({"user": [b"a", b"\xff"], "item": [1, 2], "relevance": [1, 1]}),
                   tmp_path / "t_b.parquet")
    pq.write_table(pa.table({"user": [b"a", b"\xff"], "item": [1, 1], "score": [1.0, 1.0]}),
                   tmp_path / "r_b.parquet")
    pq.write_table(pa.table({"user": pa.array([2**64 - 1, 5], pa.uint64()), "item": [1, 2],
                             "relevance": [1, 1]}), tmp_path / "t_u.parquet")
    pq.write_table(pa.table({"user": [-1, 5], "item": [2, 2], "score": [1.0, 1.0]}),
                   tmp_path / "r_i.parquet")
    (tmp_path / "q.txt").write_bytes(b"q\xe9 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "run.txt").write_bytes(b"q\xe9 Q0 d1 1 1.0 r\nq2 Q0 d1 1 1.0 r\n")

    def per_user(truth, recs, out, *extra):
        code, _, err = run(["evaluate", *extra, "--truth", str(tmp_path / truth), "--topk",
                            str(tmp_path / recs), "-m", "P_1" if extra else "ndcg@1",
                            "--per-user", str(tmp_path / out)], capsys)
        assert code == 0, err
        return (tmp_path / out).read_bytes()

    assert per_user("t_dt.parquet", "r_dt.parquet", "dt.csv").splitlines()[1:] == [
        b"2020-01-01T00:00:00.000000000,1.0", b"2020-01-02T00:00:00.000000000,0.0"]
    lines = per_user("t_b.parquet", "r_b.parquet", "b.jsonl").splitlines()
    assert lines[0] == b'{"user": "a", "ndcg@1": 1.0}' and lines[1].startswith(b'{"user": "\xff"')
    assert per_user("q.txt", "run.txt", "q.csv", "--trec").splitlines()[1:] == [
        b"q2,0.0", b"q\xe9,1.0"]
    per_user("t_u.parquet", "r_i.parquet", "u.parquet")
    table = pq.read_table(tmp_path / "u.parquet").to_pydict()
    assert [int(v) for v in table["user"]] == [-1, 5, 2**64 - 1]
