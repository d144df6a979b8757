"""Compile time: no kernel compiles a callee for a literal argument type.

Numba types a bare constant (`n = 0`) as a literal; a callee called with it is compiled
once for `Literal[int](0)` and again for int64 when the loop widens the count (see
fastrank/_kernels/__init__.py). That doubled the first call's compile time. The check
runs in a fresh process with an empty numba cache, so that the ranking kernel and trec_eval's
kernel (which `fastrank trec` shares) compile, and records numba's compile events.
"""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = """
import json
import numpy as np, scipy.sparse as sp
from numba.core import event
import fastrank as fr

literal = []

class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("fastrank") and "Literal" in str(ev.data["args"]):
            literal.append(f"{f.__module__}.{f.__qualname__}{ev.data['args']}")

    def on_end(self, ev):
        pass

event.register("numba:compile", Listener())
truth = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1]]))
topk = np.array([[0, 1, 2], [3, -1, 1]])
fr.evaluate(truth, topk, ["precision@2", "recall@2", "ndcg@2", "map@2", "auc@2", "err@2"])
fr.evaluate(truth, topk, ["bpref", "infap", "iprec_at_recall_0.50"], convention="trec")
print("LITERAL=" + json.dumps(literal))
"""


@pytest.mark.slow
def test_no_kernel_compiles_a_callee_for_a_literal_type(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("LITERAL="))
    literal = json.loads(line[len("LITERAL="):])
    assert literal == [], "compiled for a literal type:\n" + "\n".join(literal)
