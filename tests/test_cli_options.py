"""What a new user of the `fastrank` command meets first: --version, help on every option,
progress bars, TREC files in `fastrank evaluate`, per-user JSON lines, --places, metric
names that keep their @K, and a quiet `| head`."""

import argparse
import importlib.metadata
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import fastrank as fr
from fastrank import cli
from . import test_cli_evaluate

run = test_cli_evaluate.run
csv_files = test_cli_evaluate.csv_files  # the fixture: two small CSV files

TREC = "tests/data/trec_eval"


def test_version_names_the_package_and_what_its_numbers_depend_on(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert out.startswith(f"fastrank {fr.__version__} (distribution fastrank-eval); Python ")
    for name in ("numba", "numpy", "scipy"):
        assert f"{name} {importlib.metadata.version(name)}" in out


def test_every_option_of_every_command_has_help():
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {action.dest}" for name, sub in commands.choices.items()
               for action in sub._actions if not action.help]
    missing += [a.dest for a in parser._actions if not a.help]
    assert missing == []
    for name, sub in commands.choices.items():
        assert "--progress" in sub.format_help() or name == "metrics"


def test_progress_bar_only_when_asked_or_on_a_terminal(csv_files, capsys):
    base = ["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]), "-m",
            "ndcg@2"]
    code, out, err = run(base, capsys)  # stderr is not a terminal here
    assert code == 0 and err == ""
    code, out_bar, err = run(base + ["--progress"], capsys)
    assert code == 0 and out_bar == out
    assert "fastrank evaluate" in err and "steps done" in err and "evaluating 5 users" in err
    assert "reading t.csv" in err and "reading r.csv" in err
    code, _, err = run(["demo", "--users", "300", "--items", "50", "--progress"], capsys)
    assert code == 0 and "building 300 users' data" in err
    code, _, err = run(["trec", "-m", "map", "--progress", f"{TREC}/qrels.test",
                        f"{TREC}/results.test"], capsys)
    assert code == 0 and "reading the run" in err


