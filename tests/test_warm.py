"""fr.warm_up: a background process compiles the kernels a later evaluation needs into
numba's cache, so that the evaluation's first call compiles none of them; and what it
refuses."""

import json

import numpy as np
import pytest

import fastrank as fr
from fastrank.warm import stand_in

from .conftest import run_fresh

METRICS = ["precision@5", "ndcg@5", "map@5", "auc@5"]

# warm_up's background process, then (once it has ended) a fresh process that evaluates
# inputs of the warmed dtypes and records what numba compiled for it
WARM = """
import fastrank as fr, numpy as np
warming = fr.warm_up(%r, k=5, n_users=300, values=np.float32, indices=np.int64,
                     ids=np.int64)
assert warming.wait(), "the background compile failed"
assert warming.done
"""

# a fresh process's evaluation, recording what numba compiles for it: RECORD, then the
# inputs and the call (`res`), then REPORT
RECORD = """
import json
import numpy as np, scipy.sparse as sp
from numba.core import event
import fastrank as fr

compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f"{f.__module__}.{f.__qualname__}")

    def on_end(self, ev):
        pass

"""
REPORT = """
print("COMPILED=" + json.dumps(compiled))
print("MEANS=" + json.dumps(res.to_dict()))
"""

EVALUATE = RECORD + """
rng = np.random.default_rng(1)
truth = sp.csr_array((rng.random((300, 40)) < 0.1) * rng.integers(1, 4, (300, 40)),
                     dtype=np.float32)
truth.indices, truth.indptr = truth.indices.astype(np.int64), truth.indptr.astype(np.int64)
topk = rng.integers(0, 40, (300, 5)).astype(np.int64)
event.register("numba:compile", Listener())
res = fr.evaluate(truth, topk, %r)
""" + REPORT


def check_warm_up_leaves_nothing_to_compile(evaluate, warm, kernel, tmp_path):
    """`evaluate` in a fresh process compiles `kernel` on an empty cache, and nothing at
    all (with equal means) once `warm` has run in another process on the same cache."""
    cold = run_fresh(evaluate, tmp_path / "cold")
    assert any(kernel in name for name in cold["COMPILED"])  # the check can fail
    run_fresh(warm, tmp_path / "warm")
    after = run_fresh(evaluate, tmp_path / "warm")
    assert after["COMPILED"] == [], after["COMPILED"]
    assert after["MEANS"] == cold["MEANS"]


@pytest.mark.slow
def test_the_first_evaluation_after_warm_up_compiles_no_ranking_walk(tmp_path):
    check_warm_up_leaves_nothing_to_compile(EVALUATE % (METRICS,), WARM % (METRICS,),
                                            "rank_rows", tmp_path)


WARM_FACTORS = """
import fastrank as fr, numpy as np
warming = fr.warm_up(%r, factors=np.float32, n_users=400, values=np.float32,
                     exclude=np.int64)
assert warming.wait(), "the background compile failed"
"""

EVALUATE_FACTORS = RECORD + """
rng = np.random.default_rng(2)
users = rng.normal(size=(400, 8)).astype(np.float32)
items = rng.normal(size=(60, 8)).astype(np.float32)
test = sp.csr_array((rng.random((400, 60)) < 0.05).astype(np.float32))
train = sp.csr_array((rng.random((400, 60)) < 0.1).astype(np.float32))
train.indices, train.indptr = train.indices.astype(np.int64), train.indptr.astype(np.int64)
event.register("numba:compile", Listener())
res = fr.evaluate_factors(users, items, test, %r, exclude=train)
""" + REPORT


@pytest.mark.slow
def test_the_first_evaluate_factors_after_warm_up_compiles_nothing(tmp_path):
    metrics = ["precision@5", "ndcg@5", "auc"]
    check_warm_up_leaves_nothing_to_compile(EVALUATE_FACTORS % (metrics,),
                                            WARM_FACTORS % (metrics,), "topk_blocks",
                                            tmp_path)


@pytest.mark.parametrize("n_users, labels, factors, expected", [
    (None, ["ndcg@10"], None, 1 << 18), (300_000, ["ndcg@10"], None, 1 << 18),
    (5000, ["ndcg@10"], None, 1024), (7, ["ndcg@10"], None, 7),
    # evaluate_factors's spans of users: 2^18 only with lists of one item
    (None, ["ndcg@10", "auc"], np.float32, 1024), (None, ["hit_rate@1"], np.float32, 1 << 18),
    (5000, ["hit_rate@1"], np.float32, 1024), (9, ["auc"], np.float64, 9),
])
def test_the_stand_in_has_as_many_users_as_make_the_same_walks(n_users, labels, factors,
                                                               expected, monkeypatch):
    specs = []
    monkeypatch.setattr("fastrank.warm.subprocess.Popen",
                        lambda args, **kwargs: specs.append(args[-1]) or None)
    monkeypatch.setattr("fastrank.warm._ready_here", lambda spec: False)
    fr.warm_up(labels, n_users=n_users, factors=factors)
    assert json.loads(specs[0])["n_users"] == expected


