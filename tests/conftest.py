import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings

import fastrank as fr

settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("FASTRANK_HYPOTHESIS_PROFILE", "default"))

TREC_EVAL_SOURCE = Path(__file__).resolve().parent / "oracles" / "trec_eval-10.0"


def run_fresh(script, cache, timeout=900):
    """Run a Python script in a fresh process with numba's cache in `cache`: {name:
    value} of the `NAME=json` lines it printed. A script still running after `timeout`
    seconds is killed and the test fails (subprocess.TimeoutExpired)."""
    import json
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)), timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return {name: json.loads(value) for name, _, value in
            (line.partition("=") for line in done.stdout.splitlines() if "=" in line)}



def registry_labels():
    """One label with a cutoff (where the metric takes one) and one without, for every
    registered metric computed from lists and truth alone: a metric is tested from the
    moment it is registered."""
    labels = []
    for name in fr.METRICS.names():
        metric = fr.METRICS[name]
        if metric.engine not in ("ranking", "trec"):
            continue
        required = [f"{p.name}={p.examples[len(p.examples) // 2]}" for p in metric.params
                    if p.default is None and p.name != "rel"]
        base = name + (f"({', '.join(required)})" if required else "")
        labels.append(base)
        if metric.cutoff:
            labels.append(f"{base}@2")
        others = [p for p in metric.params if p.examples and f"{p.name}=" not in base]
        for p in others:
            if p.name == "rel" and name == "precision":
                continue  # the implicit convention pools precision: no threshold there
            labels.append(base[:-1] + f", {p.name}={p.examples[1]})" if required
                          else f"{name}({p.name}={p.examples[1]})")
    return labels


ALL_METRICS = registry_labels()


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory):
    """trec_eval 10 built from its source (tests/oracles/trec_eval-10.0) in a temporary
    folder: the oracle of `fastrank trec` and of the trec_eval dialect."""
    compiler = next((c for c in ("gcc", "cc", "clang") if shutil.which(c)), None)
    if compiler is None or shutil.which("make") is None:
        pytest.skip("no C compiler or make: trec_eval cannot be built")
    build = tmp_path_factory.mktemp("trec_eval") / "src"
    shutil.copytree(TREC_EVAL_SOURCE, build)
    done = subprocess.run(["make", f"CC={compiler}", "trec_eval"], cwd=build,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return build / "trec_eval"


@pytest.fixture(scope="session", autouse=True)
def warm_kernels():
    """Compile (or load from cache) the kernel specialisations the suite uses, once."""
    truth = sp.csr_array(np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 0.0, 1.0]]))
    for index_dtype in (np.int32, np.int64):
        t = truth.copy()
        t.indices = t.indices.astype(index_dtype)
        t.indptr = t.indptr.astype(index_dtype)
        for id_dtype in (np.int32, np.int64):
            topk = np.array([[0, 1, 2], [3, -1, 1]], dtype=id_dtype)
            fr.evaluate(t, topk, ALL_METRICS)


def csr(rows, n_items, index_dtype=np.int32):
    """A CSR matrix from a list of {item: value} dicts."""
    indptr, indices, data = [0], [], []
    for row in rows:
        for item, value in row.items():
            indices.append(item)
            data.append(value)
        indptr.append(len(indices))
    return sp.csr_array((np.array(data, dtype=np.float64), np.array(indices, dtype=index_dtype),
                         np.array(indptr, dtype=index_dtype)), shape=(len(rows), n_items))
