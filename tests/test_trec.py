"""trec_eval compatibility: its own test files line by line, pytrec_eval on random runs
with tied scores, -c / -M / -l, and the `fastrank trec` command's output and errors."""

import io as stdio
from pathlib import Path

import numpy as np
import pytest

from fastrank import cli, trec

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"


def _file_lines(name):
    return [line.rstrip("\n") for line in open(DATA / name)]


def _run_cli(*argv):
    out = stdio.StringIO()
    args = cli.build_parser().parse_args(["trec", *argv])
    assert cli.run_trec(args, out=out) == 0
    return out.getvalue().splitlines()


def test_default_output_is_trec_evals_line_for_line():
    assert _run_cli(str(DATA / "qrels.test"), str(DATA / "results.test")) == \
        _file_lines("out.test")


def test_every_supported_line_of_all_trec_per_query():
    mine = _run_cli("-q", "-m", "all_trec", str(DATA / "qrels.test"), str(DATA / "results.test"))
    names = {line.split()[0] for line in mine}
    expected = [line for line in _file_lines("out.test.aq") if line.split()[0] in names]
    assert len(mine) == len(expected) == 235
    assert mine == expected


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
                "map_cut", "success", "num_ret", "num_rel", "num_rel_ret"]
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
    plain = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_q", "map", "num_rel"])
    assert plain.queries == ["a"] and plain.summary["num_q"] == 1
    complete = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["num_q", "map", "num_rel"],
                                   complete=True)
    assert complete.queries == ["a", "b", "c"] and complete.summary["num_q"] == 3
    assert complete.per_query["b"] == {"map": 0.0, "num_rel": 1.0}
    assert complete.summary["map"] == pytest.approx(plain.summary["map"] / 3)
    cut = trec.evaluate_files(tmp_path / "q", tmp_path / "r", ["map", "num_ret"], depth=2)
    assert cut.per_query["a"] == {"map": 0.5, "num_ret": 2.0}


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    assert cli.main(["trec", str(tmp_path / "missing"), str(DATA / "results.test")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"fastrank trec: error: {tmp_path / 'missing'}: no such file"
    assert cli.main(["trec", "-m", "nDCG", str(DATA / "qrels.test"),
                     str(DATA / "results.test")]) == 2
    assert "unknown measure 'nDCG'; fastrank's trec_eval measures are runid" in \
        capsys.readouterr().err
    (tmp_path / "bad").write_text("1 Q0 d 1 0.5 r\n1 Q0 e 2 high r\n")
    assert cli.main(["trec", str(DATA / "qrels.test"), str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad:2: score 'high' is not a number" in err
