"""trec_eval compatibility: its own test files line by line, pytrec_eval on random runs
with tied scores, -c / -M / -l, and the `fastrank trec` command's output and errors."""

import io as stdio
from pathlib import Path

import numpy as np
import pytest

from fastrank import cli, trec

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"


def _file_lines(name):
    with open(DATA / name) as lines:
        return [line.rstrip("\n") for line in lines]


def _run_cli(*argv):
    out = stdio.StringIO()
    args = cli.build_parser().parse_args(["trec", *argv])
    assert cli.run_trec(args, out=out) == 0
    return out.getvalue().splitlines()


def test_default_output_is_trec_evals_line_for_line():
    assert _run_cli(str(DATA / "qrels.test"), str(DATA / "results.test")) == \
        _file_lines("out.test")


def test_every_line_of_all_trec_per_query():
    mine = _run_cli("-q", "-m", "all_trec", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert len(mine) == 387
    assert mine == _file_lines("out.test.aq")


def test_measure_parameters_and_order():
    mine = _run_cli("-m", "success.1", "-m", "P.20,5", "-m", "iprec_at_recall.0.5",
                    str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert [line.split()[0] for line in mine] == [
        "iprec_at_recall_0.50", "P_5", "P_20", "success_1"]  # trec_eval's table order
    assert mine[1] == "P_5                   \tall\t0.2667"


@pytest.mark.parametrize("level", [1, 2])
def test_against_pytrec_eval_with_ties(level, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(level)
    qrels, run = {}, {}
    q_lines, r_lines = [], []
    for q in range(25):
        qid = f"q{q:02d}"
        docs = [f"d{d:03d}" for d in rng.choice(120, 40, replace=False)]
        qrels[qid] = {d: int(rng.integers(-1, 4)) for d in docs[:25]}
        run[qid] = {d: float(rng.integers(0, 6)) for d in docs[10:]}  # many tied scores
        q_lines += [f"{qid} 0 {d} {r}" for d, r in qrels[qid].items()]
        r_lines += [f"{qid} Q0 {d} 0 {s} tie" for d, s in run[qid].items()]
    (tmp_path / "q").write_text("\n".join(q_lines) + "\n")
    (tmp_path / "r").write_text("\n".join(r_lines) + "\n")
    measures = ["map", "Rprec", "bpref", "recip_rank", "P", "recall", "ndcg", "ndcg_cut",
                "map_cut", "success", "num_ret", "num_rel", "num_rel_ret", "infAP",
                "Rprec_mult", "utility", "binG", "G", "ndcg_rel", "Rndcg",
                "relative_P", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                "num_nonrel_judged_ret"]
    # pytrec_eval has no rbp, rbp_resid or unj, and its 11pt_avg is trec_eval 9's
    # ((long)(p·R + 0.9) relevant documents where trec_eval 10 rounds)
    report = trec.evaluate_files(tmp_path / "q", tmp_path / "r", measures,
                                 relevance_level=level)
    oracle = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
    expected = oracle.evaluate(run)
    compared = 0
    for qid, values in report.per_query.items():
        for label, value in values.items():
            assert value == pytest.approx(expected[qid][label], abs=1e-12), (qid, label)
            compared += 1
    assert compared > 25 * 40


def test_complete_and_depth(tmp_path):
    (tmp_path / "q").write_text("a 0 x 1\na 0 y 1\nb 0 x 1\nc 0 z 0\n")
    (tmp_path / "r").write_text("a Q0 y 1 3 r\na Q0 w 2 2 r\na Q0 x 3 1 r\nd Q0 x 1 1 r\n")
    # trec_eval 10 stops on a judged query without results unless -c
    with pytest.raises(ValueError, match="query 'b' is judged but .* has no results for it "
                                         r"\(2 such queries\); trec_eval 10 stops here too"):
        trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_q", "map", "num_rel"])
    complete = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_q", "map", "num_rel"],
                                   complete=True)
    assert complete.queries == ["a", "b", "c"] and complete.summary["num_q"] == 3
    assert complete.per_query["b"] == {"map": 0.0, "num_rel": 1.0}
    assert complete.summary["map"] == pytest.approx(complete.per_query["a"]["map"] / 3)
    (tmp_path / "q2").write_text("a 0 x 1\na 0 y 1\n")
    cut = trec.evaluate_files(tmp_path / "q2", tmp_path / "r", ["map", "num_ret"], depth=2)
    assert cut.per_query["a"] == {"map": 0.5, "num_ret": 2.0}


def test_the_all_line_adds_queries_in_order_as_trec_eval_does(tmp_path):
    """8 queries whose relevant documents are all at the top: P_100's mean is 0.05375
    exactly, and trec_eval's left-to-right sum rounds it up where numpy's pairwise sum
    rounds it down."""
    counts = [8, 4, 6, 7, 3, 5, 8, 2]
    (tmp_path / "q").write_text("".join(f"q{i} 0 d{j} 1\n" for i, c in enumerate(counts)
                                        for j in range(c)))
    (tmp_path / "r").write_text("".join(f"q{i} Q0 d{j} {j} {10 - j} r\n"
                                        for i, c in enumerate(counts) for j in range(c)))
    report = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["P.100", "gm_map"])
    lines = report.lines()
    assert lines[0] == "gm_map                \tall\t1.0000"
    assert lines[1] == "P_100                 \tall\t0.0538"
    assert f"{np.mean([c / 100 for c in counts]):6.4f}" == "0.0537"  # numpy's pairwise mean


def test_complete_num_rel_counts_every_positive_level_whatever_the_level(tmp_path):
    """Under -c trec_eval's summary num_rel recounts the raw qrels (level > 0), not at -l;
    the per-query values use -l."""
    (tmp_path / "q").write_text("a 0 x 1\na 0 y 2\nb 0 x 1\nb 0 z 0\nc 0 z 3\n")
    (tmp_path / "r").write_text("a Q0 y 1 3 r\na Q0 x 2 2 r\n")
    report = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_rel"], complete=True,
                                 relevance_level=2)
    assert [report.per_query[q]["num_rel"] for q in "abc"] == [1.0, 0.0, 1.0]
    assert report.summary["num_rel"] == 4
    plain = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_rel"], complete=True)
    assert plain.summary["num_rel"] == 4


