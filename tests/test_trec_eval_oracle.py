"""`fastrank trec` against trec_eval 10 itself, built from its source.

A session fixture builds trec_eval from `tests/oracles/trec_eval-10.0` (NIST's source,
kept intact) in a temporary folder; the tests skip only where no C compiler exists.
Random qrels and runs (ties, unjudged and pooled-unjudged documents, comment lines,
queries on one side only, docnos whose text order differs from their numbers) go
through both programs with random -q, -c, -l, -M and -m options: every line trec_eval
prints for a measure fastrank supports must be printed identically, in the same order,
and where trec_eval stops with an error, fastrank must stop with one too.
"""

import contextlib
import io as stdio
import subprocess
import sys

import numpy as np
import pytest

from fastrank import cli

from .conftest import TREC_EVAL_SOURCE

pytestmark = pytest.mark.slow  # trec_eval built from source, thousands of lines compared


def run_oracle(binary, options, qrels, run):
    done = subprocess.run([str(binary), *options, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout.splitlines()


def run_fastrank(options, qrels, run):
    out, err = stdio.StringIO(), stdio.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["trec", *options, str(qrels), str(run)])
    return code, out.getvalue().splitlines(), err.getvalue()


QIDS = ["1", "2", "9", "10", "101", "q3", "Q3", "a-1", "topic_7"]


def doc_name(rng, j):
    return ["d{}", "{}", "D{}", "doc-{}", "x#{}"][j % 5].format(j // 5 if j % 5 else j)


def random_files(rng, folder, tag):
    """A qrels and a run file with everything trec_eval meets in practice."""
    n_docs = int(rng.integers(3, 40))
    docs = [doc_name(rng, j) for j in range(n_docs)]
    qids = list(rng.choice(QIDS, size=int(rng.integers(1, 6)), replace=False))
    grades = rng.choice([-1, 0, 0, 1, 1, 1, 2, 3], size=1000)
    qrels, run = [], []
    tied = rng.random() < 0.6
    for q in qids:
        judged = rng.choice(n_docs, size=int(rng.integers(1, n_docs + 1)), replace=False)
        qrels += [f"{q} 0 {docs[d]} {grades[(d * 7 + len(q)) % 1000]}" for d in judged]
        if rng.random() < 0.8 or q == qids[0]:
            retrieved = rng.choice(n_docs, size=int(rng.integers(1, n_docs + 1)),
                                   replace=False)
            scores = (rng.integers(0, 4, retrieved.size) / 2 if tied
                      else rng.random(retrieved.size).round(3))
            run += [f"{q} Q0 {docs[d]} {r} {s} run{tag}"
                    for r, (d, s) in enumerate(zip(retrieved, scores), start=1)]
    if rng.random() < 0.3:  # a run for a query nobody judged
        run.append(f"zz Q0 {docs[0]} 1 1.0 run{tag}")
    rng.shuffle(qrels)
    rng.shuffle(run)
    if rng.random() < 0.5:  # trec_eval 10 skips comment lines (one at a time in qrels)
        qrels.insert(int(rng.integers(0, len(qrels))), "# judged by hand")
        run.insert(int(rng.integers(0, len(run) + 1)), "# produced by a test")
    (folder / f"qrels{tag}").write_text("\n".join(qrels) + "\n")
    (folder / f"run{tag}").write_text("\n".join(run) + "\n")
    return folder / f"qrels{tag}", folder / f"run{tag}"


# measures with parameters, and parameters trec_eval reads for them
PARAMETERS = {
    "iprec_at_recall": lambda rng: ",".join(f"{p:.4g}" for p in rng.choice(
        [0.0, 0.05, 0.1, 0.25, 1 / 3, 0.5, 0.7451, 0.75, 0.9, 0.999, 1.0],  # 0.7451 prints
        size=int(rng.integers(1, 4)), replace=False)),                  # as 0.75
    "Rprec_mult": lambda rng: ",".join(f"{p:.3g}" for p in rng.choice(
        [0.1, 0.2, 0.5, 1.0, 1.5, 2.0, 3.0], size=int(rng.integers(1, 4)), replace=False)),
    "11pt_avg": lambda rng: ",".join(f"{p:.3g}" for p in rng.choice(
        [0.0, 0.2, 0.5, 0.8, 1.0], size=int(rng.integers(1, 4)), replace=False)),
    "utility": lambda rng: ",".join(str(v) for v in rng.choice([-2, -1, 0, 0.5, 1, 3], 4)),
    "set_F": lambda rng: str(rng.choice([0.25, 0.5, 1.0, 2.0])),
    "relstring": lambda rng: str(rng.choice([1, 3, 20])),
    "rbp": lambda rng: ",".join(
        [f"p={rng.choice([0.5, 0.8, 0.95])}"]
        + [f"{lv}={rng.choice([0, 0.5, 1, 2, 5])}" for lv in
           rng.choice([0, 1, 2, 3], size=int(rng.integers(0, 3)), replace=False)]),
    "rbp_resid": lambda rng: f"p={rng.choice([0.5, 0.8, 0.95])}",
    **{name: (lambda rng: ",".join(
        f"{lv}={rng.choice([0, 1, 2, 3, 5, 9])}" for lv in
        rng.choice([0, 1, 2, 3], size=int(rng.integers(1, 4)), replace=False)))
       for name in ("ndcg", "ndcg_rel", "Rndcg", "G")},
}
CUT_MEASURES = ("P", "recall", "ndcg_cut", "map_cut", "success", "relative_P", "unj")
PLAIN = ("map", "bpref", "Rprec", "recip_rank", "gm_map", "gm_bpref", "num_rel", "num_ret",
         "num_q", "num_rel_ret", "infAP", "binG", "set_P", "set_recall", "set_map",
         "set_relative_P", "num_nonrel_judged_ret", "yaap", "dcg", "ideal_dcg", "runid")


def random_options(rng, folder):
    options = []
    if rng.random() < 0.6:
        options.append("-q")
    if rng.random() < 0.5:
        options.append("-c")
    if rng.random() < 0.4:
        options += ["-l", str(rng.choice([0, 1, 2, 3]))]
    if rng.random() < 0.3:
        options += ["-M", str(rng.choice([1, 2, 5, 17]))]
    if rng.random() < 0.2:
        options.append("-J")
    if rng.random() < 0.1:
        options += ["-N", str(rng.choice([0, 50, 1000]))]
    choice = rng.random()
    if choice < 0.25:
        options += ["-m", str(rng.choice(["all_trec", "set", "official"]))]
    else:
        names = list(PARAMETERS) + list(CUT_MEASURES) + list(PLAIN)
        picked = rng.choice(names, size=int(rng.integers(1, 6)), replace=False)
        # trec_eval 10 keeps one gain table for dcg, ideal_dcg and ndcg: gains for one of
        # them with another requested crash it (fastrank refuses; tested elsewhere)
        shared = len({"dcg", "ideal_dcg", "ndcg"} & set(picked)) > 1
        if "rbp" in picked:
            # trec_eval 10's rbp scales gains outside [0, 1] by a min and max it never
            # initialises: right after ndcg, ndcg_rel, Rndcg or G they hold that measure's
            # leftovers (all_trec, with those measures, happens to read zeros as intended)
            picked = [name for name in picked
                      if name not in ("ndcg", "ndcg_rel", "Rndcg", "G", "dcg", "ideal_dcg")]
        for name in picked:
            if name in PARAMETERS and rng.random() < 0.7 and not (name == "ndcg" and shared):
                options += ["-m", f"{name}.{PARAMETERS[name](rng)}"]
            elif name in CUT_MEASURES and rng.random() < 0.7:
                cuts = rng.choice([1, 2, 3, 4, 7, 10, 25, 1000, 2**31],
                                  size=int(rng.integers(1, 4)), replace=False)
                if rng.random() < 0.1:
                    cuts = [10**12]  # alone: trec_eval scrambles cutoffs 2**31 apart
                options += ["-m", name + "." + ",".join(str(c) for c in cuts)]
            else:
                options += ["-m", str(name)]
    if rng.random() < 0.15:
        options += ["-Z", str(zscore_file(rng, folder))]
    return options


def zscore_file(rng, folder):
    """A -Z file with lines for some of the queries and measures the tests use. trec_eval
    10's binary searches read one entry past their table when the name sought sorts after
    every name there (a crash or garbage): the file ends each table with a name that sorts
    last ("~"), as a real z-score file would need to."""
    lines = ["~~~ ~ 0 1"]
    for qid in QIDS:
        if rng.random() < 0.2:
            continue  # no line for this query: every value -1000000
        lines.append(f"{qid} ~ 0 1")
        for name in ("map", "P_5", "P_10", "ndcg", "num_ret", "bpref", "recall_10",
                     "infAP", "utility", "set_F", "Rprec_mult_0.20", "unj_5"):
            if rng.random() < 0.7:
                lines.append(f"{qid} {name} {rng.random():.4f} "
                             f"{rng.choice([0.0, 0.1, 0.5]):.4f}")
    path = folder / f"z{rng.integers(10**9)}"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("seed", range(8))
def test_every_line_equals_trec_eval_10_on_random_files(trec_eval, tmp_path, seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for case in range(40):
        qrels, run = random_files(rng, tmp_path, case)
        options = random_options(rng, tmp_path)
        code, expected = run_oracle(trec_eval, options, qrels, run)
        mine_code, mine, err = run_fastrank(options, qrels, run)
        context = f"options {options}, files {qrels.read_text()!r} / {run.read_text()!r}"
        if code != 0:
            assert mine_code != 0, f"trec_eval stopped ({code}), fastrank did not: {context}"
            assert len(err.splitlines()) == 1 and "Traceback" not in err
            continue
        assert mine_code == 0, f"{err} {context}"
        assert mine == expected, context
        compared += len(mine)
    assert compared > 200


@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level"])
@pytest.mark.parametrize("options", [["-m", "all_trec", "-q"], ["-c", "-q", "-m", "all_trec"],
                                     ["-l", "2", "-q", "-m", "all_trec"],
                                     ["-M", "100", "-m", "all_trec"],
                                     ["-J", "-q", "-m", "all_trec"],
                                     ["-q", "-n", "-m", "all_trec"], ["-n", "-m", "P.5"],
                                     ["-q", "-m", "all_trec", "-Z",
                                      str(TREC_EVAL_SOURCE / "test" / "zscores_file")],
                                     ["-q", "-m", "ndcg.1=3.5,2=9.0,4=7.0", "-m", "G.2=0",
                                      "-m", "rbp.p=0.5", "-m", "utility.2,-1,-1,0.5",
                                      "-N", "5000", "-m", "relstring.20", "-m", "yaap",
                                      "-m", "ideal_dcg", "-m", "set"],
                                     ["-m", "P.5,7,3", "-m", "ndcg_cut.10,20,23.4",
                                      "-m", "success.2,5,20", "-m", "recall.20,2000",
                                      "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-q"]])
def test_trec_evals_own_test_files(trec_eval, name, options):
    test = TREC_EVAL_SOURCE / "test"
    for run in ("results.test", "results.trunc"):
        code, expected = run_oracle(trec_eval, options, test / name, test / run)
        mine_code, mine, err = run_fastrank(options, test / name, test / run)
        assert (code == 0) == (mine_code == 0), err
        if code == 0:
            assert mine == expected


def test_ids_that_are_not_utf8_are_read_ordered_and_printed_as_trec_eval_10s(trec_eval,
                                                                           tmp_path):
    """Latin-1 bytes beside UTF-8 text in qids, docnos and the runid: trec_eval reads,
    orders (strcmp) and prints bytes; so does fastrank."""
    from .test_io import LATIN1_QRELS, LATIN1_RUN

    (tmp_path / "q").write_bytes(LATIN1_QRELS)
    (tmp_path / "r").write_bytes(LATIN1_RUN)
    for options in (["-q", "-m", "all_trec"], ["-q", "-c", "-M", "2", "-m", "P.1,2"]):
        done = subprocess.run([str(trec_eval), *options, str(tmp_path / "q"),
                               str(tmp_path / "r")], capture_output=True, timeout=60)
        code, mine, err = run_fastrank(options, tmp_path / "q", tmp_path / "r")
        assert done.returncode == 0 and code == 0, err
        assert [line.encode("utf-8", "surrogateescape") for line in mine] == \
            done.stdout.splitlines()
    # the command itself, whose standard output writes those bytes back
    command = subprocess.run([sys.executable, "-m", "fastrank", "trec", *options,
                              str(tmp_path / "q"), str(tmp_path / "r")], capture_output=True,
                             timeout=300)
    assert command.returncode == 0 and command.stdout == done.stdout, command.stderr


def test_comment_files_of_trec_eval_10(trec_eval):
    test = TREC_EVAL_SOURCE / "test"
    for qrels, run in (("qrels.test.with-comments", "results.test"),
                       ("qrels.comment.test", "results.comment.test")):
        code, expected = run_oracle(trec_eval, ["-c"], test / qrels, test / run)
        mine_code, mine, err = run_fastrank(["-c"], test / qrels, test / run)
        assert code == 0 and mine_code == 0, err
        assert mine == expected
