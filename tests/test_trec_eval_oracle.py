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
import re
import subprocess

import numpy as np
import pytest

from fastrank import cli

from .conftest import TREC_EVAL_SOURCE

# the lines fastrank prints: its measures, with their parameters
SUPPORTED = re.compile(
    r"(runid|num_q|num_ret|num_rel|num_rel_ret|map|gm_map|Rprec|bpref|recip_rank|ndcg"
    r"|iprec_at_recall_-?[0-9.]+|(P|recall|ndcg_cut|map_cut|success)_[0-9]+)")


def run_oracle(binary, options, qrels, run):
    done = subprocess.run([str(binary), *options, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout.splitlines()


def run_fastrank(options, qrels, run):
    out, err = stdio.StringIO(), stdio.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["trec", *options, str(qrels), str(run)])
    return code, out.getvalue().splitlines(), err.getvalue()


def supported(lines):
    return [line for line in lines if SUPPORTED.fullmatch(line.split("\t")[0].rstrip())]


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


def random_options(rng):
    options = []
    if rng.random() < 0.6:
        options.append("-q")
    if rng.random() < 0.5:
        options.append("-c")
    if rng.random() < 0.4:
        options += ["-l", str(rng.choice([0, 1, 2, 3]))]
    if rng.random() < 0.3:
        options += ["-M", str(rng.choice([1, 2, 5, 17]))]
    choice = rng.random()
    if choice < 0.25:
        options += ["-m", "all_trec"]
    elif choice < 0.75:
        for name in rng.choice(["P", "recall", "ndcg_cut", "map_cut", "success",
                                "iprec_at_recall", "map", "ndcg", "bpref", "Rprec",
                                "recip_rank", "gm_map", "num_rel", "num_ret", "num_q"],
                               size=int(rng.integers(1, 5)), replace=False):
            if name == "iprec_at_recall" and rng.random() < 0.7:
                points = rng.choice([0.0, 0.05, 0.1, 0.25, 1 / 3, 0.5, 0.7451, 0.75, 0.9,
                                     0.999, 1.0],  # 0.7451 prints as 0.75, 0.999 as 1.00
                                    size=int(rng.integers(1, 4)), replace=False)
                options += ["-m", name + "." + ",".join(f"{p:.4g}" for p in points)]
            elif name in ("P", "recall", "ndcg_cut", "map_cut", "success") and \
                    rng.random() < 0.7:
                cuts = rng.choice([1, 2, 3, 4, 7, 10, 25, 1000, 2**31],
                                  size=int(rng.integers(1, 4)), replace=False)
                if rng.random() < 0.1:
                    cuts = [10**12]  # alone: trec_eval scrambles cutoffs 2**31 apart
                options += ["-m", name + "." + ",".join(str(c) for c in cuts)]
            else:
                options += ["-m", str(name)]
    return options


@pytest.mark.parametrize("seed", range(8))
def test_every_line_equals_trec_eval_10_on_random_files(trec_eval, tmp_path, seed):
    rng = np.random.default_rng(seed)
    compared = 0
    for case in range(40):
        qrels, run = random_files(rng, tmp_path, case)
        options = random_options(rng)
        code, expected = run_oracle(trec_eval, options, qrels, run)
        mine_code, mine, err = run_fastrank(options, qrels, run)
        context = f"options {options}, files {qrels.read_text()!r} / {run.read_text()!r}"
        if code != 0:
            assert mine_code != 0, f"trec_eval stopped ({code}), fastrank did not: {context}"
            assert len(err.splitlines()) == 1 and "Traceback" not in err
            continue
        assert mine_code == 0, f"{err} {context}"
        assert mine == supported(expected), context
        compared += len(mine)
    assert compared > 200


@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level"])
@pytest.mark.parametrize("options", [["-m", "all_trec", "-q"], ["-c", "-q", "-m", "all_trec"],
                                     ["-l", "2", "-q", "-m", "all_trec"],
                                     ["-M", "100", "-m", "all_trec"],
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
            assert mine == supported(expected)


def test_comment_files_of_trec_eval_10(trec_eval):
    test = TREC_EVAL_SOURCE / "test"
    for qrels, run in (("qrels.test.with-comments", "results.test"),
                       ("qrels.comment.test", "results.comment.test")):
        code, expected = run_oracle(trec_eval, ["-c"], test / qrels, test / run)
        mine_code, mine, err = run_fastrank(["-c"], test / qrels, test / run)
        assert code == 0 and mine_code == 0, err
        assert mine == supported(expected)