def test_qrels_rules_of_trec_eval_10(tmp_path):
    q, r = tmp_path / "q", tmp_path / "r"
    r.write_text("# a comment\n1 Q0 d1 1 0.5 r\n  # indented comment\n1 Q0 d2 2 0.4 r\n")
    # a document judged twice stops trec_eval; fastrank names the query and the document
    q.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n")
    with pytest.raises(ValueError, match="document 'd1' is judged more than once for query '1'"):
        trec.evaluate_files(q, r)
    # comment lines are skipped; levels are read like C's atol: 1e3 is 1, 2.7 is 2
    q.write_text("# judged by hand\n1 0 d1 1e3\n1 0 d2 2.7\n")
    report = trec.evaluate_files(q, r, ["num_rel", "ndcg"], relevance_level=2)
    assert report.per_query["1"]["num_rel"] == 1.0
    expected = (1 + 2 / np.log2(3)) / (2 + 1 / np.log2(3))
    assert report.per_query["1"]["ndcg"] == pytest.approx(expected, rel=1e-15)
    q.write_text("1 0 d1 x1\n")
    with pytest.raises(ValueError, match=r"q:1: relevance 'x1' is not an integer level"):
        trec.evaluate_files(q, r)


@pytest.mark.parametrize("measure, labels", [
    ("ndcg_cut.10,20,23.4", ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]),
    ("P.5,7,3", ["P_3", "P_5", "P_7"]),
    ("iprec_at_recall..10,.20,.25", ["iprec_at_recall_0.10", "iprec_at_recall_0.20",
                                     "iprec_at_recall_0.25"]),
    ("P.1000000000000", ["P_1000000000000"]),
    ("success.1e3", ["success_1"]),
])
def test_parameters_are_read_as_trec_eval_reads_them(measure, labels):
    report = trec.evaluate_files(DATA / "qrels.test", DATA / "results.test", [measure])
    assert list(report.summary) == labels
    if measure == "P.1000000000000":  # no list of that length is ever built
        assert report.summary["P_1000000000000"] == pytest.approx(
            sum(report.per_query[q]["P_1000000000000"] for q in report.queries) / 3)