def test_default_metrics_keep_their_cutoff_in_every_output(csv_files, capsys):
    base = ["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1])]
    _, out, _ = run(base, capsys)
    names = [line.split()[0] for line in out.splitlines()[2:]]
    assert names == [f"{name}@2" for name in cli.DEFAULT_METRICS]
    _, out, _ = run(base + ["--csv"], capsys)
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == names
    _, out, _ = run(base + ["-k", "1", "--json"], capsys)
    assert [k for k in json.loads(out) if "@" in k] == [f"{n}@1" for n in cli.DEFAULT_METRICS]


def test_places_rounds_the_printed_means(csv_files, capsys):
    base = ["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]), "-m",
            "ndcg@2", "map@2"]
    _, exact, _ = run(base + ["--json"], capsys)
    exact = json.loads(exact)
    _, out, _ = run(base + ["--places", "3"], capsys)
    assert out.splitlines()[2].split() == ["ndcg@2", f"{exact['ndcg@2']:.3f}"]
    _, out, _ = run(base + ["--places", "0"], capsys)
    assert out.splitlines()[3].split() == ["map@2", f"{exact['map@2']:.0f}"]
    _, out, _ = run(base + ["--places", "2", "--json"], capsys)
    assert json.loads(out)["ndcg@2"] == round(exact["ndcg@2"], 2)
    _, out, _ = run(base + ["--places", "4", "--csv"], capsys)
    assert out.splitlines()[1] == f"ndcg@2,{round(exact['ndcg@2'], 4)!r},3"
    code, _, err = run(base + ["--places", "-1"], capsys)
    assert code == 2 and "--places: expected a number of at least 0" in err


def test_per_user_json_lines(csv_files, tmp_path, capsys):
    import gzip

    base = ["evaluate", "--truth", str(csv_files[0]), "--topk", str(csv_files[1]), "-m",
            "ndcg@2", "recall@2"]
    for name, opener in (("u.jsonl", open), ("u.jsonl.gz", gzip.open)):
        code, _, _ = run(base + ["--per-user", str(tmp_path / name)], capsys)
        assert code == 0
        with opener(tmp_path / name, "rt", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
        code, _, _ = run(base + ["--per-user", str(tmp_path / "u.csv")], capsys)
        lines = (tmp_path / "u.csv").read_text().splitlines()
        assert [list(row) for row in rows] == [lines[0].split(",")] * len(rows)
        for row, line in zip(rows, lines[1:]):
            user, ndcg, recall = line.rsplit(",", 2)
            assert row["user"] == user
            for value, text in ((row["ndcg@2"], ndcg), (row["recall@2"], recall)):
                assert value is None if text == "" else value == float(text)
    assert any(row["ndcg@2"] is None for row in rows)  # a user not counted: null


def _trec_as_csv(tmp_path):
    """The TREC test files as fastrank evaluate's CSV tables: judgments as they are, the
    run's score column (document ids as text, so ties break as trec_eval breaks them)."""
    qrels = fr.io.read_qrels(f"{TREC}/qrels.test")
    runs = fr.io.read_run(f"{TREC}/results.test")
    (tmp_path / "t.csv").write_text("user,item,relevance\n" + "".join(
        f"{q},{d},{r:g}\n" for q, d, r in zip(qrels.queries, qrels.documents,
                                             qrels.relevance)))
    (tmp_path / "r.csv").write_text("user,item,score\n" + "".join(
        f"{q},{d},{s!r}\n" for q, d, s in zip(runs.queries, runs.documents,
                                               runs.scores.tolist())))


def test_evaluate_reads_trec_files_as_trec_eval_does(tmp_path, capsys):
    base = ["evaluate", "--trec", "--truth", f"{TREC}/qrels.test", "--topk",
            f"{TREC}/results.test"]
    code, out, err = run(base + ["-m", "map", "P_5", "ndcg_cut_10", "bpref", "--csv"], capsys)
    assert code == 0, err
    means = {line.split(",")[0]: float(line.split(",")[1]) for line in out.splitlines()[1:]}
    code, trec_out, _ = run(["trec", "-c", "-m", "map", "-m", "P.5", "-m", "ndcg_cut.10",
                             "-m", "bpref", f"{TREC}/qrels.test", f"{TREC}/results.test"],
                            capsys)
    printed = {line.split()[0]: float(line.split()[2]) for line in trec_out.splitlines()}
    assert code == 0 and printed.keys() == means.keys()
    for name, value in means.items():
        assert round(value, 4) == printed[name]  # trec_eval prints 4 decimals
    # the same data as CSV tables: the same per-query values, under the same convention
    _trec_as_csv(tmp_path)
    trec_rows, csv_rows = tmp_path / "trec.jsonl", tmp_path / "csv.jsonl"
    code, _, err = run(base + ["-m", "ndcg@10", "map@100", "--per-user", str(trec_rows)],
                       capsys)
    assert code == 0, err
    code, _, err = run(["evaluate", "--truth", str(tmp_path / "t.csv"), "--topk",
                        str(tmp_path / "r.csv"), "--convention", "trec", "-m", "ndcg@10",
                        "map@100", "--per-user", str(csv_rows)], capsys)
    assert code == 0, err
    a = [json.loads(line) for line in trec_rows.read_text().splitlines()]
    b = [json.loads(line) for line in csv_rows.read_text().splitlines()]
    assert [r["user"] for r in a] == [str(r["user"]) for r in b]
    for x, y in zip(a, b):
        for name in ("ndcg@10", "map@100"):
            assert math.isclose(x[name], y[name], rel_tol=1e-12, abs_tol=1e-15)


def test_evaluate_trec_counts_queries_and_cuts_at_k(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 b 1 3 x\n1 Q0 a 2 2 x\n2 Q0 c 1 1 x\n9 Q0 a 1 1 x\n")
    base = ["evaluate", "--trec", "--truth", str(tmp_path / "q"), "--topk",
            str(tmp_path / "r"), "--json", "-m", "mrr"]
    code, out, err = run(base, capsys)
    doc = json.loads(out)
    assert code == 0, err
    # queries 1, 2 (found at ranks 2 and 1) and 3 (no results: 0, as trec_eval -c); the
    # run's query 9 has no judgment
    assert doc["counts"] == {"users": 3, "counted": 3, "without_recommendations": 1,
                             "without_truth": 1}
    assert doc["convention"] == "trec" and doc["mrr"] == pytest.approx((0.5 + 1) / 3)
    code, out, _ = run(base + ["-k", "1"], capsys)
    assert json.loads(out)["mrr"] == pytest.approx(1 / 3) and json.loads(out)["k"] == 1
    code, _, err = run(base[:-3] + ["--convention", "recsys", "--csv"], capsys)
    assert code == 0 and err == ""
    code, _, err = run(["evaluate", "--truth", str(tmp_path / "q"), "--topk",
                        str(tmp_path / "r")], capsys)
    assert code == 2 and "or --trec for a TREC qrels and run file" in err
    (tmp_path / "bad").write_text("1 0 a\n")
    code, _, err = run(["evaluate", "--trec", "--truth", str(tmp_path / "bad"), "--topk",
                        str(tmp_path / "r")], capsys)
    assert code == 2 and f"{tmp_path / 'bad'}:1:" in err and err.count("\n") == 1


@pytest.mark.slow
def test_a_closed_pipe_ends_the_command_quietly(tmp_path):
    """`fastrank trec -q ... | head -1`: the reader stops after one line, the command
    stops writing with status 0 and nothing on stderr (no traceback, no 'Broken pipe')."""
    rng = np.random.default_rng(0)
    with open(tmp_path / "q", "w") as qrels, open(tmp_path / "r", "w") as results:
        for q in range(2000):
            for d in rng.choice(100, 10, replace=False):
                qrels.write(f"q{q} 0 d{d} {rng.integers(0, 3)}\n")
            for rank, d in enumerate(rng.choice(100, 20, replace=False)):
                results.write(f"q{q} Q0 d{d} {rank} {-rank} run\n")
    proc = subprocess.Popen([sys.executable, "-m", "fastrank", "trec", "-q",
                             str(tmp_path / "q"), str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does: the rest of the output (~1 MB) has no reader
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 0
    assert first.startswith(b"num_ret") and err == b""


def _into_a_closed_pipe(argv, unbuffered):
    """Run `python -m fastrank argv` with stdout a pipe whose reader has already gone (as
    `| head -1` or `| :` leave it): every write fails with EPIPE, however the output is
    buffered. (exit code, stderr)"""
    import os

    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if unbuffered:  # each print writes at once and fails in the command
        env["PYTHONUNBUFFERED"] = "1"
    # else (the default): the output waits in Python's buffer, flushed at exit
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "fastrank", *argv], stdout=write,
                              stderr=subprocess.PIPE, env=env, timeout=300)
    finally:
        os.close(write)
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize("argv, unbuffered", [
    *((argv, unbuffered) for unbuffered in (False, True) for argv in (
        ["--version"], ["--help"], ["trec", f"{TREC}/qrels.test", f"{TREC}/results.test"])),
    # more than a buffer: the writes fail in the command itself
    (["metrics", "--dialects"], False),
    (["trec", "-q", "-m", "all_trec", f"{TREC}/qrels.test", f"{TREC}/results.test"], False),
])
def test_every_command_ends_quietly_when_its_reader_has_gone(argv, unbuffered):
    """`fastrank --version | :` printed a BrokenPipeError traceback (status 1), and with
    Python's default buffering every command that printed less than a buffer ended with
    'Exception ignored ... BrokenPipeError' (status 120): stdout is flushed inside main's
    handler, which then points it at devnull and exits 0, as Python's docs on SIGPIPE
    say, whether the pipe fails in the command, in argparse's --version or at exit."""
    code, err = _into_a_closed_pipe(argv, unbuffered)
    assert (code, err) == (0, "")


def test_a_number_option_takes_ascii_digits_as_a_label_does(csv_files, capsys):
    """-k １０ was k = 10 (int() takes other scripts' digits) where -m ndcg@１０ is refused:
    the command's whole numbers are ASCII (1_000 still reads as 1000)."""
    truth, recs = csv_files
    for k in ("１０", "٣"):
        code, _, err = run(["evaluate", "--truth", str(truth), "--topk", str(recs), "-k", k],
                           capsys)
        assert code == 2 and f"expected a whole number in ASCII digits, got {k!r}" in err
    code, out, _ = run(["evaluate", "--truth", str(truth), "--topk", str(recs), "-k", "1_0",
                        "--json"], capsys)
    assert code == 0 and json.loads(out)["k"] == 10
