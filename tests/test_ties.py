"""Tied scores: each tool's order of equal scores (fastrank.dialects.tie_order), checked
against the installed tools on runs with many ties; the entry points that build lists
from scores take the names' order where they agree on one (`fastrank evaluate`), or warn
(fastrank.dialects.TieOrder) naming the names whose tool orders ties otherwise."""

import json
import shutil
import warnings

import numpy as np
import pytest

import fastrank as fr
from fastrank import cli, dialects, io
from fastrank.dialects import TieOrder


def tied_run(tmp_path, seed, numeric=False, n_queries=12):
    """(qrels file, run file, qrels records, run records): 15 documents a query, 8 of
    them judged, 13 retrieved with scores 0, 1 or 2 (many ties), in no order of id."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        qid = f"{q + 1}" if numeric else f"q{q}"  # gdeval reads numeric qids only
        docs = [f"d{j}" for j in rng.choice(40, size=15, replace=False)]
        qrels += [(qid, d, int(rng.integers(0, 3))) for d in docs[:8]]
        run += [(qid, d, float(rng.integers(0, 3))) for d in docs[2:]]
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {j + 1} {s} r\n"
                                          for j, (q, d, s) in enumerate(run)))
    return tmp_path / "qrels", tmp_path / "run", qrels, run


def ir_measures_values(labels, qrels, run):
    """{label: {qid: value}} of ir-measures on the records."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(q, d, r) for q, d, r in qrels]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run]
    return {label: {m.query_id: m.value for m in
                    ir_measures.iter_calc([ir_measures.parse_measure(label)], qrels, run)}
            for label in labels}


def fastrank_values(qrels_path, run_path, labels, dialect, ties, **options):
    """{label: {qid: value}} of fastrank on the files' lists, equal scores as `ties`."""
    truth, topk, queries, _ = io.trec_arrays(io.read_qrels(qrels_path),
                                             io.read_run(run_path), ties=ties)
    res = fr.evaluate(truth, topk, labels, dialect=dialect, **options)
    return {label: dict(zip(queries.tolist(), res.per_user(label).tolist()))
            for label in labels}


def assert_same(got, want, tolerance=1e-12):
    for label, values in want.items():
        assert values, label
        for qid, value in values.items():
            assert got[label].get(qid, 0.0) == pytest.approx(value, abs=tolerance), \
                (label, qid)


IR_LABELS = ["P@5", "R@5", "AP", "AP@5", "RR", "RR@5", "nDCG", "nDCG@5", "Rprec", "Bpref",
             "Success@3", "infAP", "Judged@3", "RBP(rel=1)", "SetP", "NumRelRet"]


@pytest.mark.parametrize("seed", range(3))
def test_ir_measures_names_follow_the_order_tie_order_gives(tmp_path, seed):
    """Each ir-measures name, on a run with many ties: the order tie_order names (its
    provider's: pytrec_eval's id descending, msmarco's and judged's id ascending,
    cwl_eval's the run's order) gives ir-measures' number, per query."""
    qrels_path, run_path, qrels, run = tied_run(tmp_path, seed)
    want = ir_measures_values(IR_LABELS, qrels, run)
    for label in IR_LABELS:
        request = fr.grammar.parse(label, 100, dialect="ir_measures")
        order = dialects.tie_order("ir_measures", request.name, request.bare)
        got = fastrank_values(qrels_path, run_path, [label], "ir_measures", order)
        assert_same(got, {label: want[label]})
    assert dialects.tie_order("ir_measures", "mrr", bare=False) == "docno"
    assert dialects.tie_order("ir_measures", "mrr", bare=True) == "trec_eval"
    assert dialects.tie_order("ir_measures", "rbp", bare=True) == "file"


