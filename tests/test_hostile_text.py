"""Texts built to take time: a metric label, a trec_eval measure or a number in a TREC file
of ~50,000 characters is accepted or refused after one pass over it, with the error its
form deserves. Patterns with neighbouring repeats that can take the same characters (two
blank runs in a row, a lazy value before trailing blanks, digits on both sides of an
optional point) tried every split of a long run of blanks or digits: minutes per label,
once per dialect.

Each test runs its texts in a fresh process with a generous timeout rather than in the
test's own: a pattern stuck in the C regex engine, or any other code stuck outside
Python's bytecode loop, need not answer a signal handler (signal.alarm) within the
process, while a child process is killed wherever it is stuck, on any platform and under
pytest-xdist; and a module setting changed for a test (the label length bound lifted)
ends with the child. The timeout is no time assertion: fixed, these scripts take seconds;
before, each of their texts took minutes, so the old code fails by the timeout instead of
hanging the suite."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from .conftest import run_fresh

TIMEOUT = 300  # seconds: the scripts need a few; a quadratic pass over one text, minutes
N = 50_000
TREC = "tests/data/trec_eval"

# hostile labels, each about N characters of one repeated piece
HOSTILE = {
    "blanks in a name": "a" + " " * N + "x",
    "blanks in a value": "precision(rel=1" + " " * N + "x)@2",
    "digits in a value": "precision(rel=" + "1" * N + "x)@2",
    "opening parentheses": "ndcg" + "(" * N,
    "equals signs": "ndcg(" + "=" * N + ")@2",
    "commas": "ndcg(" + "," * N + "x)@2",
    "at signs": "ndcg" + "@" * N,
    "digits in a cutoff": "ndcg@" + "1" * N,
    "digits alone": "1" * N,
    "blanks in a trec_eval name": "P_5" + " " * N + "x",
    "a ranx level": "ndcg@10-l1" + " " * N + "x",
    "dashes then blanks": "a" + "-" * N + " " * N + "x",
    "a dialect prefix": "recbole:a" + " " * N + "x",
    "a trec_eval name": "trec_eval:ndcg_cut_1" + " " * N + "x",
    "an ir-measures parameter": "nDCG(dcg=exp-log2" + " " * N + "x)@10",
    "blanks in a sampled cutoff": "recall@" + " " * N + "10x",
}


def prelude(tmp_path):
    """The start of a child's script: the hostile labels (from a file: a command line
    cannot hold them) and `refusal(call, label)`, `command(argv, label=None)`, each giving
    [the error's type or the exit code, the message with the label written LABEL]."""
    (tmp_path / "labels.json").write_text(json.dumps(HOSTILE))
    return f"""
import contextlib, io, json
import numpy as np, scipy.sparse as sp
import fastrank as fr
from fastrank import cli, grammar
HOSTILE = json.loads(open({str(tmp_path / "labels.json")!r}).read())

def short(text, label):
    return (text if label is None else text.replace(repr(label), "LABEL"))[:300]

def refusal(call, label):
    try:
        call()
    except (ValueError, TypeError) as exc:
        return [type(exc).__name__, short(str(exc), label)]
    return ["accepted", ""]

def command(argv, label=None):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return [code, short(err.getvalue(), label)]
"""


def test_a_label_past_the_length_bound_is_refused_by_its_length_everywhere(tmp_path):
    """fr.evaluate (also with a dialect or a convention), fr.Evaluator,
    fr.evaluate_sampled and the command's -m refuse a label of ~50,000 characters by its
    length, naming the bound; fr.compare and a Result's methods answer UnknownMetric, as
    for any name they do not hold."""
    truth = sp.csr_matrix(np.array([[1.0, 0, 1, 0, 0], [0, 1, 0, 0, 1]]))
    sp.save_npz(tmp_path / "truth.npz", truth)
    np.save(tmp_path / "topk.npy", np.array([[0, 1, 2], [4, 3, 2]]))
    files = ["--truth", str(tmp_path / "truth.npz"), "--topk", str(tmp_path / "topk.npy")]
    script = prelude(tmp_path) + f"""
truth = sp.load_npz({str(tmp_path / "truth.npz")!r}).tocsr()
topk = np.load({str(tmp_path / "topk.npy")!r})

def result(values):  # a Result as fr.evaluate returns it, built without running a kernel
    return fr.Result(["ndcg@2"], [np.array(values)], {{"ndcg@2": np.mean(values)}},
                     convention="recsys", users=np.arange(2), counted=np.ones(2, bool),
                     n_relevant=np.ones(2, np.int64), k=3)

res, other = result([0.5, 1.0]), result([0.0, 1.0])
calls = {{
    "evaluate": lambda label: fr.evaluate(truth, topk, [label]),
    "evaluate, a dialect": lambda label: fr.evaluate(truth, topk, [label], dialect="ranx"),
    "evaluate, trec": lambda label: fr.evaluate(truth, topk, label, convention="trec"),
    "Evaluator": lambda label: fr.Evaluator(truth, [label]),
    "evaluate_sampled": lambda label: fr.evaluate_sampled(np.ones((2, 4)), 100, [label]),
    "compare": lambda label: fr.compare({{"a": res, "b": other}}, [label]),
    "per_user": lambda label: res.per_user(label),
    "ci": lambda label: res.ci(label),
}}
out = {{name: {{entry: refusal(lambda: call(label), label) for entry, call in calls.items()}}
       for name, label in HOSTILE.items()}}
for name, label in HOSTILE.items():
    out[name]["-m"] = command(["evaluate", *{files!r}, "-m", label], label)
print("OUT=" + json.dumps(out))
"""
    out = run_fresh(script, tmp_path / "cache", timeout=TIMEOUT)["OUT"]
    for name, label in HOSTILE.items():
        bound = (f"metrics: a label of {len(label):,} characters ({label[:40]!r}...) is not "
                 f"a metric label")
        got = out[name]
        for entry in ("evaluate", "evaluate, a dialect", "evaluate, trec", "Evaluator",
                      "evaluate_sampled"):
            assert got[entry][0] == "ValueError", (name, entry, got[entry])
            assert got[entry][1].startswith(bound), (name, entry, got[entry])
            assert "at most 1,000 characters" in got[entry][1]
        for entry in ("compare", "per_user", "ci"):
            assert got[entry][0] == "UnknownMetric", (name, entry, got[entry])
            assert "LABEL is not in th" in got[entry][1], (name, entry, got[entry])
        code, err = got["-m"]
        assert code == 2 and err.startswith(f"fastrank evaluate: error: {bound}"), (name, err)


# what each hostile label is, read by the grammar alone: the start of its error after
# "metrics: " (the label written LABEL), or the Request's (name, k) where it is one
READ = {
    "blanks in a name": "unknown metric LABEL",
    "blanks in a value": "LABEL: rel='1",
    "digits in a value": "LABEL: rel='111",
    "opening parentheses": "unknown metric LABEL; its parentheses do not match",
    "equals signs": "LABEL: parameters are written name=value",
    "commas": "LABEL: parameters are written name=value",
    "at signs": "cutoff in LABEL must be a positive integer",
    "digits in a cutoff": "cutoff in LABEL is not below 2**62",
    "digits alone": "unknown metric LABEL",
    "blanks in a trec_eval name": "unknown metric LABEL",
    "a ranx level": "cutoff in LABEL must be a positive integer",
    "dashes then blanks": "unknown metric LABEL",
    "a dialect prefix": "LABEL is not a metric name of recbole",
    "a trec_eval name": "LABEL is not a metric name of trec_eval",
    "an ir-measures parameter": "LABEL: ndcg has no parameter 'dcg'",
    "blanks in a sampled cutoff": "cutoff in LABEL must be a positive integer",
}


# what fr.evaluate_sampled says of each, where its error is not the grammar's
SAMPLED = {
    "blanks in a name": "unknown sampled metric LABEL",
    "blanks in a value": "LABEL: the sampled metrics take no parameters",
    "digits in a value": "LABEL: the sampled metrics take no parameters",
    "opening parentheses": "unknown sampled metric LABEL",
    "digits in a cutoff": "LABEL: the cutoff must lie in [1, n_items = 100]",
    "digits alone": "unknown sampled metric LABEL",
    "blanks in a trec_eval name": "unknown sampled metric LABEL",
    "dashes then blanks": "unknown sampled metric LABEL",
    "a dialect prefix": "unknown sampled metric LABEL",
    "a trec_eval name": "unknown sampled metric LABEL",
    "an ir-measures parameter": "LABEL: the sampled metrics take no parameters",
}


def test_the_grammar_reads_a_long_label_in_one_pass(tmp_path):
    """With the length bound lifted, the grammar itself refuses each ~50,000-character
    label with the error its form deserves (through every dialect it tries), and reads
    one with long blanks around its cutoff; fr.evaluate_sampled reads them with the same
    grammar."""
    script = prelude(tmp_path) + f"""
N = {N}
grammar.LONGEST_LABEL = 10 * N
read = {{name: refusal(lambda: grammar.parse(label, 10), label)
        for name, label in HOSTILE.items()}}
sampled = {{name: refusal(lambda: fr.evaluate_sampled(np.ones((2, 4)), 100, [label]), label)
           for name, label in HOSTILE.items()}}
blank = grammar.parse("ndcg@" + " " * N + "7" + " " * N)
print("OUT=" + json.dumps({{"read": read, "sampled": sampled, "blank": [blank.name, blank.k]}}))
"""
    out = run_fresh(script, tmp_path / "cache", timeout=TIMEOUT)["OUT"]
    for name, want in READ.items():
        assert out["read"][name][0] == "ValueError", (name, out["read"][name])
        assert out["read"][name][1].startswith("metrics: " + want), (name, out["read"][name])
        assert out["sampled"][name][0] == "ValueError", (name, out["sampled"][name])
        assert out["sampled"][name][1].startswith(SAMPLED.get(name, "metrics: " + want)), \
            (name, out["sampled"][name])
    assert out["blank"] == ["ndcg", 7]


def test_a_long_number_in_a_trec_file_is_refused_in_one_pass(tmp_path):
    """A run file's score of ~200,000 digits and a letter, or a qrels file's relevance of
    ~50,000, is refused naming its line: C's number pattern (digits, an optional point,
    digits) tried every split of the run of digits, and int() refused the relevance with
    a message of its own."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 " + "1" * (4 * N) + "x run\n")  # ~18 min
    (tmp_path / "bad_qrels").write_text("q1 0 d1 " + "1" * N + "x\n")
    (tmp_path / "good_run").write_text("q1 Q0 d1 1 1.5 run\n")
    script = prelude(tmp_path) + f"""
out = [command(["trec", {str(tmp_path / "qrels")!r}, {str(tmp_path / "run")!r}]),
       command(["trec", {str(tmp_path / "bad_qrels")!r}, {str(tmp_path / "good_run")!r}])]
print("OUT=" + json.dumps(out))
"""
    (score, relevance) = run_fresh(script, tmp_path / "cache", timeout=TIMEOUT)["OUT"]
    assert score[0] == 2 and score[1].startswith(f"fastrank trec: error: {tmp_path / 'run'}:1: "
                                                 f"score '111"), score
    assert relevance[0] == 2 and relevance[1].startswith(
        f"fastrank trec: error: {tmp_path / 'bad_qrels'}:1: "), relevance


def test_a_long_run_of_digits_is_read_without_ints_limit(tmp_path):
    """int() refuses a text of more than 4,300 digits (CPython's guard against its own
    quadratic conversion) with a message that names no argument: a cutoff, a trec_eval
    measure's cutoff or gain level, a qrels level and a CSV row number of 5,000 digits
    are read as the large numbers they are, and refused (or taken) by their own rules."""
    from fastrank import grammar, io, trec
    from fastrank.io.files import read_inputs

    digits = "1" * 5000
    with pytest.raises(ValueError, match=r"^metrics: cutoff in 'ndcg@1{20}.*' is not below "
                                         r"2\*\*62"):
        grammar.parse_cutoff("ndcg@" + digits, "ndcg", digits)  # past the length bound
    assert grammar.parse("ndcg@" + "0" * 900 + "7").k == 7
    with pytest.raises(ValueError, match=r"^measures: cutoff '1{20}.*' is beyond 2\*\*62"):
        trec.parse_measures(["P." + digits])
    assert trec.parse_measures(["P." + "0" * 5000 + "5"])["P"].values == (5,)
    assert trec.parse_measures(["ndcg." + digits + "=2"])["ndcg"].values == ((digits, 2.0),)
    (tmp_path / "q").write_text(f"q1 0 d1 {digits}\n")
    with pytest.raises(ValueError, match=r"q:1: relevance '1{20}.*' is not an integer level"):
        io.read_qrels(tmp_path / "q")
    sp.save_npz(tmp_path / "t.npz", sp.csr_array(np.eye(3)))
    (tmp_path / "r.csv").write_text(f"user,item,score\n0,{digits},1\n")
    with pytest.raises(ValueError, match=r"r.csv: column 'item' has values outside \[0, 3\), "
                                         r"the columns of the --truth matrix: 1{20}"):
        read_inputs(tmp_path / "t.npz", tmp_path / "r.csv")
    (tmp_path / "r.csv").write_text(f"user,item,score\n0,{'0' * 5000}2,1\n")
    assert read_inputs(tmp_path / "t.npz", tmp_path / "r.csv").topk.tolist() == \
        [[2], [-1], [-1]]
