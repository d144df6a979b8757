"""Compile time: no kernel compiles a callee for a literal argument type, the classic
metrics compile no code of the codes with a parameter (ERR, nERR, RBP), and trec_eval's
measures alone compile no ranking kernel.

Numba types a bare constant (`n = 0`) as a literal; a callee called with it is compiled
once for `Literal[int](0)` and again for int64 when the loop widens the count (see
fastrank/_kernels/__init__.py). That doubled the first call's compile time. The check
runs in a fresh process with an empty numba cache, so that the ranking kernel and trec_eval's
kernel (which `fastrank trec` shares) compile, and records numba's compile events.
"""

import pytest

from .conftest import run_fresh

SCRIPT = """
import json
import numpy as np, scipy.sparse as sp
from numba.core import event
import fastrank as fr

literal, compiled = [], []

class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f.__qualname__)
        if f.__module__.startswith("fastrank") and "Literal" in str(ev.data["args"]):
            literal.append(f"{f.__module__}.{f.__qualname__}{ev.data['args']}")

    def on_end(self, ev):
        pass

event.register("numba:compile", Listener())
truth = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1]]))
topk = np.array([[0, 1, 2], [3, -1, 1]])
fr.evaluate(truth, topk, ["bpref", "infap", "iprec_at_recall_0.50"], convention="trec")
print("TREC=" + json.dumps(compiled))
compiled.clear()
fr.evaluate(truth, topk, ["precision@2", "recall@2", "ndcg@2", "map@2", "auc@2"])
print("CLASSIC=" + json.dumps(compiled))
from fastrank._kernels import frames as fk
# each ranking walk by its constants params, sorting and extended
print("RANK_WALKS=" + json.dumps({
    "%s,%s,%s" % (key[1], key[2], key[-1]):
        [fn.name for fn in w.cres.library.get_defined_functions()]
    for key, w in fk._walks.items() if key[0].__name__ == "rank_rows"}))
compiled.clear()
factors = np.random.default_rng(0).random((6, 3))
fr.evaluate_factors(factors[:2], factors[2:], truth, ["precision@2", "ndcg@2"])
print("FACTORS_TOPK=" + json.dumps(compiled))
compiled.clear()
fr.evaluate_factors(factors[:2], factors[2:], truth, ["precision@2", "ndcg@2", "auc"])
print("FACTORS=" + json.dumps(compiled))
train = sp.csr_array(np.array([[0, 1.0, 0, 1], [1, 0, 1, 0]]))
aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1], [0, 1]], np.int8))
compiled.clear()
fr.evaluate(truth, topk, ["novelty@2", "recall_ips@2", "miscalibration@2", "err_ia@2"],
            train=train, item_aspects=aspects)
print("INTENTS=" + json.dumps(compiled))
print("INTENT_WALKS=" + json.dumps([str(key[-1]) for key in fk._walks
                                    if key[0].__name__ == "intent_rows"]))
fr.ab_ndcg(truth, topk, aspects, user_aspects=np.ones((2, 2)))
fr.alpha_ndcg(truth, topk, aspects)
from fastrank._kernels import frames
drivers = (frames.run_ranges,)
print("DRIVERS=" + json.dumps({driver.__name__: [fn.name for c in driver.overloads.values()
                                                 for fn in c.library.get_defined_functions()]
                               for driver in drivers}))
fr.evaluate(truth, topk, ["precision@2", "ndcg@2", "err@2", "nerr@2", "rbp@2"])
print("LITERAL=" + json.dumps(literal))
"""


@pytest.fixture(scope="module")
def compile_events(tmp_path_factory):
    """{name: value} of the lines SCRIPT printed, run once in a fresh process."""
    return run_fresh(SCRIPT, tmp_path_factory.mktemp("numba-cache"))


@pytest.mark.slow
def test_no_kernel_compiles_a_callee_for_a_literal_type(compile_events):
    literal = compile_events["LITERAL"]
    assert literal == [], "compiled for a literal type:\n" + "\n".join(literal)


