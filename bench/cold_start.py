"""Cold start: the first fr.evaluate and `fastrank demo` in fresh processes with an empty
numba cache, as on a fresh install.

    python bench/cold_start.py            # 3 runs of each
    python bench/cold_start.py --runs 1 --no-demo
    python bench/cold_start.py --others     # also trec_eval's measures, evaluate_factors, ...

Prints, per run, the wall and CPU seconds of the first fr.evaluate of the classic metrics
(precision, recall, ndcg, map at 2, on a 2-user input) and of `fastrank demo` end to end
(its 1,000,000 users built, compiled, evaluated, printed); then, from numba's compile
events of one run, what compiled and for how long (wall seconds, each including the
functions it calls). Issue 18's targets: 3 s and 10 s.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

FIRST_CALL = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np, scipy.sparse as sp
from numba.core import event
import fastrank as fr

starts, took = {}, []

class Listener(event.Listener):
    def on_start(self, ev):
        starts[id(ev.data)] = time.perf_counter()

    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        took.append((time.perf_counter() - starts.pop(id(ev.data), time.perf_counter()),
                     f"{f.__module__}.{f.__qualname__}"))

event.register("numba:compile", Listener())
truth = sp.csr_array(np.array([[1.0, 0, 2, 0], [0, 3, 0, 1]]))
topk = np.array([[0, 1, 2], [3, -1, 1]])
factors = np.random.default_rng(0).random((6, 3))
train = sp.csr_array(np.array([[0, 1.0, 0, 1], [1, 0, 1, 0]]))
aspects = sp.csr_array(np.array([[1, 0], [0, 1], [1, 1], [0, 1]], np.int8))
t, c = time.perf_counter(), time.process_time()
CALL
print(json.dumps({"call": time.perf_counter() - t, "call_cpu": time.process_time() - c,
                  "total": time.perf_counter() - t0, "total_cpu": time.process_time() - c0,
                  "compiles": sorted(took, reverse=True)}))
"""


def fresh_env():
    return dict(os.environ, NUMBA_CACHE_DIR=tempfile.mkdtemp(prefix="numba-cold-"))


# the first calls timed: the classic metrics (issue 18's target), and with --others
# trec_eval's measures alone, the fused factors path and the other metric families
CALLS = {
    "fr.evaluate": 'fr.evaluate(truth, topk, ["precision@2", "recall@2", "ndcg@2", "map@2"])',
    "fr.evaluate, trec_eval's measures": (
        'fr.evaluate(truth, topk, ["bpref", "infap", "iprec_at_recall_0.50"], '
        'convention="trec")'),
    "fr.evaluate_factors": (
        'fr.evaluate_factors(factors[:2], factors[2:], truth, ["precision@2", "ndcg@2"])'),
    "fr.evaluate, the beyond-accuracy set": (
        'fr.evaluate(truth, topk, ["novelty@2", "arp@2", "ild@2", "serendipity@2", '
        '"coverage@2", "gini@2"], train=train, item_aspects=aspects, baseline=topk[::-1])'),
    "fr.evaluate, the intent-aware measures": (
        'fr.evaluate(truth, topk, ["err_ia@2", "p_ia@2", "alpha_dcg@2"], item_aspects=aspects)'),
    "fr.evaluate, the debiased metrics": (
        'fr.evaluate(truth, topk, ["recall_ips@2", "ap_ips@2"], train=train)'),
    "fr.evaluate, miscalibration": (
        'fr.evaluate(truth, topk, ["miscalibration@2"], train=train, item_aspects=aspects)'),
}


def first_call(call="fr.evaluate"):
    done = subprocess.run([sys.executable, "-c", FIRST_CALL.replace("CALL", CALLS[call])],
                          env=fresh_env(), capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def demo():
    start = time.perf_counter()
    before = os.times()
    subprocess.run([sys.executable, "-m", "fastrank", "demo"], env=fresh_env(),
                   capture_output=True, text=True, check=True)
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return time.perf_counter() - start, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--others", action="store_true",
                        help="also time the first call of trec_eval's measures alone, of "
                             "fr.evaluate_factors and of the beyond-accuracy, intent-aware, "
                             "debiased and miscalibration metrics")
    args = parser.parse_args()
    last = None
    for run in range(args.runs):
        last = first_call()
        print(f"first fr.evaluate, empty cache: {last['call']:6.2f} s wall, "
              f"{last['call_cpu']:6.2f} s CPU (with import: {last['total']:.2f} s)", flush=True)
    if args.others:
        for call in list(CALLS)[1:]:
            for run in range(args.runs):
                other = first_call(call)
                print(f"first {call}, empty cache: {other['call']:6.2f} s wall, "
                      f"{other['call_cpu']:6.2f} s CPU", flush=True)
    if not args.no_demo:
        for run in range(args.runs):
            wall, cpu = demo()
            print(f"fastrank demo, empty cache:     {wall:6.2f} s wall, {cpu:6.2f} s CPU",
                  flush=True)
    print("\nwhat the first fr.evaluate compiled (wall s, callees included; last run):")
    for seconds, name in last["compiles"][:12]:
        print(f"  {seconds:6.2f}  {name}")


if __name__ == "__main__":
    main()