@pytest.mark.parametrize("seed", range(2))
def test_gdeval_and_pytrec_eval_order_ties_as_trec_eval(tmp_path, seed):
    """ir-measures' ERR@k and nDCG(dcg='exp-log2')@k come from gdeval, whose runOrder
    sorts by score, then document id descending (Perl's `lt`): trec_eval's order, as
    pytrec_eval's (trec_eval's own qsort)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path, run_path, qrels, run = tied_run(tmp_path, seed, numeric=True)
    labels = ["P_5", "map", "recip_rank", "ndcg_cut_5"]
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: r for q2, d, r in qrels if q2 == q} for q, _, _ in qrels},
        {"P", "map", "recip_rank", "ndcg_cut"})
    got = evaluator.evaluate({q: {d: s for q2, d, s in run if q2 == q} for q, _, _ in run})
    want = {label: {q: values[label] for q, values in got.items()} for label in labels}
    assert dialects.tie_order("pytrec_eval", "precision", False) == "trec_eval"
    assert_same(fastrank_values(qrels_path, run_path, labels, "pytrec_eval", "trec_eval"),
                want)
    if shutil.which("perl") is None:
        return  # ir-measures runs gdeval, a perl script
    gdeval = ["ERR@5", "nDCG(dcg='exp-log2')@5"]
    assert {dialects.tie_order("ir_measures", fr.grammar.parse(label, 9, dialect=
            "ir_measures").name, False) for label in gdeval} == {"trec_eval"}
    assert_same(fastrank_values(qrels_path, run_path, gdeval, "ir_measures", "trec_eval"),
                ir_measures_values(gdeval, qrels, run), tolerance=1e-5)  # gdeval prints 5


def test_ranx_has_no_order_of_ties_to_reproduce():
    """ranx sorts a query's documents with numba's quicksort, not stable: the same scores
    in another order of the dict (or as a Run) rank the tied documents differently, so
    no order of ties gives its number, and tie_order says so."""
    ranx = pytest.importorskip("ranx")
    qrels = {"q1": {"b": 1}}
    first = ranx.evaluate(ranx.Qrels(qrels), ranx.Run({"q1": {"a": 1.0, "b": 1.0}}), "mrr")
    second = ranx.evaluate(ranx.Qrels(qrels), ranx.Run({"q1": {"b": 1.0, "a": 1.0}}), "mrr")
    assert first != second  # one run, two numbers
    assert dialects.tie_order("ranx", "mrr", bare=True) is None
    assert "numba's quicksort" in dialects.tie_reason("ranx")
    assert dialects.tie_order("recbole", "ndcg", bare=False) is None
    assert dialects.tie_order("rectools", "mar", bare=False) is None


def run_cli(argv, capsys):
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_line_takes_the_order_of_the_names_tool(tmp_path, capsys):
    """`fastrank evaluate --trec` with ir-measures' RR@5 and Judged@3 alone ranks equal
    scores by id ascending, as ir-measures does: its numbers. Asked with P@5 (trec_eval's
    order), the lists follow trec_eval's and one warning line names RR@5."""
    qrels_path, run_path, qrels, run = tied_run(tmp_path, 0)
    labels = ["RR@5", "Judged@3", "P@5"]
    want = ir_measures_values(labels, qrels, run)
    means = {label: np.mean([want[label].get(q, 0.0) for q in sorted({q for q, _, _ in qrels})])
             for label in labels}
    base = ["evaluate", "--trec", "--truth", str(qrels_path), "--topk", str(run_path),
            "--dialect", "ir_measures", "--json"]
    (tmp_path / "t.csv").write_text("user,item,relevance\n" + "".join(
        f"{q},{d},{r}\n" for q, d, r in qrels))
    (tmp_path / "r.csv").write_text("user,item,score\n" + "".join(
        f"{q},{d},{s}\n" for q, d, s in run))
    tables = ["evaluate", "--truth", str(tmp_path / "t.csv"), "--topk",
              str(tmp_path / "r.csv"), "--dialect", "ir_measures", "--json"]
    for argv in (base, tables):  # a run file, and the same data as tables
        code, out, err = run_cli(argv + ["-m", "RR@5,Judged@3"], capsys)
        assert code == 0 and err == ""
        doc = json.loads(out)
        for label in ("RR@5", "Judged@3"):
            assert doc[label] == pytest.approx(means[label], rel=1e-12)
    code, out, err = run_cli(base + ["-m", "RR@5,P@5"], capsys)
    assert code == 0 and json.loads(out)["P@5"] == pytest.approx(means["P@5"], rel=1e-12)
    assert err.count("\n") == 1 and err.startswith("fastrank evaluate: warning: ")
    assert "'RR@5': ir-measures 0.4 orders them by item id ascending" in err
    assert "'P@5'" not in err