@pytest.mark.slow
def test_the_classic_metrics_compile_no_code_of_the_codes_with_a_parameter(compile_events):
    """ERR, nERR and RBP keep the hits of the walk (_param_slots): only the kernel that
    serves them compiles that code, so the classic metrics' first call is shorter."""
    classic = compile_events["CLASSIC"]
    assert "rank_rows.<locals>.rank_rows" in classic, classic
    assert not {"_param_slots", "_ideal_err", "_stop_chance"} & set(classic), classic


@pytest.mark.slow
def test_the_classic_metrics_on_whole_grades_compile_no_sort(compile_events):
    """Rows of whole grades up to 15 are ranked by counting: the walk that the classic
    metrics' first call compiles has no sort_top, a seventh of its compile time."""
    walks = compile_events["RANK_WALKS"]
    assert list(walks) == ["False,False,False"], walks
    assert not [name for name in walks["False,False,False"] if "sort_top" in name]


@pytest.mark.slow
def test_the_classic_metrics_compile_the_walk_of_the_core_codes(compile_events):
    """The classic metrics (codes.CORE) compile a walk without the other codes' sums and
    slots (`extended` False), which are not even in its source: numba's passes before it
    drops a constant's dead branches cost as much as the code, a quarter of the walk's
    first compile in all."""
    classic = compile_events["CLASSIC"]
    assert "_other_slots" not in classic, classic
    assert [key.split(",")[-1] for key in compile_events["RANK_WALKS"]] == ["False"]


@pytest.mark.slow
def test_the_intent_aware_metrics_without_nrbp_compile_none_of_its_code(compile_events):
    """S-recall, NRBP and nNRBP are in the intent-aware walk made with `novelty` only: a
    call without them compiles the walk without their sums and nNRBP's ideal."""
    assert "intent_rows.<locals>.walk" in compile_events["INTENTS"], compile_events["INTENTS"]
    assert "_full_alpha_ideal" not in compile_events["INTENTS"]
    assert compile_events["INTENT_WALKS"] == ["False"], compile_events["INTENT_WALKS"]


@pytest.mark.slow
def test_trec_eval_measures_alone_compile_no_ranking_kernel(compile_events):
    """m and the counted queries come from a small kernel when no ranking slot is asked
    (the ranking kernel is most of a first call's compile time)."""
    trec = compile_events["TREC"]
    assert {"trec_rows.<locals>.walk", "relevant_counts.<locals>.counts"} <= set(trec), trec
    assert "rank_rows.<locals>.rank_rows" not in trec


@pytest.mark.slow
def test_trec_eval_measures_without_graded_gains_compile_none_of_theirs(compile_events):
    """bpref, infAP and iprec (like trec_eval's default measures) run trec_eval's walk
    without the ideal's sort and the gain family (`trec_rows`' `graded`): 2 s of its
    first compile."""
    trec = compile_events["TREC"]
    assert not {"sort_top", "_gain_table", "_dcg_family", "_rbp", "_msort"} & set(trec), trec


@pytest.mark.slow
@pytest.mark.parametrize("walk", ["rank_rows", "counts", "scan", "trec_rows", "topk_blocks",
                                  "beyond_rows", "debiased_rows", "miscalibration_rows",
                                  "intent_rows", "ideal_range", "ab_dcg_rows", "alpha_rows",
                                  "gamma_sizes", "gamma_rows", "gamma_shares", "dense_weight_rows"])
def test_the_parallel_driver_calls_the_walks_without_linking_them_in(compile_events, walk):
    """The one parallel driver calls each walk through its C wrapper's address: numba
    compiles the walk once, where linking it into a driver optimised and emitted it twice more (the
    parallel region and the driver itself), a third of a first call; and the driver,
    whose arguments are a frame, compiles once for every walk."""
    defined = compile_events["DRIVERS"]["run_ranges"]
    assert any("run_ranges" in name for name in defined), defined
    assert not [name for name in defined if walk in name], defined