def test_the_last_persistence_of_rbp_counts_as_in_trec_eval():
    """trec_eval 10 reads rbp's p=... pairs in order, each overwriting the last."""
    def rbp(measure):
        report = trec.evaluate_files(DATA / "qrels.test", DATA / "results.test", [measure])
        return [value for name, value in report.summary.items() if name != "runid"]
    assert rbp("rbp.p=0.5,p=0.9") == rbp("rbp.p=0.9") != rbp("rbp.p=0.5")
    assert rbp("rbp_resid.p=0.5,p=0.9") == rbp("rbp_resid.p=0.9")


def test_names_trec_eval_prints_point_to_the_option_s_spelling():
    with pytest.raises(ValueError, match="'P_5' is the name trec_eval prints; -m takes 'P.5'"):
        trec.parse_measures(["P_5"])


@pytest.mark.parametrize("measure, match", [
    ("P.0", "cutoff '0' in 'P.0' is not a positive integer"),
    ("P.-5", "cutoff '-5' in 'P.-5' is not a positive integer"),
    ("P.5,5.5", "gives a parameter twice"),
    ("P.", "has an empty parameter list"),
    ("P.5,", "cutoff '' in 'P.5,' is not a positive integer"),
    ("P.5,10000000000", "lie more than 2\\*\\*31 apart"),
    ("iprec_at_recall.nan", "parameter 'nan' in 'iprec_at_recall.nan' is not a finite"),
    ("iprec_at_recall.inf", "is not a finite number"),
    ("utility.1,2", "utility takes 4 coefficients"),
    ("ndcg.1=3,2", "malformed pair parameters"),
    ("ndcg.1=3=4", "malformed pair parameters"),
    ("prefs_simp", "needs a preferences file"),
    ("set_F.nan", "is not a finite number"),
    ("map.5", "'map' takes no parameters"),
    ("P.99999999999999999999", "beyond 2\\*\\*62"),
])
def test_absurd_parameters_are_refused_by_name(measure, match):
    with pytest.raises(ValueError, match=match):
        trec.evaluate_files(DATA / "qrels.test", DATA / "results.test", [measure])