@pytest.mark.parametrize("library", ["pandas", "dict"])
def test_tables_warn_where_a_names_tool_orders_ties_otherwise(library):
    """from_tables orders equal scores as trec_eval (ties='trec_eval'): ir-measures' RR@2
    on such lists warns, naming ties='docno', whose lists give ir-measures' number; no
    warning without ties, for fastrank's or trec_eval's names, or in the names' order."""
    pd = pytest.importorskip("pandas")
    truth = {"user": ["u", "u", "v"], "item": ["a", "c", "b"], "relevance": [1, 1, 1]}
    recs = {"user": ["u", "u", "u", "v", "v"], "item": ["a", "b", "c", "a", "b"],
            "score": [1.0, 1.0, 0.5, 2.0, 1.0]}
    make = pd.DataFrame if library == "pandas" else dict
    data = io.from_tables(make(truth), make(recs))
    assert data.tied and data.items[data.topk[0]].tolist() == ["b", "a", "c"]
    with pytest.warns(TieOrder, match=r"'ir_measures:RR@2': ir-measures 0.4 orders them by "
                                      r"item id ascending.*Pass ties='docno' to "
                                      r"fastrank.io.from_tables") as caught:
        res = data.evaluate(["ir_measures:RR@2"])
    assert len(caught) == 1 and caught[0].filename == __file__  # the caller's line
    assert res["ir_measures:RR@2"] == 0.5  # u: b (not relevant), then a; v: a, then b
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        docno = io.from_tables(make(truth), make(recs), ties="docno")
        assert docno.items[docno.topk[0]].tolist() == ["a", "b", "c"]
        assert docno.evaluate(["ir_measures:RR@2"])["ir_measures:RR@2"] == 0.75  # u: a
        data.evaluate(["mrr@2", "recip_rank", "ir_measures:P@2", "ir_measures:Judged"],
                      convention="trec")
        untied = io.from_tables(make(truth), make({**recs, "score": [3.0, 2, 1, 2, 1]}))
        assert not untied.tied
        untied.evaluate(["ir_measures:RR@2", "ranx:mrr@2"])
    with pytest.warns(TieOrder, match="ranx sorts each query's documents with numba's "
                                      "quicksort"):
        data.evaluate(["ranx:mrr@2"])
    with pytest.warns(TieOrder, match="RecTools reads the rank column of its "
                                      "recommendations, not their scores"):
        data.evaluate(["rectools:MAP@2"])
    rows = io.from_tables(make(truth), make(recs), ties="file")
    assert rows.items[rows.topk[0]].tolist() == ["a", "b", "c"]  # the table's row order
    with pytest.raises(ValueError, match="ties must be one of 'trec_eval', 'docno', 'file'"):
        io.from_tables(make(truth), make(recs), ties="random")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4])
def test_ir_measures_diversity_names_order_ties_by_id_ascending(seed):
    """ir-measures' pyndeval names on a run whose scores tie in groups of four: lists in
    the order tie_order names (id ascending) give its numbers per query."""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    from .test_intents import ndeval_inputs, random_case

    truth, topk, aspects = random_case(seed, k=12)
    qrels, run = ndeval_inputs(truth, topk, aspects)
    run = [(q, d, float(np.floor(score / 4))) for q, d, score in run]  # ties
    n_items = truth.shape[1]
    lists = np.full(topk.shape, -1)
    for u in range(topk.shape[0]):  # score descending, then the name ascending
        mine = sorted((r for r in run if r[0] == f"q{u}"), key=lambda r: (-r[2], r[1]))
        lists[u, :len(mine)] = [-1 if d.startswith("pad") else n_items - int(d[1:])
                                for _, d, _ in mine]
    labels = ["ERR_IA@5", "P_IA@5", "AP_IA", "alpha_DCG@5", "StRecall@5", "NRBP"]
    res = fr.evaluate(truth, lists, labels, item_aspects=aspects, dialect="ir_measures")
    qrels = [ir_measures.Qrel(q, d, rel, s) for q, s, d, rel in qrels]
    run = [ir_measures.ScoredDoc(q, d, score) for q, d, score in run]
    for label in labels:
        request = fr.grammar.parse(label, 12, dialect="ir_measures")
        assert dialects.tie_order("ir_measures", request.name, request.bare) == "docno"
        values = res.per_user(label)
        for m in ir_measures.iter_calc([ir_measures.parse_measure(label)], qrels, run):
            assert values[int(m.query_id[1:])] == pytest.approx(m.value, rel=1e-12,
                                                                abs=1e-15), (label, m)