def test_wait_with_a_timeout_returns_false_while_the_process_runs(monkeypatch):
    monkeypatch.setattr("fastrank.warm._ready_here", lambda spec: False)  # not cached
    warming = fr.warm_up(["precision@5"], n_users=10)
    assert not warming.wait(timeout=0)  # Python alone takes longer to start
    assert "running" in repr(warming) or warming.done
    assert warming.wait()
    assert warming.done and "done" in repr(warming)


@pytest.mark.parametrize("values, indices, ids", [
    (np.float32, np.int32, np.int32), (np.float64, np.int64, np.int64),
    ("float64", "int32", "int64")])
@pytest.mark.parametrize("n_users", [1, 5000, 1 << 18])
def test_the_stand_in_has_the_dtypes_and_users_asked(values, indices, ids, n_users):
    truth, topk = stand_in(n_users, 7, np.dtype(values).name, np.dtype(indices).name,
                           np.dtype(ids).name)
    assert truth.shape[0] == topk.shape[0] == n_users and topk.shape[1] == 7
    assert truth.data.dtype == values and topk.dtype == ids
    assert truth.indices.dtype == truth.indptr.dtype == indices
    assert truth.has_canonical_format
    # whole grades: the walk that counts grades, as for ratings
    assert set(np.unique(truth.data)) <= {1, 2, 3}


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(metrics=["novelty@10"]), ValueError, "need other inputs.*novelty@10"),
    (dict(metrics=["ndcg@10", "recall_ips@10"]), ValueError, "recall_ips@10"),
    (dict(metrics=["no_such_metric@10"]), ValueError, "no_such_metric"),
    (dict(metrics=["rmse"]), ValueError, "fr.rmse"),
    (dict(metrics=["ndcg@10"], values=np.int8), TypeError, "values must be one of"),
    (dict(metrics=["ndcg@10"], indices=np.float64), TypeError, "indices must be one of"),
    (dict(metrics=["ndcg@10"], ids="nonsense"), TypeError, "ids must be one of"),
    (dict(metrics=["ndcg@10"], k=0), ValueError, "k must be at least 1"),
    (dict(metrics=["ndcg@10"], n_users=2.5), TypeError, "n_users must be an int"),
    (dict(metrics=["ndcg@10"], convention="nope"), ValueError, "convention"),
    # for evaluate_factors: its own refusals
    (dict(metrics=["ndcg"], factors=np.float32), ValueError, "needs a cutoff here"),
    (dict(metrics=["novelty@10"], factors=np.float32), ValueError,
     "novelty@10.*evaluate_factors does not take"),
    (dict(metrics=["ndcg@10"], factors=np.int8), TypeError, "factors must be one of"),
    (dict(metrics=["ndcg@10"], factors=np.float32, exclude="yes"), TypeError, "exclude"),
    (dict(metrics=["ndcg@10"], factors=np.float32, exclude=np.float32), TypeError,
     "exclude .* must be one of the dtypes int32, int64"),
])
def test_warm_up_refuses_by_name_before_it_starts_a_process(kwargs, error, match,
                                                             monkeypatch):
    def no_process(*args, **kwargs):
        raise AssertionError("a process was started")

    monkeypatch.setattr("fastrank.warm.subprocess.Popen", no_process)
    with pytest.raises(error, match=match):
        fr.warm_up(**kwargs)


def test_metrics_from_a_generator_are_taken_as_fr_evaluate_takes_them(monkeypatch):
    """metrics is read twice (the labels, then fr.evaluate's refusals): a generator, which
    fr.evaluate accepts, was empty at the second reading ("metrics is empty")."""
    fr.evaluate(*stand_in(50, 5, "float64", "int32", "int32"), METRICS)  # cached now
    for metrics in ((m for m in METRICS), iter(METRICS)):
        warming = fr.warm_up(metrics, k=5, n_users=50)
        assert warming.wait() is True


def test_no_interpreter_to_start_leaves_the_compile_to_the_call(monkeypatch):
    monkeypatch.setattr("fastrank.warm.sys.executable", "/no/such/python")
    monkeypatch.setattr("fastrank.warm._ready_here", lambda spec: False)  # not cached
    warming = fr.warm_up(["precision@5"])
    assert warming.done and warming.wait() is False


def test_with_every_kernel_cached_no_process_is_left_and_the_kernels_are_loaded():
    """The check in the caller's process: kernels found in the cache load there, and the
    background process is stopped."""
    fr.evaluate(*stand_in(50, 5, "float64", "int32", "int32"), METRICS)  # cached now
    warming = fr.warm_up(METRICS, k=5, n_users=50)
    assert warming.done and warming.wait() is True and "done" in repr(warming)