def test_trec_file_problems_are_errors_naming_the_file(tmp_path):
    good = DATA / "qrels.test"
    cases = {
        "bom": ("\ufeff301 Q0 d 1 1.0 r\n", "starts with a byte-order mark"),
        "empty": ("", "no results .the file is empty"),
        "comments": ("# nothing\n\n", "no results"),
        # bytes that are not UTF-8 are read as they are (as trec_eval reads them)
        "binary": (None, "binary:1: a run line has 6 columns"),
    }
    for name, (text, match) in cases.items():
        path = tmp_path / name
        if text is None:
            path.write_bytes(b"\xff\xfe\x00garbage\n")
        else:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=match):
            trec.evaluate_files(good, path)
    import gzip

    whole = gzip.compress(b"301 Q0 d 1 1.0 r\n" * 100)
    (tmp_path / "cut.gz").write_bytes(whole[:len(whole) // 2])
    with pytest.raises(ValueError, match="cut.gz: a corrupt or truncated gzip file"):
        trec.evaluate_files(good, tmp_path / "cut.gz")
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    with pytest.raises(ValueError, match="bad.gz: a corrupt or truncated gzip file"):
        trec.evaluate_files(good, tmp_path / "bad.gz")
    with pytest.raises(ValueError, match="is a directory"):
        trec.evaluate_files(good, tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file") as missing:
        trec.evaluate_files(good, tmp_path / "nothing")
    assert isinstance(missing.value, ValueError)


def test_queries_judged_only_at_negative_levels_stop_as_in_trec_eval(tmp_path):
    (tmp_path / "r").write_text("a Q0 x 1 1 r\nb Q0 x 1 1 r\n")
    (tmp_path / "q").write_text("a 0 x -1\nb 0 x 1\n")  # the first query: trec_eval fails
    with pytest.raises(ValueError, match="every judgment of query 'a' has a negative level"):
        trec.evaluate_files(tmp_path / "q", tmp_path / "r")
    (tmp_path / "q").write_text("a 0 x 1\nb 0 x -1\n")  # later: it evaluates it as 0
    report = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["map", "num_rel"])
    assert report.per_query["b"] == {"map": 0.0, "num_rel": 0.0}
    (tmp_path / "q").write_text("a 0 x 1\nb 0 x -2\n")  # below -1: it crashes
    with pytest.raises(ValueError, match="every judgment of query 'b'"):
        trec.evaluate_files(tmp_path / "q", tmp_path / "r")


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    for options in (["-l", "abc"], ["-l", "-1"], ["-M", "0"], ["-m", "P.0"],
                    ["-m", "iprec_at_recall.nan"]):
        assert cli.main(["trec", *options, str(DATA / "qrels.test"),
                         str(DATA / "results.test")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and options[1] in err
    assert cli.main(["trec", str(tmp_path / "missing"), str(DATA / "results.test")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"fastrank trec: error: qrels {tmp_path / 'missing'}: no such file"
    assert cli.main(["trec", "-m", "nDCG", str(DATA / "qrels.test"),
                     str(DATA / "results.test")]) == 2
    assert "unknown measure 'nDCG'; fastrank's trec_eval measures are runid" in \
        capsys.readouterr().err
    (tmp_path / "bad").write_text("1 Q0 d 1 0.5 r\n1 Q0 e 2 high r\n")
    assert cli.main(["trec", str(DATA / "qrels.test"), str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad:2: score 'high' is not a number" in err
    assert cli.main(["trec", "-Z", str(tmp_path / "missing"), str(DATA / "qrels.test"),
                     str(DATA / "results.test")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"fastrank trec: error: zscores (-Z) {tmp_path / 'missing'}: no such file"


def test_recall_points_that_print_alike_are_two_lines(tmp_path):
    """0.7451 and 0.7549 both print as 0.75; trec_eval computes and prints each."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 4 r\n1 Q0 x 2 3 r\n1 Q0 y 3 2 r\n1 Q0 b 4 1 r\n")
    report = trec.evaluate_files(tmp_path / "q", tmp_path / "r",
                                 ["iprec_at_recall.0.7549,0.7451"])
    assert report.lines(per_query=True) == [
        "iprec_at_recall_0.75  \t1\t1.0000", "iprec_at_recall_0.75  \t1\t0.5000",
        "iprec_at_recall_0.75  \tall\t1.0000", "iprec_at_recall_0.75  \tall\t0.5000"]


def test_fields_and_lines_end_where_trec_eval_ends_them(tmp_path):
    """trec_eval splits on C's isspace (ASCII) and ends lines at \\n only: a no-break
    space is part of a field, a lone carriage return a blank within the line."""
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 dA 1\n1 0 dB 1\n", encoding="utf-8")
    r.write_text("1 Q0 dA\u00a0 1 2 run\n1 Q0 dB 2 1 run\n", encoding="utf-8")
    report = trec.evaluate_files(q, r, ["num_ret", "num_rel_ret", "P.1"])
    assert report.summary == {"num_ret": 2, "num_rel_ret": 1, "P_1": 0.0}
    r.write_bytes(b"1 Q0 dA 1 2 run\r1 Q0 dB 2 1 run\r")  # one line with spare fields
    assert trec.evaluate_files(q, r, ["num_ret"]).summary == {"num_ret": 1}


@pytest.mark.parametrize("score", ["1_0", "\uff110", "0x10"])
def test_scores_must_be_numbers_as_c_writes_them(tmp_path, score):
    """Python's float() reads 1_0 as 10 and full-width digits; trec_eval's atof reads 1."""
    (tmp_path / "q").write_text("1 0 dA 1\n")
    (tmp_path / "r").write_text(f"1 Q0 dA 1 {score} run\n1 Q0 dB 2 5 run\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"r:1: score '{score}' is not a number"):
        trec.evaluate_files(tmp_path / "q", tmp_path / "r")


def test_documents_found_by_search_or_by_marks_give_the_same_lines(monkeypatch):
    """trec_eval's kernel marks each row's documents when the marks fit in memory and
    binary-searches the row otherwise: both give every line alike."""
    argv = ("-q", "-m", "all_trec", "-m", "yaap", "-J", str(DATA / "qrels.test"),
            str(DATA / "results.test"))
    marked = _run_cli(*argv)
    monkeypatch.setattr("fastrank.validation._OPTIONAL_SCRATCH", 0)
    searched = _run_cli(*argv)
    assert searched == marked and len(marked) > 300