@pytest.mark.slow
def test_the_factors_path_without_the_full_ranking_auc_compiles_none_of_it(compile_events):
    """The scoring walk's full-ranking AUC (the block's positives, scored by a BLAS call
    of their own, and their counters) compiles only for a call that asks for `auc` without
    a cutoff: half of the walk's first compile."""
    topk_only = compile_events["FACTORS_TOPK"]
    assert "topk_blocks.<locals>.walk" in topk_only, topk_only
    assert not {"_positives", "_count_vs"} & set(topk_only), topk_only
    assert {"topk_blocks.<locals>.walk", "_positives"} <= set(compile_events["FACTORS"])


@pytest.mark.slow
def test_the_factors_path_compiles_no_shape_error_message(compile_events):
    """np.dot and slice assignments build a shape-mismatch message in compiled code (1.8 s
    of a first call): the factors kernels call BLAS and copy rows without them."""
    found = [name for name in compile_events["FACTORS_TOPK"] + compile_events["FACTORS"]
             if "shape_context" in name or "ol_str" in name]
    assert found == [], found


def test_the_big_walks_copy_in_no_inline_always_callee():
    """numba copies an `inline="always"` callee into its caller by deep-copying the
    callee's IR block by block, each block with its whole scope: the ranking walk's block
    helpers cost 0.5 s of the first call that way, the αβ-nDCG ideal's scalar helpers
    3 s. Those walks write such steps out or call them (a call of a function that takes
    no array costs nothing: LLVM inlines it)."""
    import numpy as np
    from numba.core.registry import CPUDispatcher

    from fastrank._kernels import aspects, ranking

    # the αβ ideal keeps three that take arrays: its scan's loop over groups and the marks
    allowed = {"_scan_groups", "_mark_unrated", "_resolve"}
    walks = [ranking.rank_rows(params, sorting, np.int32, np.int32, np.float64, np.int64,
                               np.int64) for params in (False, True) for sorting in (False, True)]
    for walk in (*walks, aspects.ideal_range((np.int64,) * 32)):
        code = walk.py_func.__code__
        names = set(code.co_names) | set(code.co_freevars)
        scope = {**walk.py_func.__globals__,
                 **dict(zip(code.co_freevars,
                            (c.cell_contents for c in walk.py_func.__closure__ or ())))}
        copied = sorted(name for name in names - allowed
                        if isinstance(scope.get(name), CPUDispatcher)
                        and scope[name].targetoptions.get("inline") == "always")
        assert copied == [], f"{walk.py_func.__qualname__} copies in {copied}"


def test_every_kernel_compiles_through_the_lean_pipeline():
    """Every kernel of fastrank._kernels, but the parallel ones, compiles through
    `_kernels.jit`'s pipeline, which skips numba's passes that have nothing to do in them
    (0.7-0.9 s of a first call): a kernel decorated with numba's own njit would pay them.
    The factories' walks are checked by building one of each."""
    import importlib
    import pkgutil

    import numpy as np
    from numba.core.registry import CPUDispatcher

    import fastrank._kernels as kernels
    from fastrank._kernels import aspects, jit, ranking

    found = []
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"fastrank._kernels.{info.name}")
        found += [v for v in vars(module).values() if isinstance(v, CPUDispatcher)]
    found += [ranking.rank_rows(False, False, *(np.int64,) * 5),
              ranking.relevant_counts(np.int64, np.float64, np.int64),
              aspects.ideal_range((np.int64,) * 32), aspects.ab_dcg_rows((np.int64,) * 26)]
    assert len(found) > 50
    default = [f"{d.py_func.__module__}.{d.py_func.__qualname__}" for d in found
               if not d.targetoptions.get("parallel")
               and d._compiler.pipeline_class not in (jit.Lean, jit.LeanLoops)]
    assert default == []
    assert ranking.rank_rows(False, False, *(np.int64,) * 5)._compiler.pipeline_class \
        is jit.LeanLoops
